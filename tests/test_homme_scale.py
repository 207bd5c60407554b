"""HOMME at the seeds' rank counts (docs/homme.md, "Decomposition and folding"): any rank count
up to the element count, dealt along the space-filling curve as HOMME's genspacepart does (the
first nelem mod ranks ranks hold one element more), with the same bits as on one rank, on real
MPI and on 40-48 simulated ranks; too many ranks is one clear error. Folded under SimGrid SMPI,
a run sends exactly what a full run sends, rank by rank, takes the same simulated time with the
deterministic cost model, and says it is not verified.

The simulated runs drive smpirun directly (network only, computation off), as tests/test_fold.py
does, with the core's ESM_* variables in smpirun's environment."""

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from esmperf.launch.mpirun import mpirun_command, run_environment
from esmperf.launch.smpirun import simulated_time
from esmperf.mpi.build import build_dir
from esmperf.mpi.knobs import knob_setting, write_files
from esmperf.mpi.stacks import Stack, discover_stacks
from esmperf.workloads import parse_result_line

QUICK = ("--stream", "0", "--steps", "3")
REAL = [
    s
    for s in discover_stacks().stacks
    if not s.simulated and (build_dir(s) / "apps" / "homme" / "homme").is_file()
]
FIRST = sorted(REAL, key=lambda s: s.id not in ("openmpi", "mpich"))[:1]


def homme_real(stack: Stack, ranks: int, *args: str) -> dict[str, Any]:
    binary = build_dir(stack) / "apps" / "homme" / "homme"
    run = subprocess.run(
        mpirun_command(stack, ranks, [str(binary), *args]),
        env=run_environment(stack),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    result = parse_result_line(run.stdout)
    assert result is not None and result["verification"]["passed"]
    return result


@pytest.mark.parametrize("stack", FIRST, ids=lambda s: s.id)
def test_uneven_decompositions_give_the_same_bits(stack):
    """ne=3 (54 elements) and ne=5 (150) on 4 ranks: 14,14,13,13 and 38,38,37,37 elements."""
    for ne, (most, fewest) in (("3", (14, 13)), ("5", (38, 37))):
        one = homme_real(stack, 1, "--ne", ne, *QUICK)
        four = homme_real(stack, 4, "--ne", ne, *QUICK)
        assert four["verification"]["checksum"] == one["verification"]["checksum"], ne
        assert four["verification"]["norms"] == one["verification"]["norms"], ne
        per_rank = four["model"]["elements_per_rank"]
        assert (per_rank["max"], per_rank["min"]) == (most, fewest), ne
        assert one["model"]["elements_per_rank"] == {
            "max": 6 * int(ne) ** 2,
            "min": 6 * int(ne) ** 2,
        }


# -- under SimGrid SMPI ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def smpi() -> Stack:
    stack = discover_stacks().by_id("smpi")
    if stack is None:
        pytest.skip("SimGrid SMPI is not installed (smpicc, smpirun): make setup installs it")
    if not (build_dir(stack) / "apps" / "homme" / "homme").is_file():
        pytest.skip("the smpi stack is not built: run `esmperf build --stack smpi`")
    return stack


def simulate(
    stack: Stack,
    tmp_path: Path,
    ranks: int,
    args: tuple[str, ...],
    env: dict[str, str] | None = None,
    ranks_per_node: int = 8,
) -> subprocess.CompletedProcess[str]:
    """homme on `ranks` simulated ranks of an IB QDR cluster, network only."""
    knobs = {"platform": "ib-qdr", "computation": "off", "fold": "off"}  # env may fold it
    setting = knob_setting(stack, knobs, ranks, 2, ranks_per_node, tmp_path / "platforms")
    write_files(setting)
    program = [str(build_dir(stack) / "apps" / "homme" / "homme"), *args]
    command = mpirun_command(stack, ranks, program, setting.launcher_args)
    full_env = run_environment(stack, os.environ) | setting.env | {"TMPDIR": str(tmp_path)}
    return subprocess.run(
        command,
        env=full_env | (env or {}),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )


def record_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr[-2000:]
    record = json.loads(
        [line for line in done.stdout.splitlines() if line.startswith('{"workload"')][-1]
    )
    record["simulated_time"] = simulated_time(done.stderr)
    return record


def test_simulated_ranks_give_the_bits_of_one_real_rank(smpi, tmp_path):
    """ne=4 (96 elements) on 48 simulated ranks (2 each) and on 40 (16 ranks of 3, 24 of 2)."""
    if not FIRST:
        pytest.skip("homme is not built for a real MPI stack: run `make build`")
    reference = homme_real(FIRST[0], 1, *QUICK)
    for ranks, most, fewest in ((48, 2, 2), (40, 3, 2)):
        record = record_of(simulate(smpi, tmp_path, ranks, QUICK))
        assert record["ranks"] == ranks and record["verification"]["passed"]
        assert record["verification"]["checksum"] == reference["verification"]["checksum"]
        assert record["verification"]["norms"] == reference["verification"]["norms"]
        assert record["model"]["elements_per_rank"] == {"max": most, "min": fewest}
        dss = 1 + 3 * 6  # the mass, then 6 per step
        assert record["comm"]["waitall"] == ranks * dss
        assert record["comm"]["isend"] == dss * record["model"]["messages_per_step"] / 6


def test_more_ranks_than_elements_is_one_clear_error(smpi, tmp_path):
    done = simulate(smpi, tmp_path, 97, QUICK)
    assert done.returncode == 1
    message = (
        "homme: error: 97 ranks but only 96 elements (ne=4): every rank needs an element; "
        "use at most 96 ranks or --ne 5 or more"
    )
    assert done.stderr.count(message) == 1, done.stderr[-2000:]
    assert '{"workload"' not in done.stdout


def test_folded_run_sends_what_a_full_run_sends_in_the_same_simulated_time(smpi, tmp_path):
    """36 ranks on ne=4 (uneven: 24 ranks of 3 elements, 12 of 2), 4 per node, the node model
    charging each kernel its bytes: folded and full runs have the same messages and bytes on
    every rank and the same simulated time, to the bit; the folded one runs each kernel on its
    first calls only and is not verified."""
    model = {
        "ESM_KERNEL_COST": "model",
        "ESM_NODE_BANDWIDTH": "2e9",
        "ESM_NODE_RANKS": "4",
        "ESM_RESULT_PER_RANK": "1",
    }
    args = ("--stream", "0", "--steps", "4", "--statefreq", "2")
    full = record_of(simulate(smpi, tmp_path, 36, args, model, ranks_per_node=4))
    folded_run = simulate(smpi, tmp_path, 36, args, model | {"ESM_FOLD": "1"}, ranks_per_node=4)
    folded = record_of(folded_run)
    assert full["verification"]["passed"] is True and full["fold"]["folded"] is False
    assert folded["fold"]["folded"] is True
    assert folded["verification"]["passed"] is None
    assert folded["verification"]["what"] == "not verified: folded run"
    assert "checksum" not in folded["verification"]
    assert "homme: after 0.08526 days: not verified: folded run" in folded_run.stdout
    assert folded["comm"] == full["comm"]
    assert folded["comm_per_rank"] == full["comm_per_rank"]
    assert folded["model"] == full["model"]
    assert folded["simulated_time"] == full["simulated_time"] > 0
    assert folded["wall"] == full["wall"]
    assert folded["fold"]["kernel_seconds_max"] == full["fold"]["kernel_seconds_max"] > 0
    assert full["fold"]["kernel_calls_charged"] == 0
    assert folded["fold"]["kernel_calls_charged"] > 10 * folded["fold"]["kernel_calls_run"]
    calls = full["fold"]["kernel_calls_run"]
    assert folded["fold"]["kernel_calls_run"] + folded["fold"]["kernel_calls_charged"] == calls


def test_folded_run_takes_two_steps_unless_told(smpi, tmp_path):
    """A folded run cannot verify its days, and ne120's 12 days are about 35,000 steps: it runs
    2 steps by default; --steps still says how many."""
    args = ("--stream", "0", "--statefreq", "1")
    folded = record_of(simulate(smpi, tmp_path, 12, args, {"ESM_FOLD": "1"}))
    assert folded["steps"] == 2
    told = record_of(simulate(smpi, tmp_path, 12, (*args, "--steps", "3"), {"ESM_FOLD": "1"}))
    assert told["steps"] == 3
    full = record_of(simulate(smpi, tmp_path, 12, args))
    assert full["steps"] > 2


def test_folded_run_makes_streams_messages_without_measuring_it(smpi, tmp_path):
    """STREAM's passes keep their barriers and reductions when folded, but not the triad (the
    arrays would be shared: the figure would mean nothing)."""
    args = ("--stream", "1", "--steps", "2", "--statefreq", "1")
    per_rank = {"ESM_RESULT_PER_RANK": "1"}
    full = record_of(simulate(smpi, tmp_path, 12, args, per_rank))
    folded = record_of(simulate(smpi, tmp_path, 12, args, per_rank | {"ESM_FOLD": "1"}))
    assert full["stream"]["triad_GBps"] > 0
    assert "stream" not in folded
    assert folded["comm_per_rank"] == full["comm_per_rank"]
