"""What the redist benchmarks share: finding redist-bench, running it, reading its result line."""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from esmperf.launch.mpirun import mpirun_command, run_environment  # noqa: E402
from esmperf.mpi.build import build_dir  # noqa: E402
from esmperf.mpi.stacks import Stack, discover_stacks  # noqa: E402


def stacks(ids: str) -> list[Stack]:
    """The stacks named (comma-separated) that have redist-bench built."""
    wanted = ids.split(",")
    found = [s for s in discover_stacks().stacks if s.id in wanted and bench_path(s).is_file()]
    if not found:
        sys.exit(f"redist-bench is not built for {ids}: run `make build`")
    return found


def bench_path(stack: Stack) -> Path:
    return build_dir(stack) / "apps" / "redist" / "redist-bench"


# TCP loopback instead of shared memory: what peers on other nodes get (DESIGN.md, measured facts)
TCP = {
    "openmpi": {
        "OMPI_MCA_pml": "ob1",
        "OMPI_MCA_btl": "self,tcp",
        "OMPI_MCA_btl_tcp_if_include": "lo",
    },
    "mpich": {"MPIR_CVAR_NOLOCAL": "1", "UCX_TLS": "tcp,self", "UCX_NET_DEVICES": "lo"},
}


def run_bench(
    stack: Stack, ranks: int, *args: str, timeout: float = 3600, tcp: bool = False
) -> dict[str, Any]:
    """One run of redist-bench (over TCP loopback when `tcp`); its JSON result."""
    command = mpirun_command(stack, ranks, [str(bench_path(stack)), *args])
    env = run_environment(stack, os.environ) | (TCP[stack.family] if tcp else {})
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    if run.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({run.returncode}):\n{run.stdout}\n{run.stderr}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} (1/5/15 min) on {os.cpu_count()} cores"


def span(s: dict[str, float], scale: float = 1.0, digits: int = 1) -> str:
    """median [min..max]"""
    return f"{s['median'] * scale:.{digits}f} [{s['min'] * scale:.{digits}f}..{s['max'] * scale:.{digits}f}]"
