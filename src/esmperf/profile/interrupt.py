"""A profiled run that is interrupted (a user's Ctrl-C, SIGTERM from a batch system, SIGHUP from a
closed terminal) keeps every rank's partial profile.

The launcher runs in a process group of its own, so the interrupt reaches esmperf alone and
esmperf decides the order: first it asks each rank running here for its partial line (the
profiler's ESM_PARTIAL_NOW signal, native/prof/prof_signal.c, which ends nothing and carries
the signal esmperf got) and waits, within a bounded grace said on the console, until each has
written it; only then does it pass the signal on to the launcher, whose own way of ending the
ranks (mpirun's SIGTERM, then SIGKILL a second later) could otherwise kill a rank before it has
written. Ranks on other hosts are reached through the launcher only. A second interrupt, a
second or more after the first (`timeout` sends its signal twice at once), stops the waiting."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from esmperf.profile.read import partial_dir

PARTIAL_NOW = signal.SIGRTMIN + 6  # ESM_PARTIAL_NOW in native/prof/prof_signal.c
HELPER_THREAD = "esmprof-signals"  # the thread a rank that handles signals runs (prof_signal.c)
GRACE = 10.0  # seconds for the ranks' partial lines, then again for the launcher to end
POLL = 0.05
# Ctrl-C; a batch system's or a user's kill; the terminal closed (the launcher, in its own
# process group, no longer gets the terminal's signals itself)
INTERRUPTS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
REPEAT = 1.0  # seconds: an interrupt this soon after the first is the same one


@dataclass
class Ended:
    """How a profiled run ended: its launcher's exit status and, when it was interrupted, the
    signal esmperf got and the pids of the ranks here that had not written their line in the
    grace."""

    returncode: int
    interrupt: signal.Signals | None = None
    silent: list[int] = field(default_factory=list)


def run_profiled(
    command: Sequence[str], env: Mapping[str, str], out: Path, say: Callable[[str], None]
) -> Ended:
    """Run `command` to its end; on SIGINT, SIGTERM or SIGHUP keep the ranks' partial profiles
    of `out` as the module says, then end the run. Raises OSError when the command cannot
    start."""
    received: list[tuple[signal.Signals, float]] = []

    def on_interrupt(signum: int, _frame: object) -> None:
        now = time.monotonic()
        if not received or now - received[0][1] >= REPEAT:
            received.append((signal.Signals(signum), now))

    handled = [s for s in INTERRUPTS if signal.getsignal(s) != signal.SIG_IGN]
    previous = {s: signal.signal(s, on_interrupt) for s in handled}
    try:
        stdin = subprocess.DEVNULL if sys.stdin is not None and sys.stdin.isatty() else None
        process = subprocess.Popen(list(command), env=dict(env), process_group=0, stdin=stdin)
        while not received:
            if _wait(process, POLL) is not None:
                return Ended(process.returncode)
        return _interrupted(process, received, out, say)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _interrupted(
    process: subprocess.Popen[bytes],
    received: list[tuple[signal.Signals, float]],
    out: Path,
    say: Callable[[str], None],
) -> Ended:
    interrupt = received[0][0]
    launcher = Path(str(process.args[0])).name  # type: ignore[index]
    silent = keep_partials(process.pid, out, interrupt, say, lambda: len(received) == 1, launcher)
    _signal(process.pid, interrupt)
    deadline = time.monotonic() + GRACE
    while _wait(process, POLL) is None:
        if time.monotonic() >= deadline or len(received) > 1:
            why = f"did not end in {GRACE:g} s" if len(received) == 1 else "a second interrupt"
            say(f"esmperf: {launcher}: {why}: killing the run")
            for pid in [process.pid, *descendants(process.pid)]:
                _signal(pid, signal.SIGKILL)
            process.wait()
    return Ended(process.returncode, interrupt, silent)


def keep_partials(
    launcher_pid: int,
    out: Path,
    interrupt: signal.Signals,
    say: Callable[[str], None],
    still_waiting: Callable[[], bool] = lambda: True,
    launcher: str = "the launcher",
) -> list[int]:
    """Ask the profiled ranks that `launcher_pid` started here for their partial lines of
    `out` (carrying `interrupt`) and wait, up to GRACE and while `still_waiting()`, until each
    has written it or ended: the first half of the ordered interrupt, before the launcher is
    told. Returns the pids of the ranks that stayed silent."""
    ranks = local_ranks(launcher_pid)
    if ranks:
        say(
            f"esmperf: {interrupt.name}: asking the {len(ranks)} ranks here for their partial "
            f"profiles (waiting up to {GRACE:g} s), then passing {interrupt.name} on to {launcher}"
        )
        for pid in ranks:
            _ask_partial(pid, interrupt)
    else:
        say(f"esmperf: {interrupt.name}: passing it on to {launcher} (no profiled rank here)")
    deadline = time.monotonic() + GRACE
    silent = set(ranks)
    while silent and still_waiting() and time.monotonic() < deadline:
        silent -= _answered(out, interrupt.name) | {pid for pid in silent if not _alive(pid)}
        time.sleep(POLL if silent else 0)
    if ranks:
        said = f"esmperf: {len(ranks) - len(silent)} of {len(ranks)} ranks here wrote theirs"
        late = f" (not in {GRACE:g} s: pids {', '.join(map(str, sorted(silent)))})"
        say(said + (late if silent else ""))
    return sorted(silent)


def _wait(process: subprocess.Popen[bytes], seconds: float) -> int | None:
    try:
        return process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        return None


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _ask_partial(pid: int, interrupt: signal.Signals) -> None:
    """ESM_PARTIAL_NOW to `pid`, queued with the signal esmperf got (its reason in the line)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.sigqueue.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_void_p)
        if libc.sigqueue(pid, PARTIAL_NOW, int(interrupt)) == 0:
            return
    except (OSError, AttributeError):
        pass
    _signal(pid, PARTIAL_NOW)  # no sigqueue: the line's reason is then "requested"


def _answered(out: Path, reason: str) -> set[int]:
    """The pids of the ranks whose partial line of `out` says it was written for `reason`."""
    pids = set()
    for file in partial_dir(out).glob("*.jsonl"):
        try:
            record = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and record.get("partial") in (reason, "requested"):
            pids.add(record.get("pid"))
    return pids


def local_ranks(launcher: int) -> list[int]:
    """The pids of the profiled ranks started by the process `launcher` on this host: its
    descendants that run the profiler's signal thread."""
    return [pid for pid in descendants(launcher) if _runs_helper(pid)]


def descendants(pid: int) -> list[int]:
    """The processes started by `pid`, their children and so on (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], list(children.get(pid, []))
    while todo:
        child = todo.pop()
        todo.extend(children.get(child, []))
        found.append(child)
    return sorted(found)


def _runs_helper(pid: int) -> bool:
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return False
    for task in tasks:
        try:
            if (task / "comm").read_text().strip() == HELPER_THREAD:
                return True
        except OSError:
            continue
    return False
