"""libesmredist, property-based: for random decompositions of random index spaces (1-4
dimensions; blocks with random cuts, boxes from random bisection, index lists of shuffled and
reversed runs over levels), every pair of kinds, several seeds, A -> B puts every element where B
says and B -> A gives A back exactly, for every option combination (comm x pack x bundle x local
x single copy, fields malloc'ed or node-shared). The generator is native/redist/tests/
redist_check.c (the same random numbers on every rank); values are exact functions of the global
index in every type, so a check is equality, not a tolerance.

Open MPI yields the CPU while it waits, so 4 oversubscribed ranks run hundreds of cases in a
second or two; MPICH spins, so there 4 ranks run a sample and 2 ranks the rest."""

import json
import subprocess

import pytest

from esmperf.launch.mpirun import mpirun_command, run_environment
from esmperf.mpi.build import build_dir
from esmperf.mpi.stacks import discover_stacks

STACKS = [s for s in discover_stacks().stacks if not s.simulated]  # smpi: test_smpi.py
DEBIAN = [s for s in STACKS if s.id in ("openmpi", "mpich")]
OTHERS = [s for s in STACKS if s.id not in ("openmpi", "mpich")]
ALL_COMBINATIONS = 192  # 3 comm x 4 pack x 2 bundle x 2 local x 2 single copy x 2 memories


def roundtrip(stack, ranks: int, *args: str, env: dict[str, str] | None = None) -> dict:
    program = build_dir(stack) / "redist" / "redist_check"
    if not program.is_file():
        pytest.skip(f"{program} not built: run `make build`")
    environment = run_environment(stack) | (env or {})
    command = mpirun_command(stack, ranks, [str(program), "roundtrip", *args])
    if env and stack.family == "openmpi":  # Open MPI forwards only what -x names
        command[1:1] = [item for name in env for item in ("-x", name)]
    run = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["passed"] and result["wrong_elements"] == 0, result
    assert result["ranks"] == ranks and result["cases"] > 0
    return result


def wide_ranks(stack) -> int:
    return 4 if stack.family == "openmpi" else 2


@pytest.mark.parametrize("stack", DEBIAN, ids=lambda s: s.id)
def test_every_option_combination(stack):
    """All 192 combinations on each of the 9 kind pairs of one seed. MPICH runs one kind pair
    per launch: it busy-polls, so on a machine whose cores are busy every small collective waits
    for the scheduler, and the whole seed in one launch once took past the 180 s hang guard
    under `make test-stress` (samples of both ranks' stacks showed them moving on, not hung)."""
    if stack.family == "openmpi":
        results = [roundtrip(stack, 3, "--seeds", "4-4", "--all-options")]
    else:
        results = [
            roundtrip(stack, 2, "--seeds", "4-4", "--all-options", "--pairs", f"{k}-{k}")
            for k in range(9)
        ]
    assert sum(r["kind_pairs"] for r in results) == 9
    assert {r["option_combinations"] for r in results} == {ALL_COMBINATIONS}
    assert sum(r["cases"] for r in results) == 9 * ALL_COMBINATIONS


@pytest.mark.parametrize("stack", DEBIAN, ids=lambda s: s.id)
def test_several_seeds(stack):
    """Two more seeds, a rotating sample of 8 combinations per kind pair."""
    result = roundtrip(stack, wide_ranks(stack), "--seeds", "1-2", "--sample", "8")
    assert result["kind_pairs"] == 9 and result["cases"] == 2 * 9 * 8


@pytest.mark.parametrize("stack", DEBIAN, ids=lambda s: s.id)
def test_four_ranks(stack):
    """4 ranks (oversubscribed on 2 cores) on every kind pair: more peers per rank, longer ring."""
    sample = "8" if stack.family == "openmpi" else "1"
    result = roundtrip(stack, 4, "--seeds", "7-7", "--sample", sample)
    assert result["kind_pairs"] == 9


@pytest.mark.parametrize("stack", DEBIAN, ids=lambda s: s.id)
def test_node_peers_without_cross_memory_attach(stack):
    """With cross-memory attach turned off, single-copy node peers whose fields are private
    fall back to one packed MPI message; shared fields are still copied directly."""
    result = roundtrip(
        stack,
        wide_ranks(stack),
        "--seeds",
        "5-5",
        "--pairs",
        "2-6",
        "--options",
        "48-95",
        env={"ESM_REDIST_CMA": "0"},
    )
    assert result["option_combinations"] == 48 and result["kind_pairs"] == 5


@pytest.mark.parametrize("stack", DEBIAN, ids=lambda s: s.id)
def test_streaming_stores(stack):
    """Copies larger than the caches use non-temporal stores; forced on for these small ones."""
    result = roundtrip(
        stack, wide_ranks(stack), "--seeds", "3-3", "--sample", "24", env={"ESM_REDIST_STREAM": "1"}
    )
    assert result["cases"] == 9 * 24


@pytest.mark.parametrize("stack", OTHERS, ids=lambda s: s.id)
def test_other_stacks(stack):
    """The same checks, one seed, on the optional stacks (`make setup-more-mpi`)."""
    result = roundtrip(stack, 2, "--seeds", "1-1", "--sample", "8")
    assert result["kind_pairs"] == 9
