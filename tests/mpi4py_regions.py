"""Regions from Python (tests/test_profiler_regions.py; docs/profiler.md, "Regions"): IPM's
MPI_Pcontrol(1, b"name") / MPI_Pcontrol(-1, b"name") through ctypes, and mpi4py's own
MPI.Pcontrol(level), which passes no name (the profiler counts it and otherwise ignores it).

    timed        3 x Allreduce of one int, then
    timed/step   1 x Barrier
"""

import array
import ctypes

from mpi4py import MPI


def mpi_pcontrol():
    """MPI_Pcontrol as the program's MPI calls see it: the profiler's when it is preloaded (the
    global scope), else the MPI library's, which mpi4py loaded locally."""
    try:
        function = ctypes.CDLL(None).MPI_Pcontrol
    except AttributeError:
        function = ctypes.CDLL(MPI.__file__).MPI_Pcontrol
    function.restype = ctypes.c_int
    return function


pcontrol = mpi_pcontrol()
comm = MPI.COMM_WORLD
MPI.Pcontrol(0)
pcontrol(ctypes.c_int(1), b"timed")
one, total = array.array("i", [1]), array.array("i", [0])
for _ in range(3):
    comm.Allreduce(one, total, op=MPI.SUM)
pcontrol(ctypes.c_int(1), b"step")
comm.Barrier()
pcontrol(ctypes.c_int(-1), b"step")
pcontrol(ctypes.c_int(-1), b"timed")
assert total[0] == comm.Get_size()
