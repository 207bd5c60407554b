"""The Slurm launcher (docs/slurm.md): the batch script of a configuration, line by line; sbatch,
squeue and sacct output as Slurm prints it; job states; a study run as jobs end to end, its
failures, resume without resubmission, and every user error.

End to end without a cluster: tests/fake_slurm/ holds a TEST DOUBLE of sbatch, squeue, sacct and
scancel (put first on PATH), which answers in Slurm's formats and runs each batch script on
this machine in the background. It checks what esmperf asks of Slurm and how it reads the
answers, not Slurm itself (docs/slurm.md says what that leaves untested).
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from conftest import esmperf
from esmperf.errors import EsmperfError
from esmperf.mpi.stacks import Stack
from esmperf.report.analysis import build_groups
from esmperf.report.group_figures import group_figures
from esmperf.slurm.batch import (
    SlurmError,
    SlurmOptions,
    check_allocation,
    sbatch_message,
    slurm_options,
    srun_command,
    with_command_line,
)
from esmperf.slurm.batch_script import JobRep, JobSpec, batch_script, time_limit_minutes
from esmperf.slurm.job_files import job_spec, read_key_values, repetition_execution
from esmperf.slurm.jobs import ended_record, job_outcome, parse_sacct, parse_squeue
from esmperf.slurm.mpi import parse_mpi_list, srun_failure
from esmperf.store.database import Store
from esmperf.store.results import load_results
from esmperf.study.configuration import StudyError
from esmperf.study.file import load_study, study_from_dict
from esmperf.study.orchestrate import run_study
from esmperf.study.outcome import timeline_bin_seconds
from esmperf.study.plan import plan_study

QUIET = Console(file=open(os.devnull, "w"))  # noqa: SIM115
FAKE = Path(__file__).parent / "fake_slurm"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def fake_slurm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test double first on PATH; returns its state directory (calls.log, jobs/)."""
    if not shutil.which("bash") or not shutil.which("timeout"):
        pytest.skip("the batch scripts need bash and timeout (coreutils)")
    state = tmp_path / "fake-slurm"
    monkeypatch.setenv("PATH", f"{FAKE}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_SLURM_DIR", str(state))
    monkeypatch.setenv("FAKE_SLURM_PYTHON", sys.executable)
    for name in (
        "FAKE_SLURM_BAD_PARTITIONS",
        "FAKE_SLURM_TIME_LIMIT",
        "FAKE_SLURM_OUTCOME",
        "SLURM_JOB_ID",
    ):
        monkeypatch.delenv(name, raising=False)
    return state


def sbatch_calls(state: Path) -> list[str]:
    log = state / "calls.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return [line for line in lines if line.startswith("sbatch")]


def study(text: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    path = tmp_path / "s.toml"
    path.write_text(text)
    return load_study(path, workloads={})


SLURM = SlurmOptions(launcher="slurm", partition="debug", poll=0.05)
WORKS = """
name = "on-slurm"
[defaults]
launcher = false
repeats = { warmup = 1, min = 3, max = 3 }
timeout = 20
[[matrix]]
name = "works"
command = ["sh", "-c", "echo 'rate: 42.5'; echo \\"node $SLURM_JOB_NODELIST\\" >&2"]
fom = { regex = 'rate: (\\S+)', unit = "steps/s" }
ranks = [1, 2]
"""


# --- the batch script ---------------------------------------------------------------------------


def spec(**overrides) -> JobSpec:  # type: ignore[no-untyped-def]
    values = dict(
        name="3-0123456789abcdef",
        label="hycom S · openmpi · transport=tcp · 4 ranks",
        directory=Path("/res/hycom/slurm/0123456789abcdef"),
        scratch=Path("/res/hycom/scratch/0123456789abcdef"),
        nodes=2,
        ranks=4,
        ranks_per_node=2,
        timeout=300.0,
        argv=["/usr/bin/mpirun.openmpi", "-n", "4", "/b/hycom", "--size", "S"],
        reps=[
            JobRep(1, "warmup"),
            JobRep(2, "measure"),
            JobRep(3, "measure"),
            JobRep(4, "profile", Path("/res/hycom/profiles/0123456789abcdef-4.jsonl")),
        ],
        exports={"OMPI_MCA_btl": "self,tcp", "OMPI_MCA_btl_tcp_if_include": "lo"},
        unsets=["LD_PRELOAD"],
        profiler=Path("/b/prof/libesmprof.so"),
    )
    values.update(overrides)
    return JobSpec(**values)  # type: ignore[arg-type]


def test_batch_script_lines() -> None:
    options = SlurmOptions(
        launcher="slurm",
        partition="compute",
        account="esm01",
        qos="bench",
        constraint="ib",
        extra=("--mem=0", "--reservation=perf"),
    )
    lines = batch_script(spec(), options).splitlines()
    assert lines[:19] == [
        "#!/bin/bash",
        "#SBATCH --job-name=esmperf-3-0123456789abcdef",
        "#SBATCH --nodes=2",
        "#SBATCH --ntasks=4",
        "#SBATCH --ntasks-per-node=2",
        "#SBATCH --time=23",  # 4 x (300 + 3) s + 120 s = 1332 s -> 23 min
        "#SBATCH --output=/res/hycom/slurm/0123456789abcdef/job-%j.out",
        "#SBATCH --partition=compute",
        "#SBATCH --account=esm01",
        "#SBATCH --qos=bench",
        "#SBATCH --constraint=ib",
        "#SBATCH --exclusive",
        "#SBATCH --mem=0",
        "#SBATCH --reservation=perf",
        "# Written by esmperf (docs/slurm.md): repetitions 1-4 of",
        "# hycom S · openmpi · transport=tcp · 4 ranks",
        "set -u",
        "job_dir=/res/hycom/slurm/0123456789abcdef",
        "scratch=/res/hycom/scratch/0123456789abcdef",
    ]
    assert lines[19:22] == [
        "export OMPI_MCA_btl=self,tcp",
        "export OMPI_MCA_btl_tcp_if_include=lo",
        "unset LD_PRELOAD",
    ]
    assert '    timeout --signal=TERM --kill-after=3 300 "$@" \\' in lines
    assert lines[-5:] == [
        "run_rep 1 warmup /usr/bin/mpirun.openmpi -n 4 /b/hycom --size S || after_failure",
        "run_rep 2 measure /usr/bin/mpirun.openmpi -n 4 /b/hycom --size S || after_failure",
        "run_rep 3 measure /usr/bin/mpirun.openmpi -n 4 /b/hycom --size S || after_failure",
        "run_rep 4 profile env LD_PRELOAD=/b/prof/libesmprof.so "
        "ESMPROF_OUT=/res/hycom/profiles/0123456789abcdef-4.jsonl "
        "/usr/bin/mpirun.openmpi -n 4 /b/hycom --size S || after_failure",
        'exit "$((timed_out ? 124 : 0))"',
    ]


def run_batch_script(tmp_path: Path, bin_walls: list[float] | None, answers: list[str]) -> str:
    """Run a batch script (bash, no Slurm) whose repetitions print `answers` in turn, the last
    a profiled one printing its ESMPROF_BIN_SECONDS; returns what that one printed."""
    counter = tmp_path / "counter"
    tmp_path.mkdir()
    counter.write_text("0")
    cases = " ".join(f"{i}) echo {json.dumps(a) if a else ''};;" for i, a in enumerate(answers))
    program = (
        f'n=$(cat "$0"); echo $((n + 1)) > "$0"; case $n in {cases} '
        '*) echo "bin=${ESMPROF_BIN_SECONDS:-unset}";; esac'
    )
    reps = [JobRep(i + 1, "measure") for i in range(len(answers))]
    reps.append(JobRep(len(answers) + 1, "profile", tmp_path / "p.jsonl"))
    job = spec(
        directory=tmp_path / "job",
        scratch=tmp_path / "scratch",
        timeout=10.0,
        argv=["sh", "-c", program, str(counter)],
        reps=reps,
        exports={},
        unsets=[],
        profiler=Path("/dev/null"),
        bin_walls=bin_walls,
    )
    (tmp_path / "job").mkdir()
    job.script_path.write_text(batch_script(job, SlurmOptions(launcher="slurm")))
    env = {**os.environ, "SLURM_JOB_ID": "77"}
    env.pop("ESMPROF_BIN_SECONDS", None)
    done = subprocess.run(
        ["bash", str(job.script_path)], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return (tmp_path / "job" / f"rep-{len(reps)}" / "stdout").read_text().strip()


def test_batch_script_sets_the_profile_time_bins_as_a_local_run(tmp_path: Path) -> None:
    """Like the local runner: ESMPROF_BIN_SECONDS = the median wall time of the repetitions
    so far (stored ones, then the job's own: the JSON result's top-level "wall") / 100."""
    walls = [0.2, 0.4, 0.3, 0.5]
    expected = f"{timeline_bin_seconds([{'status': 'ok', 'wall': w} for w in walls]):.6g}"
    got = run_batch_script(
        tmp_path / "a", [0.2, 0.4], ['{"wall": 0.3, "t": {"wall": 9}}', '{"fom": 1, "wall": 0.5}']
    )
    assert got == f"bin={expected}" == "bin=0.0035"
    # no stored walls, a result without "wall": its start-to-end time, then at least 1 ms
    assert run_batch_script(tmp_path / "b", [], ["rate: 3"]) == "bin=0.001"
    # the first repetition profiled, nothing known yet: the profiler's default
    assert run_batch_script(tmp_path / "c", [], []) == "bin=unset"
    # the study's environment sets it (bin_walls None): left alone
    assert run_batch_script(tmp_path / "d", None, ['{"wall": 0.3}']) == "bin=unset"


def test_batch_script_defaults_and_quoting() -> None:
    lines = batch_script(
        spec(
            ranks_per_node=None,
            nodes=1,
            exports={"X": "a b"},
            unsets=[],
            argv=["sh", "-c", "echo 'rate: 1'"],
            reps=[JobRep(7, "measure")],
        ),
        SlurmOptions(launcher="slurm", exclusive=False),
    ).splitlines()
    assert not any(
        line.startswith(
            ("#SBATCH --ntasks-per-node", "#SBATCH --partition", "#SBATCH --exclusive", "unset")
        )
        for line in lines
    )
    assert "#SBATCH --time=8" in lines  # (300 + 3 + 120) s -> 8 min
    assert "export X='a b'" in lines
    assert lines[-2] == ("run_rep 7 measure sh -c 'echo '\"'\"'rate: 1'\"'\"'' || after_failure")
    assert time_limit_minutes(spec(timeout=1.0, reps=[JobRep(1, "measure")])) == 3


def test_job_environment_is_what_the_runner_adds(tmp_path: Path) -> None:
    plan = plan_study(study(WORKS, tmp_path), [], {}, tmp_path / "s.duckdb", slurm=SLURM)
    planned = plan[0]
    base = {**planned.env, "LD_PRELOAD": "/x.so", "SLURM_JOB_ID": "9"}
    planned.env = {**planned.env, "OMPI_MCA_btl": "self,tcp"}
    job = job_spec(planned, [JobRep(1, "measure")], tmp_path / "s", base=base)
    assert job.exports == {"OMPI_MCA_btl": "self,tcp"}
    assert job.unsets == ["LD_PRELOAD"]  # SLURM_* describe the submitting shell: left alone
    assert job.directory == tmp_path / "s" / "slurm" / planned.config.key
    assert not planned.oversubscribed and planned.cores == planned.config.ranks


# --- what Slurm prints --------------------------------------------------------------------------

SACCT = """\
4242|COMPLETED|0:0|00:03:12|node[017-018]|None
4243|CANCELLED by 51234|0:0|00:00:00|None assigned|None
4244|TIMEOUT|0:0|00:20:01|node021|None
4245|FAILED|1:0|00:00:04|node022|NonZeroExitCode
4245.batch|FAILED|1:0|00:00:04|node022|
4246|OUT_OF_MEMORY|0:125|00:01:00|node023|OutOfMemory
4247|NODE_FAIL|0:0|00:05:00|node024|NodeDown
4248|PENDING|0:0|00:00:00|None assigned|Priority
"""


def test_parse_sacct() -> None:
    records = parse_sacct(SACCT)
    assert sorted(records) == [str(n) for n in range(4242, 4249)]  # steps left out
    assert (records["4242"].state, records["4242"].node_list, records["4242"].reason) == (
        "COMPLETED",
        "node[017-018]",
        "",
    )
    assert (records["4243"].state, records["4243"].state_text) == (
        "CANCELLED",
        "CANCELLED by 51234",
    )
    assert records["4243"].node_list == ""  # "None assigned": it never started
    assert (records["4245"].exit_code, records["4245"].reason) == ("1:0", "NonZeroExitCode")
    assert {k: r.outcome for k, r in records.items()} == {
        "4242": "ok",
        "4243": "failed",
        "4244": "timeout",
        "4245": "failed",
        "4246": "failed",
        "4247": "failed",
        "4248": "active",
    }
    # an old sacct without the Reason field
    old = parse_sacct(
        "17|COMPLETED|0:0|00:00:09|n1\n", ("JobIDRaw", "State", "ExitCode", "Elapsed", "NodeList")
    )
    assert (old["17"].state, old["17"].node_list, old["17"].reason) == ("COMPLETED", "n1", "")


# `squeue -h -t all -j 1,2,3,4,5,6,7 -o '%i|%T|%r'` from Slurm 22.05.8 (one node, no
# accounting): 3 cancelled while running, 4 and 5 waiting for the node, 6 past its time
# limit, 7 cancelled while pending (the reason it waited for stays).
SQUEUE = """\
3|CANCELLED|None
1|COMPLETED|None
2|FAILED|NonZeroExitCode
4|PENDING|Resources
5|PENDING|Priority
6|TIMEOUT|TimeLimit
7|CANCELLED|Priority
"""


def test_parse_squeue_and_states() -> None:
    records = parse_squeue(SQUEUE + "\n8|COMPLETING|None\n")
    assert {k: (r.state, r.reason, r.outcome) for k, r in records.items()} == {
        "1": ("COMPLETED", "", "ok"),
        "2": ("FAILED", "NonZeroExitCode", "failed"),
        "3": ("CANCELLED", "", "failed"),
        "4": ("PENDING", "Resources", "active"),
        "5": ("PENDING", "Priority", "active"),
        "6": ("TIMEOUT", "TimeLimit", "timeout"),
        "7": ("CANCELLED", "Priority", "failed"),
        "8": ("COMPLETING", "", "active"),
    }
    assert {r.source for r in records.values()} == {"squeue"}
    for state in ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED"):
        assert job_outcome(state) == "active"
    assert job_outcome("COMPLETED") == "ok"
    assert job_outcome("TIMEOUT") == job_outcome("DEADLINE") == "timeout"
    for state in (
        "FAILED",
        "CANCELLED by 0",
        "CANCELLED+",
        "NODE_FAIL",
        "OUT_OF_MEMORY",
        "BOOT_FAIL",
        "PREEMPTED",
        "UNKNOWN",
        "",
    ):
        assert job_outcome(state) == "failed"


def test_ended_record_from_squeue_and_sacct() -> None:
    queued = parse_squeue(SQUEUE)
    recorded = parse_sacct(SACCT.replace("4244|", "6|").replace("4242|", "1|"))
    # sacct's record, with squeue's reason where sacct has none (TIMEOUT: None vs TimeLimit)
    timeout = ended_record(queued["6"], recorded["6"])
    assert (timeout.state, timeout.exit_code, timeout.reason, timeout.source) == (
        "TIMEOUT",
        "0:0",
        "TimeLimit",
        "sacct",
    )
    assert ended_record(queued["1"], recorded["1"]) == recorded["1"]
    # no accounting: squeue's final state
    assert ended_record(queued["7"], None) == queued["7"]
    # still pending or running in squeue, and sacct lags: not ended yet
    assert ended_record(queued["4"], None) is None
    assert ended_record(None, None) is None  # purged, no record: the caller waits, then gives up
    assert ended_record(None, recorded["1"]) == recorded["1"]  # purged from squeue


def test_sbatch_messages() -> None:
    text = (
        "sbatch: error: invalid partition specified: gpu-nope\n"
        "sbatch: error: Batch job submission failed: Invalid partition name specified\n"
    )
    assert sbatch_message(text) == (
        "invalid partition specified: gpu-nope; Batch job "
        "submission failed: Invalid partition name specified"
    )


def test_repetition_files_read_like_a_local_run(tmp_path: Path) -> None:
    rep = tmp_path / "rep-3"
    rep.mkdir()
    (rep / "stdout").write_text("rate: 7\n")
    (rep / "stderr").write_text("warning\n")
    (rep / "status").write_text(
        "exit_code=0\nstart=1795000000.25\nend=1795000002.75\nload_before=0.50\nload_after=1.25\n"
    )
    execution, measured = repetition_execution(rep, read_key_values(rep / "status"), 10)
    assert (execution.returncode, execution.elapsed, execution.timed_out) == (0, 2.5, False)
    assert (execution.stdout, execution.stderr) == ("rate: 7\n", "warning\n")
    assert (measured["load_before"], measured["load_after"]) == (0.5, 1.25)
    (rep / "status").write_text("exit_code=124\nstart=1\nend=11\n")
    execution, _ = repetition_execution(rep, read_key_values(rep / "status"), 10)
    assert execution.timed_out and execution.returncode == 124


# --- options and errors -------------------------------------------------------------------------


def test_slurm_table_and_command_line(tmp_path: Path) -> None:
    loaded = study(
        WORKS + '[slurm]\nlauncher = "slurm"\npartition = "compute"\n'
        'exclusive = false\nextra = ["--mem=0"]\n',
        tmp_path,
    )
    assert loaded.slurm == SlurmOptions(
        launcher="slurm", partition="compute", exclusive=False, extra=("--mem=0",)
    )
    merged = with_command_line(
        loaded.slurm, launcher=None, partition="debug", account="a1", qos=None, constraint=None
    )
    assert (merged.launcher, merged.partition, merged.account) == ("slurm", "debug", "a1")
    assert study(WORKS, tmp_path).slurm.launcher == "local"


@pytest.mark.parametrize(
    "table, message",
    [
        ({"partitoin": "x"}, "unknown key 'partitoin' in [slurm] (did you mean 'partition'?)"),
        ({"launcher": "pbs"}, "[slurm] launcher must be one of local, srun, slurm"),
        ({"extra": ["mem=0"]}, "[slurm] extra is a list of sbatch options"),
        ({"exclusive": "yes"}, "[slurm] exclusive must be true or false"),
        ({"poll": 0}, "[slurm] poll is the first wait"),
        ({"partition": ""}, "[slurm] partition must be a non-empty string"),
    ],
)
def test_slurm_table_errors(table: dict, message: str) -> None:
    with pytest.raises(SlurmError, match=None) as error:
        slurm_options(table, "s.toml")
    assert message in str(error.value)
    with pytest.raises(StudyError) as error:  # the same through a study file
        study_from_dict(
            {"name": "x", "slurm": table, "matrix": [{"command": "true", "launcher": False}]},
            "s.toml",
            workloads={},
        )
    assert message in str(error.value)


def test_srun_launcher(tmp_path: Path) -> None:
    stack = Stack(
        "mpich",
        "mpich",
        Path("/usr/bin/mpicc.mpich"),
        None,
        Path("/usr/bin/mpirun.mpich"),
        Path("/usr/bin"),
        "MPICH Version: 4.0.2",
    )
    text = (
        'name = "srun"\n[[matrix]]\ncommand = ["true"]\nstack = ["mpich"]\n'
        "ranks = [4]\nranks_per_node = 2\n"
    )
    options = SlurmOptions(launcher="srun", srun_mpi="pmix")
    planned = plan_study(study(text, tmp_path), [stack], {}, tmp_path / "s.duckdb", slurm=options)[
        0
    ]
    assert planned.skip_reason is None
    assert planned.argv == [
        "srun",
        "--nodes=2",
        "--ntasks=4",
        "--ntasks-per-node=2",
        "--mpi=pmix",
        "true",
    ]
    assert srun_command(SlurmOptions(), 3, 1, None) == ["srun", "--nodes=1", "--ntasks=3"]
    with pytest.raises(SlurmError, match="salloc"):
        check_allocation({})


# `srun --mpi=list` of Slurm 22.05.8 (Debian 12)
SRUN_MPI_LIST = """MPI plugin types are...
\tpmix
\tnone
\tcray_shasta
\tpmi2
specific pmix plugin versions available: pmix_v4
"""


@pytest.fixture
def srun_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An srun on PATH that lists 22.05's MPI plug-ins (and logs its calls)."""
    bin_dir = tmp_path / "srun-bin"
    bin_dir.mkdir()
    (bin_dir / "srun").write_text(
        f'#!/bin/sh\necho "$*" >> "$(dirname "$0")/calls"\ncat <<\'EOF\'\n{SRUN_MPI_LIST}EOF\n'
    )
    (bin_dir / "srun").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return bin_dir


def test_srun_mpi_plugins(srun_here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_mpi_list(SRUN_MPI_LIST) == ["pmix", "none", "cray_shasta", "pmi2", "pmix_v4"]
    # the plug-in each MPI starts with under srun (measured: slurm/mpi.py)
    assert srun_command(SlurmOptions(), 2, 1, None, "openmpi")[-1] == "--mpi=pmix"
    assert srun_command(SlurmOptions(), 2, 1, None, "mpich")[-1] == "--mpi=pmi2"
    assert srun_command(SlurmOptions(srun_mpi="none"), 2, 1, None, "mpich")[-1] == "--mpi=none"
    assert (srun_here / "calls").read_text() == "--mpi=list\n"  # asked once
    with pytest.raises(SlurmError) as error:
        srun_command(SlurmOptions(srun_mpi="pmi3"), 2, 1, None, "mpich")
    assert str(error.value) == (
        "srun_mpi = 'pmi3' is not an MPI plug-in of this Slurm (srun --mpi=list: pmix, none, "
        "cray_shasta, pmi2, pmix_v4): set [slurm] srun_mpi or --srun-mpi to one of them, or "
        "leave it out for esmperf to choose"
    )
    (srun_here / "srun").write_text(
        "#!/bin/sh\necho 'MPI plugin types are...'\nprintf '\\tnone\\n'\n"
    )
    monkeypatch.setenv("SLURM_CONF", str(srun_here / "another.conf"))  # asked again
    assert srun_command(SlurmOptions(), 2, 1, None, "openmpi") == [
        "srun",
        "--nodes=1",
        "--ntasks=2",
    ]  # no pmix here: the site's default


OMPI_UNDER_SRUN = """[vm:27381] OPAL ERROR: Unreachable in file ext3x_client.c at line 112
--------------------------------------------------------------------------
The application appears to have been direct launched using "srun",
but OMPI was not built with SLURM's PMI support and therefore cannot
execute. There are several options for building PMI support under
--------------------------------------------------------------------------
[vm:27381] Local abort before MPI_INIT completed completed successfully, but am not able to \
aggregate error messages, and not able to guarantee that all other processes were killed!
"""


def test_srun_failures_name_the_fix() -> None:
    argv = ["srun", "--nodes=1", "--ntasks=2", "--mpi=pmi2", "/b/hycom"]
    status, reason = srun_failure(
        "failed", "exit code 1: Local abort ...", OMPI_UNDER_SRUN, None, 2, argv
    )
    assert (status, reason) == (
        "failed",
        (
            'Open MPI could not start under srun --mpi=pmi2: it says "OMPI was not built with '
            'SLURM\'s PMI support" for that plug-in; fix: srun_mpi = "pmix" in [slurm] or '
            "--srun-mpi pmix (`srun --mpi=list` lists this site's plug-ins), or mpi_launcher = "
            '"mpirun"'
        ),
    )
    # MPICH under srun --mpi=none: every rank alone, rank 0 of 1, and all exit 0
    status, reason = srun_failure(
        "ok", None, "", {"ranks": 1, "fom": {"value": 4}}, 2, argv[:3] + argv[4:]
    )
    assert status == "failed" and reason.startswith(
        "the program ran as 1 rank(s) under srun (the site's default --mpi) where 2 were started"
    )
    assert srun_failure("ok", None, "", {"ranks": 2}, 2, argv) == ("ok", None)
    assert srun_failure("failed", "exit code 3: x", "no input", None, 2, argv) == (
        "failed",
        "exit code 3: x",
    )


def test_srun_options_on_the_command_line() -> None:
    merged = with_command_line(
        SlurmOptions(srun_mpi="pmi2"), srun_mpi="pmix", mpi_launcher="srun", launcher=None
    )
    assert (merged.srun_mpi, merged.mpi_launcher) == ("pmix", "srun")
    with pytest.raises(SlurmError, match="--srun-mpi names one of srun's MPI plug-ins"):
        with_command_line(SlurmOptions(), srun_mpi=" ")
    with pytest.raises(SlurmError, match="--mpi-launcher ssh: one of mpirun, srun"):
        with_command_line(SlurmOptions(), mpi_launcher="ssh")


def test_no_sbatch_on_path_keeps_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "s.duckdb"
    local = study(WORKS, tmp_path)
    run_study(local, store, [], {}, QUIET)  # measured here first
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(EsmperfError) as error:
        run_study(local, store, [], {}, QUIET, slurm=SLURM)
    assert "sbatch, squeue, sacct on PATH" in str(error.value)
    assert "login node" in str(error.value)
    with Store(store, read_only=True) as kept:
        assert len(kept.rows("SELECT * FROM repetition WHERE status = 'ok'")) == 8


def test_bad_partition_is_one_message(
    tmp_path: Path, fake_slurm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_SLURM_BAD_PARTITIONS", "gpu-nope")
    with pytest.raises(SlurmError) as error:
        run_study(
            study(WORKS, tmp_path),
            tmp_path / "s.duckdb",
            [],
            {},
            QUIET,
            slurm=SlurmOptions(launcher="slurm", partition="gpu-nope", poll=0.05),
        )
    message = str(error.value)
    assert "sbatch refused the job" in message
    assert "invalid partition specified: gpu-nope" in message
    assert "sinfo -s" in message and "stored results are kept" in message


# --- end to end through the test double ---------------------------------------------------------


def test_study_as_slurm_jobs(tmp_path: Path, fake_slurm: Path) -> None:
    store = tmp_path / "s.duckdb"
    outcome = run_study(study(WORKS, tmp_path), store, [], {}, QUIET, slurm=SLURM)
    assert (outcome.complete, outcome.failed, outcome.repetitions) == (2, 0, 8)
    assert len(sbatch_calls(fake_slurm)) == 2  # one job per configuration, 4 repetitions each
    with Store(store, read_only=True) as kept:
        reps = kept.rows("SELECT * FROM repetition ORDER BY run_key, rep")
        jobs = kept.rows("SELECT * FROM slurm_job ORDER BY job_id")
        links = kept.rows("SELECT * FROM slurm_repetition")
        session = kept.rows("SELECT * FROM session")[0]
    assert [r["kind"] for r in reps] == ["warmup", "measure", "measure", "measure"] * 2
    assert {r["fom"] for r in reps} == {42.5} and {r["status"] for r in reps} == {"ok"}
    assert all(r["stderr"] == "node fakenode01\n" and r["elapsed"] > 0 for r in reps)
    assert [(j["job_id"], j["state"], j["node_list"], j["ingested"]) for j in jobs] == [
        ("1000", "COMPLETED", "fakenode01", True),
        ("1001", "COMPLETED", "fakenode01", True),
    ]
    assert json.loads(jobs[0]["node"])["node_list"] == "fakenode01"
    assert len(links) == 8
    assert session["hostname"] == "fakenode01" and session["cpu_model"]
    script = Path(jobs[0]["script"]).read_text()
    assert "#SBATCH --partition=debug" in script and "#SBATCH --exclusive" in script
    with Store(store, read_only=True) as kept:  # `esmperf export` includes the jobs
        written = kept.export(tmp_path / "export", "csv")
    assert {path.stem for path in written} >= {"slurm_job", "slurm_repetition", "repetition"}
    # run again: complete, nothing submitted
    outcome = run_study(study(WORKS, tmp_path), store, [], {}, QUIET, slurm=SLURM)
    assert outcome.repetitions == 0 and len(sbatch_calls(fake_slurm)) == 2


def test_report_plots_slurm_runs_against_nodes(tmp_path: Path, fake_slurm: Path) -> None:
    text = WORKS.replace("ranks = [1, 2]", "ranks = [2, 4]\nranks_per_node = 2")
    store = tmp_path / "s.duckdb"
    assert run_study(study(text, tmp_path), store, [], {}, QUIET, slurm=SLURM).complete == 2
    with Store(store, read_only=True) as kept:
        runs = sorted(kept.runs(), key=lambda r: r["ranks"])
        groups = build_groups(load_results(kept), None)
    assert [(r["nodes"], r["launched_by"]) for r in runs] == [(1, "slurm"), (2, "slurm")]
    performance = group_figures(groups[0], cores=2)[0]  # the seeds' axis: nodes of the cluster
    assert performance.title.endswith("performance vs nodes")
    assert b"nodes (2 ranks per node)" in performance.svg
    local = tmp_path / "local.duckdb"  # the same study on this machine: against ranks
    run_study(study(text, tmp_path), local, [], {}, QUIET)
    with Store(local, read_only=True) as kept:
        assert {r["launched_by"] for r in kept.runs()} == {"local"}
        groups = build_groups(load_results(kept), None)
    assert group_figures(groups[0], cores=2)[0].title.endswith("performance vs ranks")


def test_more_rounds_until_the_statistics_are_met(tmp_path: Path, fake_slurm: Path) -> None:
    text = (
        WORKS.replace("min = 3, max = 3", "min = 2, max = 5, ci_width = 0.0001")
        .replace("echo 'rate: 42.5'", "echo rate: $((RANDOM % 50 + 10))")
        .replace("ranks = [1, 2]", "ranks = 1")
    )
    outcome = run_study(study(text, tmp_path), tmp_path / "s.duckdb", [], {}, QUIET, slurm=SLURM)
    assert outcome.complete == 1
    with Store(tmp_path / "s.duckdb", read_only=True) as kept:
        measured = kept.rows("SELECT * FROM repetition WHERE kind = 'measure'")
        jobs = kept.rows("SELECT reps FROM slurm_job ORDER BY job_id")
        run = kept.runs()[0]
    # rounds of 2: warm-up + 2, warm-up + 2, warm-up + 1 (max 5), each in a fresh allocation
    assert [len(json.loads(j["reps"])) for j in jobs] == [3, 3, 2]
    assert len(measured) == 5 and "stopped at 5 repetitions (max)" in run["reason"]


def test_failures_are_recorded_with_their_reason(tmp_path: Path, fake_slurm: Path) -> None:
    text = """
name = "failing"
[defaults]
launcher = false
ranks = 1
repeats = { warmup = 0, min = 2, max = 2 }
[[matrix]]
name = "fails"
command = ["sh", "-c", "echo started; echo 'no input deck' >&2; exit 3"]
[[matrix]]
name = "hangs"
command = ["sh", "-c", "echo started; sleep 30"]
timeout = 1
"""
    outcome = run_study(study(text, tmp_path), tmp_path / "s.duckdb", [], {}, QUIET, slurm=SLURM)
    assert (outcome.failed, outcome.timeout) == (1, 1)
    with Store(tmp_path / "s.duckdb", read_only=True) as kept:
        runs = {r["workload"]: r for r in kept.runs()}
        jobs = kept.rows("SELECT state FROM slurm_job ORDER BY job_id")
    assert runs["fails"]["reason"] == "exit code 3: no input deck"  # as for a local run
    assert runs["hangs"]["status"] == "timeout"
    assert runs["hangs"]["reason"] == "timed out after 1 s (killed)"
    # no result line before the timeout: it cannot count, the job stops there
    job_dirs = {path.parent.parent for path in tmp_path.rglob("rep-1/status")}
    assert sorted(len(list(d.glob("rep-*/status"))) for d in job_dirs) == [1, 1]
    assert [j["state"] for j in jobs] == ["FAILED", "FAILED"]


@pytest.mark.parametrize("accounting", ["on", "off"])
def test_slurm_timeout_and_cancel(
    tmp_path: Path, fake_slurm: Path, monkeypatch: pytest.MonkeyPatch, accounting: str
) -> None:
    """A job past its time limit is a timeout with Slurm's reason (sacct says None, squeue
    TimeLimit), with or without accounting; a job cancelled before it started has no output
    file to point at."""
    monkeypatch.setenv("FAKE_SLURM_ACCOUNTING", accounting)
    text = WORKS.replace("echo 'rate: 42.5'", "sleep 0.4; echo 'rate: 42.5'").replace(
        "ranks = [1, 2]", "ranks = 1"
    )
    monkeypatch.setenv("FAKE_SLURM_TIME_LIMIT", "1")  # the job's --time runs out mid-way
    outcome = run_study(study(text, tmp_path), tmp_path / "t.duckdb", [], {}, QUIET, slurm=SLURM)
    assert outcome.timeout == 1
    with Store(tmp_path / "t.duckdb", read_only=True) as kept:
        run = kept.runs()[0]
        reps = kept.rows("SELECT kind, status FROM repetition ORDER BY rep")
        job = kept.rows("SELECT * FROM slurm_job")[0]
    assert run["status"] == "timeout"
    output = tmp_path / "t" / "slurm" / run["run_key"] / "job-1000.out"
    assert run["reason"] == (
        f"Slurm job 1000 ended TIMEOUT (reason TimeLimit) before "
        f"repetition {len(reps)} finished; its output: {output}"
    )
    assert reps[-1]["status"] == "timeout" and reps[0]["status"] == "ok"
    assert (job["state"], job["reason"], job["node_list"]) == ("TIMEOUT", "TimeLimit", "fakenode01")
    assert job["exit_code"] == ("0:0" if accounting == "on" else "")  # squeue has none
    sacct_calls = [
        c for c in (fake_slurm / "calls.log").read_text().splitlines() if c.startswith("sacct")
    ]
    assert len(sacct_calls) == 1  # without accounting: asked once, then never again

    monkeypatch.delenv("FAKE_SLURM_TIME_LIMIT")
    monkeypatch.setenv("FAKE_SLURM_OUTCOME", "CANCELLED")
    outcome = run_study(study(text, tmp_path), tmp_path / "c.duckdb", [], {}, QUIET, slurm=SLURM)
    assert outcome.failed == 1
    with Store(tmp_path / "c.duckdb", read_only=True) as kept:
        run = kept.runs()[0]
        job = kept.rows("SELECT * FROM slurm_job")[0]
    assert run["status"] == "failed"
    by_whom = f" by {os.getuid()}" if accounting == "on" else ""  # squeue does not say
    assert run["reason"] == (
        f"Slurm job 1001 ended CANCELLED{by_whom} (reason "
        "Priority) before repetition 1 finished; it never started on a "
        "node (no job output)"
    )
    assert job["node_list"] == ""  # sacct's "None assigned"


def test_jobs_purged_from_squeue_without_accounting(
    tmp_path: Path, fake_slurm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No accounting and squeue forgot the job (past MinJobAge, e.g. a runner resumed late):
    its repetitions still come from its files, and its state is given up after 3 looks."""
    monkeypatch.setenv("FAKE_SLURM_ACCOUNTING", "off")
    monkeypatch.setenv("FAKE_SLURM_MIN_JOB_AGE", "0")
    outcome = run_study(
        study(WORKS.replace("ranks = [1, 2]", "ranks = 1"), tmp_path),
        tmp_path / "s.duckdb",
        [],
        {},
        QUIET,
        slurm=SLURM,
    )
    assert (outcome.complete, outcome.repetitions) == (1, 4)
    with Store(tmp_path / "s.duckdb", read_only=True) as kept:
        job = kept.rows("SELECT * FROM slurm_job")[0]
    assert job["state"] == "UNKNOWN (neither squeue nor sacct knows it)"
    assert job["node_list"] == "fakenode01"  # from the job's own record
    calls = (fake_slurm / "calls.log").read_text().splitlines()
    assert calls.count("squeue -h -t all -j 1000 -o %i|%T|%r") >= 3


def test_resume_watches_submitted_jobs_without_resubmitting(
    tmp_path: Path, fake_slurm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import esmperf.slurm.campaign as slurm_study

    def stopped(seconds: float) -> None:
        raise KeyboardInterrupt  # the runner is killed right after submitting

    store = tmp_path / "s.duckdb"
    monkeypatch.setattr(slurm_study, "pause_between_looks", stopped)
    with pytest.raises(KeyboardInterrupt):
        run_study(study(WORKS, tmp_path), store, [], {}, QUIET, slurm=SLURM)
    with Store(store) as kept:
        pending = kept.rows("SELECT job_id FROM slurm_job WHERE NOT ingested")
        assert len(pending) == 2 and not kept.rows("SELECT * FROM repetition")
    monkeypatch.undo()
    monkeypatch.setenv("PATH", f"{FAKE}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_SLURM_DIR", str(fake_slurm))
    monkeypatch.setenv("FAKE_SLURM_PYTHON", sys.executable)
    outcome = run_study(study(WORKS, tmp_path), store, [], {}, QUIET, slurm=SLURM)
    assert outcome.complete == 2 and outcome.repetitions == 8
    assert len(sbatch_calls(fake_slurm)) == 2  # the jobs of the first session, collected
    with Store(store, read_only=True) as kept:
        assert len(kept.rows("SELECT * FROM repetition")) == 8
        assert {j["ingested"] for j in kept.rows("SELECT * FROM slurm_job")} == {True}


def test_command_line_and_report(tmp_path: Path, fake_slurm: Path) -> None:
    """`esmperf study FILE --launcher slurm --partition P`, then the unchanged report."""
    (tmp_path / "s.toml").write_text(WORKS + "[slurm]\npoll = 0.05\n")
    env = {**os.environ, "ESMPERF_ROOT": str(ROOT), "PYTHONPATH": str(ROOT / "src")}
    result = esmperf(
        "study",
        str(tmp_path / "s.toml"),
        "--launcher",
        "slurm",
        "--partition",
        "debug",
        "--account",
        "esm01",
        "--out",
        str(tmp_path / "s.duckdb"),
        env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 complete, 0 failed" in result.stdout
    scripts = sorted((tmp_path / "s" / "slurm").glob("*/*.sbatch"))
    assert len(scripts) == 2 and "#SBATCH --account=esm01" in scripts[0].read_text()
    report = esmperf("report", str(tmp_path / "s.duckdb"), env=env)
    assert report.returncode == 0, report.stdout + report.stderr
    assert (tmp_path / "s" / "report" / "index.html").is_file()


def test_mpi_workload_as_a_job_with_its_profile(tmp_path: Path, fake_slurm: Path) -> None:
    """hycom on 2 ranks of Debian Open MPI, run by the batch script under mpirun: the JSON
    result, the verification and the profile land in the store as for a local run."""
    from esmperf.mpi.stacks import discover_stacks
    from esmperf.workloads import load_workloads

    stacks = [
        s for s in discover_stacks(ROOT / "build" / "stacks.json").stacks if s.id == "openmpi"
    ]
    workloads = load_workloads()
    if (
        not stacks
        or "hycom" not in workloads
        or not workloads["hycom"].is_built("openmpi")
        or not (ROOT / "build" / "openmpi" / "prof" / "libesmprof.so").is_file()
    ):
        pytest.skip("needs hycom and the profiler built for Debian Open MPI (make build)")
    text = (
        'name = "hycom-jobs"\n[[matrix]]\nworkload = "hycom"\nsize = "S"\nranks = [2]\n'
        'stack = ["openmpi"]\nprofile = true\ntimeout = 60\n'
        "repeats = { warmup = 0, min = 1, max = 1 }\n"
    )
    (tmp_path / "s.toml").write_text(text)
    outcome = run_study(
        load_study(tmp_path / "s.toml", workloads=workloads),
        tmp_path / "s.duckdb",
        stacks,
        workloads,
        QUIET,
        slurm=SLURM,
    )
    assert outcome.complete == 1, outcome.failures
    with Store(tmp_path / "s.duckdb", read_only=True) as kept:
        reps = kept.rows(
            "SELECT kind, status, verification, fom_unit, wall, profile_file "
            "FROM repetition ORDER BY rep"
        )
        ranks = kept.rows("SELECT rank FROM profile_rank ORDER BY rank")
        metrics = kept.rows("SELECT name FROM metric WHERE name = 'fom.value'")
    assert [(r["kind"], r["status"], r["verification"]) for r in reps] == [
        ("measure", "ok", "passed"),
        ("profile", "ok", "passed"),
    ]
    assert [r["rank"] for r in ranks] == [0, 1] and len(metrics) == 2
    # the profile's time bins as a local run's: the measured repetition's wall / 100
    header = json.loads(Path(reps[1]["profile_file"]).read_text().splitlines()[0])
    assert header["knobs"]["ESMPROF_BIN_SECONDS"] == f"{timeline_bin_seconds(reps[:1]):.6g}"
