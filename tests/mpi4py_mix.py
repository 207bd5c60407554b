"""A known mix of MPI calls made through mpi4py (tests/test_profiler_mpi4py.py counts them).

Every rank: 10 Sendrecv of 100 bytes around a ring, 5 Isend of 200 bytes with 5 Irecv posted for
1000 (Waitall), 10 Allreduce of 8 bytes, 3 Bcast of 64 bytes from rank 0; with MPI-4: 4 Isendrecv
of 50 bytes and a persistent Allreduce of 16 bytes started 3 times."""

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
right, left = (rank + 1) % size, (rank - 1) % size
got = bytearray(1000)
for _ in range(10):
    comm.Sendrecv([bytearray(100), MPI.BYTE], right, 0, [got, 100, MPI.BYTE], left, 0)
for _ in range(5):
    requests = [
        comm.Isend([bytearray(200), MPI.BYTE], right, 1),
        comm.Irecv([got, 1000, MPI.BYTE], left, 1),
    ]
    MPI.Request.Waitall(requests)
for _ in range(10):
    comm.Allreduce([bytearray(8), MPI.BYTE], [bytearray(8), MPI.BYTE], op=MPI.BOR)
for _ in range(3):
    comm.Bcast([bytearray(64), MPI.BYTE], root=0)
mpi4 = MPI.Get_version() >= (4, 0)
if mpi4:
    for _ in range(4):
        comm.Isendrecv([bytearray(50), MPI.BYTE], right, 2, [got, 50, MPI.BYTE], left, 2).Wait()
    request = comm.Allreduce_init([bytearray(16), MPI.BYTE], [bytearray(16), MPI.BYTE], op=MPI.BOR)
    for _ in range(3):
        request.Start()
        request.Wait()
    request.Free()
print(f"rank {rank} done mpi4={int(mpi4)}", flush=True)
