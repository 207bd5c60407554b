"""smpirun: the smpi stack's ranks on a simulated cluster, all in one process on this machine
(SimGrid SMPI, docs/simulate.md); the run's time is the simulated one. Chosen for the smpi
stack with --launcher local; a simulated cluster does not run under Slurm."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from esmperf.launch.mpirun import MpirunLauncher

if TYPE_CHECKING:
    from esmperf.study.plan import PlannedRun

SIMULATED_TIME = re.compile(r"Simulated time: ([0-9.eE+-]+) seconds")


def simulated_time(stderr: str) -> float | None:
    """The simulated time smpirun prints at the end (--cfg=smpi/display-timing:yes)."""
    matches = SIMULATED_TIME.findall(stderr)
    return float(matches[-1]) if matches else None


class SmpirunLauncher(MpirunLauncher):
    """smpirun with the platform, host file and --cfg flags of the run's knob setting (its
    launcher_args, knobs.smpi_setting)."""

    simulated = True

    def prepare(self, planned: PlannedRun, env: dict[str, str]) -> str | None:
        env["TMPDIR"] = str(planned.scratch)  # smpirun's per-rank copies of the program
        return None

    def profile(self, planned: PlannedRun, env: dict[str, str], out: Path) -> None:
        """The smpi stack's programs have the profiler linked in (nothing can be preloaded
        into simulated ranks): it records when ESMPROF_OUT is set (docs/profiler.md)."""
        env["ESMPROF_OUT"] = str(out)

    def simulated_time(self, stderr: str) -> float | None:
        return simulated_time(stderr)
