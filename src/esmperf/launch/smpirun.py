"""smpirun: the smpi stack's ranks on a simulated cluster, all in one process on this machine
(SimGrid SMPI, docs/simulate.md); the run's time is the simulated one. Chosen for the smpi
stack with --launcher local; a simulated cluster does not run under Slurm. The simulator
(smpimain, not a simulated rank) gets the message counter preloaded (native/simcount), which
prints how many messages the network model carried."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from esmperf.launch.mpirun import MpirunLauncher
from esmperf.mpi.build import build_dir
from esmperf.mpi.stacks import Stack

if TYPE_CHECKING:
    from esmperf.launch.base import Job

SIMULATED_TIME = re.compile(r"Simulated time: ([0-9.eE+-]+) seconds")
SIMULATED_MESSAGES = re.compile(r"^esmsim: (\d+) messages$", re.MULTILINE)


def simulated_time(stderr: str) -> float | None:
    """The simulated time smpirun prints at the end (--cfg=smpi/display-timing:yes)."""
    matches = SIMULATED_TIME.findall(stderr)
    return float(matches[-1]) if matches else None


def simulated_messages(stderr: str) -> int | None:
    """The messages the simulator's network model carried (the counter's last line), None
    without the counter."""
    matches = SIMULATED_MESSAGES.findall(stderr)
    return int(matches[-1]) if matches else None


def message_counter(stack: Stack) -> Path:
    """Where the simulator's message counter is built (native/simcount)."""
    return build_dir(stack) / "simcount" / "libesmsimcount.so"


def counter_arguments(stack: Stack, preload: str = "") -> list[str]:
    """smpirun's options that preload the message counter into the simulator alone (not into
    smpirun's shell and its helpers), before what the run's environment preloads already
    (`preload`: the TCP model's plugin, mpi/tcp_model.py; the wrapper's LD_PRELOAD replaces
    the environment's); none when it is not built."""
    counter = message_counter(stack)
    preloads = ":".join(filter(None, (str(counter), preload)))
    if not counter.is_file() or any(c.isspace() for c in preloads):
        return []  # smpirun splits its -wrapper on blanks
    return ["-wrapper", f"env LD_PRELOAD={preloads}"]


class SmpirunLauncher(MpirunLauncher):
    """smpirun with the platform, host file and --cfg flags of the run's knob setting (its
    launcher_args, knobs.smpi_setting), and the simulator's message counter."""

    simulated = True

    def command(self, planned: Job) -> list[str]:
        assert planned.stack is not None
        ranks = super().command(planned)
        preload = planned.env.get("LD_PRELOAD", "")
        return [*ranks[:3], *counter_arguments(planned.stack, preload), *ranks[3:]]

    def prepare(self, planned: Job, env: dict[str, str]) -> str | None:
        env["TMPDIR"] = str(planned.scratch)  # smpirun's per-rank copies of the program
        return None

    def profile(self, planned: Job, env: dict[str, str], out: Path) -> None:
        """The smpi stack's programs have the profiler linked in (nothing can be preloaded
        into simulated ranks): it records when ESMPROF_OUT is set (docs/profiler.md)."""
        env["ESMPROF_OUT"] = str(out)

    def simulated_time(self, stderr: str) -> float | None:
        return simulated_time(stderr)
