"""For tests/test_profiler_partial_files.py: known file I/O, known MPI calls, then (with an
argument) a wait to be killed in. Every rank writes rank-named files in the current directory:
POSIX (os.write/os.read): 3 writes of 1000 bytes, 2 reads of 500 to data.RANK.bin; stdio (the C
library's, through ctypes): 4 fwrite of 250 bytes and 1 fputs of 11 to text.RANK.txt; then 7
Sendrecv of 100 bytes around a ring."""

import ctypes
import os
import sys
import time

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
fd = os.open(f"data.{rank}.bin", os.O_CREAT | os.O_RDWR | os.O_TRUNC, 0o644)
for _ in range(3):
    os.write(fd, b"x" * 1000)
os.lseek(fd, 0, os.SEEK_SET)
for _ in range(2):
    os.read(fd, 500)
os.close(fd)
libc = ctypes.CDLL(None)
libc.fopen.restype = ctypes.c_void_p
libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
libc.fwrite.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p]
libc.fputs.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
libc.fclose.argtypes = [ctypes.c_void_p]
stream = libc.fopen(f"text.{rank}.txt".encode(), b"w")
for _ in range(4):
    libc.fwrite(b"y" * 250, 1, 250, stream)
libc.fputs(b"hello world", stream)
libc.fclose(stream)
got = bytearray(100)
for _ in range(7):
    comm.Sendrecv(
        [bytearray(100), MPI.BYTE], (rank + 1) % size, 0, [got, MPI.BYTE], (rank - 1) % size, 0
    )
if len(sys.argv) > 1:
    with open(f"ready.{rank}", "w") as ready:
        ready.write(str(os.getpid()))
    time.sleep(600)
