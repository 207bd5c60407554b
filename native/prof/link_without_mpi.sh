#!/bin/sh
# CMake linker launcher: replace the MPI compiler wrapper (argument 1) by the C compiler it wraps,
# so the profiler is linked against no MPI library.
shift
exec "${ESM_PLAIN_CC:-cc}" "$@"
