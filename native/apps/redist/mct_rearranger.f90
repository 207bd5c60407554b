! MCT's Rearranger (the Model Coupling Toolkit, on which CESM's coupler is built) behind a small
! C interface for redist-bench's MCT peer (peer_mct.c). MCT is Fortran: this module holds one
! rearrangement between two block layouts of the same grid, as an MCT user builds it:
!   - one component (id 1) spanning the communicator, registered in MCTWorld;
!   - a GlobalSegMap per layout from this rank's segments (runs of consecutive global points,
!     1-based, ascending), gathered by every rank (GlobalSegMap init from distributed data);
!   - a Rearranger between the two maps and an attribute vector per side holding the bundle's
!     fields as real attributes ("f1:f2:...": MCT stores them point by point, field fastest);
!   - the run: rearrange from the source vector into the destination vector.
! MCT reports its own errors and aborts (its m_die); nothing here returns a status.
module esm_mct_rearranger
    use, intrinsic :: iso_c_binding, only: c_int, c_double, c_ptr, c_loc, c_f_pointer
    use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan
    use m_MCTWorld, only: MCTWorld_init => init, MCTWorld_clean => clean
    use m_GlobalSegMap, only: GlobalSegMap, GlobalSegMap_init => init, &
                              GlobalSegMap_clean => clean
    use m_AttrVect, only: AttrVect, AttrVect_init => init, AttrVect_clean => clean, &
                          AttrVect_importRAttr => importRAttr, AttrVect_exportRAttr => exportRAttr
    use m_Rearranger, only: Rearranger, Rearranger_init => init, &
                            Rearranger_clean => clean, Rearranger_rearrange => rearrange
    implicit none
    private

    integer, parameter :: component = 1 ! the one MCT component: every rank of the communicator

    type :: mct_route
        type(GlobalSegMap) :: src_map, dst_map
        type(Rearranger) :: rearranger
        type(AttrVect) :: src_fields, dst_fields
        integer :: nfields, src_points, dst_points
    end type mct_route

contains

    ! MCTWorld with one component on `comm` (a Fortran handle), once per process. Collective.
    subroutine esm_mct_start(comm) bind(C, name="esm_mct_start")
        integer(c_int), value :: comm
        call MCTWorld_init(1, comm, comm, myid=component)
    end subroutine esm_mct_start

    subroutine esm_mct_stop() bind(C, name="esm_mct_stop")
        call MCTWorld_clean()
    end subroutine esm_mct_stop

    ! The rearrangement from this rank's source segments to its destination segments on a grid
    ! of gsize points, for nfields fields; its handle. Collective.
    function esm_mct_store(comm, gsize, nfields, nsrc, src_start, src_length, ndst, dst_start, &
                           dst_length) result(handle) bind(C, name="esm_mct_store")
        integer(c_int), value :: comm, gsize, nfields, nsrc, ndst
        integer(c_int), intent(in) :: src_start(nsrc), src_length(nsrc)
        integer(c_int), intent(in) :: dst_start(ndst), dst_length(ndst)
        type(c_ptr) :: handle
        type(mct_route), pointer :: r
        allocate (r)
        r%nfields = nfields
        r%src_points = sum(src_length)
        r%dst_points = sum(dst_length)
        call GlobalSegMap_init(r%src_map, src_start, src_length, 0, comm, component, gsize=gsize)
        call GlobalSegMap_init(r%dst_map, dst_start, dst_length, 0, comm, component, gsize=gsize)
        call Rearranger_init(r%src_map, r%dst_map, comm, r%rearranger)
        call AttrVect_init(r%src_fields, rList=field_names(nfields), lsize=r%src_points)
        call AttrVect_init(r%dst_fields, rList=field_names(nfields), lsize=r%dst_points)
        handle = c_loc(r)
    end function esm_mct_store

    ! The run: the source vector's fields into the destination vector. Collective.
    subroutine esm_mct_run(handle) bind(C, name="esm_mct_run")
        type(c_ptr), value :: handle
        type(mct_route), pointer :: r
        call c_f_pointer(handle, r)
        call Rearranger_rearrange(r%src_fields, r%dst_fields, r%rearranger)
    end subroutine esm_mct_run

    ! The bundle's source fields (field f at f * points, C order) into the source vector, and the
    ! destination vector poisoned (NaN) so that a run that writes nothing fails the check.
    subroutine esm_mct_load(handle, bundle) bind(C, name="esm_mct_load")
        type(c_ptr), value :: handle
        type(c_ptr), value :: bundle
        type(mct_route), pointer :: r
        real(c_double), pointer :: values(:), field(:)
        integer :: f, n
        call c_f_pointer(handle, r)
        call c_f_pointer(bundle, values, [r%nfields * r%src_points])
        do f = 1, r%nfields
            n = (f - 1) * r%src_points
            field => values(n + 1:n + r%src_points)
            call AttrVect_importRAttr(r%src_fields, field_name(f), field, r%src_points)
        end do
        r%dst_fields%rAttr = ieee_value(1.0_c_double, ieee_quiet_nan)
    end subroutine esm_mct_load

    ! The destination vector's fields into the bundle (field f at f * points, C order).
    subroutine esm_mct_unload(handle, bundle) bind(C, name="esm_mct_unload")
        type(c_ptr), value :: handle
        type(c_ptr), value :: bundle
        type(mct_route), pointer :: r
        real(c_double), pointer :: values(:), field(:)
        integer :: f, n
        call c_f_pointer(handle, r)
        call c_f_pointer(bundle, values, [r%nfields * r%dst_points])
        do f = 1, r%nfields
            n = (f - 1) * r%dst_points
            field => values(n + 1:n + r%dst_points)
            call AttrVect_exportRAttr(r%dst_fields, field_name(f), field)
        end do
    end subroutine esm_mct_unload

    subroutine esm_mct_free(handle) bind(C, name="esm_mct_free")
        type(c_ptr), value :: handle
        type(mct_route), pointer :: r
        call c_f_pointer(handle, r)
        call AttrVect_clean(r%src_fields)
        call AttrVect_clean(r%dst_fields)
        call Rearranger_clean(r%rearranger)
        call GlobalSegMap_clean(r%src_map)
        call GlobalSegMap_clean(r%dst_map)
        deallocate (r)
    end subroutine esm_mct_free

    ! "f<k>", the name of field k as an attribute.
    function field_name(k) result(name)
        integer, intent(in) :: k
        character(len=:), allocatable :: name
        character(len=12) :: digits
        write (digits, '(i0)') k
        name = 'f'//trim(digits)
    end function field_name

    ! "f1:f2:...:f<n>", the attribute list of n fields.
    function field_names(n) result(list)
        integer, intent(in) :: n
        character(len=:), allocatable :: list
        integer :: k
        list = field_name(1)
        do k = 2, n
            list = list//':'//field_name(k)
        end do
    end function field_names
end module esm_mct_rearranger
