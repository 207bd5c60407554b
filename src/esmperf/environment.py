"""What a measurement ran on: the machine, its load, the software and the source revision."""

import datetime
import os
import platform
import subprocess
import sys
import time
from importlib import metadata
from typing import Any

from esmperf.paths import repo_root


def usable_cores() -> int:
    """Cores this process may run on (the oversubscription threshold)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def load_average() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def _cpu_times() -> tuple[float, float] | None:
    """(busy, total) jiffies of all CPUs, from /proc/stat."""
    try:
        with open("/proc/stat", encoding="utf-8") as stat:
            fields = [float(value) for value in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0.0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def busy_cores(interval: float = 0.1) -> float:
    """How many cores other processes keep busy right now, sampled over `interval` seconds
    (unlike the load average, this does not remember the runner's own previous run)."""
    first = _cpu_times()
    time.sleep(interval)
    second = _cpu_times()
    if first is None or second is None or second[1] <= first[1]:
        return float("nan")
    return (second[0] - first[0]) / (second[1] - first[1]) * usable_cores()


class BusyBetween:
    """Other processes' busy cores just before each of a series of commands run one at a time,
    without sleeping when it can be avoided: the sample spans the gap since the previous command
    ended (the runner recording it), less the runner's own CPU in that gap, topped up to
    `interval` seconds; a gap longer than `fresh_after` seconds is not "just before": then a
    fresh `interval` is sampled, as busy_cores() does. Not thread-safe: one per series."""

    def __init__(self, interval: float = 0.1, fresh_after: float = 1.0) -> None:
        self.interval = interval
        self.fresh_after = fresh_after
        self.mark: tuple[tuple[float, float] | None, float, float] | None = None

    def ended(self) -> None:
        """A command just ended: the next sample starts here."""
        self.mark = (_cpu_times(), _own_jiffies(), time.monotonic())

    def before(self) -> float:
        """A command is about to start: the cores other processes kept busy since the mark."""
        if self.mark is None or time.monotonic() - self.mark[2] > self.fresh_after:
            self.ended()
        assert self.mark is not None
        first, own_first, started = self.mark
        self.mark = None
        remaining = self.interval - (time.monotonic() - started)
        if remaining > 0:
            time.sleep(remaining)
        second, own_second = _cpu_times(), _own_jiffies()
        if first is None or second is None or second[1] <= first[1]:
            return float("nan")
        others = second[0] - first[0] - (own_second - own_first)
        return max(0.0, others) / (second[1] - first[1]) * usable_cores()


def _own_jiffies() -> float:
    """This process's own CPU (user + system) in /proc/stat's unit."""
    times = os.times()
    return (times.user + times.system) * os.sysconf("SC_CLK_TCK")


def now() -> datetime.datetime:
    return datetime.datetime.now().replace(microsecond=0)


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def memory_gib() -> float:
    try:
        with open("/proc/meminfo", encoding="utf-8") as meminfo:
            for line in meminfo:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 2**20, 1)
    except (OSError, ValueError):
        pass
    return float("nan")


def git_revision() -> tuple[str, bool]:
    """(commit, dirty) of the esmperf source tree; ("unknown", False) outside git."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(repo_root()), *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()

    try:
        return git("rev-parse", "HEAD"), bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        return "unknown", False


def esmperf_version() -> str:
    try:
        return metadata.version("esmperf")
    except metadata.PackageNotFoundError:
        return "unknown"


def machine_environment(command: str) -> dict[str, Any]:
    """The session row of the store."""
    commit, dirty = git_revision()
    return {
        "started": now(),
        "command": command,
        "hostname": platform.node(),
        "cpu_model": cpu_model(),
        "cores": os.cpu_count() or 1,
        "usable_cores": usable_cores(),
        "memory_gib": memory_gib(),
        "kernel": platform.release(),
        "os": platform.platform(),
        "python": sys.version.split()[0],
        "esmperf_version": esmperf_version(),
        "git_commit": commit,
        "git_dirty": dirty,
        "load_at_start": load_average(),
    }
