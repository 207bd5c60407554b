! A known mix through the mpi_f08 bindings (Open MPI mpi_x_f08_, MPICH mpi_x_f08ts_ with choice
! buffers as descriptors), for tests/test_profiler_counts.py. Any number of ranks >= 2, even.
program prof_test_f08
  use mpi_f08
  implicit none
  integer :: rank, nprocs, sub
  type(MPI_Request) :: req(2)
  type(MPI_Status) :: status
  type(MPI_Comm) :: half
  integer :: bigin(1000), ints(3), g(8)
  double precision :: v(10), out(2), inb(4)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  ints = 0
  v = 0d0
  g = 0
  out = 0d0

  ! 3 integers into a 1000-integer ANY_SOURCE receive
  call MPI_Irecv(bigin, 1000, MPI_INTEGER, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, req(1))
  call MPI_Isend(ints, 3, MPI_INTEGER, mod(rank + 1, nprocs), 2, MPI_COMM_WORLD, req(2))
  call MPI_Waitall(2, req, MPI_STATUSES_IGNORE)

  ! in-place collectives: the root's ignored send arguments must not be counted
  call MPI_Allreduce(MPI_IN_PLACE, v, 10, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    call MPI_Gather(MPI_IN_PLACE, 123456, MPI_DOUBLE_PRECISION, g, 2, MPI_INTEGER, 0, MPI_COMM_WORLD)
  else
    call MPI_Gather(g, 2, MPI_INTEGER, g, 0, MPI_INTEGER, 0, MPI_COMM_WORLD)
  end if

  ! a named split communicator; a real status (16 bytes) and a receive from MPI_PROC_NULL
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half)
  call MPI_Comm_set_name(half, 'halves')
  call MPI_Comm_rank(half, sub)
  call MPI_Sendrecv(out, 2, MPI_DOUBLE_PRECISION, 1 - sub, 6, inb, 4, MPI_DOUBLE_PRECISION, 1 - sub, 6, &
                    half, status)
  call MPI_Recv(bigin, 10, MPI_INTEGER, MPI_PROC_NULL, 1, half, status)
  call MPI_Comm_free(half)
  call MPI_Finalize()
end program prof_test_f08
