"""srun: the ranks start inside the Slurm allocation esmperf runs in (--launcher srun,
docs/slurm.md), a core per rank, with the MPI plug-in the stack needs (slurm/mpi.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from esmperf.launch.base import Job, Launcher, NotRunnable
from esmperf.slurm.batch import check_allocation, srun_command
from esmperf.slurm.mpi import srun_failure


def srun_ranks(planned: Job) -> list[str]:
    """srun starting the ranks of `planned` (here, or inside a batch job)."""
    if planned.launcher_args:
        raise NotRunnable(
            f"its knobs need mpirun options ({' '.join(planned.launcher_args)})"
            ' that srun does not take: set mpi_launcher = "mpirun" in [slurm]'
        )
    config, stack = planned.config, planned.stack
    return srun_command(
        planned.slurm,
        config.ranks,
        config.nodes,
        config.ranks_per_node,
        stack.family if stack else None,
    )


def srun_explained(
    planned: Job, status: str, reason: str | None, output: str, result: dict[str, Any] | None
) -> tuple[str, str | None]:
    """A failed srun's MPI plug-in said in words (slurm/mpi.py)."""
    return srun_failure(status, reason, output, result, planned.config.ranks, planned.argv)


class SrunLauncher(Launcher):
    name = "srun"
    position = 1

    def check(self, environ: Mapping[str, str]) -> None:
        check_allocation(dict(environ))

    def cores(self, ranks: int, here: int) -> int:
        return ranks

    def command(self, planned: Job) -> list[str]:
        return srun_ranks(planned)

    def failure(
        self,
        planned: Job,
        status: str,
        reason: str | None,
        output: str,
        result: dict[str, Any] | None,
    ) -> tuple[str, str | None]:
        return srun_explained(planned, status, reason, output, result)
