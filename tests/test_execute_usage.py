"""study.execute reports what the process tree it waited for used (wait4): the CPU time, user +
system, and the peak resident memory; the benchmarks measure their runs with it
(benchmarks/measured_run.py). Bounds only, never how long anything took."""

import sys
from pathlib import Path

from esmperf.study.execute import execute

# touches 64 MiB (a bytes object is written, unlike calloc'd zero pages) and spends some CPU
BURN = "data = b'x' * (64 << 20)\ntotal = sum(range(2_000_000))\nprint(len(data), total)\n"


def test_cpu_time_and_peak_memory_of_the_child(tmp_path: Path) -> None:
    done = execute([sys.executable, "-c", BURN], {}, tmp_path, timeout=300)
    assert done.returncode == 0 and not done.timed_out, done.stderr
    assert done.stdout.split() == [str(64 << 20), str(sum(range(2_000_000)))]
    assert done.cpu_time is not None and done.cpu_time > 0
    assert done.peak_rss is not None and done.peak_rss >= 64 << 20


def test_no_usage_from_a_program_that_cannot_start(tmp_path: Path) -> None:
    done = execute([str(tmp_path / "missing")], {}, tmp_path, timeout=10)
    assert done.returncode is None and "cannot run" in done.stderr
    assert done.cpu_time is None and done.peak_rss is None
