"""Repetitions interleaved in randomised rounds (study/rounds.py): every configuration runs one
repetition per round while it has one to run, its own repetitions in order; the order of a
round is shuffled by the seed, so the same seed gives the same order; the round each
repetition ran in is stored, with the seed, and a study resumes without rerunning anything."""

import os
import random
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from esmperf import environment
from esmperf.store.database import Store
from esmperf.study.execute import Execution
from esmperf.study.file import study_from_dict
from esmperf.study.orchestrate import run_study
from esmperf.study.rounds import run_in_rounds
from esmperf.study.side_by_side import Request, Steps

QUIET = Console(file=open(os.devnull, "w"))  # noqa: SIM115


@pytest.fixture(autouse=True)
def no_load_sampling(monkeypatch: pytest.MonkeyPatch) -> None:
    """The load is sampled for up to 0.1 s before each command: not needed here."""

    class Idle:
        def before(self) -> float:
            return 0.0

        def ended(self) -> None:
            pass

    monkeypatch.setattr("esmperf.study.rounds.BusyBetween", Idle)


def runner(ran: list[str]):
    def execute(argv: list[str], *_: Any, **__: Any) -> Execution:
        ran.append(argv[0])
        return Execution(0, 0.0, argv[0], "", False)

    return execute


def configuration(name: str, reps: int, seen: list[tuple[str, int, int | None]]) -> Steps:
    for rep in range(reps):
        done = yield Request([f"{name}{rep}"], {}, Path("."), 1.0)
        assert done.execution.stdout == f"{name}{rep}"
        seen.append((name, rep, done.round_number))


def test_each_round_runs_one_repetition_of_every_configuration_still_running() -> None:
    ran: list[str] = []
    seen: list[tuple[str, int, int | None]] = []
    reps = {"a": 3, "b": 1, "c": 0, "d": 4}
    steps = [configuration(n, k, seen) for n, k in reps.items()]
    rounds = run_in_rounds(steps, runner(ran), random.Random(7))
    assert rounds == 4
    for name, count in reps.items():  # in order, repetition r in round r + 1
        assert [(rep, rnd) for n, rep, rnd in seen if n == name] == [
            (r, r + 1) for r in range(count)
        ]
    by_round = [sorted(c[0] for c in ran if c[1:] == str(r)) for r in range(4)]
    assert by_round == [["a", "b", "d"], ["a", "d"], ["a", "d"], ["d"]]
    assert len(ran) == 8


def test_the_seed_decides_the_order() -> None:
    def order(seed: int) -> list[str]:
        ran: list[str] = []
        steps = [configuration(n, 6, []) for n in "abcdef"]
        run_in_rounds(steps, runner(ran), random.Random(seed))
        return ran

    assert order(1) == order(1)
    assert order(1) != order(2)
    first_in_round = {order(seed)[0][0] for seed in range(20)}
    assert len(first_in_round) > 1  # shuffled, not always the study's order
    ran = order(3)
    assert all(sorted(ran[6 * r : 6 * r + 6]) == [f"{n}{r}" for n in "abcdef"] for r in range(6))


def test_a_study_stores_its_rounds_and_seed_and_resumes(tmp_path: Path) -> None:
    block = {
        "name": "echo",
        "command": ["sh", "-c", "echo 'rate: 1.5'"],
        "fom": {"regex": r"rate: (\S+)", "unit": "steps/s"},
        "repeats": {"warmup": 1, "min": 3, "max": 3},
    }
    text = {
        "name": "rounds",
        "defaults": {"launcher": False, "ranks": 1},
        "matrix": [block, {**block, "name": "echo2"}],
    }
    study = study_from_dict(text, "test")
    store = tmp_path / "r.duckdb"
    outcome = run_study(study, store, [], {}, QUIET, order_seed=42)
    assert (outcome.complete, outcome.repetitions) == (2, 8)
    with Store(store, read_only=True) as opened:
        rows = opened.rows(
            "SELECT run_key, rep, kind, round_number FROM repetition ORDER BY run_key, rep"
        )
        seeds = opened.rows("SELECT order_seed FROM session")
    assert [row["order_seed"] for row in seeds] == [42]
    for key in {row["run_key"] for row in rows}:
        mine = [(r["kind"], r["round_number"]) for r in rows if r["run_key"] == key]
        assert mine == [("warmup", 1), ("measure", 2), ("measure", 3), ("measure", 4)]
    again = run_study(study, store, [], {}, QUIET)
    assert (again.repetitions, again.complete) == (0, 2)


def test_the_load_is_sampled_over_the_gap_between_commands(monkeypatch: pytest.MonkeyPatch):
    """BusyBetween sleeps only what the gap since the last command lacks of its interval, and
    samples afresh after a long gap; the runner's own CPU in the gap is not another's."""
    clock = [100.0]
    slept: list[float] = []
    jiffies = {"cpu": (1000.0, 4000.0), "own": 0.0}
    monkeypatch.setattr(environment.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(environment.time, "sleep", lambda s: slept.append(round(s, 6)))
    monkeypatch.setattr(environment, "_cpu_times", lambda: jiffies["cpu"])
    monkeypatch.setattr(environment, "_own_jiffies", lambda: jiffies["own"])
    monkeypatch.setattr(environment, "usable_cores", lambda: 2)
    busy = environment.BusyBetween(interval=0.1, fresh_after=1.0)
    busy.ended()
    clock[0] += 0.25  # recording took longer than the interval: no sleep
    jiffies.update(cpu=(1030.0, 4050.0), own=20.0)  # 30 busy of 50, 20 of them the runner's
    assert busy.before() == pytest.approx(10 / 50 * 2) and slept == []
    busy.ended()
    clock[0] += 0.04  # a short gap: topped up to the interval
    busy.before()
    assert slept == [pytest.approx(0.06)]
    busy.ended()
    clock[0] += 5.0  # a long gap is not "just before": a fresh interval
    busy.before()
    assert slept[-1] == pytest.approx(0.1)
