"""No profile lost: `esmperf profile` interrupted by SIGINT (a user's Ctrl-C), SIGTERM or SIGHUP
keeps every rank's partial profile, and a rank that hangs or fails is named with the call it is
in. The runs are native/tests/prof_interrupted.c (and tests/mpi4py_hang.py) on both Debian
stacks, 2 ranks; each interrupt is sent to esmperf's process group, as a terminal's Ctrl-C and
`timeout` send it, once the ranks are known to be in their waiting call (their snapshots say
so: causality, never a sleep). Exact counts; times only as what contains what.
benchmarks/interrupted_runs.py repeats the loop case."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from rich.console import Console

from conftest import as_terminal_job
from esmperf.mpi.build import build_dir
from esmperf.mpi.stacks import discover_stacks
from esmperf.profile import interrupt as interrupt_module
from esmperf.profile.interrupt import run_profiled
from esmperf.profile.read import Profile, read_profile
from esmperf.profile.render import render_summary
from esmperf.profile.summary import summarise
from test_profiler_mpi4py import mpi4py_env, mpi4py_path

ESMPERF = Path(sys.executable).parent / "esmperf"
DEBIAN_STACKS = [s for s in discover_stacks().stacks if s.id in ("openmpi", "mpich")]
CALLS = 3  # MPI_Allreduce calls before the wait


def start(stack, tmp_path: Path, mode: str, **env_extra: str) -> subprocess.Popen[str]:
    """esmperf profile of prof_interrupted MODE, or of a Python program when `mode` is one."""
    if mode.endswith(".py"):
        path = mpi4py_path(stack)
        if path is None:
            pytest.skip(f"no mpi4py for {stack.id}: `make setup-mpi4py` builds it for MPICH")
        env, program = mpi4py_env(stack, path), [sys.executable, mode]
    else:
        env, program = dict(os.environ), [str(build_dir(stack) / "tests" / "prof_interrupted")]
        if not Path(program[0]).is_file():
            pytest.skip(f"{program[0]} is not built: make build")
        program += [mode, str(CALLS)]
    env |= {"ESMPROF_SNAPSHOT_SECONDS": "0.1", **env_extra}
    command = [str(ESMPERF), "profile", "--out", str(tmp_path / "p.jsonl"), "--stack", stack.id]
    command += ["--", str(stack.mpirun), "-n", "2", *program]
    return subprocess.Popen(
        command,
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
        preexec_fn=as_terminal_job,
    )


def wait_for_lines(tmp_path: Path, run: subprocess.Popen[str], wanted: dict[int, tuple]) -> None:
    """Until rank r's partial line (a snapshot, or written in MPI_Finalize) says it is in the
    call wanted[r] = (function, reason or None): polled with a deadline, not a timing."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        seen = {}
        for rank in wanted:
            try:
                line = json.loads((tmp_path / "p.jsonl.partial" / f"{rank}.jsonl").read_text())
            except (OSError, ValueError):
                continue
            calls = [call["function"] for call in line.get("in_call", [])]
            seen[rank] = (calls[0] if calls else None, line["partial"])
        if all(
            seen.get(r, (None, None))[0] == function and reason in (None, seen[r][1])
            for r, (function, reason) in wanted.items()
        ):
            return
        assert run.poll() is None, run.communicate()[0]
        time.sleep(0.1)
    os.killpg(run.pid, signal.SIGKILL)
    pytest.fail(f"the ranks never got into their calls: {wanted}")


def interrupt(run: subprocess.Popen[str], sig: signal.Signals) -> str:
    os.killpg(run.pid, sig)
    try:
        output = run.communicate(timeout=120)[0]
    except subprocess.TimeoutExpired:  # leave no spinning ranks behind for the next tests
        for pid in [*interrupt_module.descendants(run.pid), run.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        raise
    assert run.returncode == 128 + sig, output
    return output


def rendered(profile: Profile) -> str:
    console = Console(record=True, width=400)
    render_summary(summarise(profile), console)
    return console.export_text()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=str)
@pytest.mark.parametrize("stack", DEBIAN_STACKS, ids=[s.id for s in DEBIAN_STACKS])
def test_interrupt_keeps_every_rank(stack, sig, tmp_path):
    run = start(stack, tmp_path, "wait")
    wait_for_lines(tmp_path, run, {0: ("MPI_Recv", None), 1: ("MPI_Recv", None)})
    output = interrupt(run, sig)
    assert "asking the 2 ranks here for their partial profiles (waiting up to 10 s)" in " ".join(
        output.split()
    )
    profile = read_profile(tmp_path / "p.jsonl")
    assert profile.partial == {"reasons": {0: sig.name, 1: sig.name}, "missing": []}
    for rank in profile.ranks:
        calls = {name: entry["calls"] for name, entry in rank["calls"].items()}
        assert (calls["MPI_Allreduce"], calls["MPI_Barrier"]) == (CALLS, 1)
        assert "MPI_Recv" not in calls  # in progress, not completed
        [in_call] = rank["in_call"]
        assert in_call["function"] == "MPI_Recv"
        assert rank["mpi_time"] >= in_call["seconds"] > 0  # its time so far is MPI time
        [timed] = [region for region in rank["regions"] if region["name"] == "timed"]
        assert (timed["open"], timed["calls"]) == (1, 0)  # entered just before MPI_Recv
        assert timed["mpi_time"] == pytest.approx(in_call["seconds"], rel=1e-6)
    assert [(c["rank"], c["function"]) for c in summarise(profile)["partial"]["in_call"]] in (
        [(0, "MPI_Recv"), (1, "MPI_Recv")],
        [(1, "MPI_Recv"), (0, "MPI_Recv")],
    )
    assert f"ranks 0, 1 wrote what they had at {sig.name}" in rendered(profile)


@pytest.mark.parametrize("stack", DEBIAN_STACKS, ids=[s.id for s in DEBIAN_STACKS])
def test_hang_names_the_call_and_the_rank_in_finalize_writes(stack, tmp_path):
    """Rank 0 goes to MPI_Finalize while rank 1 waits in MPI_Recv for it: rank 0 no longer
    blocks in the profiler's own collectives (it wrote nothing before); both are named with
    the call they are in, whose time counts as MPI time."""
    run = start(stack, tmp_path, "hang", ESMPROF_FINALIZE_WAIT="0.2")
    wait_for_lines(tmp_path, run, {0: ("MPI_Finalize", "finalize"), 1: ("MPI_Recv", None)})
    interrupt(run, signal.SIGTERM)
    profile = read_profile(tmp_path / "p.jsonl")
    assert profile.partial == {"reasons": {0: "SIGTERM", 1: "SIGTERM"}, "missing": []}
    in_calls = {rank["rank"]: rank["in_call"] for rank in profile.ranks}
    assert [c["function"] for c in in_calls[0]] == ["MPI_Finalize"]
    assert [c["function"] for c in in_calls[1]] == ["MPI_Recv"]
    for rank in profile.ranks:
        assert rank["mpi_time"] >= rank["in_call"][0]["seconds"] > 0
    text = rendered(profile)
    assert "rank 1 in MPI_Recv for" in text and "rank 0 in MPI_Finalize for" in text


@pytest.mark.parametrize("stack", DEBIAN_STACKS, ids=[s.id for s in DEBIAN_STACKS])
def test_python_rank_that_raised_and_its_peer_in_mprobe(stack, tmp_path):
    """Issue 26's ANUGA case (tests/mpi4py_hang.py): rank 0 raised, so mpi4py finalised it; rank
    1 sits in MPI_Mprobe. Both lines are kept at Ctrl-C, each naming its call; before, rank 0
    blocked in the profiler's broadcast and wrote nothing, rank 1 showed 0 % MPI."""
    program = str(Path(__file__).with_name("mpi4py_hang.py"))
    run = start(stack, tmp_path, program, ESMPROF_FINALIZE_WAIT="0.2")
    wait_for_lines(tmp_path, run, {0: ("MPI_Finalize", "finalize"), 1: ("MPI_Mprobe", None)})
    output = interrupt(run, signal.SIGINT)
    assert "RuntimeError: set-up failed on rank 0" in output
    profile = read_profile(tmp_path / "p.jsonl")
    assert profile.partial == {"reasons": {0: "SIGINT", 1: "SIGINT"}, "missing": []}
    rank1 = profile.ranks[1]
    assert [c["function"] for c in rank1["in_call"]] == ["MPI_Mprobe"]
    assert rank1["mpi_time"] >= rank1["in_call"][0]["seconds"] > 0
    assert "rank 0 in MPI_Finalize for" in rendered(profile)


def test_partial_summary_names_the_calls_in_progress(tmp_path):
    """A crafted partial profile: the calls in progress, longest first, in the summary and its
    text; the reasons said in words."""
    header = {"format": "esmperf-profile", "version": 1, "state": "running", "ranks": 3}
    (tmp_path / "p.jsonl").write_text(json.dumps(header) + "\n")
    (tmp_path / "p.jsonl.partial").mkdir()
    lines = {
        0: ("finalize", [{"function": "MPI_Finalize", "start": 0.5, "seconds": 20.0}], 20.0),
        1: ("SIGTERM", [{"function": "MPI_Mprobe", "start": 0.4, "seconds": 23.6}], 23.6),
    }
    for rank, (reason, in_call, mpi) in lines.items():
        line = {"rank": rank, "partial": reason, "wall": 24.0, "mpi_time": mpi, "calls": {}}
        (tmp_path / "p.jsonl.partial" / f"{rank}.jsonl").write_text(
            json.dumps(line | {"in_call": in_call}) + "\n"
        )
    profile = read_profile(tmp_path / "p.jsonl")
    partial = summarise(profile)["partial"]
    assert partial == {
        "reasons": {"finalize": [0], "SIGTERM": [1]},
        "missing": [2],
        "in_call": [
            {"rank": 1, "function": "MPI_Mprobe", "seconds": 23.6},
            {"rank": 0, "function": "MPI_Finalize", "seconds": 20.0},
        ],
    }
    text = " ".join(rendered(profile).split())
    assert (
        "ranks 0 wrote what they had in MPI_Finalize, after waiting there for the other ranks; "
        "ranks 1 wrote what they had at SIGTERM; ranks 2 wrote nothing; in MPI when they wrote "
        "(counted as MPI time): rank 1 in MPI_Mprobe for 23.600 s, rank 0 in MPI_Finalize for "
        "20.000 s"
    ) in text


@pytest.mark.parametrize("stack", DEBIAN_STACKS, ids=[s.id for s in DEBIAN_STACKS])
def test_a_rank_that_exits_without_finalize_is_named(stack, tmp_path):
    """Rank 0 exits with status 3 without MPI_Finalize: it writes its line at exit (it wrote
    nothing before), and esmperf's failure shows the partial summary naming it."""
    run = start(stack, tmp_path, "fail")
    output = run.communicate(timeout=120)[0]
    assert run.returncode == 1, output
    profile = read_profile(tmp_path / "p.jsonl")
    assert profile.partial["reasons"][0] == "exit"
    [rank0] = [rank for rank in profile.ranks if rank["rank"] == 0]
    calls = {name: entry["calls"] for name, entry in rank0["calls"].items()}
    assert (calls["MPI_Allreduce"], calls["MPI_Barrier"], rank0["in_call"]) == (CALLS, 1, [])
    said = " ".join(output.split())
    assert "ranks 0 wrote what they had when they exited without MPI_Finalize" in said
    assert "failed with exit code 3; the run died before MPI_Finalize" in said


def test_a_launcher_that_ignores_the_interrupt_is_killed_after_the_grace(monkeypatch, tmp_path):
    """The grace is bounded and said: a launcher that ignores the signal passed on to it is
    killed once the grace is over (here 0.5 s; no rank runs the profiler: none is asked)."""
    monkeypatch.setattr(interrupt_module, "GRACE", 0.5)
    launcher = tmp_path / "stubborn-launcher"
    launcher.write_text(f"#!/bin/sh\ntrap '' INT TERM\ntouch {tmp_path}/started\nexec sleep 600\n")
    launcher.chmod(0o755)

    def interrupt_when_started() -> None:
        while not (tmp_path / "started").exists():
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt_when_started, daemon=True).start()
    said: list[str] = []
    # as in a terminal: pytest run where SIGINT is ignored (`make test &`) must not ignore it here
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        ended = run_profiled([str(launcher)], os.environ, tmp_path / "p.jsonl", said.append)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert (ended.returncode, ended.interrupt, ended.silent) == (-signal.SIGKILL, signal.SIGINT, [])
    assert said == [
        "esmperf: SIGINT: passing it on to stubborn-launcher (no profiled rank here)",
        "esmperf: stubborn-launcher: did not end in 0.5 s: killing the run",
    ]
