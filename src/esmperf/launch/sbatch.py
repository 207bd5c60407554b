"""sbatch: every configuration as Slurm batch jobs submitted from here (--launcher slurm,
docs/slurm.md), watched and collected by slurm/campaign.py; inside a job the ranks start with
the stack's mpirun or with srun ([slurm] mpi_launcher)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from esmperf.launch.base import Job, Launcher
from esmperf.launch.mpirun import MpirunLauncher
from esmperf.launch.srun import srun_explained, srun_ranks
from esmperf.slurm.batch import check_commands


class SbatchLauncher(Launcher):
    name = "slurm"
    position = 2
    batch = True  # the study runner hands its runs to slurm/campaign.py

    def check(self, environ: Mapping[str, str]) -> None:
        check_commands()

    def cores(self, ranks: int, here: int) -> int:
        return ranks

    def command(self, planned: Job) -> list[str]:
        if planned.slurm.mpi_launcher == "srun":
            return srun_ranks(planned)
        return MpirunLauncher().command(planned)

    def failure(
        self,
        planned: Job,
        status: str,
        reason: str | None,
        output: str,
        result: dict[str, Any] | None,
    ) -> tuple[str, str | None]:
        if planned.slurm.mpi_launcher == "srun":
            return srun_explained(planned, status, reason, output, result)
        return status, reason
