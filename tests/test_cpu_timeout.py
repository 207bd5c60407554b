"""A simulation's timeout counts the CPU seconds of its process group (study/execute.py
cpu_timeout), with a wall limit of WALL_BACKSTOP times it for a run that uses no CPU; a run
here keeps its wall-clock timeout. The reason stored says which clock ended it."""

import sys
from pathlib import Path

import pytest

from esmperf.study import execute as execute_module
from esmperf.study.classify import classify
from esmperf.study.configuration import Configuration
from esmperf.study.execute import execute, group_cpu_seconds

BUSY = [sys.executable, "-c", "while True: pass"]
IDLE = [sys.executable, "-c", "import time; time.sleep(60)"]


def config(timeout: float) -> Configuration:
    return Configuration("sim", "command", 1, "smpi", timeout=timeout)


def test_a_busy_simulation_ends_at_its_cpu_seconds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(execute_module, "WALL_BACKSTOP", 1000.0)  # only the CPU clock ends it
    monkeypatch.setattr(execute_module, "CPU_POLL", 0.05)
    run = execute(BUSY, {}, tmp_path, 0.3, cpu_timeout=True)
    assert run.timed_out and run.timeout_clock == "cpu"
    assert classify(run, config(0.3))[:2] == ("timeout", "timed out after 0.3 s of CPU (killed)")


def test_an_idle_simulation_ends_at_the_wall_backstop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(execute_module, "WALL_BACKSTOP", 3.0)
    run = execute(IDLE, {}, tmp_path, 0.2, cpu_timeout=True)
    status, reason, _ = classify(run, config(0.2))
    assert run.timed_out and status == "timeout"
    assert reason.endswith("s of wall time, 3 times its 0.2 s of CPU (killed)"), reason


def test_a_run_here_keeps_its_wall_clock_timeout(tmp_path: Path) -> None:
    run = execute(IDLE, {}, tmp_path, 0.2)
    assert run.timed_out and run.timeout_clock == "wall"
    assert classify(run, config(0.2))[1] == "timed out after 0.2 s (killed)"


def test_group_cpu_seconds_counts_only_that_group() -> None:
    assert group_cpu_seconds(-1) == 0.0  # no process is in group -1
