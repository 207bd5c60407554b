"""The PFLOTRAN proxy (native/apps/pflotran, docs/pflotran.md): its verifications, its MPI pattern
under the profiler (counts and sizes only, never times), its DMDA-style decomposition at any rank
count (real MPI up to 6 ranks, SimGrid SMPI at the seed's 48-528), folding (SMPI: the same
messages and bytes, and the same simulated time with the deterministic cost model, as a full
run), and its errors on bad input.

Sizes are kept small so the file runs in well under a minute on 2 shared cores: the S deck
(32^3) for a few steps, 16^3 and smaller for convergence studies. Numerical checks run on one
stack; the MPI pattern, rank independence and errors on each Debian stack found."""

import json
import math
import os
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

import pytest

from conftest import NO_KILL_GRACE
from esmperf.launch.mpirun import mpirun_command, run_environment
from esmperf.launch.smpirun import simulated_time
from esmperf.mpi.build import build_dir
from esmperf.mpi.knob_setting import knob_setting, write_files
from esmperf.mpi.stacks import discover_stacks
from esmperf.profile.read import read_profile

ESMPERF = Path(sys.executable).parent / "esmperf"
_FOUND = discover_stacks().stacks
STACKS = [s for s in _FOUND if s.id in ("openmpi", "mpich")] or _FOUND[:1]
STACK_IDS = [s.id for s in STACKS]
FIRST = STACKS[0] if STACKS else None
S_STEPS = "2"  # S deck, few steps
FOLDED_COUNTS = (2, 15)  # pflotran.c FOLDED_*_ITERATIONS: a full 100^3 run's (docs)


def binary(stack) -> Path:
    path = build_dir(stack) / "apps" / "pflotran" / "pflotran"
    if not path.is_file():
        pytest.skip(f"{path} not built (run `make build`)")
    return path


def result_line(stdout: str) -> dict:
    lines = [line for line in stdout.splitlines() if line.startswith('{"workload"')]
    assert lines, f"no result line in:\n{stdout}"
    return json.loads(lines[-1])


def launch(
    stack, ranks: int, *args: str, timeout: int = 120, fails: bool = False
) -> subprocess.CompletedProcess:
    command = mpirun_command(stack, ranks, [str(binary(stack)), "--stream-mb", "0", *args])
    env = run_environment(stack) | (NO_KILL_GRACE if fails else {})
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)


@cache
def run(stack_id: str, ranks: int, *args: str, statuses: tuple[int, ...] = (0,)) -> dict:
    """The result of a run ending with one of `statuses` (0: verification passed, 2: failed)."""
    stack = next(s for s in STACKS if s.id == stack_id)
    done = launch(stack, ranks, *args)
    assert done.returncode in statuses, done.stdout[-3000:] + done.stderr[-3000:]
    return result_line(done.stdout)


def norms(result: dict) -> dict:
    return result["verification"]["norms"]


def stack_by_id(stack_id: str):
    return next(s for s in STACKS if s.id == stack_id)


pytestmark = pytest.mark.skipif(not STACKS, reason="no MPI stack found")

# ---- verification ------------------------------------------------------------------------


def test_tracer_matches_erf_with_second_order_convergence():
    """Diffusion only (no reaction): the tracer cube against the analytic erf solution with
    mirror images (zero-flux walls). Halving dx and quartering dt (backward Euler is first order
    in time) must cut the error about 4 times."""
    binary(FIRST)
    # 16^3 is too coarse for the 0.1 bound the program checks (status 2); 32^3 meets it
    coarse = run(
        FIRST.id,
        1,
        "--case",
        "tracer",
        "--nx",
        "16",
        "--ny",
        "16",
        "--nz",
        "16",
        "--steps",
        "4",
        "--dt",
        "2.5e6",
        "--ksp-rtol",
        "1e-10",
        statuses=(0, 2),
    )
    fine = run(
        FIRST.id, 1, "--case", "tracer", "--steps", "16", "--dt", "6.25e5", "--ksp-rtol", "1e-10"
    )
    assert fine["verification"]["passed"] is True
    ratio = norms(coarse)["tracer_l2"] / norms(fine)["tracer_l2"]
    assert 3.2 < ratio < 6.0, (norms(coarse), norms(fine))
    assert norms(fine)["tracer_l2"] < 0.07
    for result in (coarse, fine):
        # ln m makes the tracer's equation nonlinear: conserved to the Newton tolerance a step
        assert norms(result)["tracer_conservation"] < 1e-8 * result["steps"]
        # the pulse (tracer 1) fills 1e-3 of the cube, the deck's background holds 1e-8
        cells = result["model"]["cells"]
        assert result["fields"]["sum"]["tracer"] == pytest.approx(
            cells * (1e-3 + 1e-8 * (1 - 1e-3)), rel=1e-7
        )


def test_batch_reaction_matches_ode_with_first_order_convergence():
    """Reaction only (uniform water, no gradients): the extent of calcite dissolution follows
    the ODE solution; backward Euler halves its error when dt halves; the grid stays uniform;
    calcium and carbon are conserved; Newton converges quadratically."""
    binary(FIRST)
    grid = ("--nx", "4", "--ny", "4", "--nz", "4")
    # the batch water comes near calcite's equilibrium in about 2.5e6 s (its carbonate buffers it)
    coarse = run(FIRST.id, 1, "--case", "batch", *grid, "--steps", "25", "--dt", "1e5")
    fine = run(FIRST.id, 1, "--case", "batch", *grid, "--steps", "50", "--dt", "5e4")
    for result in (coarse, fine):
        assert result["verification"]["passed"] is True
        assert norms(result)["batch_extent_error"] < 0.02
        assert norms(result)["batch_spread"] <= 1e-12
        # to the Newton tolerance: rtol 1e-8 of a first residual of 1e-5 mol/kg, against 5e-4
        # mol/kg of calcium and 1.6e-3 of carbon
        assert norms(result)["calcium_conservation"] < 1e-9
        assert norms(result)["carbon_conservation"] < 1e-9
        assert 1.8 < norms(result)["newton_order"] < 2.5  # 2.35: 3 iterations above round-off
    ratio = norms(coarse)["batch_extent_error"] / norms(fine)["batch_extent_error"]
    assert 1.8 < ratio < 2.2, (norms(coarse), norms(fine))
    # near equilibrium at the end (the ODE's extent is 90 % of the equilibrium's 2.67e-5 mol/kg)
    assert fine["batch"]["extent_final"] == pytest.approx(fine["batch"]["extent_ode"], rel=0.01)


def test_newton_converges_quadratically():
    """With the linear systems solved to round-off, the first (strongly nonlinear) step of the
    calcite problem shows Newton's quadratic convergence: the order of the last iterations
    above round-off is about 2, and the contraction r_k+1 / r_k collapses from one iteration
    to the next."""
    binary(FIRST)
    result = run(
        FIRST.id,
        1,
        "--nx",
        "24",
        "--ny",
        "24",
        "--nz",
        "24",
        "--steps",
        "1",
        "--ksp-rtol",
        "1e-13",
        "--newton-rtol",
        "1e-13",
    )
    order = norms(result)["newton_order"]
    assert 1.8 < order < 2.5, result["newton"]
    residuals = [float(r) for r in result["newton"]["first_step_residuals"].split(",")]
    assert len(residuals) >= 5
    floor = 1e3 * 2.2e-16 * residuals[0]  # round-off, as the program judges it
    tail = [r for r in residuals if r > floor][-3:]
    assert len(tail) == 3
    assert tail[2] / tail[1] < 0.1 * tail[1] / tail[0]
    assert math.log(tail[2] / tail[1]) / math.log(tail[1] / tail[0]) == pytest.approx(order)


@pytest.mark.parametrize("stack_id", STACK_IDS)
def test_calcite_conserves_calcium_and_carbon(stack_id):
    """The benchmark problem: every step's Newton solve converges, and total calcium and carbon
    (dissolved + calcite reacted) stay constant to far below the Newton tolerance's effect."""
    result = run(stack_id, 1, "--steps", S_STEPS)
    assert result["verification"]["passed"] is True
    assert result["newton"]["failed_steps"] == 0
    assert result["newton"]["linear_failures"] == 0
    assert norms(result)["calcium_conservation"] < 1e-9
    assert norms(result)["carbon_conservation"] < 1e-9
    c = result["conservation"]
    assert c["protons_end"] == pytest.approx(c["protons_start"], rel=1e-6)
    # calcite did react: the acid pulse was neutralised by dissolution
    assert result["fields"]["probe0"]["h"] < 1e-3


@pytest.mark.parametrize("stack_id", STACK_IDS)
def test_results_independent_of_rank_count(stack_id):
    """Block Jacobi makes the preconditioner, hence the iterates, depend on the rank count;
    the converged fields agree to the solver tolerance on 1, 2 and 4 ranks."""
    results = {n: run(stack_id, n, "--steps", S_STEPS) for n in (1, 2)}
    results[4] = profiled(stack_id, 4, "--steps", S_STEPS)[1]  # the profile test's run
    assert [results[n]["params"]["rank_grid"] for n in (1, 2, 4)] == ["1x1x1", "1x1x2", "1x2x2"]
    reference = results[1]["fields"]
    for n in (2, 4):
        assert results[n]["verification"]["passed"] is True
        fields = results[n]["fields"]
        for group, values in reference.items():
            for key, value in values.items():
                assert fields[group][key] == pytest.approx(value, rel=1e-6, abs=1e-9), (
                    n,
                    group,
                    key,
                )


def test_the_calcite_deck_defaults_to_its_gmres_the_other_cases_to_bicgstab():
    """The deck's LINEAR_SOLVER TRANSPORT says KSP_TYPE GMRES (docs/pflotran.md, "The deck's
    linear solver"); tracer and batch keep PFLOTRAN's default, BiCGStab."""
    tiny = ("--nx", "4", "--ny", "4", "--nz", "4", "--steps", "1")
    assert run(FIRST.id, 1, *tiny)["params"]["solver"] == "gmres"
    for case in ("tracer", "batch"):
        result = run(FIRST.id, 1, *tiny, "--case", case, statuses=(0, 2))
        assert result["params"]["solver"] == "bicgstab"


@pytest.mark.parametrize("stack_id", STACK_IDS)
def test_gmres_and_bicgstab_agree(stack_id):
    """Both Krylov solvers drive Newton to the same answer."""
    bicgstab = run(stack_id, 2, "--steps", S_STEPS, "--solver", "bicgstab")
    gmres = run(stack_id, 2, "--steps", S_STEPS)  # the calcite deck's default
    assert gmres["params"]["solver"] == "gmres" and bicgstab["params"]["solver"] == "bicgstab"
    for key, value in bicgstab["fields"]["probe0"].items():
        assert gmres["fields"]["probe0"][key] == pytest.approx(value, rel=1e-6)


def test_petsc_cross_check():
    """The same linear systems solved by the system's PETSc (MPIBAIJ, KSPBCGS/KSPGMRES,
    PCBJACOBI + ILU(0)): the same Krylov iteration counts and the same fields. Skipped where the
    build has no PETSc (only Debian's Open MPI stack links Debian's PETSc)."""
    stack = next((s for s in STACKS if s.id == "openmpi"), None)
    if stack is None:
        pytest.skip("no Debian Open MPI stack")
    linked = subprocess.run(["ldd", str(binary(stack))], capture_output=True, text=True).stdout
    if "libpetsc" not in linked:
        pytest.skip("pflotran built without PETSc")
    for solver in ("bicgstab", "gmres"):
        native = run("openmpi", 2, "--steps", S_STEPS, "--solver", solver)
        petsc = run("openmpi", 2, "--steps", S_STEPS, "--solver", solver, "--library", "petsc")
        assert petsc["params"]["library"] == "petsc"
        assert petsc["newton"]["iterations"] == native["newton"]["iterations"]
        assert (
            abs(petsc["newton"]["linear_iterations"] - native["newton"]["linear_iterations"]) <= 2
        )
        for key, value in native["fields"]["probe0"].items():
            assert petsc["fields"]["probe0"][key] == pytest.approx(value, rel=1e-7)


def test_weak_size_grows_with_the_ranks():
    """--size weak keeps the box per rank (64^3, or --nx/--ny/--nz) and grows the grid."""
    box = ("--size", "weak", "--nx", "8", "--ny", "8", "--nz", "8", "--steps", "1")
    one, two = run(FIRST.id, 1, *box), run(FIRST.id, 2, *box)
    assert (one["params"]["nx"], one["params"]["ny"], one["params"]["nz"]) == (8, 8, 8)
    assert (two["params"]["nx"], two["params"]["ny"], two["params"]["nz"]) == (8, 8, 16)
    assert two["params"]["rank_grid"] == "1x1x2" and two["model"]["cells"] == 2 * 8**3
    assert two["model"]["largest_message_bytes"] == 8 * 8 * 4 * 8


# ---- the MPI pattern (profiles: counts and sizes only) --------------------------------------


@cache
def profiled(stack_id: str, ranks: int, *args: str):
    """(profile, result) of a run under `esmperf profile`, kept for the tests that share it."""
    stack = stack_by_id(stack_id)
    command = mpirun_command(stack, ranks, [str(binary(stack)), "--stream-mb", "0", *args])
    with tempfile.TemporaryDirectory() as directory:
        out = Path(directory) / "profile.jsonl"
        done = subprocess.run(
            [str(ESMPERF), "profile", "--out", str(out), "--", *command],
            capture_output=True,
            text=True,
            timeout=180,
            cwd=directory,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        return read_profile(out), result_line(done.stdout)


def totals(profile) -> dict[str, int]:
    calls: dict[str, int] = {}
    for rank in profile.ranks:
        for name, call in rank["calls"].items():
            calls[name] = calls.get(name, 0) + call["calls"]
    return calls


def message_buckets(profile, names) -> dict[int, int]:
    """log2 histogram (bucket b: 2^(b-1) .. 2^b - 1 bytes) of the given calls, all ranks."""
    buckets: dict[int, int] = {}
    for rank in profile.ranks:
        for name in names:
            for bucket, count in rank["calls"].get(name, {}).get("hist", []):
                buckets[bucket] = buckets.get(bucket, 0) + count
    return buckets


BLOCKING = (
    "MPI_Allreduce",
    "MPI_Waitany",
    "MPI_Waitall",
    "MPI_Wait",
    "MPI_Barrier",
    "MPI_Recv",
    "MPI_Send",
)


@pytest.mark.parametrize("stack_id", STACK_IDS)
def test_profile_s_deck_on_4_ranks(stack_id):
    """32^3 on 4 ranks (1x2x2 boxes, two face neighbours each): PETSc's VecScatter pattern,
    call for call. One MPI_Start per message sent and one MPI_Waitany per message received
    (so the two are equal), one MPI_Startall + one MPI_Waitall per ghost update; Allreduce and
    Waitany are the most frequent blocking calls. With two neighbours a rank sends 2 messages
    per ghost update and BiCGStab makes 2 updates and 4 allreduces per iteration, so MPI_Start
    and MPI_Allreduce are within a few per cent of each other here (the seed's 40 % MPI_Start
    needs more neighbours per rank: see the 8-rank test). Ghost messages are exactly one face:
    16 x 32 cells x 4 unknowns x 8 bytes = 16 KiB; every reduction is under 4 KB."""
    profile, result = profiled(stack_id, 4, "--steps", S_STEPS)
    calls = totals(profile)
    comm = result["comm"]
    assert calls["MPI_Start"] == calls["MPI_Waitany"] == comm["start"] == comm["waitany"]
    assert calls["MPI_Startall"] == calls["MPI_Waitall"] == comm["startall"] == comm["waitall"]
    assert calls["MPI_Start"] == 2 * calls["MPI_Startall"]  # 2 neighbours per rank
    assert calls["MPI_Allreduce"] == comm["allreduce"]
    assert calls["MPI_Recv_init"] == calls["MPI_Send_init"] == 8
    assert not {"MPI_Isend", "MPI_Irecv", "MPI_Send", "MPI_Recv"} & set(calls)
    top3 = sorted(calls, key=calls.get, reverse=True)[:3]
    assert set(top3) == {"MPI_Start", "MPI_Waitany", "MPI_Allreduce"}
    assert abs(calls["MPI_Start"] - calls["MPI_Allreduce"]) < 0.15 * calls["MPI_Allreduce"]
    blocking = sorted((n for n in calls if n in BLOCKING), key=calls.get, reverse=True)
    assert set(blocking[:2]) == {"MPI_Allreduce", "MPI_Waitany"}
    # sends counted at MPI_Start, receives at the MPI_Startall that started them
    ghosts = message_buckets(profile, ["MPI_Start", "MPI_Startall"])
    assert ghosts == {15: 2 * calls["MPI_Start"]}  # 16384 bytes: 16-32 KiB bucket
    assert result["model"]["largest_message_bytes"] == 16384
    reductions = message_buckets(profile, ["MPI_Allreduce"])
    assert max(reductions) <= 12  # < 4 KiB


@pytest.mark.parametrize("stack_id", STACK_IDS)
def test_profile_seed_regime_on_8_ranks(stack_id):
    """The seed's regime (100^3 on hundreds of ranks: small boxes, several neighbours each),
    scaled down: 16^3 on 8 ranks (2x2x2, 8^3 cells and 3 neighbours per rank). Now MPI_Start is
    the most frequent call (tied with MPI_Waitany, one per message each way), ahead of
    MPI_Allreduce, and every message is under 4 KB (2 KiB ghosts)."""
    profile, result = profiled(
        stack_id, 8, "--nx", "16", "--ny", "16", "--nz", "16", "--steps", "1"
    )
    assert result["params"]["rank_grid"] == "2x2x2"
    calls = totals(profile)
    most = max(calls.values())
    assert calls["MPI_Start"] == most == calls["MPI_Waitany"]
    assert calls["MPI_Start"] == 3 * calls["MPI_Startall"]
    assert calls["MPI_Start"] > 1.2 * calls["MPI_Allreduce"]
    assert calls["MPI_Start"] / sum(calls.values()) > 0.25
    everything = message_buckets(profile, list(calls))
    assert max(everything) <= 12  # all messages < 4 KiB
    assert message_buckets(profile, ["MPI_Start"]) == {12: calls["MPI_Start"]}  # 2048 bytes


# ---- any rank count: PETSc DMDA's decomposition --------------------------------------------


def assert_fields_agree(fields: dict, reference: dict, label) -> None:
    """Block Jacobi: fields agree with another rank count's to the solver tolerance."""
    for group, values in reference.items():
        for key, value in values.items():
            assert fields[group][key] == pytest.approx(value, rel=1e-6, abs=1e-9), (
                label,
                group,
                key,
            )


@pytest.mark.parametrize("stack_id", STACK_IDS)
def test_uneven_cuts_agree_with_one_rank(stack_id):
    """Any rank count cuts the grid as PETSc's DMDA does, the remainder cells on the first ranks
    of a direction: 3 ranks give 1x1x3 boxes of 11, 11 and 10 layers of the S deck's 32; the
    fields agree with 1 rank's to the solver tolerance, as even cuts do."""
    one, three = run(stack_id, 1, "--steps", S_STEPS), run(stack_id, 3, "--steps", S_STEPS)
    assert three["params"]["rank_grid"] == "1x1x3"
    assert three["verification"]["passed"] is True
    assert_fields_agree(three["fields"], one["fields"], 3)
    # one face of 32 x 32 cells, 4 unknowns: the boxes meet on whole faces
    assert three["model"]["largest_message_bytes"] == 32 * 32 * 4 * 8


def test_six_ranks_cut_two_directions_unevenly():
    """6 ranks: DMDA's 1x2x3 (y halves, z 11/11/10)."""
    one, six = run(FIRST.id, 1, "--steps", "1"), run(FIRST.id, 6, "--steps", "1")
    assert six["params"]["rank_grid"] == "1x2x3"
    assert six["verification"]["passed"] is True
    assert_fields_agree(six["fields"], one["fields"], 6)


# ---- SimGrid SMPI: the seed's rank counts, folding -------------------------------------------


@pytest.fixture(scope="module")
def smpi():
    stack = discover_stacks().by_id("smpi")
    if stack is None:
        pytest.skip("SimGrid SMPI is not installed (smpicc, smpirun): make setup installs it")
    if not (build_dir(stack) / "apps" / "pflotran" / "pflotran").is_file():
        pytest.skip("the smpi stack is not built: run `esmperf build --stack smpi`")
    return stack


def simulate(
    stack,
    tmp_path: Path,
    ranks: int,
    ranks_per_node: int,
    env: dict[str, str],
    *args: str,
    statuses: tuple[int, ...] = (0,),
) -> dict:
    """A run on the smpi stack, network only (computation off), driven through smpirun as the
    study runner drives it: its result line with the simulated time added."""
    setting = knob_setting(
        stack,
        {"computation": "off", "fold": "off"},
        ranks,
        2,
        ranks_per_node,
        tmp_path / "platforms",
    )
    write_files(setting)
    program = [str(binary(stack)), *args]
    command = mpirun_command(stack, ranks, program, setting.launcher_args)
    full_env = run_environment(stack, os.environ) | setting.env | {"TMPDIR": str(tmp_path)} | env
    done = subprocess.run(
        command, env=full_env, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode in statuses, done.stdout[-2000:] + done.stderr[-2000:]
    record = result_line(done.stdout)
    record["simulated_time"] = simulated_time(done.stderr)
    return record


GRID_16 = ("--nx", "16", "--ny", "16", "--nz", "16")


def test_simulated_48_ranks_agree_with_one_rank(smpi, tmp_path):
    """The seed's one node (48 ranks) under SMPI: DMDA's 3x4x4 rank grid cuts 16^3 unevenly
    along x (6, 5, 5); the run verifies and its fields agree with one rank's on real MPI."""
    one = run(FIRST.id, 1, *GRID_16, "--steps", "1")
    record = simulate(smpi, tmp_path, 48, 48, {}, *GRID_16, "--steps", "1", "--stream-mb", "0")
    assert record["params"]["rank_grid"] == "3x4x4"
    assert record["verification"]["passed"] is True
    assert_fields_agree(record["fields"], one["fields"], 48)


def test_simulated_and_real_mpi_agree_bit_for_bit(smpi, tmp_path):
    """Same algorithm, same sums (two ranks add in one order on any MPI): identical bits."""
    real = run(FIRST.id, 2, "--steps", "1")
    record = simulate(smpi, tmp_path, 2, 1, {}, "--steps", "1", "--stream-mb", "0")
    assert record["fields"] == real["fields"]
    assert record["newton"] == real["newton"]


@pytest.mark.parametrize(
    "ranks, rank_grid", [(96, "4x4x6"), (192, "4x6x8"), (384, "8x6x8"), (528, "6x8x11")]
)
def test_seed_rank_counts_get_dmda_rank_grids(smpi, tmp_path, ranks, rank_grid):
    """2, 4, 8 and 11 nodes of 48 cores: the rank grid DMDA chooses for a cube (the 100^3
    deck's shape, here 12^3 to be quick), one Newton and one Krylov iteration."""
    record = simulate(
        smpi,
        tmp_path,
        ranks,
        48,
        {},
        "--nx",
        "12",
        "--ny",
        "12",
        "--nz",
        "12",
        "--steps",
        "1",
        "--newton-iterations",
        "1",
        "--krylov-iterations",
        "1",
        "--stream-mb",
        "0",
        statuses=(0, 2),
    )
    assert record["params"]["rank_grid"] == rank_grid


FOLD_MODEL = {
    "ESM_KERNEL_COST": "model",
    "ESM_NODE_BANDWIDTH": "1e9",
    "ESM_NODE_RANKS": "4",
    "ESM_RESULT_PER_RANK": "1",
}


@pytest.mark.parametrize("solver", ["bicgstab", "gmres"])
def test_folded_run_communicates_and_takes_the_time_of_a_full_run(smpi, tmp_path, solver):
    """12 ranks (DMDA's 2x2x3, z cut 6/5/5), 3 nodes of 4, fixed iteration counts (GMRES
    restarting within them): folded, every rank sends the same messages and bytes as in the
    full run, and with the deterministic cost model (kernel bytes over the node's bandwidth
    share, computation off) the simulated times are identical. The folded run reports no
    verdict; the full one still judges its fields."""
    args = (
        *GRID_16,
        "--steps",
        "2",
        "--newton-iterations",
        "2",
        "--krylov-iterations",
        "4",
        "--solver",
        solver,
        "--restart",
        "3",
    )
    full = simulate(smpi, tmp_path, 12, 4, FOLD_MODEL, *args, "--stream-mb", "0", statuses=(0, 2))
    folded = simulate(smpi, tmp_path, 12, 4, FOLD_MODEL | {"ESM_FOLD": "1"}, *args)
    assert full["params"]["rank_grid"] == folded["params"]["rank_grid"] == "2x2x3"
    assert folded["comm"] == full["comm"] and folded["comm"]["messages"] > 0
    assert folded["comm_per_rank"] == full["comm_per_rank"]
    assert folded["newton"]["linear_iterations"] == full["newton"]["linear_iterations"] == 2 * 2 * 4
    assert folded["simulated_time"] == full["simulated_time"] > 0
    assert folded["wall"] == full["wall"]
    assert folded["fold"]["kernel_seconds_max"] == full["fold"]["kernel_seconds_max"] > 0
    assert folded["fold"]["folded"] is True and full["fold"]["folded"] is False
    assert folded["fold"]["kernel_calls_charged"] > 10 * folded["fold"]["kernel_calls_run"]
    assert folded["verification"]["passed"] is None
    assert folded["verification"]["what"] == "not verified: folded run"
    assert "fields" not in folded and isinstance(full["verification"]["passed"], bool)


def test_folded_run_follows_the_recorded_history_of_its_deck(smpi, tmp_path):
    """Deck S on 4 ranks, 2 steps: the free-running run converges; the folded one makes the
    counts the free-running run recorded at 4 ranks made (fold_history.c), Newton by Newton,
    so both send the same and, with the deterministic cost model, take the same simulated
    time; run again, the same time to the bit."""
    args = ("--size", "S", "--steps", "2")
    free = simulate(smpi, tmp_path, 4, 4, FOLD_MODEL, *args)
    folded = [simulate(smpi, tmp_path, 4, 4, FOLD_MODEL | {"ESM_FOLD": "1"}, *args) for _ in "ab"]
    assert free["params"]["iterations_from"] == "convergence"
    assert folded[0]["params"]["iterations_from"] == "history"
    assert folded[0]["params"]["history"] == "S at 4 ranks, 50 steps, fixed time stepping"
    history = free["newton"]["iteration_history"]
    assert history.count("/") == 1 and len(history.split()) > 2 * FOLDED_COUNTS[0]
    assert folded[0]["newton"]["iteration_history"] == history
    assert folded[0]["comm_per_rank"] == free["comm_per_rank"]
    assert folded[0]["simulated_time"] == folded[1]["simulated_time"] == free["simulated_time"]
    assert folded[0]["wall"] == folded[1]["wall"] == free["wall"]


def test_folded_deck_stepping_run_follows_the_deck_stepping_history(smpi, tmp_path):
    """Deck S on 4 ranks, the deck's time stepping, 3 steps: the folded run follows S's
    deck-stepping history at 4 ranks (not the fixed steps'), so its counts, step sizes and
    messages are the free-running run's."""
    args = ("--size", "S", "--steps", "3", "--time-stepping", "deck")
    free = simulate(smpi, tmp_path, 4, 4, FOLD_MODEL, *args)
    folded = simulate(smpi, tmp_path, 4, 4, FOLD_MODEL | {"ESM_FOLD": "1"}, *args)
    assert folded["params"]["iterations_from"] == "history"
    assert folded["params"]["history"] == "S at 4 ranks, 41 steps, deck time stepping"
    history = free["newton"]["iteration_history"]
    assert [len(step.split()) for step in history.split("/")] == [8, 5, 5]
    assert folded["newton"]["iteration_history"] == history
    # 31.536 s, then x1.4 after 8 Newton iterations, x2 after 5 (timestep.c)
    assert folded["model"]["dt_last"] == free["model"]["dt_last"] == pytest.approx(31.536 * 2.8)
    assert folded["comm_per_rank"] == free["comm_per_rank"]
    assert folded["simulated_time"] == free["simulated_time"]


def test_fold_check_compares_against_a_free_running_run(smpi, tmp_path):
    """benchmarks/fold_accuracy.py on S, 2 steps, 4 ranks, computation modelled: the free run
    converges, the folded one follows the 4-rank history: the same messages and allreduces,
    and the same simulated time (ratio 1 exactly)."""
    out = tmp_path / "fold.json"
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "fold_accuracy.py"
    command = [sys.executable, str(script), "--workloads", "pflotran", "--sizes", "pflotran:S"]
    command += ["--steps", "2", "--ranks", "4", "--json", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    (record,) = json.loads(out.read_text())
    assert (record["size"], record["steps"], record["ranks"]) == ("S", 2, 4)
    assert record["messages_folded"] == record["messages_free"] > 0
    assert record["allreduces_folded"] == record["allreduces_free"] > 0
    assert record["iterations_from"] == {"free": "convergence", "folded": "history"}
    assert record["ratio"] == 1.0


def test_folded_run_takes_the_history_of_the_nearest_rank_count(smpi, tmp_path):
    """5 ranks: S's 4-rank history (nearer by ratio than 8); a grid of its own: none, the
    constant counts."""
    folded = simulate(smpi, tmp_path, 5, 5, {"ESM_FOLD": "1"}, "--size", "S", "--steps", "1")
    assert folded["params"]["history"] == "S at 4 ranks, 50 steps, fixed time stepping"
    own_grid = simulate(smpi, tmp_path, 5, 5, {"ESM_FOLD": "1"}, *GRID_16, "--steps", "1")
    assert own_grid["params"]["iterations_from"] == "constant (no history for these settings)"
    assert "history" not in own_grid["params"]


def test_a_history_applies_to_the_solver_it_was_recorded_with_only(smpi, tmp_path):
    """S's histories are GMRES's (the calcite default): a folded BiCGStab run of S takes the
    constant counts, not GMRES's."""
    folded = simulate(smpi, tmp_path, 4, 4, {"ESM_FOLD": "1"}, "--size", "S", "--steps", "1")
    assert folded["params"]["solver"] == "gmres"
    assert folded["params"]["history"] == "S at 4 ranks, 50 steps, fixed time stepping"
    args = ("--size", "S", "--steps", "1", "--solver", "bicgstab")
    bicgstab = simulate(smpi, tmp_path, 4, 4, {"ESM_FOLD": "1"}, *args)
    assert bicgstab["params"]["iterations_from"] == "constant (no history for these settings)"


def test_folded_run_defaults_to_the_measured_iteration_counts(smpi, tmp_path):
    record = simulate(smpi, tmp_path, 4, 4, {"ESM_FOLD": "1"}, *GRID_16, "--steps", "1")
    params = record["params"]
    assert (params["newton_iterations"], params["krylov_iterations"]) == FOLDED_COUNTS
    assert record["newton"]["iterations"] == FOLDED_COUNTS[0]
    assert record["newton"]["linear_iterations"] == FOLDED_COUNTS[0] * FOLDED_COUNTS[1]
    assert "stream" not in record


@pytest.mark.parametrize(
    "args, message",
    [
        (("--stream-mb", "64"), "--stream-mb 64: a folded run cannot measure STREAM"),
        (("--newton-iterations", "0"), "--newton-iterations"),
    ],
)
def test_folded_run_refuses_what_it_cannot_do(smpi, tmp_path, args, message):
    setting = knob_setting(smpi, {"computation": "off"}, 2, 2, 2, tmp_path / "platforms")
    write_files(setting)
    command = mpirun_command(smpi, 2, [str(binary(smpi)), *GRID_16, *args], setting.launcher_args)
    env = (
        run_environment(smpi, os.environ) | setting.env | {"ESM_FOLD": "1", "TMPDIR": str(tmp_path)}
    )
    done = subprocess.run(
        command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1
    assert message in done.stderr and "pflotran: error:" in done.stderr
    assert '{"workload"' not in done.stdout


# ---- bad input --------------------------------------------------------------------------


BAD_DECOMPOSITIONS = [
    (
        5,
        ("--nx", "4", "--ny", "4", "--nz", "4", "--steps", "1"),
        "the 4x4x4 grid cannot be cut over 5 ranks: the 1x1x5 rank grid (chosen as PETSc's DMDA "
        "does) has 5 ranks along z for its 4 cells: use fewer ranks",
    ),
    (
        2,
        ("--px", "3", "--steps", "1"),
        "--px 3 --py 0 --pz 0 (0: chosen) cannot make a rank grid "
        "of 2 ranks: the ranks given along x, y, z must divide the number of ranks",
    ),
    (2, ("--px", "2", "--py", "2", "--pz", "1", "--steps", "1"), "must be the number of ranks"),
    (2, ("--px", "2", "--pz", "2", "--steps", "1"), "cannot make a rank grid of 2 ranks"),
    (2, ("--px", "2", "--nx", "1", "--steps", "1"), "has 2 ranks along x for its 1 cells"),
]
BAD_OPTIONS = [
    (2, ("--solver", "cg"), "invalid value --solver cg: use one of {bicgstab,gmres}"),
    (1, ("--size", "XL"), "unknown size 'XL'"),
    (1, ("--case", "flow"), "invalid value --case flow"),
]


@pytest.mark.parametrize(
    "stack_id, ranks, args, message",
    [(s, *case) for s in STACK_IDS for case in BAD_DECOMPOSITIONS]
    + [(STACK_IDS[0], *case) for case in BAD_OPTIONS]
    if STACK_IDS
    else [],
)
def test_bad_input_is_a_clear_error(stack_id, ranks, args, message):
    """Every rank exits with status 1 and rank 0 alone prints one message naming the fix."""
    done = launch(stack_by_id(stack_id), ranks, *args, timeout=60, fails=True)
    assert done.returncode == 1, done.stdout + done.stderr
    assert message in done.stderr
    assert done.stderr.count("pflotran: error:") == 1  # rank 0 only
    assert '{"workload"' not in done.stdout


def test_petsc_library_without_petsc_is_a_clear_error():
    stack = next((s for s in STACKS if s.id != "openmpi"), None)
    if stack is None:
        pytest.skip("every stack found may have PETSc")
    done = launch(stack, 1, "--library", "petsc", "--steps", "1")
    assert done.returncode == 1
    assert "built without PETSc" in done.stderr and "libpetsc" in done.stderr


def test_help_lists_the_options():
    done = launch(FIRST, 1, "--help")
    assert done.returncode == 0
    for option in ("--size", "--steps", "--case", "--solver", "--library", "--dt", "--px"):
        assert option in done.stdout
