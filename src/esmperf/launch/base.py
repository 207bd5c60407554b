"""The one interface every launcher keeps: how a run's ranks are started (the command before
the program), what the run needs in its environment, what to check before a study starts, and
how a failure reads. One implementation per module of this package (mpirun, srun, sbatch,
smpirun); defining the class registers it (esmperf.launch finds it)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from esmperf.study.outcome import Recorder
    from esmperf.study.plan import PlannedRun


class NotRunnable(Exception):
    """The run cannot start here; the message says why (the configuration is skipped)."""


class Launcher:
    """A way of starting the ranks of one run. The defaults are those of a run on this
    machine; an implementation overrides what it does differently."""

    name: ClassVar[str] = ""  # what --launcher (or [slurm] launcher) says to choose it
    simulated: ClassVar[bool] = False  # it starts the smpi stack's simulated clusters
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

    def prepare(self, planned: PlannedRun, env: dict[str, str]) -> str | None:
        """Add what the run needs to `env`; return why it cannot run, or None."""
        return None

    def command(self, planned: PlannedRun) -> list[str]:
        """The command that starts the ranks; the program and its arguments follow it. Raises
        NotRunnable when the run cannot be started this way."""
        raise NotImplementedError

    def profile(self, planned: PlannedRun, env: dict[str, str], out: Path) -> None:
        """Have the run write its profile to `out`: by default the profiler (planned.profiler)
        is preloaded into every process."""
        env["LD_PRELOAD"] = str(planned.profiler)
        env["ESMPROF_OUT"] = str(out)

    def simulated_time(self, stderr: str) -> float | None:
        """The run's simulated time read from its output; None for a run measured here."""
        return None

    def failure(
        self,
        planned: PlannedRun,
        status: str,
        reason: str | None,
        output: str,
        result: dict[str, Any] | None,
    ) -> tuple[str, str | None]:
        """(status, reason) of a repetition as this launcher explains it (e.g. a failed MPI
        plug-in of srun); by default as classified."""
        return status, reason

    def measure_elsewhere(self, recorder: Recorder, todo: list[PlannedRun]) -> bool:
        """Measure `todo` away from this process (as Slurm jobs) and return True; False (the
        default): the runner runs every repetition here."""
        return False
