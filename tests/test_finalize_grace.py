"""The finalize grace: once a run's verified result line is out, the runner waits a few seconds
for a clean exit, then ends the run and counts it, instead of waiting for the timeout. Exact
outcomes (which repetitions count, the reason stored), never how long it took."""

import os
from pathlib import Path

import pytest
from rich.console import Console

from esmperf.store.database import Store
from esmperf.store.results import killed_after_result_text
from esmperf.study import execute as execute_module
from esmperf.study.execute import execute
from esmperf.study.file import load_study
from esmperf.study.orchestrate import run_study

QUIET = Console(file=open(os.devnull, "w"))  # noqa: SIM115
RESULT = (
    '{"workload": "fake", "wall": 0.25, "fom": {"value": 7.5, "unit": "steps/s", '
    '"higher_is_better": true}, "verification": {"passed": %s, "what": "known answer", '
    '"norms": {}}}'
)

# prints its result (or not), then hangs the way MPI_Finalize sometimes does
FAKE = f"""#!/bin/sh
case "$1" in
  passed) echo '{RESULT % "true"}' ;;
  failed) echo '{RESULT % "false"}' ;;
esac
exec sleep 600
"""

STUDY = """
name = "grace"
[defaults]
launcher = false
ranks = 1
timeout = 600
fom = "json"
repeats = {{ warmup = 0, min = 2, max = 2 }}
[[matrix]]
name = "hangs-after-result"
command = ["{program}", "passed"]
"""


@pytest.fixture(autouse=True)
def short_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(execute_module, "FINALIZE_GRACE", 0.2)


def program(tmp_path: Path) -> Path:
    path = tmp_path / "fake-workload"
    path.write_text(FAKE)
    path.chmod(0o755)
    return path


def is_verified(line: str) -> bool:
    return '"passed": true' in line


def test_a_run_is_ended_after_its_verified_result(tmp_path: Path) -> None:
    execution = execute(
        [str(program(tmp_path)), "passed"], dict(os.environ), tmp_path, 600, result_seen=is_verified
    )
    assert (execution.ended_after_result, execution.timed_out) == (True, False)
    assert execution.stdout.strip() == RESULT % "true"


def test_no_grace_without_a_verified_result(tmp_path: Path) -> None:
    for argument in ("failed", "none"):
        execution = execute(
            [str(program(tmp_path)), argument],
            dict(os.environ),
            tmp_path,
            1,
            result_seen=is_verified,
        )
        assert (execution.ended_after_result, execution.timed_out) == (False, True), argument


def test_the_ended_repetitions_count_with_the_reason_stored(tmp_path: Path) -> None:
    study_file = tmp_path / "s.toml"
    study_file.write_text(STUDY.format(program=program(tmp_path)))
    outcome = run_study(load_study(study_file, workloads={}), tmp_path / "s.duckdb", [], {}, QUIET)
    assert (outcome.complete, outcome.failed, outcome.timeout) == (1, 0, 0)
    assert outcome.killed_after_result == 2
    with Store(tmp_path / "s.duckdb", read_only=True) as store:
        [run] = store.runs()
        reps = store.repetitions(run["run_key"])
    assert run["status"] == "complete"
    assert [(r["kind"], r["status"], r["fom"]) for r in reps] == [("measure", "ok", 7.5)] * 2
    assert {r["killed_after_result"] for r in reps} == {
        "hung after its result (in MPI_Finalize or teardown): ended 0.2 s after its verified "
        "result (the finalize grace)"
    }
    assert killed_after_result_text(reps) == (
        "2 of 2 repetitions hung after their result (in MPI_Finalize or teardown) and were "
        "ended after the finalize grace"
    )
