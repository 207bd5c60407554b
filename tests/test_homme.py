"""The HOMME proxy (native/apps/homme, docs/homme.md) at size S: Williamson test cases 1 and 2
converge as ne grows and conserve mass to round-off; the final state has the same bits on 1-4
ranks, with either DSS engine and under every MPI stack; a profile of a 4-rank run (counts
only, never times: the ranks are oversubscribed here) is Isend/Irecv/Waitall + Allreduce and
agrees call for call with the counts the workload reports; bad input ends with one clear error.
"""

import subprocess
import sys
from pathlib import Path

import pytest

from esmperf.launch.mpirun import mpirun_command, run_environment
from esmperf.mpi.build import build_dir
from esmperf.mpi.stacks import discover_stacks
from esmperf.paths import repo_root
from esmperf.profile.read import read_profile
from esmperf.workloads import parse_result_line, read_manifest

ESMPERF = Path(sys.executable).parent / "esmperf"
STACKS = [s for s in discover_stacks().stacks if not s.simulated]  # smpi: test_smpi.py
BUILT = [s for s in STACKS if (build_dir(s) / "apps" / "homme" / "homme").is_file()]
# The numerics do not depend on the MPI library: the long convergence runs use one stack, the
# error exits one whose launcher returns at once (Open MPI's mpirun lingers ~2 s after a failure).
FIRST = sorted(BUILT, key=lambda s: s.id not in ("openmpi", "mpich"))[:1]
PROMPT = sorted(BUILT, key=lambda s: (s.family != "mpich", s.id != "mpich"))[:1]
QUICK = ("--stream", "0", "--steps", "30")  # ne=4, 30 steps of 1842 s (0.64 days)
CHECKSUMS: dict[str, str] = {}  # stack id -> final-state checksum (2 ranks)


def homme(stack, ranks: int, *args: str, expect: int = 0) -> tuple[dict, str]:
    """Run the workload; its JSON result (None when it printed none) and its stderr."""
    binary = build_dir(stack) / "apps" / "homme" / "homme"
    run = subprocess.run(
        mpirun_command(stack, ranks, [str(binary), *args]),
        env=run_environment(stack),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == expect, run.stdout[-3000:] + run.stderr[-3000:]
    return parse_result_line(run.stdout), run.stderr


def norms(result: dict) -> dict:
    return result["verification"]["norms"]


@pytest.mark.parametrize("stack", FIRST, ids=lambda s: s.id)
def test_tc2_converges_at_fourth_order_and_conserves_mass(stack):
    """Steady geostrophic flow, 12 days, alpha = 45: exact answer = initial state."""
    coarse, _ = homme(stack, 1, "--case", "tc2", "--ne", "4", "--stream", "0")
    fine, _ = homme(stack, 1, "--case", "tc2", "--ne", "8", "--stream", "0")
    for result in (coarse, fine):
        assert result["verification"]["passed"]
        assert result["params"]["days"] == pytest.approx(12.0)
        assert norms(result)["mass"] <= 1e-14  # measured <= 2.2e-16
        for norm in ("l1", "l2", "linf"):
            assert norms(result)[norm] <= result["verification"]["tolerance"][norm]
    assert norms(coarse)["l2"] < 6e-4 and norms(fine)["l2"] < 6e-4 / 8
    # halving the element width divides the error by 2^4 = 16 (measured: 21.9, 22.9, 28.8)
    for norm in ("l1", "l2", "linf"):
        assert norms(coarse)[norm] / norms(fine)[norm] > 12, norm


@pytest.mark.parametrize("stack", FIRST, ids=lambda s: s.id)
def test_tc1_cosine_bell_converges_and_conserves_mass(stack):
    """Cosine bell advection, 12 days (once round the sphere), over the cube's corners."""
    coarse, _ = homme(stack, 1, "--case", "tc1", "--ne", "4", "--stream", "0")
    fine, _ = homme(stack, 2, "--case", "tc1", "--ne", "8", "--stream", "0")
    for result in (coarse, fine):
        assert result["verification"]["passed"]
        assert norms(result)["mass"] <= 1e-14  # measured <= 3.6e-16
    # the bell is only C1 at its rim: about second order (measured ratios 2.5, 2.9, 3.5)
    for norm, ratio in (("l1", 2.0), ("l2", 2.4), ("linf", 2.5)):
        assert norms(coarse)[norm] / norms(fine)[norm] > ratio, norm


@pytest.mark.parametrize("stack", BUILT, ids=lambda s: s.id)
def test_same_bits_on_any_number_of_ranks(stack):
    results = {n: homme(stack, n, *QUICK)[0] for n in (1, 2, 3, 4)}
    persistent, _ = homme(stack, 3, *QUICK, "--engine", "persistent")
    reference = results[1]
    assert reference["verification"]["passed"] and reference["steps"] == 30
    for n, result in [*results.items(), (3, persistent)]:
        assert result["ranks"] == n
        assert result["verification"]["checksum"] == reference["verification"]["checksum"], n
        assert norms(result) == norms(reference), n  # every bit of every norm
        assert result["verification"]["mass"] == reference["verification"]["mass"], n
    # one DSS: one Isend and one Irecv per neighbour rank, one Waitall (the first is the mass)
    dss = 1 + 30 * 6
    assert results[1]["comm"]["isend"] == 0 and results[1]["model"]["max_peers"] == 0
    for n in (2, 3, 4):
        comm, model = results[n]["comm"], results[n]["model"]
        assert comm["waitall"] == n * dss and comm["halo_updates"] == n * dss
        # messages_per_step: the mean per rank over the timed steps, 6 DSS a step
        assert comm["isend"] == comm["irecv"]
        assert 6 * comm["isend"] == dss * round(n * model["messages_per_step"])
        assert 1 <= model["max_peers"] <= n - 1
    assert persistent["comm"]["isend"] == 0 and persistent["comm"]["startall"] == 3 * dss
    tc1 = [homme(stack, n, "--case", "tc1", *QUICK)[0] for n in (1, 4)]
    assert tc1[0]["verification"]["checksum"] == tc1[1]["verification"]["checksum"]
    CHECKSUMS[stack.id] = results[2]["verification"]["checksum"]


def test_same_bits_under_every_stack():
    """Same compiler and flags, different MPI libraries: the same answer, bit for bit."""
    if len(CHECKSUMS) < 2:
        pytest.skip("needs the rank-count test on two stacks or more")
    assert len(set(CHECKSUMS.values())) == 1, CHECKSUMS


@pytest.mark.parametrize("stack", BUILT, ids=lambda s: s.id)
def test_profile_is_dss_messages_and_allreduce(stack, tmp_path):
    binary = build_dir(stack) / "apps" / "homme" / "homme"
    out = tmp_path / "homme.jsonl"
    command = [
        str(ESMPERF),
        "profile",
        "--out",
        str(out),
        "--",
        str(stack.mpirun),
        "-n",
        "4",
        str(binary),
        "--steps",
        "20",
        "--stream",
        "0",
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    result = parse_result_line(run.stdout)
    profile = read_profile(out)
    assert profile.header["ranks"] == 4
    comm = result["comm"]

    def total(name: str, key: str = "calls") -> int:
        return sum(rank["calls"].get(name, {}).get(key, 0) for rank in profile.ranks)

    # the profiler sees exactly the calls the workload's core says it made
    assert total("MPI_Isend") == comm["isend"] and total("MPI_Irecv") == comm["irecv"]
    assert total("MPI_Waitall") == comm["waitall"] == 4 * (1 + 20 * 6)
    assert total("MPI_Allreduce") == comm["allreduce"]
    assert total("MPI_Isend", "sent") == comm["bytes_sent"]
    for rank in profile.ranks:
        calls = {name: c["calls"] for name, c in rank["calls"].items()}
        main = sum(
            calls.get(name, 0)
            for name in ("MPI_Isend", "MPI_Irecv", "MPI_Waitall", "MPI_Allreduce")
        )
        assert main / sum(calls.values()) > 0.95, calls
        assert calls["MPI_Isend"] > calls["MPI_Allreduce"] > 0


@pytest.mark.parametrize("stack", PROMPT, ids=lambda s: s.id)
def test_bad_input_one_clear_error(stack):
    """One message (from rank 0), exit status 1 on every rank, no hang."""
    cases = [
        (2, ("--ne", "0"), "invalid value --ne 0: use an integer in [1, 1024]"),
        (2, ("--case", "tc3"), "invalid value --case tc3: use one of {tc2,tc1}"),
        (2, ("--size", "XL"), "unknown size 'XL': use one of S, M, ne120"),
        (2, ("--steps", "-5"), "invalid value --steps -5"),
        (
            7,
            ("--ne", "1"),
            "7 ranks but only 6 elements (ne=1): every rank needs an element; "
            "use at most 6 ranks or --ne 2 or more",
        ),
    ]
    for ranks, args, message in cases:
        result, stderr = homme(stack, ranks, *args, expect=1)
        assert result is None
        assert stderr.count(f"homme: error: {message}") == 1, stderr


def test_manifest_follows_the_workload_contract():
    manifest = read_manifest(repo_root() / "native" / "apps" / "homme" / "workload.toml")
    assert (manifest.name, manifest.executable, manifest.default_size) == ("homme", "homme", "S")
    assert manifest.sizes == ("S", "M", "ne120")
    assert manifest.options["case"] == ("tc2", "tc1")
    assert manifest.fom_unit == "steps/s" and manifest.higher_is_better
    assert manifest.folds
