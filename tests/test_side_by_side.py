"""Simulations side by side (study/side_by_side.py, `esmperf study --jobs N`): every
repetition runs exactly once, each configuration's repetitions in order and one at a time, at
most N commands at once, the store written by the calling thread only; a study of simulated
configurations stores the same results side by side as one after another."""

import os
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from rich.console import Console

from esmperf.mpi.build import build_dir
from esmperf.mpi.stacks import discover_stacks
from esmperf.store.database import Store
from esmperf.study.execute import Execution
from esmperf.study.file import study_from_dict
from esmperf.study.orchestrate import longest_first, run_study
from esmperf.study.side_by_side import (
    Request,
    Steps,
    default_jobs,
    independent,
    run_side_by_side,
    run_steps,
)
from esmperf.workloads import load_workloads

QUIET = Console(file=open(os.devnull, "w"))  # noqa: SIM115


class FakeRunner:
    """Counts the commands it runs, and how many at once. The first `together` commands wait
    for each other (a barrier): they can only all return if they ran at the same time."""

    def __init__(self, together: int = 1) -> None:
        self.lock = threading.Lock()
        self.running = 0
        self.most = 0
        self.ran: list[tuple[str, ...]] = []
        self.barrier = threading.Barrier(together, timeout=60)
        self.waiting = together

    def __call__(self, argv: list[str], env: dict[str, str], cwd: Path, timeout: float, **_: Any):
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
            self.ran.append(tuple(argv))
            wait, self.waiting = self.waiting > 0, self.waiting - 1
        if wait:
            self.barrier.wait()  # BrokenBarrierError if fewer ran at once
        with self.lock:
            self.running -= 1
        return Execution(0, 0.0, " ".join(argv), "", False)


def configuration(name: str, reps: int, log: list[tuple[str, str, str]]) -> Steps:
    """A configuration of `reps` repetitions that logs (name, rep, thread) as it records."""
    for rep in range(reps):
        ran = yield Request([name, str(rep)], {}, Path("."), 10.0)
        assert ran.execution.stdout == f"{name} {rep}"  # its own command's execution comes back
        log.append((name, str(rep), threading.current_thread().name))


@pytest.mark.parametrize("jobs", [1, 2, 3, 8])
def test_every_repetition_runs_once_in_order_at_most_jobs_at_once(jobs: int) -> None:
    runner = FakeRunner(together=min(jobs, 4))  # 4 configurations have anything to run
    log: list[tuple[str, str, str]] = []
    reps = {"a": 3, "b": 1, "c": 0, "d": 4, "e": 2}
    run_side_by_side((configuration(n, k, log) for n, k in reps.items()), jobs, runner)
    assert sorted(runner.ran) == sorted((n, str(r)) for n, k in reps.items() for r in range(k))
    assert len(log) == sum(reps.values()) == 10
    for name, count in reps.items():  # each configuration's repetitions in order
        assert [rep for n, rep, _ in log if n == name] == [str(r) for r in range(count)]
    assert {thread for *_, thread in log} == {threading.current_thread().name}
    assert min(jobs, 4) <= runner.most <= jobs


def test_the_first_configurations_start_first() -> None:
    """Causality, not timestamps: with 2 at once, the first two configurations' first commands
    must run together (the barrier holds both until both run) before anything else can start,
    so they are the first two commands run, whatever the machine's load."""
    runner = FakeRunner(together=2)
    log: list[tuple[str, str, str]] = []
    reps = {"big": 2, "big2": 2, "small": 1, "small2": 1}
    run_side_by_side((configuration(n, k, log) for n, k in reps.items()), 2, runner)
    assert set(runner.ran[:2]) == {("big", "0"), ("big2", "0")}


def test_side_by_side_starts_with_the_most_simulated_ranks() -> None:
    plans = [_plan("a", 1), _plan("b", 4), _plan("c", 2), _plan("d", 4), _plan("e", 1)]
    assert [p.config.label for p in longest_first(plans)] == ["b", "d", "c", "a", "e"]


def _plan(label: str, ranks: int) -> Any:
    return SimpleNamespace(config=SimpleNamespace(label=label, ranks=ranks))


def test_one_configuration_alone_runs_in_this_thread() -> None:
    runner = FakeRunner()
    log: list[tuple[str, str, str]] = []
    run_steps(configuration("a", 3, log), runner)
    assert runner.ran == [("a", "0"), ("a", "1"), ("a", "2")] and len(log) == 3


def test_only_simulations_that_charge_no_measured_compute_go_side_by_side() -> None:
    assert independent(True, {"computation": "model"})
    assert independent(True, {"computation": "off", "platform": "gige"})
    assert not independent(True, {})  # computation = measured (the default)
    assert not independent(True, {"computation": "measured"})
    assert not independent(False, {"computation": "model"})  # a run here
    assert default_jobs() >= 1


def test_a_failing_command_stops_only_its_configuration() -> None:
    def runner(argv: list[str], *_: Any, **__: Any) -> Execution:
        return Execution(1 if argv[0] == "bad" else 0, 0.0, " ".join(argv), "", False)

    recorded: list[str] = []

    def config(name: str) -> Steps:
        for rep in range(3):
            ran = yield Request([name, str(rep)], {}, Path("."), 1.0)
            recorded.append(f"{name}{rep}")
            if ran.execution.returncode != 0:
                return

    run_side_by_side([config("ok"), config("bad"), config("ok2")], 2, runner)
    assert sorted(recorded) == ["bad0", "ok0", "ok1", "ok2", "ok20", "ok21", "ok22"]


@pytest.fixture(scope="module")
def smpi_built() -> None:
    stack = discover_stacks().by_id("smpi")
    if stack is None:
        pytest.skip("SimGrid SMPI is not installed (smpicc, smpirun): make setup installs it")
    if not (build_dir(stack) / "apps" / "hycom" / "hycom").is_file():
        pytest.skip("the smpi stack is not built: run `esmperf build --stack smpi`")


def stored(path: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    with Store(path, read_only=True) as store:
        runs = sorted((r["run_key"], r["status"], r["ranks"], r["knobs"]) for r in store.runs())
        reps = store.rows(
            "SELECT run_key, rep, kind, status, fom, wall, verification FROM repetition "
            "ORDER BY run_key, rep"
        )
    return runs, [tuple(r.values()) for r in reps]


def test_a_simulated_study_stores_the_same_results_side_by_side(
    smpi_built: None, tmp_path: Path
) -> None:
    block = {
        "workload": "hycom",
        "size": "S",
        "steps": 2,
        "stack": "smpi",
        "ranks": [2, 4],
        "ranks_per_node": 2,
        "knobs": {
            "platform": ["gige", "ib-qdr"],
            "computation": ["model"],
            "machine": ["dell-m610"],
        },
        "repeats": {"warmup": 0, "min": 2, "max": 2},
    }
    measured = {**block, "ranks": [2], "knobs": {"computation": ["measured"]}}
    study = study_from_dict({"name": "sim", "matrix": [block, measured]}, "test")
    stacks, workloads = discover_stacks().stacks, load_workloads()
    outcomes = {
        jobs: run_study(study, tmp_path / f"j{jobs}.duckdb", stacks, workloads, QUIET, jobs=jobs)
        for jobs in (1, 3)
    }
    for outcome in outcomes.values():
        assert (outcome.complete, outcome.failed, outcome.repetitions) == (5, 0, 10)
    runs_1, reps_1 = stored(tmp_path / "j1.duckdb")
    runs_3, reps_3 = stored(tmp_path / "j3.duckdb")
    assert runs_1 == runs_3 and len(runs_1) == 5
    assert {r[1] for r in runs_1} == {"complete"}
    # the model's simulated times are deterministic: the same figures, not just the counts
    modelled = [r for r in reps_1 if '"model"' in next(x[3] for x in runs_1 if x[0] == r[0])]
    assert len(modelled) == 8
    assert modelled == [r for r in reps_3 if r[0] in {m[0] for m in modelled}]
    # side by side nothing runs in rounds; the measured configuration alone does
    with Store(tmp_path / "j3.duckdb", read_only=True) as store:
        rounds = store.rows(
            "SELECT r.knobs LIKE '%model%' AS modelled, p.round_number FROM run r "
            "JOIN repetition p USING (run_key) ORDER BY p.round_number"
        )
    assert {row["round_number"] for row in rounds if row["modelled"]} == {None}
    assert [row["round_number"] for row in rounds if not row["modelled"]] == [1, 2]
    # a resumed study runs nothing again
    again = run_study(study, tmp_path / "j3.duckdb", stacks, workloads, QUIET, jobs=3)
    assert (again.repetitions, again.complete) == (0, 5)


@pytest.mark.parametrize("jobs", ["0", "-2", "two"])
def test_jobs_must_be_a_positive_count(jobs, capsys):
    from esmperf.cli import _parser

    with pytest.raises(SystemExit) as stop:
        _parser().parse_args(["study", "studies/demo.toml", "--jobs", jobs])
    assert stop.value.code == 2
    assert f"expected 1 or more simulations at once, got '{jobs}'" in capsys.readouterr().err
