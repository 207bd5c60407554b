"""The bare wrapper (native/bench/bare_wrapper.c), the floor benchmarks/profiler_overhead.py
--bare holds libesmprof to: preloaded into bench/latency, each build of it (TSC, monotonic
clock) counts each call the benchmark makes (warm-up 2000 + 30 batches x ITERS of each) on
every rank, on each Debian stack."""

import os
import re
import subprocess

import pytest

from esmperf.launch.mpirun import mpirun_command, run_environment
from esmperf.mpi.build import build_dir
from esmperf.mpi.stacks import discover_stacks

STACKS = [s for s in discover_stacks().stacks if not s.simulated and s.id in ("openmpi", "mpich")]
FUNCTIONS = ("MPI_Send", "MPI_Recv", "MPI_Allreduce", "MPI_Isend", "MPI_Irecv", "MPI_Waitall")


@pytest.mark.parametrize("clock", ["tsc", "monotonic"])
@pytest.mark.parametrize("stack", STACKS, ids=lambda s: s.id)
def test_the_bare_wrapper_counts_every_timed_call(stack, clock: str) -> None:
    library = build_dir(stack) / "bench" / f"libbarewrap_{clock}.so"
    if not library.is_file():
        pytest.skip(f"not built: `esmperf build --stack {stack.id}` builds {library}")
    env = run_environment(stack, os.environ)
    env.update({"LD_PRELOAD": str(library), "BAREWRAP_REPORT": "1"})
    command = mpirun_command(stack, 2, [str(build_dir(stack) / "bench" / "latency"), "10"])
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = sorted(re.findall(r"^barewrap rank (\d): (.*)$", run.stderr, re.MULTILINE))
    expected = " ".join(f"{name} {2000 + 30 * 10}" for name in FUNCTIONS)
    assert lines == [("0", expected), ("1", expected)]
