"""The finalize grace: once a run's verified result line is out, the runner waits a few seconds
for a clean exit, then ends the run and counts it, instead of waiting for the timeout; here and
in a Slurm batch job alike. Exact outcomes (which repetitions count, the reason stored), never
how long it took."""

import os
from pathlib import Path

import pytest
from rich.console import Console

from esmperf.slurm.batch import SlurmOptions
from esmperf.slurm.job_files import read_key_values, repetition_execution
from esmperf.store.database import Store
from esmperf.store.results import killed_after_result_text
from esmperf.study import execute as execute_module
from esmperf.study.execute import execute
from esmperf.study.file import load_study
from esmperf.study.orchestrate import run_study
from test_slurm import fake_slurm  # noqa: F401  (the fixture)

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


# --- the same grace in a batch job (--launcher slurm), through the fake Slurm of test_slurm ----

SLURM_STUDY = """
name = "grace-slurm"
[defaults]
launcher = false
ranks = 1
fom = "json"
repeats = {{ warmup = 0, min = 2, max = 2 }}
[[matrix]]
name = "hangs-after-result"
command = ["{program}", "passed"]
timeout = 600
[[matrix]]
name = "hangs-unverified"
command = ["{program}", "failed"]
timeout = 1
repeats = 1
"""


@pytest.mark.usefixtures("fake_slurm")
def test_a_batch_job_ends_its_runs_after_their_verified_result(tmp_path: Path) -> None:
    """The batch script runs the grace of study/execute.py beside each repetition: the runs
    that hang after a verified result end 0.2 s after it (not at the 600 s timeout) and count
    with the reason a local run stores; one whose result failed verification gets no grace."""
    study_file = tmp_path / "s.toml"
    study_file.write_text(SLURM_STUDY.format(program=program(tmp_path)))
    slurm = SlurmOptions(launcher="slurm", poll=0.05)
    outcome = run_study(
        load_study(study_file, workloads={}), tmp_path / "s.duckdb", [], {}, QUIET, slurm=slurm
    )
    assert (outcome.complete, outcome.failed, outcome.timeout) == (1, 0, 1)
    assert outcome.killed_after_result == 2
    with Store(tmp_path / "s.duckdb", read_only=True) as store:
        runs = {run["workload"]: run for run in store.runs()}
        reps = store.repetitions(runs["hangs-after-result"]["run_key"])
        unverified = store.repetitions(runs["hangs-unverified"]["run_key"])
        jobs = store.rows("SELECT state FROM slurm_job ORDER BY job_id")
    assert runs["hangs-after-result"]["status"] == "complete"
    assert [(r["kind"], r["status"], r["fom"]) for r in reps] == [("measure", "ok", 7.5)] * 2
    assert {r["killed_after_result"] for r in reps} == {
        "hung after its result (in MPI_Finalize or teardown): ended 0.2 s after its verified "
        "result (the finalize grace)"
    }
    assert [(r["status"], r["killed_after_result"]) for r in unverified] == [("timeout", None)]
    assert runs["hangs-unverified"]["reason"] == "timed out after 1 s (killed)"
    # the grace's job goes on and completes; the other ends at its timeout, as before (124)
    assert [j["state"] for j in jobs] == ["COMPLETED", "FAILED"]


def test_the_grace_is_read_from_a_batch_repetition(tmp_path: Path) -> None:
    rep = tmp_path / "rep-1"
    rep.mkdir()
    (rep / "stdout").write_text(RESULT % "true" + "\n")
    (rep / "status").write_text("exit_code=143\nstart=1\nend=2.5\nended_after_result=1\n")
    execution, _ = repetition_execution(rep, read_key_values(rep / "status"), 600)
    assert (execution.returncode, execution.ended_after_result, execution.timed_out) == (
        143,
        True,
        False,
    )
    (rep / "status").write_text("exit_code=124\nstart=1\nend=601\nended_after_result=0\n")
    execution, _ = repetition_execution(rep, read_key_values(rep / "status"), 600)
    assert (execution.ended_after_result, execution.timed_out) == (False, True)
