! A Fortran program marking a region with esmprof_api (libesmprof_api.a): two MPI_Allreduce
! inside 'ftimed', one outside (tests/test_profiler_regions.py).
program prof_test_regions_f
  use mpi
  implicit none
  integer :: ierr, one, total
  call MPI_Init(ierr)
  one = 1
  call esmprof_region_begin('ftimed')
  call MPI_Allreduce(one, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(one, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call esmprof_region_end('ftimed')
  call MPI_Allreduce(one, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
end program prof_test_regions_f
