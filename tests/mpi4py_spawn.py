"""For tests/test_profiler_mpi4py.py: the parent (no argument) spawns 2 children running this
file with "child"; parent rank 0 sends each child 3 messages of 40 bytes over the
intercommunicator, each child receives them; then both sides disconnect."""

import sys

from mpi4py import MPI

if len(sys.argv) > 1:
    parent = MPI.Comm.Get_parent()
    got = bytearray(40)
    for _ in range(3):
        parent.Recv([got, MPI.BYTE], source=0, tag=5)
    parent.Disconnect()
else:
    children = MPI.COMM_WORLD.Spawn(sys.executable, args=[__file__, "child"], maxprocs=2)
    if MPI.COMM_WORLD.Get_rank() == 0:
        for child in range(2):
            for _ in range(3):
                children.Send([bytearray(40), MPI.BYTE], dest=child, tag=5)
    children.Disconnect()
    print("parent done", flush=True)
