"""smpirun: the smpi stack's ranks on a simulated cluster, all in one process on this machine
(SimGrid SMPI, docs/simulate.md); the run's time is the simulated one. Chosen for the smpi
stack with --launcher local; a simulated cluster does not run under Slurm."""

from __future__ import annotations

import re
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
        if planned.config.profile != "off":
            return ("the profiler cannot run under SimGrid SMPI (no PMPI layer to preload): "
                    "profile = false for the smpi stack")
        return None

    def simulated_time(self, stderr: str) -> float | None:
        return simulated_time(stderr)
