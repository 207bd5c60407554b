"""native/core (the workload core) through its self-test program, esm_core_test, on 1-4 ranks
under the Debian MPI stacks: space-filling curves, decomposition with land blocks, halo
exchange (both engines, both layouts, widths 1-3), reproducible sums (exact against Python's
correctly rounded sum, bit-identical for any rank count), checksums, clean errors.

The helpers here (`ocean_stacks`, `executable`, `run`, `profile_run`) also serve test_pop.py and
test_hycom.py. Runs with more ranks than cores are fine: only correctness is checked."""

import json
import math
import os
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from conftest import NO_KILL_GRACE
from esmperf.launch.mpirun import mpirun_command, run_environment
from esmperf.mpi.build import build_dir
from esmperf.mpi.stacks import discover_stacks
from esmperf.profile.read import read_profile

ESMPERF = Path(sys.executable).parent / "esmperf"
DEBIAN = ("openmpi", "mpich")


def ocean_stacks() -> list:
    """The Debian stacks (always present after `make setup`), Open MPI first."""
    found = {stack.id: stack for stack in discover_stacks().stacks}
    return [found[name] for name in DEBIAN if name in found]


STACKS = ocean_stacks()
FIRST = STACKS[:1]  # the checks that need only one stack


def executable(stack, name: str) -> Path:
    """build/<stack>/apps/<name>/<name>, or core/esm_core_test; skip when not built."""
    base = build_dir(stack)
    path = base / "core" / name if name == "esm_core_test" else base / "apps" / name / name
    if not path.is_file():
        pytest.skip(f"{path} is not built (make build)")
    return path


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str

    @property
    def result(self) -> dict[str, Any]:
        """The workload's JSON result line (the last line starting with {"workload")."""
        lines = [line for line in self.stdout.splitlines() if line.startswith('{"workload"')]
        assert lines, f"no result line (exit {self.returncode}):\n{self.stdout}\n{self.stderr}"
        return json.loads(lines[-1])


@cache
def _run(stack_id: str, ranks: int, name: str, args: tuple[str, ...], fails: bool = False) -> Run:
    stack = next(s for s in STACKS if s.id == stack_id)
    command = mpirun_command(stack, ranks, [str(executable(stack, name)), *args])
    env = run_environment(stack, os.environ) | (NO_KILL_GRACE if fails else {})
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    return Run(done.returncode, done.stdout, done.stderr)


def run(stack, ranks: int, name: str, *args: str) -> Run:
    """Run (once per distinct command: results are cached for the session)."""
    return _run(stack.id, ranks, name, tuple(args))


def passed(stack, ranks: int, name: str, *args: str) -> dict[str, Any]:
    """The result of a run that must exit 0 with verification passed."""
    done = run(stack, ranks, name, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    result = done.result
    assert result["verification"]["passed"], result["verification"]
    assert result["ranks"] == ranks
    return result


def profile_run(stack, ranks: int, name: str, tmp_path: Path, *args: str):
    """(profile, result) of `name` run under `esmperf profile`."""
    out = tmp_path / f"{name}.jsonl"
    command = [
        str(ESMPERF),
        "profile",
        "--out",
        str(out),
        "--",
        str(stack.mpirun),
        "-n",
        str(ranks),
        str(executable(stack, name)),
        *args,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    return read_profile(out), Run(0, done.stdout, done.stderr).result


def calls(profile, name: str) -> list[int]:
    """Calls of MPI function `name` on each rank (0 when never called)."""
    return [rank["calls"].get(name, {}).get("calls", 0) for rank in profile.ranks]


def bad_input(stack, name: str, *args: str, ranks: int = 2) -> str:
    """Run with bad input: every rank exits with status 1, one message; return it."""
    done = _run(stack.id, ranks, name, tuple(args), fails=True)
    assert done.returncode == 1, done.stdout + done.stderr
    assert '{"workload"' not in done.stdout
    assert f"{name}: error: " in done.stderr
    return done.stderr


# ---- the self-test ---------------------------------------------------------------------------

# the self-test's grid (core_test.c): 38 x 31 points, 5 x 4 blocks, a land rectangle and disc
NX, NY, BX, BY = 38, 31, 5, 4


def grid_ocean(i: int, j: int) -> bool:
    return not (8 <= i < 24 and 12 <= j < 24) and (i - 30) ** 2 + (j - 5) ** 2 >= 9


def value_at(g: int) -> float:
    v = math.ldexp(1.0 + (g % 97) / 97.0, g % 271 - 150)
    return v if g % 2 else -v * 0.75


def exact_reference() -> float:
    """The correctly rounded sum of value_at over every point of the ocean blocks."""
    values = []
    for jb in range(-(-NY // BY)):
        for ib in range(-(-NX // BX)):
            points = [
                (i, j)
                for j in range(jb * BY, min(NY, jb * BY + BY))
                for i in range(ib * BX, min(NX, ib * BX + BX))
            ]
            if any(grid_ocean(i, j) for i, j in points):
                values += [value_at(i + NX * j) for i, j in points]
    return math.fsum(values)


def rank_counts(stack) -> tuple[int, ...]:
    """1-4 ranks on the first stack; 2 on the others (compared with the first: the same bits)."""
    return (1, 2, 3, 4) if stack is STACKS[0] else (2,)


def runs_on_every_stack(name: str, *args: str) -> list[dict[str, Any]]:
    """Passed results on 1-4 ranks (first stack), then 2 ranks (other stacks)."""
    return [passed(stack, n, name, *args) for stack in STACKS for n in rank_counts(stack)]


def test_selftest_passes_and_is_bit_identical_on_1_to_4_ranks_and_every_stack():
    if not STACKS:
        pytest.skip("no Debian MPI stack")
    results = runs_on_every_stack("esm_core_test")
    first = results[0]
    assert first["curve_errors"] == 0
    assert first["curves"] == {"8": "hilbert", "10": "cinco-hilbert", "12": "peano-hilbert"}
    assert first["decomp"]["sfc"]["blocks"] == 58 and first["decomp"]["sfc"]["land_blocks"] == 6
    for result in results:
        assert result["halo"] == {"configurations": 24, "wrong_points": 0}
        assert result["sum"] == first["sum"]  # every figure, bit for bit
        assert result["sum"]["nan_detected"] is True
    assert float.fromhex(first["sum"]["exact_hex"]) == exact_reference()
    assert first["sum"]["cancel"] == 1.0  # 1e20 + 1 - 1e20 on three ranks' points
    methods = [r["decomp"]["cartesian"]["method"] for r in results[:4]]
    assert methods == ["cartesian 1x1", "cartesian 1x2", "cartesian 1x3", "cartesian 2x2"]


@pytest.mark.parametrize("stack", STACKS, ids=lambda s: s.id)
def test_selftest_counts_its_mpi_operations(stack):
    one, three = passed(stack, 1, "esm_core_test"), passed(stack, 3, "esm_core_test")
    assert one["comm"]["isend"] == one["comm"]["messages"] == one["comm"]["bytes_sent"] == 0
    assert one["comm"]["halo_updates"] == 48  # 24 configurations x 2 updates
    comm = three["comm"]
    assert comm["isend"] == comm["irecv"] and comm["send_init"] == comm["recv_init"]
    # every update of a rank with neighbours is one Waitall, a persistent one one Startall
    assert comm["waitall"] == comm["startall"] * 2
    assert comm["messages"] == comm["isend"] + comm["send_init"] * 2


def test_selftest_profile_matches_the_core_counts(tmp_path):
    stack = FIRST[0] if FIRST else pytest.skip("no Debian MPI stack")
    profile, result = profile_run(stack, 3, "esm_core_test", tmp_path)
    comm = result["comm"]
    for mpi, key in (
        ("MPI_Isend", "isend"),
        ("MPI_Irecv", "irecv"),
        ("MPI_Waitall", "waitall"),
        ("MPI_Startall", "startall"),
        ("MPI_Send_init", "send_init"),
        ("MPI_Recv_init", "recv_init"),
        ("MPI_Allreduce", "allreduce"),
        ("MPI_Barrier", "barrier"),
    ):
        assert sum(calls(profile, mpi)) == comm[key], mpi
    assert len(set(calls(profile, "MPI_Allreduce"))) == 1  # collectives: the same on every rank


@pytest.mark.parametrize("stack", FIRST, ids=lambda s: s.id)
def test_bad_command_line_is_one_clear_error(stack):
    assert "unknown option --bogus" in bad_input(stack, "esm_core_test", "--bogus", "1")
    assert "needs a value" in bad_input(stack, "esm_core_test", "--bogus")
    helped = run(stack, 2, "esm_core_test", "--help")
    assert helped.returncode == 0 and "usage: esm_core_test" in helped.stdout
    assert helped.stdout.count("usage:") == 1  # rank 0 only
