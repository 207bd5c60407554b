"""Simulated configurations side by side. SimGrid SMPI runs a whole simulated cluster in one
single-threaded process, so a study of seed-scale simulations uses one core of the machine while
the others idle. Configurations whose simulated time does not depend on this machine's load
(computation = model or off: no measured compute is charged) are independent of each other and
may run at the same time, `jobs` of them at once. Everything else (runs here, and simulations
that charge measured compute) runs alone, one after another, as before.

Each configuration's measurement is a generator (orchestrate.py `StudyRunner._steps`): it
yields the command of its next repetition and is sent back what happened (`Ran`: the Execution
and the machine's load around it, taken when the command really ran). Only the commands run
in worker threads; every store read and write stays in the calling thread, with the store's one
owner, in the same order per configuration as a sequential run. rounds.py drives the same
generators one repetition each per round, for configurations measured here."""

import datetime
import os
import threading
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from esmperf.environment import busy_cores, load_average, now
from esmperf.study.execute import Execution, RunInterrupted

INDEPENDENT_COMPUTATION = ("model", "off")  # a simulated time that the host's load cannot change


@dataclass(frozen=True)
class Request:
    """One repetition's command, as execute() takes it."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    timeout: float
    result_seen: Callable[[str], bool] | None = None
    cpu_timeout: bool = False  # a simulation: its timeout counts CPU seconds (execute.py)
    profile: Path | None = None  # where a profiled run's ranks write (kept when interrupted)


@dataclass(frozen=True)
class Ran:
    """One command's execution and what the machine did around it."""

    execution: Execution
    started: datetime.datetime
    load_before: float
    busy_cores_before: float  # other processes' cores just before (environment.busy_cores)
    load_after: float
    round_number: int | None = (
        None  # the interleaved round it ran in (rounds.py); None: not in rounds
    )

    def conditions(self) -> dict[str, Any]:
        """The repetition row's columns for them."""
        return {
            "started": self.started,
            "load_before": self.load_before,
            "busy_cores_before": self.busy_cores_before,
            "load_after": self.load_after,
            "round_number": self.round_number,
        }


Steps = Generator[Request, Ran, None]


def default_jobs() -> int:
    """The cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def independent(simulated: bool, knobs: dict[str, str]) -> bool:
    """Whether a configuration may run beside others: simulated, and its simulated time
    charges no compute measured here."""
    return simulated and knobs.get("computation", "measured") in INDEPENDENT_COMPUTATION


def run_steps(steps: Steps, execute: Callable[..., Execution]) -> None:
    """Drive one configuration's generator to its end, each command run in this thread."""
    try:
        request = next(steps)
        while True:
            try:
                ran = run_request(execute, request)
            except RunInterrupted as stopped:
                steps.throw(stopped)  # the configuration records it, then stops the study
                raise
            request = steps.send(ran)
    except StopIteration:
        return


def run_side_by_side(
    all_steps: Iterable[Steps], jobs: int, execute: Callable[..., Execution]
) -> None:
    """Drive the configurations' generators with at most `jobs` commands running at once; a
    configuration has at most one repetition running at a time (its repetitions stay in order)
    and the generators themselves (their store writes) run in this thread only."""
    pending = iter(all_steps)
    running: dict[Future[Ran], Steps] = {}
    stop = threading.Event()  # set on Ctrl-C: every running command ends its process group
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:

        def start(steps: Steps, request: Request) -> None:
            running[pool.submit(run_request, execute, request, stop)] = steps

        def start_next() -> None:
            for steps in pending:  # a configuration with nothing left to run ends at once
                try:
                    start(steps, next(steps))
                    return
                except StopIteration:
                    continue

        for _ in range(max(1, jobs)):
            start_next()
        try:
            while running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    steps = running.pop(future)
                    try:
                        start(steps, steps.send(future.result()))
                    except StopIteration:
                        start_next()
        except BaseException:  # Ctrl-C, SIGTERM: end every running command, then stop
            stop.set()
            for future in running:
                future.cancel()
            raise


def run_request(
    execute: Callable[..., Execution],
    request: Request,
    stop: threading.Event | None = None,
    round_number: int | None = None,
    busy: Callable[[], float] = busy_cores,
) -> Ran:
    """Run one request, with the machine's load just before and after it (`busy`: how the
    cores other processes keep busy are sampled)."""
    extra: dict[str, Any] = {"stop": stop} if stop is not None else {}
    if request.cpu_timeout:
        extra["cpu_timeout"] = True
    if request.profile is not None:
        extra["profile"] = request.profile
    load_before, busy_before, started = load_average(), busy(), now()
    execution = execute(
        request.argv,
        request.env,
        request.cwd,
        request.timeout,
        result_seen=request.result_seen,
        **extra,
    )
    return Ran(execution, started, load_before, busy_before, load_average(), round_number)
