"""The one interface every launcher keeps: how a run's ranks are started (the command before
the program), what the run needs in its environment, what to check before a study starts, and
how a failure reads. One implementation per module of this package (mpirun, srun, sbatch,
smpirun); defining the class registers it (esmperf.launch finds it).

A launcher knows a job (`Job`: the ranks, the stack, the command), not the study that planned
it: the study's Job is a Job, and the study runner decides what to do with a launcher
whose runs are measured elsewhere (`batch`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from esmperf.mpi.stacks import Stack
    from esmperf.slurm.batch import SlurmOptions


class JobShape(Protocol):
    """How a job's ranks are laid out."""

    ranks: int
    ranks_per_node: int | None

    @property
    def nodes(self) -> int: ...


class Job(Protocol):
    """What a launcher knows of one run."""

    config: JobShape
    argv: list[str]  # the whole command, once made
    env: dict[str, str]  # the run's environment
    launcher_args: tuple[str, ...]  # launcher options the run's knobs need
    stack: Stack | None
    profiler: Path | None  # the profiler library to preload
    scratch: Path | None  # the run's scratch folder
    slurm: SlurmOptions


class NotRunnable(Exception):
    """The run cannot start here; the message says why (the configuration is skipped)."""


class Launcher:
    """A way of starting the ranks of one run. The defaults are those of a run on this
    machine; an implementation overrides what it does differently."""

    name: ClassVar[str] = ""  # what --launcher (or [slurm] launcher) says to choose it
    simulated: ClassVar[bool] = False  # it starts the smpi stack's simulated clusters
    batch: ClassVar[bool] = False  # its runs are measured elsewhere, as batch jobs
    position: ClassVar[int] = 0  # where `--launcher` lists it
    registry: ClassVar[list[type[Launcher]]] = []

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        Launcher.registry.append(cls)

    def check(self, environ: Mapping[str, str]) -> None:
        """Before the study's first run: raise an error naming the fix if this launcher cannot
        work from here (no allocation, no sbatch on PATH)."""

    def cores(self, ranks: int, here: int) -> int:
        """The cores a run of `ranks` ranks has (`here`: the usable cores of this machine)."""
        return here

    def prepare(self, planned: Job, env: dict[str, str]) -> str | None:
        """Add what the run needs to `env`; return why it cannot run, or None."""
        return None

    def command(self, planned: Job) -> list[str]:
        """The command that starts the ranks; the program and its arguments follow it. Raises
        NotRunnable when the run cannot be started this way."""
        raise NotImplementedError

    def profile(self, planned: Job, env: dict[str, str], out: Path) -> None:
        """Have the run write its profile to `out`: by default the profiler (planned.profiler)
        is preloaded into every process."""
        env["LD_PRELOAD"] = str(planned.profiler)
        env["ESMPROF_OUT"] = str(out)

    def simulated_time(self, stderr: str) -> float | None:
        """The run's simulated time read from its output; None for a run measured here."""
        return None

    def failure(
        self,
        planned: Job,
        status: str,
        reason: str | None,
        output: str,
        result: dict[str, Any] | None,
    ) -> tuple[str, str | None]:
        """(status, reason) of a repetition as this launcher explains it (e.g. a failed MPI
        plug-in of srun); by default as classified."""
        return status, reason
