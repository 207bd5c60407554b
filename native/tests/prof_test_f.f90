! A known mix of MPI calls through the Fortran bindings (use mpi), for tests/test_profiler_counts.py.
! Needs exactly 4 ranks. Receives are posted larger than the messages.
program prof_test_f
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, right, left, partner, i, idx, half, sub, one, total
  integer :: req(2), ints(3), bigin(1000), a(8), b(8), four(4), g(8)
  integer :: status(MPI_STATUS_SIZE)
  double precision :: out(100), inb(200), v(10)
  character(len=1000) :: text

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  if (nprocs /= 4) call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  right = mod(rank + 1, 4)
  left = mod(rank + 3, 4)
  partner = ieor(rank, 1)
  out = 0d0
  ints = 0
  four = 0
  g = 0
  v = 0d0

  ! blocking ring: 100 doubles to the right, received with MPI_STATUS_IGNORE
  if (mod(rank, 2) == 0) then
    call MPI_Send(out, 100, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD, ierr)
    call MPI_Recv(inb, 200, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  else
    call MPI_Recv(inb, 200, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Send(out, 100, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD, ierr)
  end if

  ! non-blocking: 3 integers into a 1000-integer ANY_SOURCE receive
  call MPI_Irecv(bigin, 1000, MPI_INTEGER, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, req(1), ierr)
  call MPI_Isend(ints, 3, MPI_INTEGER, right, 2, MPI_COMM_WORLD, req(2), ierr)
  call MPI_Waitall(2, req, MPI_STATUSES_IGNORE, ierr)

  ! Waitany returns 1-based indices in Fortran
  call MPI_Irecv(a, 8, MPI_INTEGER, partner, 3, MPI_COMM_WORLD, req(1), ierr)
  call MPI_Irecv(b, 8, MPI_INTEGER, partner, 4, MPI_COMM_WORLD, req(2), ierr)
  call MPI_Send(four, 4, MPI_INTEGER, partner, 3, MPI_COMM_WORLD, ierr)
  call MPI_Send(four, 4, MPI_INTEGER, partner, 4, MPI_COMM_WORLD, ierr)
  do i = 1, 2
    call MPI_Waitany(2, req, idx, status, ierr)
  end do

  ! persistent: 3 rounds of 5 doubles to the right
  call MPI_Recv_init(inb, 10, MPI_DOUBLE_PRECISION, left, 5, MPI_COMM_WORLD, req(1), ierr)
  call MPI_Send_init(out, 5, MPI_DOUBLE_PRECISION, right, 5, MPI_COMM_WORLD, req(2), ierr)
  do i = 1, 3
    call MPI_Startall(2, req, ierr)
    call MPI_Waitall(2, req, MPI_STATUSES_IGNORE, ierr)
  end do
  call MPI_Request_free(req(1), ierr)
  call MPI_Request_free(req(2), ierr)

  ! in-place collectives (the root's ignored send arguments must not be counted)
  call MPI_Allreduce(MPI_IN_PLACE, v, 10, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call MPI_Gather(MPI_IN_PLACE, 123456, MPI_DOUBLE_PRECISION, g, 2, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  else
    call MPI_Gather(g, 2, MPI_INTEGER, g, 0, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  end if

  ! a named split communicator: 2 doubles to the partner inside each half
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half, ierr)
  call MPI_Comm_set_name(half, 'halves', ierr)
  one = 1
  call MPI_Allreduce(one, total, 1, MPI_INTEGER, MPI_SUM, half, ierr)
  if (total /= 2) call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  call MPI_Comm_rank(half, sub, ierr)
  call MPI_Sendrecv(out, 2, MPI_DOUBLE_PRECISION, 1 - sub, 6, inb, 4, MPI_DOUBLE_PRECISION, 1 - sub, 6, &
                    half, status, ierr)
  call MPI_Comm_free(half, ierr)

  ! 1000 bytes through the Fortran runtime's I/O
  text = ' '
  open(newunit=i, status='scratch', access='stream', form='unformatted')
  write(i) text
  close(i)

  call MPI_Finalize(ierr)
end program prof_test_f
