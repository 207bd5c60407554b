"""esmperf against a real Slurm: a private slurmctld + slurmd + munged started by the suite
(tests/real_slurm.py: Debian's Slurm 22.05, one node `esmnode1`, no accounting, as on many
small sites). What tests/test_slurm.py checks through the test double, here end to end with
the real daemons: states, reasons and node lists as Slurm gives them, PENDING, a job
cancelled before it started, a time limit, mpirun inside a batch job with the profile's time
bins, and srun's MPI plug-ins inside an allocation.

Without the Slurm packages these tests skip, saying so; as root with apt-get (where `make
setup` installs them, as in CI) they fail instead, so CI cannot pass without running them
(tests/make_installs.py's rule).
"""

import getpass
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

import esmperf.slurm.campaign as slurm_study
from conftest import ESMPERF_CLI
from esmperf.slurm.batch import SlurmOptions
from esmperf.store.database import Store
from esmperf.study.file import load_study
from esmperf.study.orchestrate import run_study
from esmperf.study.outcome import timeline_bin_seconds
from make_installs import require
from real_slurm import NODE, PrivateSlurm, SlurmUnavailable

QUIET = Console(file=open(os.devnull, "w"))  # noqa: SIM115
ROOT = Path(__file__).resolve().parents[1]
FAKE = Path(__file__).parent / "fake_slurm"
SLURM = SlurmOptions(launcher="slurm", poll=0.2)
UNAVAILABLE = "ReqNodeNotAvail, UnavailableNodes:" + NODE  # squeue's reason, drained node


@pytest.fixture(scope="session")  # to the session's end: a time-limited job outlives this file
def private_slurm() -> Iterator[PrivateSlurm]:
    slurm = PrivateSlurm()
    try:
        slurm.start()
    except SlurmUnavailable as error:
        require(False, f"Slurm (the private Slurm did not start: {error})", "setup")
    yield slurm
    slurm.stop()


@pytest.fixture
def real_slurm(
    private_slurm: PrivateSlurm, monkeypatch: pytest.MonkeyPatch
) -> Iterator[PrivateSlurm]:
    """The private Slurm for this test's esmperf calls: SLURM_CONF, no test double on PATH,
    not inside an allocation, looks at the queue at most 0.5 s apart (not up to 60 s); its
    jobs cancelled and its node back in service afterwards."""
    monkeypatch.setenv("SLURM_CONF", str(private_slurm.conf))
    monkeypatch.setattr(slurm_study, "pause_between_looks", lambda s: time.sleep(min(s, 0.5)))
    path = [p for p in os.environ["PATH"].split(os.pathsep) if Path(p) != FAKE]
    monkeypatch.setenv("PATH", os.pathsep.join(path))
    for name in ("SLURM_JOB_ID", "ESMPROF_BIN_SECONDS"):
        monkeypatch.delenv(name, raising=False)
    yield private_slurm
    private_slurm.run("scancel", "-u", getpass.getuser(), check=False)
    private_slurm.run("scontrol", "update", f"NodeName={NODE}", "State=RESUME", check=False)


def study(text: str, tmp_path: Path, **workloads: Any):  # type: ignore[no-untyped-def]
    path = tmp_path / "s.toml"
    path.write_text(text)
    return load_study(path, workloads=workloads.get("workloads", {}))


def watch_queue(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """Record what esmperf's squeue and sacct calls answered."""
    seen: dict[str, list[Any]] = {"squeue": [], "sacct": []}
    queue_records, accounting = slurm_study.queue_records, slurm_study.accounting

    def queue(job_ids: list[str]):  # type: ignore[no-untyped-def]
        answer = queue_records(job_ids)
        seen["squeue"].append(answer)
        return answer

    def sacct(job_ids: list[str]):  # type: ignore[no-untyped-def]
        answer = accounting(job_ids)
        seen["sacct"].append(answer)
        return answer

    monkeypatch.setattr(slurm_study, "queue_records", queue)
    monkeypatch.setattr(slurm_study, "accounting", sacct)
    return seen


STUDY = """
name = "real-slurm"
[defaults]
launcher = false
repeats = { warmup = 1, min = 2, max = 2 }
timeout = 60
[[matrix]]
name = "works"
command = ["sh", "-c", "echo 'rate: 42.5'; echo \\"node $SLURM_JOB_NODELIST\\" >&2"]
fom = { regex = 'rate: (\\S+)', unit = "steps/s" }
ranks = [1, 2]
[[matrix]]
name = "fails"
command = ["sh", "-c", "echo started; echo 'no input deck' >&2; exit 3"]
ranks = 1
[[matrix]]
name = "cancelled"
command = ["true"]
ranks = 1
"""


def test_study_as_jobs_of_a_real_slurm(
    tmp_path: Path, real_slurm: PrivateSlurm, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Jobs wait PENDING on a drained node; one is cancelled while it waits; then they run,
    one at a time (--exclusive): completed, failed, cancelled as Slurm says, without
    accounting (sacct asked once, then never again), and a second run submits nothing."""
    real_slurm.run("scontrol", "update", f"NodeName={NODE}", "State=DRAIN", "Reason=test")
    seen = watch_queue(monkeypatch)
    pauses = []

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        if len(pauses) == 1:  # all four submitted and waiting: cancel the last
            last = max(int(j) for j in real_slurm.run("squeue", "-h", "-o", "%i").stdout.split())
            real_slurm.run("scancel", str(last))
        elif len(pauses) == 2:  # the node back: the others run
            real_slurm.run("scontrol", "update", f"NodeName={NODE}", "State=RESUME")
        time.sleep(0.2)

    monkeypatch.setattr(slurm_study, "pause_between_looks", pause)
    store = tmp_path / "s.duckdb"
    outcome = run_study(study(STUDY, tmp_path), store, [], {}, QUIET, slurm=SLURM)
    assert (outcome.complete, outcome.failed, outcome.timeout) == (2, 2, 0)

    first_look = seen["squeue"][0]
    states = sorted((r.state, r.reason) for r in first_look.values())
    assert states == [("CANCELLED", UNAVAILABLE)] + [("PENDING", UNAVAILABLE)] * 3
    assert len(seen["sacct"]) == 1 and seen["sacct"][0] == ({}, False)  # accounting off

    with Store(store, read_only=True) as kept:
        runs = {(r["workload"], r["ranks"]): r for r in kept.runs()}
        jobs = kept.rows("SELECT * FROM slurm_job ORDER BY CAST(job_id AS INTEGER)")
        reps = kept.rows("SELECT * FROM repetition WHERE status = 'ok'")
        session = kept.rows("SELECT * FROM session")[0]
    assert [(j["state"], j["reason"], j["exit_code"], j["node_list"]) for j in jobs] == [
        ("COMPLETED", "", "", NODE),
        ("COMPLETED", "", "", NODE),
        ("FAILED", "NonZeroExitCode", "", NODE),
        ("CANCELLED", UNAVAILABLE, "", ""),
    ]
    assert len(reps) == 6 and {r["stderr"] for r in reps} == {f"node {NODE}\n"}
    assert session["hostname"] == NODE
    assert runs[("fails", 1)]["reason"] == "exit code 3: no input deck"  # as a local run
    cancelled = jobs[-1]["job_id"]
    assert runs[("cancelled", 1)]["reason"] == (
        f"Slurm job {cancelled} ended CANCELLED (reason {UNAVAILABLE}) before repetition 1 "
        "finished; it never started on a node (no job output)"
    )
    assert not list((tmp_path / "s" / "slurm").glob(f"*/job-{cancelled}.out"))

    calls = len(seen["squeue"])
    outcome = run_study(study(STUDY, tmp_path), store, [], {}, QUIET, slurm=SLURM)
    assert outcome.repetitions == 0 and len(seen["squeue"]) == calls  # nothing to watch


def hycom_here() -> tuple[list[Any], dict[str, Any]]:
    from esmperf.mpi.stacks import discover_stacks
    from esmperf.workloads import load_workloads

    stacks = [
        s
        for s in discover_stacks(ROOT / "build" / "stacks.json").stacks
        if s.id in ("openmpi", "mpich")
    ]
    workloads = load_workloads()
    ready = {
        s.id
        for s in stacks
        if "hycom" in workloads
        and workloads["hycom"].is_built(s.id)
        and (ROOT / "build" / s.id / "prof" / "libesmprof.so").is_file()
    }
    if ready != {"openmpi", "mpich"}:
        pytest.skip("needs hycom and the profiler built for Debian Open MPI and MPICH (make build)")
    return stacks, workloads


def test_hycom_as_a_job_profiles_as_here(tmp_path: Path, real_slurm: PrivateSlurm) -> None:
    """hycom on 2 ranks under mpirun inside a real batch job: verified, profiled, and its
    profile's time bins chosen as a local run's (the median wall so far / 100)."""
    stacks, workloads = hycom_here()
    text = (
        'name = "hycom-jobs"\n[[matrix]]\nworkload = "hycom"\nsize = "S"\nranks = [2]\n'
        'stack = ["openmpi"]\nprofile = true\ntimeout = 60\n'
        "repeats = { warmup = 0, min = 2, max = 2 }\n"
    )
    headers = {}
    for where, options in (("slurm", SLURM), ("local", None)):
        store = tmp_path / where / "s.duckdb"
        store.parent.mkdir()
        outcome = run_study(
            study(text, store.parent, workloads=workloads),
            store,
            stacks,
            workloads,
            QUIET,
            slurm=options,
        )
        assert outcome.complete == 1, outcome.failures
        with Store(store, read_only=True) as kept:
            reps = kept.rows(
                "SELECT kind, status, verification, wall, profile_file FROM repetition ORDER BY rep"
            )
            launched = {r["launched_by"] for r in kept.runs()}
        assert launched == {where}
        assert [(r["kind"], r["status"], r["verification"]) for r in reps] == [
            ("measure", "ok", "passed")
        ] * 2 + [("profile", "ok", "passed")]
        lines = Path(reps[-1]["profile_file"]).read_text().splitlines()
        headers[where] = header = json.loads(lines[0])
        assert header["knobs"]["ESMPROF_BIN_SECONDS"] == f"{timeline_bin_seconds(reps[:2]):.6g}"
        records = [json.loads(line) for line in lines[1:]]
        bins = [len(r["bins"]["mpi_time"]) for r in records if "rank" in r]
        assert len(bins) == 2 and min(bins) > 10  # a timeline (the profiler's 1 s: 1 bin)
    assert headers["slurm"]["ranks"] == headers["local"]["ranks"] == 2


SRUN_STUDY = """
name = "in-allocation"
[[matrix]]
workload = "hycom"
size = "S"
ranks = [2]
stack = [{stacks}]
timeout = 60
repeats = {{ warmup = 0, min = 1, max = 1 }}
"""


def test_srun_in_a_real_allocation(tmp_path: Path, real_slurm: PrivateSlurm) -> None:
    """`salloc ... esmperf study --launcher srun`: srun starts Open MPI with --mpi=pmix and
    MPICH with --mpi=pmi2 (srun --mpi=list), both verified on 2 ranks; Open MPI under
    --srun-mpi pmi2 cannot start, and the stored reason names the fix."""
    hycom_here()
    env = {**real_slurm.env, "ESMPERF_ROOT": str(ROOT), "PYTHONPATH": str(ROOT / "src")}

    def in_allocation(stacks: str, *options: str) -> Path:
        directory = tmp_path / stacks.replace('"', "").replace(", ", "-")
        directory.mkdir(exist_ok=True)
        (directory / "s.toml").write_text(SRUN_STUDY.format(stacks=stacks))
        store = directory / f"s{len(options)}.duckdb"
        command = [
            "salloc",
            "--nodes=1",
            "--ntasks=2",
            *ESMPERF_CLI,
            "study",
            str(directory / "s.toml"),
            "--launcher",
            "srun",
            *options,
            "--out",
            str(store),
        ]
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL
        )
        assert "Granted job allocation" in done.stderr, done.stderr
        return store

    store = in_allocation('"openmpi", "mpich"')
    with Store(store, read_only=True) as kept:
        runs = {r["stack"]: r for r in kept.runs()}
        reps = {r["run_key"]: r for r in kept.rows("SELECT * FROM repetition")}
    assert {stack: r["status"] for stack, r in runs.items()} == {
        "openmpi": "complete",
        "mpich": "complete",
    }
    for stack, plugin in (("openmpi", "--mpi=pmix"), ("mpich", "--mpi=pmi2")):
        rep = reps[runs[stack]["run_key"]]
        assert rep["verification"] == "passed" and json.loads(rep["result"])["ranks"] == 2
        assert runs[stack]["launched_by"] == "srun"
        assert plugin in json.loads(runs[stack]["argv"])

    store = in_allocation('"openmpi"', "--srun-mpi", "pmi2")
    with Store(store, read_only=True) as kept:
        run = kept.runs()[0]
    assert run["status"] == "failed"
    assert run["reason"] == (
        'Open MPI could not start under srun --mpi=pmi2: it says "OMPI was not built with '
        'SLURM\'s PMI support" for that plug-in; fix: srun_mpi = "pmix" in [slurm] or '
        "--srun-mpi pmix (`srun --mpi=list` lists this site's plug-ins), or mpi_launcher = "
        '"mpirun"'
    )


def test_srun_in_real_batch_jobs(tmp_path: Path, real_slurm: PrivateSlurm) -> None:
    """mpi_launcher = "srun": the batch script starts the ranks with srun and the plug-in
    each stack needs, chosen on the submitting side."""
    stacks, workloads = hycom_here()
    text = SRUN_STUDY.format(stacks='"openmpi", "mpich"')
    options = SlurmOptions(launcher="slurm", mpi_launcher="srun", poll=0.2)
    outcome = run_study(
        study(text, tmp_path, workloads=workloads),
        tmp_path / "s.duckdb",
        stacks,
        workloads,
        QUIET,
        slurm=options,
    )
    assert outcome.complete == 2, outcome.failures
    with Store(tmp_path / "s.duckdb", read_only=True) as kept:
        runs = {r["stack"]: r for r in kept.runs()}
        reps = {r["run_key"]: r for r in kept.rows("SELECT * FROM repetition")}
    for stack, plugin in (("openmpi", "--mpi=pmix"), ("mpich", "--mpi=pmi2")):
        script = next((tmp_path / "s" / "slurm" / runs[stack]["run_key"]).glob("*.sbatch"))
        assert f"run_rep 1 measure srun --nodes=1 --ntasks=2 {plugin} " in script.read_text()
        assert json.loads(reps[runs[stack]["run_key"]]["result"])["ranks"] == 2
        assert runs[stack]["launched_by"] == "slurm"


TIME_LIMITED = (
    'name = "limit"\n[[matrix]]\nname = "sleeps"\nlauncher = false\nranks = 1\n'
    'command = ["sh", "-c", "echo started; sleep 300"]\ntimeout = 400\n'
    "repeats = { warmup = 0, min = 1, max = 1 }\n"
)
# after esmperf's own options: a 1-minute limit, which slurmctld checks every 30 s
TIME_LIMIT = SlurmOptions(launcher="slurm", poll=1.0, extra=("--time=1",))


@pytest.fixture(scope="session")
def job_past_its_time_limit(
    private_slurm: PrivateSlurm, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """A study whose one job runs past its --time (1 minute; slurmctld looks every 30 s: it
    ends 60-90 s after it started), its runner stopped while the job ran. Submitted by this
    file's last test and collected by the session's last one, so that the rest of the suite
    fills the wait."""
    folder = tmp_path_factory.mktemp("time-limit")
    stopped: list[bool] = []

    def stop_once_running(seconds: float) -> None:
        if (
            not stopped
            and private_slurm.run("squeue", "-h", "-t", "running", "-o", "%i").stdout.strip()
        ):
            stopped.append(True)
            raise KeyboardInterrupt  # the runner is stopped while its job runs
        time.sleep(min(seconds, 0.5))

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SLURM_CONF", str(private_slurm.conf))
        patch.setattr(slurm_study, "pause_between_looks", stop_once_running)
        path = [p for p in os.environ["PATH"].split(os.pathsep) if Path(p) != FAKE]
        patch.setenv("PATH", os.pathsep.join(path))
        for name in ("SLURM_JOB_ID", "ESMPROF_BIN_SECONDS"):
            patch.delenv(name, raising=False)
        with pytest.raises(KeyboardInterrupt):
            run_study(
                study(TIME_LIMITED, folder), folder / "s.duckdb", [], {}, QUIET, slurm=TIME_LIMIT
            )
    assert stopped
    return folder


def test_a_job_is_left_past_its_time_limit(
    job_past_its_time_limit: Path, private_slurm: PrivateSlurm
) -> None:
    """The runner stopped while its job ran, and the job runs on (the session's last test
    collects it: test_time_limit_of_a_real_slurm)."""
    queued = private_slurm.run("squeue", "-h", "-o", "%T").stdout.split()
    assert queued == ["RUNNING"]
    with Store(job_past_its_time_limit / "s.duckdb", read_only=True) as kept:
        assert len(kept.rows("SELECT job_id FROM slurm_job")) == 1


@pytest.mark.end_of_session
def test_time_limit_of_a_real_slurm(
    job_past_its_time_limit: Path, real_slurm: PrivateSlurm
) -> None:
    """The job past its --time ends TIMEOUT with reason TimeLimit, learnt from squeue alone,
    and its repetition is a timeout; the runner stopped while the job ran collects it now
    without submitting again (run last in the session: tests/conftest.py)."""
    folder = job_past_its_time_limit
    outcome = run_study(
        study(TIME_LIMITED, folder), folder / "s.duckdb", [], {}, QUIET, slurm=TIME_LIMIT
    )
    assert outcome.timeout == 1
    with Store(folder / "s.duckdb", read_only=True) as kept:
        run = kept.runs()[0]
        jobs = kept.rows("SELECT * FROM slurm_job")
        reps = kept.rows("SELECT status FROM repetition")
    job = jobs[0]
    output = folder / "s" / "slurm" / run["run_key"] / f"job-{job['job_id']}.out"
    assert len(jobs) == 1 and run["status"] == "timeout"
    assert [r["status"] for r in reps] == ["timeout"]
    assert run["reason"] == (
        f"Slurm job {job['job_id']} ended TIMEOUT (reason TimeLimit) "
        f"before repetition 1 finished; its output: {output}"
    )
    assert (job["state"], job["reason"], job["node_list"]) == ("TIMEOUT", "TimeLimit", NODE)
    assert f"JOB {job['job_id']} ON {NODE} CANCELLED AT" in output.read_text()
    assert "DUE TO TIME LIMIT" in output.read_text()
