"""Run one repetition's command: in its own process group, with a timeout that ends the whole
group (the launcher and every rank), keeping the end of its output, its peak memory and the
program's own error line. The finalize grace: once the program has printed its verified result
line, it gets FINALIZE_GRACE seconds to exit cleanly, then the group is ended and the run
counts (MPICH over TCP sometimes hangs in MPI_Finalize: without the grace each such run waited
for its whole timeout)."""

import os
import re
import resource
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from esmperf.profile.interrupt import keep_partials
from esmperf.store.database import TAIL_CHARS

KILL_GRACE = 3.0  # seconds between SIGTERM and SIGKILL for a run that timed out
FINALIZE_GRACE = 3.0  # seconds a run may take to exit after its verified result line
WALL_BACKSTOP = 10.0  # a CPU-timed run's wall limit, in multiples of its timeout
CPU_POLL = 1.0  # seconds between two readings of a CPU-timed run's CPU time
# A program's own error line ("pop: error: ...", docs/workloads.md), wherever a launcher's or
# simulator's chatter comes after it (smpirun ends with its own timing and advice lines).
PROGRAM_ERROR = re.compile(r"^\S+: error: \S")
# The profiler's (or the world census's) own message when it stops a run, e.g. its ABI mismatch
# ("esmprof: the program runs Open MPI ... but the profiler was built for the MPICH ABI"): the
# reason a run failed, wherever a runtime's backtrace follows it. Not its notices.
PROFILER_ERROR = re.compile(r"^esm(?:prof|world): (?!profile written to |\S+ exports \d+ MPI)")


class Interrupt(KeyboardInterrupt):
    """A study stopped by a signal (Ctrl-C: SIGINT; `kill PID`: SIGTERM), which it names."""

    def __init__(self, signum: signal.Signals = signal.SIGINT) -> None:
        super().__init__(signum.name)
        self.signum = signum


class RunInterrupted(Interrupt):
    """A run ended by an interrupt, with what it had done (its output so far): the study
    records it, and its partial profile, before it stops."""

    def __init__(self, signum: signal.Signals, execution: "Execution") -> None:
        super().__init__(signum)
        self.execution = execution


@dataclass
class Execution:
    returncode: int | None
    elapsed: float
    stdout: str
    stderr: str
    timed_out: bool
    simulated_time: float | None = None  # SimGrid's "Simulated time" of an smpi run
    peak_rss: float | None = None  # bytes: the launched process tree's peak resident memory
    cpu_time: float | None = None  # seconds: user + system CPU of the process tree waited for
    program_error: str = ""  # the program's own last error line, even if cut from the tail
    ended_after_result: bool = False  # ended FINALIZE_GRACE s after its verified result line
    timeout_clock: str = "wall"  # what its timeout counted: "wall" seconds, or "cpu" seconds


def execute(
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    timeout: float,
    result_seen: Callable[[str], bool] | None = None,
    stop: threading.Event | None = None,
    cpu_timeout: bool = False,
    profile: Path | None = None,
    say: Callable[[str], None] = print,
) -> Execution:
    """Run `argv` in its own process group; on timeout, terminate the whole group (mpirun and
    every rank), keeping the output so far. `result_seen(line)`: whether a line of stdout is
    the program's verified result; after the first such line the run has FINALIZE_GRACE
    seconds left, then it is ended (ended_after_result). `stop`: when set (from another
    thread: a study stopped while runs go side by side), the group is ended and
    KeyboardInterrupt raised, as on Ctrl-C. `cpu_timeout`: `timeout` counts the CPU seconds of
    the process group (a simulation), with a wall limit of WALL_BACKSTOP times it.
    `profile`: where a profiled run's ranks write; interrupted, they are first asked for their
    partial profiles (profile/interrupt.py, told through `say`), then the group is ended and
    RunInterrupted raised with the output so far."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        try:
            process = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdout=out,
                stderr=err,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as error:
            return Execution(None, 0.0, "", f"cannot run {argv[0]}: {error.strerror}", False)
        timed_out = ended = False
        usage = None
        watch = FinalizeGrace(out.fileno(), result_seen) if result_seen else None
        try:
            cpu_limit = timeout if cpu_timeout else None
            wall = timeout * (WALL_BACKSTOP if cpu_timeout else 1.0)
            usage = _wait(process, started + wall, watch, stop, cpu_limit)
        except subprocess.TimeoutExpired:
            ended = watch is not None and watch.shortened
            timed_out = not ended
            _kill_group(process)
        except KeyboardInterrupt as stopped:  # Ctrl-C: leave no ranks behind, keep profiles
            signum = getattr(stopped, "signum", signal.SIGINT)
            try:
                if profile is not None:
                    keep_partials(process.pid, profile, signum, say, launcher=Path(argv[0]).name)
            finally:
                _kill_group(process)
            execution = Execution(
                process.returncode, time.monotonic() - started, tail(out), tail(err), False
            )
            raise RunInterrupted(signum, execution) from None
        except BaseException:
            _kill_group(process)
            raise
        elapsed = time.monotonic() - started
        return Execution(
            process.returncode,
            elapsed,
            tail(out),
            tail(err),
            timed_out,
            peak_rss=usage.ru_maxrss * 1024.0 if usage else None,  # KiB on Linux
            cpu_time=usage.ru_utime + usage.ru_stime if usage else None,
            program_error=_program_error(err),
            ended_after_result=ended,
            timeout_clock="cpu" if cpu_timeout else "wall",
        )


class FinalizeGrace:
    """The finalize grace of one run, the one place that decides it: for a local run (execute)
    and a batch job's (slurm/finalize_watch.py). Reads the run's stdout as it grows; once its
    verified result line is out (`result_seen`), the run may take `seconds` (default
    FINALIZE_GRACE) more to exit, then it is ended and counts."""

    def __init__(
        self, fileno: int, result_seen: Callable[[str], bool], seconds: float | None = None
    ) -> None:
        self.fileno, self.result_seen, self.seconds = fileno, result_seen, seconds
        self.offset, self.partial, self.seen = 0, b"", False
        self.graced = False  # the grace has started
        self.ends_at = 0.0
        self.shortened = False  # the grace, not the timeout, ends the run

    def check(self) -> bool:
        """Whether the verified result line has been printed (reads only what is new)."""
        if self.seen:
            return True
        new = os.pread(self.fileno, 1 << 20, self.offset)
        while new:
            self.offset += len(new)
            *lines, self.partial = (self.partial + new).split(b"\n")
            for line in lines:
                if self.result_seen(line.decode("utf-8", errors="replace")):
                    self.seen = True
                    return True
            new = os.pread(self.fileno, 1 << 20, self.offset)
        return False

    def deadline(self, deadline: float) -> float:
        """When the run must end (time.monotonic): `deadline`, or the end of the grace that
        starts when the result line is first seen, if that comes first (then `shortened`)."""
        if not self.graced and self.check():
            self.graced = True
            ends = time.monotonic() + (FINALIZE_GRACE if self.seconds is None else self.seconds)
            if ends < deadline:
                self.ends_at, self.shortened = ends, True
        return self.ends_at if self.shortened else deadline


def _wait(
    process: subprocess.Popen[bytes],
    deadline: float,
    watch: FinalizeGrace | None = None,
    stop: threading.Event | None = None,
    cpu_limit: float | None = None,
) -> resource.struct_rusage:
    """Wait for `process` until `deadline`, or the end of `watch`'s finalize grace
    (TimeoutExpired after it); return the resources used by the process and by the
    descendants it waited for (Linux wait4: for smpirun, the simulator that runs every
    simulated rank): peak resident memory (ru_maxrss, KiB), user and system CPU. `cpu_limit`:
    TimeoutExpired also when the process group has used that many CPU seconds."""
    pause = 0.001
    next_cpu_reading = time.monotonic() + CPU_POLL
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid == process.pid:
            process.returncode = os.waitstatus_to_exitcode(status)
            return usage
        if watch is not None:
            deadline = watch.deadline(deadline)
        if stop is not None and stop.is_set():
            raise KeyboardInterrupt
        if time.monotonic() >= deadline:
            raise subprocess.TimeoutExpired(process.args, 0)
        if cpu_limit is not None and time.monotonic() >= next_cpu_reading:
            next_cpu_reading = time.monotonic() + CPU_POLL
            if group_cpu_seconds(process.pid) >= cpu_limit:
                raise subprocess.TimeoutExpired(process.args, 0)
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def group_cpu_seconds(group: int) -> float:
    """The CPU seconds (user + system) used by the live processes of process group `group`
    and by the children they have waited for (Linux /proc; 0 elsewhere)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as file:
                stat = file.read()
        except OSError:  # ended meanwhile
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()  # after "pid (comm) "
        if int(fields[2]) == group:  # pgrp; utime stime cutime cstime follow at 11-14
            total += sum(int(value) for value in fields[11:15])
    return total / ticks


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    for sig, wait in ((signal.SIGTERM, KILL_GRACE), (signal.SIGKILL, None)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _program_error(file: Any) -> str:
    """The last "<program>: error: ..." line of the whole output (a simulator's thousands of
    per-rank warnings after it may push it out of the stored tail), else the profiler's last
    message that stopped the run (a Fortran runtime's backtrace comes after it)."""
    file.seek(0)
    found = profiler = ""
    for raw in file:
        line = raw.decode("utf-8", errors="replace")
        if PROGRAM_ERROR.match(line):
            found = " ".join(line.split())
        elif PROFILER_ERROR.match(line):
            profiler = " ".join(line.split())
    limit = 200 if found else 400  # the profiler's message ends with its fix: keep it
    found = found or profiler
    return found if len(found) <= limit else found[: limit - 1] + "…"


def tail(file: Any) -> str:
    file.seek(0, os.SEEK_END)
    size = file.tell()
    file.seek(max(0, size - TAIL_CHARS))
    text = file.read().decode("utf-8", errors="replace")
    return text if size <= TAIL_CHARS else "[... earlier output cut ...]\n" + text
