"""The profiler under SimGrid SMPI (docs/profiler.md, "Simulated runs"): linked into every program
of the smpi stack, its state each simulated rank's own, timed by the simulated clock, recording
when ESMPROF_OUT is set. Checked on HOMME: the profile's calls and bytes are the workload's own
counts, a folded run's profile is a full run's, profiling leaves the simulated time unchanged,
and SimGrid's privatization changes nothing of it."""

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from esmperf.launch.mpirun import mpirun_command, run_environment
from esmperf.launch.smpirun import simulated_time
from esmperf.mpi.build import build_dir
from esmperf.mpi.knob_setting import knob_setting, write_files
from esmperf.mpi.stacks import Stack, discover_stacks
from esmperf.profile.read import read_profile
from esmperf.profile.summary import summarise


@pytest.fixture(scope="module")
def smpi() -> Stack:
    stack = discover_stacks().by_id("smpi")
    if stack is None:
        pytest.skip("SimGrid SMPI is not installed (smpicc, smpirun): make setup installs it")
    if not (build_dir(stack) / "prof" / "libesmprof_sim.a").is_file():
        pytest.skip("the smpi stack is not built: run `esmperf build --stack smpi`")
    return stack


def homme(
    stack: Stack,
    tmp_path: Path,
    ranks: int,
    env: dict[str, str],
    cfg: tuple[str, ...] = (),
    check: bool = True,
) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    """HOMME S, 2 steps, network only, 2 ranks per node of an IB QDR cluster."""
    setting = knob_setting(
        stack,
        {"platform": "ib-qdr", "computation": "off", "fold": "off"},
        ranks,
        2,
        2,
        tmp_path / "platforms",
    )
    write_files(setting)
    program = [
        str(build_dir(stack) / "apps" / "homme" / "homme"),
        "--size",
        "S",
        "--steps",
        "2",
        "--stream",
        "0",
    ]
    command = mpirun_command(stack, ranks, program, (*cfg, *setting.launcher_args))
    full_env = run_environment(stack, os.environ) | setting.env | {"TMPDIR": str(tmp_path)} | env
    full_env.pop("ESMPROF_OUT", None)
    full_env.update(env)
    done = subprocess.run(
        command, env=full_env, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    if not check:
        return {}, done
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(
        [line for line in done.stdout.splitlines() if line.startswith('{"workload"')][-1]
    )
    return result, done


def totals(profile) -> dict[str, tuple[int, int]]:
    """(calls, bytes sent) per MPI function over all ranks."""
    out: dict[str, tuple[int, int]] = {}
    for rank in profile.ranks:
        for name, call in rank["calls"].items():
            calls, sent = out.get(name, (0, 0))
            out[name] = (calls + call["calls"], sent + call["sent"])
    return out


def test_simulated_profile_counts_the_workloads_own_messages(smpi, tmp_path):
    out = tmp_path / "homme.jsonl"
    result, done = homme(smpi, tmp_path, 4, {"ESMPROF_OUT": str(out)})
    assert "esmprof: profile written" in done.stderr
    profile = read_profile(out)
    assert len(profile.ranks) == 4
    assert len({rank["host"] for rank in profile.ranks}) == 2  # 2 ranks per simulated node
    comm, calls = result["comm"], totals(profile)
    assert calls["MPI_Isend"] == (comm["isend"], comm["bytes_sent"])
    assert calls["MPI_Irecv"][0] == comm["irecv"]
    assert calls["MPI_Allreduce"][0] == comm["allreduce"]
    assert calls["MPI_Waitall"][0] == comm["waitall"]
    assert 0 < summarise(profile)["mpi_percent"] <= 100


def test_folded_profile_is_the_full_runs(smpi, tmp_path):
    """Every call and byte alike, but the three MPI_Reduce of the folded run's own statistics
    (fold.c: kernels run and charged, their flops, the slowest times)."""
    counts = []
    for fold in ("0", "1"):
        out = tmp_path / f"fold{fold}.jsonl"
        env = {"ESMPROF_OUT": str(out)} | ({"ESM_FOLD": "1"} if fold == "1" else {})
        homme(smpi, tmp_path, 24, env)
        profile = read_profile(out)
        counts.append(
            [
                (
                    rank["rank"],
                    sorted(
                        (name, c["calls"], c["sent"], c["recv"])
                        for name, c in rank["calls"].items()
                    ),
                )
                for rank in profile.ranks
            ]
        )
        if fold == "1":
            for rank in profile.ranks:
                assert rank["calls"]["MPI_Reduce"]["calls"] == 3
            counts[-1] = [
                (r, [c for c in calls if c[0] != "MPI_Reduce"]) for r, calls in counts[-1]
            ]
    assert counts[0] == counts[1]


def test_profiling_leaves_the_timed_loop_alone(smpi, tmp_path):
    """The workload's timed steps take the same simulated time profiled or not; the whole run is
    longer by the profiler's own start-up and write-out communication."""
    plain, plain_run = homme(smpi, tmp_path, 4, {})
    profiled, profiled_run = homme(smpi, tmp_path, 4, {"ESMPROF_OUT": str(tmp_path / "p.jsonl")})
    # the same durations, read off a clock that starts later (rounding of the differences only)
    assert profiled["wall"] == pytest.approx(plain["wall"], rel=1e-12)
    assert profiled["timers"] == pytest.approx(plain["timers"], rel=1e-12)
    assert simulated_time(plain_run.stderr) < simulated_time(profiled_run.stderr)
    assert "esmprof" not in plain_run.stderr  # off unless ESMPROF_OUT is set


def test_a_profile_without_privatization_is_the_privatized_ones(smpi, tmp_path):
    """The profiler, the workload core and HOMME keep no mutable global (their per-rank state is
    in per-rank blocks, native/include/esm_rank_state.h): with SimGrid's privatization off the
    run and its profile are those of a run with each rank's own copy of the program, call for
    call, byte for byte, simulated nanosecond for nanosecond."""
    runs = []
    for privatization in ("dlopen", "no"):
        out = tmp_path / f"{privatization}.jsonl"
        result, _ = homme(
            smpi,
            tmp_path,
            4,
            {"ESMPROF_OUT": str(out)},
            (f"--cfg=smpi/privatization:{privatization}",),
        )
        profile = read_profile(out)
        calls = [(rank["rank"], rank["calls"]) for rank in profile.ranks]
        runs.append((result, calls))
    assert runs[0] == runs[1]
    assert runs[0][1][3][1]["MPI_Isend"]["calls"] > 0
