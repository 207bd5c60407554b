"""A program that hangs after its complete, verified result (MPICH 4 over TCP sometimes hangs in
MPI_Finalize): the repetition counts, with why it was killed kept beside it; a hang before any
result, or after a failed verification, is a timeout as before. Locally, through the fake
Slurm, and in what the report and findings say."""

import io
import os
from pathlib import Path

from rich.console import Console

from esmperf.store.database import Store
from esmperf.store.results import killed_after_result_text, load_results
from esmperf.study.classify import classify as classify_repetition
from esmperf.study.execute import Execution
from esmperf.study.file import load_study
from esmperf.study.orchestrate import run_study
from test_slurm import SLURM, fake_slurm, sbatch_calls  # noqa: F401 (fake_slurm: a fixture)

QUIET = Console(file=open(os.devnull, "w"))  # noqa: SIM115

# A fake workload: prints a result line whose verification passed or failed ("none": prints
# nothing), then hangs as MPI_Finalize sometimes does.
FAKE_PROGRAM = """#!/bin/sh
if [ "$1" != none ]; then
    passed=false; [ "$1" = passed ] && passed=true
    printf '{"workload": "fake", "wall": 0.25, "fom": {"value": 7.5, "unit": "steps/s", '
    printf '"higher_is_better": true}, "verification": {"passed": %s, "what": "known answer", ' \\
        "$passed"
    printf '"norms": {"l2": 1e-12}}}\\n'
fi
exec sleep 60
"""

STUDY = """
name = "finalize-hangs"
[defaults]
launcher = false
ranks = 1
timeout = 1
fom = "json"
repeats = {{ warmup = 1, min = 2, max = 2 }}
[[matrix]]
name = "hangs-after-result"
command = ["{program}", "passed"]
[[matrix]]
name = "hangs-without-result"
command = ["{program}", "none"]
[[matrix]]
name = "hangs-after-failed-verification"
command = ["{program}", "failed"]
"""


def fake_study(tmp_path: Path, only: str | None = None):  # type: ignore[no-untyped-def]
    program = tmp_path / "fake-workload"
    program.write_text(FAKE_PROGRAM)
    program.chmod(0o755)
    text = STUDY.format(program=program)
    if only:
        text = text.split("[[matrix]]")[0] + "".join(
            "[[matrix]]" + block for block in text.split("[[matrix]]")[1:] if only in block
        )
    path = tmp_path / "s.toml"
    path.write_text(text)
    return load_study(path, workloads={})


def stored(store_path: Path) -> tuple[dict[str, dict], dict[str, list[dict]]]:
    with Store(store_path, read_only=True) as store:
        runs = {r["workload"]: r for r in store.runs()}
        reps = {name: store.repetitions(run["run_key"]) for name, run in runs.items()}
    return runs, reps


def test_a_hang_after_a_verified_result_counts(tmp_path: Path) -> None:
    out = io.StringIO()
    console = Console(file=out, width=400)
    outcome = run_study(fake_study(tmp_path), tmp_path / "s.duckdb", [], {}, console)
    assert (outcome.complete, outcome.failed, outcome.timeout) == (1, 0, 2)
    assert outcome.killed_after_result == 3  # the warm-up and both measured repetitions
    runs, reps = stored(tmp_path / "s.duckdb")

    counted = reps["hangs-after-result"]
    assert runs["hangs-after-result"]["status"] == "complete"
    assert [(r["kind"], r["status"], r["fom"], r["verification"]) for r in counted] == [
        ("warmup", "ok", 7.5, "passed"),
        ("measure", "ok", 7.5, "passed"),
        ("measure", "ok", 7.5, "passed"),
    ]
    assert {r["killed_after_result"] for r in counted} == {
        "hung after its result (in MPI_Finalize or teardown): killed at the 1 s timeout"
    }
    assert {r["wall"] for r in counted} == {0.25}  # the workload's timed section, not the hang
    console_text = " ".join(out.getvalue().split())
    assert (
        "done hangs-after-result · none · 1 rank: median 7.5 steps/s (50% CI 7.5-7.5, "
        "n=2); 3 of 3 repetitions hung after their result (in MPI_Finalize or teardown) "
        "and were killed at the timeout: their figures count"
    ) in console_text

    for name, verification in (
        ("hangs-without-result", None),
        ("hangs-after-failed-verification", "failed"),
    ):
        assert runs[name]["status"] == "timeout"
        assert runs[name]["reason"] == "timed out after 1 s (killed)"
        assert [
            (r["kind"], r["status"], r["fom"], r["verification"], r["killed_after_result"])
            for r in reps[name]
        ] == [("warmup", "timeout", None, verification, None)]

    with Store(tmp_path / "s.duckdb", read_only=True) as store:
        results = {r.workload: r for r in load_results(store)}
    assert results["hangs-after-result"].values == [7.5, 7.5]
    assert results["hangs-without-result"].values == []


def test_only_a_kill_from_outside_after_a_verified_result_counts(tmp_path: Path) -> None:
    config = fake_study(tmp_path, only="hangs-after-result").configurations[0]
    result = (
        '{"wall": 1.0, "fom": {"value": 3.0, "unit": "s"}, '
        '"verification": {"passed": true, "what": "x", "norms": {}}}\n'
    )

    def classify(code: int | None, timed_out: bool = False, stdout: str = result):
        return classify_repetition(Execution(code, 1.0, stdout, "", timed_out), config)[:2]

    assert classify(-15) == (
        "ok",
        "killed by signal SIGTERM after its result (in MPI_Finalize or teardown)",
    )
    assert classify(-11) == ("failed", "killed by signal SIGSEGV: " + result.strip())
    assert classify(None, timed_out=True, stdout=result[:40]) == (
        "timeout",
        "timed out after 1 s (killed)",
    )  # the line was cut off: no result
    assert classify(0) == ("ok", None)


def test_the_count_of_repetitions_killed_after_their_result() -> None:
    hung = {
        "killed_after_result": "hung after its result (in MPI_Finalize or teardown): "
        "killed at the 20 s timeout"
    }
    signalled = {
        "killed_after_result": "killed by signal SIGTERM after its result (in "
        "MPI_Finalize or teardown)"
    }
    clean = {"killed_after_result": None}
    old_store_row: dict = {}  # a store older than the column, opened read-only
    assert killed_after_result_text([clean, old_store_row]) == ""
    assert killed_after_result_text([hung, clean, hung, clean, clean]) == (
        "2 of 5 repetitions hung after their result (in MPI_Finalize or teardown) and were "
        "killed at the timeout"
    )
    assert killed_after_result_text([signalled]) == (
        "1 of 1 repetition was killed after its result (in MPI_Finalize or teardown)"
    )


def test_slurm_jobs_keep_a_result_before_a_hang(tmp_path: Path, fake_slurm: Path) -> None:  # noqa: F811
    study = fake_study(tmp_path, only="hangs-after-result")
    outcome = run_study(study, tmp_path / "s.duckdb", [], {}, QUIET, slurm=SLURM)
    assert (outcome.complete, outcome.failed, outcome.timeout) == (1, 0, 0)
    runs, reps = stored(tmp_path / "s.duckdb")
    counted = reps["hangs-after-result"]
    # timeout(1) ends each repetition with 124; the job goes on (esmperf, not the batch
    # script, tells a hang after the result from a timeout) and ends with 124
    assert [(r["kind"], r["status"], r["fom"]) for r in counted] == [
        ("warmup", "ok", 7.5),
        ("measure", "ok", 7.5),
        ("measure", "ok", 7.5),
    ]
    assert {r["killed_after_result"] for r in counted} == {
        "hung after its result (in MPI_Finalize or teardown): killed at the 1 s timeout"
    }
    assert runs["hangs-after-result"]["status"] == "complete"
    assert len(sbatch_calls(fake_slurm)) == 1
    with Store(tmp_path / "s.duckdb", read_only=True) as store:
        jobs = store.rows("SELECT state, exit_code FROM slurm_job")
    assert [(j["state"], j["exit_code"]) for j in jobs] == [("FAILED", "124:0")]
