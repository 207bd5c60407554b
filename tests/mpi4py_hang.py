"""For tests/test_profile_interrupted.py: issue 26's hang, as ANUGA showed it. Rank 0 raises
during set-up (Python prints the traceback, then mpi4py calls MPI_Finalize at exit); rank 1
waits for its data, comm.recv: MPI_Mprobe for a message that never comes."""

from mpi4py import MPI

comm = MPI.COMM_WORLD
comm.Barrier()
if comm.Get_rank() == 0:
    raise RuntimeError("set-up failed on rank 0")
comm.recv(source=0, tag=7)
