"""One measured run of a program for the simulation benchmarks (homme_scale.py,
pflotran_scale.py): run through esmperf's study.execute (its own process group, ended whole on
Ctrl-C) with no timeout, and return what it cost this machine (wall time; from wait4, the CPU
time and peak resident memory of the launcher and every process it waited for: for smpirun,
the simulator that runs every simulated rank), the load average before and after, SimGrid's
simulated time, and the program's result line."""

import json
import math
import os
from pathlib import Path
from typing import Any

from esmperf.launch.smpirun import simulated_time
from esmperf.study.execute import execute


def measured_run(
    command: list[str], env: dict[str, str], cwd: Path, statuses: tuple[int, ...] = (0,)
) -> dict[str, Any]:
    """Run `command`; SystemExit with the end of its stderr unless it exits with one of
    `statuses`. wall, cpu (s), rss_gb, load_before, load_after, simulated (s or None), result."""
    load = os.getloadavg()[0]
    done = execute(command, env, cwd, timeout=math.inf)
    if done.returncode not in statuses:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise SystemExit(f"{' '.join(command)} printed no result line:\n{done.stdout[-2000:]}")
    return {
        "wall": done.elapsed,
        "cpu": done.cpu_time,
        "rss_gb": (done.peak_rss or 0.0) / 1e9,
        "load_before": load,
        "load_after": os.getloadavg()[0],
        "simulated": simulated_time(done.stderr),
        "result": json.loads(lines[-1]),
    }
