"""Killed runs keep their profile, and I/O is counted per file: tests/io_and_wait.py under the
profiler on every stack with an mpi4py, 2 ranks. Exact file names, calls and bytes; exact MPI
counts in the partial profile a SIGTERM leaves, and in the last snapshot a SIGKILL leaves."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from esmperf.profile.read import read_profile
from esmperf.profile.render import render_summary
from esmperf.profile.summary import summarise
from test_profiler_mpi4py import ESMPERF, STACKS, mpi4py_env, mpi4py_path

PROGRAM = Path(__file__).with_name("io_and_wait.py")


def start(stack, tmp_path, wait: bool, **env_extra):
    path = mpi4py_path(stack)
    if path is None:
        pytest.skip(f"no mpi4py for {stack.id}: `make setup-mpi4py` builds it for Debian MPICH")
    env = mpi4py_env(stack, path) | env_extra
    command = [
        str(ESMPERF),
        "profile",
        "--out",
        str(tmp_path / "p.jsonl"),
        "--stack",
        stack.id,
        "--",
        str(stack.mpirun),
        "-n",
        "2",
        sys.executable,
        str(PROGRAM),
    ]
    return subprocess.Popen(
        command + (["wait"] if wait else []),
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def rank_pids(tmp_path, run) -> list[int]:
    """The ranks' pids, once both have done their calls (a poll with a deadline, not a timing)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready = [tmp_path / f"ready.{r}" for r in range(2)]
        if all(f.is_file() and f.read_text() for f in ready):
            return [int(f.read_text()) for f in ready]
        assert run.poll() is None, run.communicate()[0]
        time.sleep(0.1)
    run.kill()
    pytest.fail("the ranks never got ready")


def check_mpi(rank):
    c = rank["calls"]
    name = "MPI_Sendrecv_c" if "MPI_Sendrecv_c" in c else "MPI_Sendrecv"
    assert (c[name]["calls"], c[name]["sent"], c[name]["recv"]) == (7, 700, 700)


@pytest.mark.parametrize("stack", STACKS, ids=[s.id for s in STACKS])
def test_files_by_name(stack, tmp_path):
    run = start(stack, tmp_path, wait=False)
    output = run.communicate(timeout=180)[0]
    assert run.returncode == 0, output
    profile = read_profile(tmp_path / "p.jsonl")
    for rank in profile.ranks:
        r = rank["rank"]
        files = {f["name"]: f for f in rank["files"]}
        data = files[str(tmp_path / f"data.{r}.bin")]
        assert data["write"][:2] == [3, 3000] and data["read"][:2] == [2, 1000]
        assert "stdio_write" not in data
        text = files[str(tmp_path / f"text.{r}.txt")]
        assert text["stdio_write"][:2] == [5, 1011] and "write" not in text
    summary = summarise(profile)
    top = {row["name"]: row for row in summary["files"]}
    data0 = top[str(tmp_path / "data.0.bin")]
    assert (data0["write_bytes"], data0["read_bytes"], data0["calls"], data0["ranks"]) == (
        3000,
        1000,
        5,
        1,
    )
    assert top[str(tmp_path / "text.1.txt")]["write_bytes"] == 1011


def parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[1])


def ended(pid: int) -> bool:
    """Exited (a zombie its stopped parent has not reaped) or gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def sigterm_every_rank(ranks: list[int]) -> None:
    """SIGTERM to every rank as Slurm sends it at a time limit, with the launcher held still
    until every rank has ended: a local mpirun (or hydra's proxy) SIGKILLs the other ranks as
    soon as one dies, before a rank whose signal came a moment later could write its line (a
    property of the launcher, not of the ranks: `esmperf profile` orders an interrupt itself,
    tests/test_profile_interrupted.py). Causality, not timing: the launcher resumes only once
    each rank has ended."""
    launchers = {parent(pid) for pid in ranks}
    for pid in launchers:
        os.kill(pid, signal.SIGSTOP)
    try:
        for pid in ranks:
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 120
        while not all(ended(pid) for pid in ranks) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        for pid in launchers:
            os.kill(pid, signal.SIGCONT)


@pytest.mark.parametrize("stack", STACKS, ids=[s.id for s in STACKS])
def test_sigterm_leaves_a_partial_profile(stack, tmp_path):
    run = start(stack, tmp_path, wait=True)
    sigterm_every_rank(rank_pids(tmp_path, run))
    output = run.communicate(timeout=120)[0]
    assert run.returncode != 0
    profile = read_profile(tmp_path / "p.jsonl")
    assert profile.header["state"] == "running"
    assert profile.partial == {"reasons": {0: "SIGTERM", 1: "SIGTERM"}, "missing": []}
    for rank in profile.ranks:
        check_mpi(rank)
        data = {f["name"]: f for f in rank["files"]}[str(tmp_path / f"data.{rank['rank']}.bin")]
        assert data["write"][:2] == [3, 3000]
    summary = summarise(profile)
    assert summary["partial"] == {"reasons": {"SIGTERM": [0, 1]}, "missing": [], "in_call": []}
    from rich.console import Console

    console = Console(record=True, width=120)
    render_summary(summary, console)
    assert "partial profile" in console.export_text()
    assert "SIGTERM" in output or "killed" in output or run.returncode != 0


@pytest.mark.parametrize("stack", STACKS[:1], ids=[s.id for s in STACKS[:1]])
def test_snapshot_survives_sigkill(stack, tmp_path):
    run = start(stack, tmp_path, wait=True, ESMPROF_SNAPSHOT_SECONDS="0.2")
    pids = rank_pids(tmp_path, run)
    shards = [tmp_path / "p.jsonl.partial" / f"{r}.jsonl" for r in range(2)]
    # Wait for a snapshot of each rank written after its ready file (which follows its 7
    # calls): an earlier one may hold only part of them.
    ready = [(tmp_path / f"ready.{r}").stat().st_mtime_ns for r in range(2)]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if all(s.is_file() and s.stat().st_mtime_ns > t for s, t in zip(shards, ready)):
            break
        time.sleep(0.1)
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    run.communicate(timeout=120)
    profile = read_profile(tmp_path / "p.jsonl")
    assert profile.partial["reasons"] == {0: "snapshot", 1: "snapshot"}
    for rank in profile.ranks:
        check_mpi(rank)
