"""The runner: failing and hanging runs are recorded and the study goes on; a study killed
with SIGKILL resumes with no repetition lost or run twice; a workload plugs in through its
manifest alone; a profiled MPI run lands in the profile tables."""

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from rich.console import Console

from conftest import ESMPERF_CLI, esmperf
from esmperf.mpi.stacks import discover_stacks
from esmperf.paths import build_root
from esmperf.store.database import Store
from esmperf.study.file import load_study
from esmperf.study.orchestrate import run_study
from esmperf.workloads import load_workloads

QUIET = Console(file=open(os.devnull, "w"))  # noqa: SIM115


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_failing_and_hanging_runs_are_recorded(tmp_path: Path) -> None:
    study = load_study(
        write(
            tmp_path / "s.toml",
            """
name = "failures"
[defaults]
launcher = false
ranks = 1
repeats = { warmup = 0, min = 2, max = 2 }
[[matrix]]
name = "fails"
command = ["sh", "-c", "echo started; echo 'no input deck' >&2; exit 3"]
[[matrix]]
name = "hangs"
command = ["sh", "-c", "echo started; sleep 60"]
timeout = 1
[[matrix]]
name = "works"
command = ["sh", "-c", "echo 'rate: 42.5'"]
fom = { regex = 'rate: (\\S+)', unit = "steps/s" }
""",
        ),
        workloads={},
    )
    outcome = run_study(study, tmp_path / "s.duckdb", [], {}, QUIET)
    assert (outcome.complete, outcome.failed, outcome.timeout) == (1, 1, 1)
    with Store(tmp_path / "s.duckdb", read_only=True) as store:
        runs = {r["workload"]: r for r in store.runs()}
        reps = {
            r["workload"]: r
            for r in store.rows(
                "SELECT run.workload, repetition.* FROM repetition JOIN run USING (run_key)"
            )
        }
    assert runs["fails"]["status"] == "failed"
    assert runs["fails"]["reason"] == "exit code 3: no input deck"
    assert (reps["fails"]["exit_code"], reps["fails"]["stdout"]) == (3, "started\n")
    assert runs["hangs"]["status"] == "timeout"  # killed at its timeout, not waited for
    assert runs["hangs"]["reason"] == "timed out after 1 s (killed)"
    assert reps["hangs"]["stdout"] == "started\n" and reps["hangs"]["status"] == "timeout"
    assert runs["works"]["status"] == "complete" and reps["works"]["fom"] == 42.5


RESUMABLE = """
name = "resumable"
[[matrix]]
name = "step"
command = ["sh", "-c", "echo run >> {counter}; sleep 0.3; echo 'value 7'"]
fom = {{ regex = 'value (\\d+)' }}
launcher = false
ranks = [1, 2, 3, 4]
repeats = {{ warmup = 0, min = 3, max = 3 }}
"""


def test_resume_after_kill_9(tmp_path: Path) -> None:
    counter = tmp_path / "counter"
    path = write(tmp_path / "s.toml", RESUMABLE.format(counter=counter))
    store = tmp_path / "s.duckdb"
    command = [*ESMPERF_CLI, "study", str(path), "--out", str(store)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if counter.exists() and len(counter.read_text().splitlines()) >= 6:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    started_before_kill = len(counter.read_text().splitlines())
    with Store(store, read_only=True) as kept:
        first = kept.rows("SELECT run_key, rep FROM repetition ORDER BY run_key, rep")
    assert len(first) >= started_before_kill - 1  # only the run in progress can be lost

    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    with Store(store, read_only=True) as done:
        reps = done.rows("SELECT run_key, rep, kind, status, session_id FROM repetition")
        runs = done.runs()
    assert len(runs) == 4 and all(run["status"] == "complete" for run in runs)
    assert len(reps) == 12 and all(r["kind"] == "measure" and r["status"] == "ok" for r in reps)
    assert len({(r["run_key"], r["rep"]) for r in reps}) == 12  # no duplicates
    assert {(r["run_key"], r["rep"]) for r in first} <= {(r["run_key"], r["rep"]) for r in reps}
    assert len(counter.read_text().splitlines()) <= 12 + 1  # at most the killed run again
    rerun = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert "0 runs this time" in " ".join(rerun.stdout.split())


FAKE_WORKLOAD = """#!/bin/sh
# a stand-in workload keeping docs/workloads.md: rank 0 prints one JSON line
rank="${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-0}}"
[ "$rank" = 0 ] || exit 0
passed=true; status=0
[ "$3" = "--check" ] && [ "$4" = "fail" ] && { passed=false; status=2; }
echo "fakeapp: size $2"
echo "{\\"workload\\": \\"fakeapp\\", \\"size\\": \\"$2\\", \\"wall\\": 0.5, \\"fom\\": {\\"value\\": 12.5, \\"unit\\": \\"cells/s\\", \\"higher_is_better\\": true}, \\"verification\\": {\\"passed\\": $passed, \\"what\\": \\"sum\\", \\"norms\\": {\\"l2\\": 1e-12}}, \\"model\\": {\\"messages_per_step\\": 8}}"
exit $status
"""


def test_a_workload_plugs_in_through_its_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stacks = [s for s in discover_stacks().stacks if s.id in ("mpich", "openmpi")]
    if not stacks:
        pytest.skip("no Debian MPI stack here")
    stack = stacks[0]
    root = tmp_path / "tree"
    app = root / "native" / "apps" / "fakeapp"
    app.mkdir(parents=True)
    (app / "workload.toml").write_text(
        'name = "fakeapp"\nexecutable = "fakeapp"\nsizes = ["S", "M"]\nfom_unit = "cells/s"\n'
        'higher_is_better = true\n[options]\ncheck = ["pass", "fail"]\n'
    )
    executable = root / "build" / stack.id / "apps" / "fakeapp" / "fakeapp"
    executable.parent.mkdir(parents=True)
    executable.write_text(FAKE_WORKLOAD)
    executable.chmod(0o755)
    shutil.copy(build_root() / "stacks.json", root / "build" / "stacks.json")
    monkeypatch.setenv("ESMPERF_ROOT", str(root))
    study = load_study(
        write(
            tmp_path / "s.toml",
            f"""
name = "plugged"
[[matrix]]
workload = "fakeapp"
ranks = [1, 2]
stack = ["{stack.id}"]
options = {{ check = ["pass", "fail"] }}
repeats = {{ warmup = 0, min = 2, max = 2 }}
""",
        ),
        workloads=load_workloads(),
    )
    outcome = run_study(study, tmp_path / "s.duckdb", [stack], load_workloads(), QUIET)
    assert (outcome.complete, outcome.failed) == (2, 2)
    with Store(tmp_path / "s.duckdb", read_only=True) as store:
        runs = store.runs()
        metrics = store.rows(
            "SELECT name, value FROM metric WHERE name = 'model.messages_per_step' LIMIT 1"
        )
        verification = store.rows(
            "SELECT DISTINCT verification, status FROM repetition ORDER BY status"
        )
    passed = [r for r in runs if json.loads(r["options"]) == {"check": "pass"}]
    assert all(r["status"] == "complete" and r["fom_unit"] == "cells/s" for r in passed)
    assert json.loads(passed[0]["argv"])[-5:] == [str(executable), "--size", "S", "--check", "pass"]
    failed = [r for r in runs if r not in passed]
    assert all(r["status"] == "failed" and "verification FAILED" in r["reason"] for r in failed)
    assert metrics == [{"name": "model.messages_per_step", "value": 8.0}]
    assert {(v["verification"], v["status"]) for v in verification} == {
        ("passed", "ok"),
        ("failed", "verification_failed"),
    }


def test_missing_workload_build_and_stack_are_skipped_with_reasons(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "tree"
    app = root / "native" / "apps" / "ghost"
    app.mkdir(parents=True)
    (app / "workload.toml").write_text(
        'name = "ghost"\nexecutable = "ghost"\nsizes = ["S"]\n'
        'fom_unit = "s"\nhigher_is_better = false\n'
    )
    monkeypatch.setenv("ESMPERF_ROOT", str(root))
    real = discover_stacks(Path(__file__).resolve().parents[1] / "build" / "stacks.json").stacks
    stacks = [s for s in real if s.id == "openmpi"]
    if not stacks:
        pytest.skip("needs Debian Open MPI")
    study = load_study(
        write(
            tmp_path / "s.toml",
            """
name = "ghosts"
[[matrix]]
workload = "ghost"
ranks = [1]
stack = ["openmpi", "impi-pypi"]
[[matrix]]
command = ["{build}/tests/prof_test_c", "{scratch}"]
ranks = [4]
stack = ["mpich"]
knobs = { connections = ["eager"] }
""",
        ),
        workloads=load_workloads(),
    )
    outcome = run_study(study, tmp_path / "s.duckdb", stacks, load_workloads(), QUIET)
    assert outcome.skipped == 3
    with Store(tmp_path / "s.duckdb", read_only=True) as store:
        reasons = [r["reason"] for r in store.runs()]
    assert "ghost is not built for openmpi" in reasons[0] and "make build" in reasons[0]
    assert "impi-pypi is not installed here" in reasons[1]
    assert "mpich is not installed here" in reasons[2]


def test_a_profiled_mpi_run_fills_the_profile_tables(tmp_path: Path) -> None:
    stacks = [s for s in discover_stacks().stacks if s.id == "openmpi"]
    program = build_root() / "openmpi" / "tests" / "prof_test_c"
    if not stacks or not program.is_file():
        pytest.skip("needs Debian Open MPI and `make build`")
    study = load_study(
        write(
            tmp_path / "s.toml",
            """
name = "profiled"
[[matrix]]
name = "prof_test"
command = ["{build}/tests/prof_test_c", "{scratch}"]
ranks = [4]
stack = ["openmpi"]
knobs = { transport = ["shm"] }
profile = true
timeout = 60
repeats = { warmup = 0, min = 1, max = 1 }
""",
        ),
        workloads={},
    )
    outcome = run_study(study, tmp_path / "s.duckdb", stacks, {}, QUIET)
    assert outcome.complete == 1
    with Store(tmp_path / "s.duckdb", read_only=True) as store:
        run = store.runs()[0]
        assert run["oversubscribed"] and json.loads(run["knob_env"])["OMPI_MCA_btl"] == "self,vader"
        kinds = [r["kind"] for r in store.repetitions(run["run_key"])]
        assert kinds == ["measure", "profile"]
        assert store.rows("SELECT count(*) AS n FROM profile_rank")[0]["n"] == 4
        functions = {r["function"] for r in store.rows("SELECT function FROM profile_function")}
        assert {"MPI_Send", "MPI_Recv", "MPI_Allreduce"} <= functions
        assert store.rows("SELECT count(*) AS n FROM profile_peer")[0]["n"] > 0
        knobs = json.loads(store.rows("SELECT knobs FROM profile")[0]["knobs"])
        assert knobs["OMPI_MCA_btl"] == "self,vader"  # the profiler saw the knob's variables
        # about 100 time bins over the run: the measured repetition's wall time / 100. The
        # profiler keeps the width in clock ticks and writes it in seconds with the tick rate
        # it calibrated over the whole run, which on a loaded machine differs from the rate at
        # MPI_Init by up to about 1e-4 (seen: 5e-5): not a plumbing error
        measured = store.repetitions(run["run_key"])[0]["wall"]
        width = store.rows("SELECT bin_width FROM profile")[0]["bin_width"]
        assert width == pytest.approx(max(0.001, measured / 100), rel=1e-3)


def test_run_is_the_one_line_study(tmp_path: Path) -> None:
    store = tmp_path / "run.duckdb"
    result = esmperf(
        "run",
        "--command",
        "sh -c 'echo rate 5.5'",
        "--name",
        "rate",
        "--no-launcher",
        "--fom-regex",
        r"rate (\S+)",
        "--fom-unit",
        "x/s",
        "--ranks",
        "1,2",
        "--repeats",
        "2",
        "--warmup",
        "0",
        "--out",
        str(store),
        "--report",
    )
    assert result.returncode == 0, result.stderr
    assert "2 complete" in " ".join(result.stdout.split())
    with Store(store, read_only=True) as kept:
        assert kept.study_name() == "run-rate"
        assert [r["fom"] for r in kept.rows("SELECT fom FROM repetition")] == [5.5] * 4
    assert (tmp_path / "run" / "report" / "index.html").is_file()


def test_the_program_s_error_is_the_reason_even_when_later_output_pushes_it_out_of_the_tail(
    tmp_path: Path,
) -> None:
    """A simulator's per-rank warnings after the program's error (5,000 simulated ranks each
    print one) overflow the stored tail; the reason is still the program's own line."""
    study = load_study(
        write(
            tmp_path / "s.toml",
            """
name = "flood"
[defaults]
launcher = false
ranks = 1
[[matrix]]
name = "floods"
command = ["sh", "-c", "echo 'prog: error: 5000 ranks: use at most 3973' >&2; i=0; while [ $i -lt 5000 ]; do echo '[node-1:7:(8) 0.0] smpi_global.cpp:645: [smpi_kernel/WARNING] SMPI process did not return 0. Return value : 1' >&2; i=$((i+1)); done; exit 1"]
repeats = { warmup = 0, min = 1, max = 1 }
""",
        ),
        workloads={},
    )
    run_study(study, tmp_path / "s.duckdb", [], {}, QUIET)
    with Store(tmp_path / "s.duckdb", read_only=True) as store:
        run = store.runs()[0]
        stderr = store.rows("SELECT stderr FROM repetition")[0]["stderr"]
    assert "prog: error" not in stderr  # cut from the stored tail
    assert run["reason"] == "exit code 1: prog: error: 5000 ranks: use at most 3973"
