"""The PFLOTRAN proxy's preconditioner (`--pc bjacobi|none`, docs/pflotran.md "The
preconditioner"): block Jacobi + ILU(0) by default (unchanged), PCNONE on request (the seed's
2011 deck's PC_TYPE NONE). Exact counts of a small case, the same at 1, 2 and 4 ranks under
PCNONE (the operator does not depend on the cut: a check of the parallel product), no ILU
factorisation charged, folded runs off the bjacobi histories, the errors.

8^3 cells, the deck's first step (31.5 s), GMRES to rtol 1e-3: well under a second a run. At the
default rtol 1e-5 unpreconditioned GMRES on this Jacobian meets near-stagnating steps whose
count rounding decides (PETSc's own PCNONE differs between 1 and 2 ranks there too), so the
rank-independent counts are asserted where the solves are not so close: rtol 1e-3."""

import json
import subprocess

import pytest

import test_pflotran as base
from esmperf.launch.mpirun import mpirun_command, run_environment
from test_pflotran import FIRST, binary, launch, run

smpi = base.smpi  # the fixture
SMALL = ("--nx", "8", "--ny", "8", "--nz", "8", "--time-stepping", "deck", "--steps", "1")
SMALL += ("--ksp-rtol", "1e-3")
NONE_HISTORY = "10 10 5 14 15"  # GMRES iterations of each Newton iteration, PCNONE
NONE_RANKS = {1: "1x1x1", 2: "1x1x2", 4: "1x2x2"}


def test_pc_none_counts_are_exact_and_the_same_at_any_rank_count():
    """Unpreconditioned GMRES sees one operator whatever the cut: the same 5 Newton and 54
    GMRES iterations at 1, 2 and 4 ranks; block Jacobi's (1 each here) are its own."""
    for ranks, rank_grid in NONE_RANKS.items():
        result = run(FIRST.id, ranks, *SMALL, "--pc", "none")
        assert result["params"]["pc"] == "none" and result["params"]["rank_grid"] == rank_grid
        assert result["verification"]["passed"] is True, ranks
        newton = result["newton"]
        assert (newton["iterations"], newton["linear_iterations"]) == (5, 54), ranks
        assert newton["iteration_history"] == NONE_HISTORY, ranks
        assert newton["linear_failures"] == 0
        assert result["kernels"]["pc_apply"]["calls"] == 54 + 5  # B v per iteration, B b
    bjacobi = run(FIRST.id, 2, *SMALL)
    assert bjacobi["params"]["pc"] == "bjacobi"  # the default
    assert bjacobi["newton"]["iteration_history"] == "1 1 1 1 1"
    none = run(FIRST.id, 2, *SMALL, "--pc", "none")
    for key, value in bjacobi["fields"]["probe0"].items():  # the same answer
        assert none["fields"]["probe0"][key] == pytest.approx(value, rel=1e-6)


def test_pc_none_bicgstab_first_solve_is_the_same_at_any_rank_count():
    """BiCGStab on the unpreconditioned operator: the first solve's 11 iterations at 1, 2 and 4
    ranks and the same 5 Newton iterations; its later solves part with rounding (PETSc's KSPBCGS
    under PCNONE too, docs/pflotran.md)."""
    for ranks in NONE_RANKS:
        result = run(FIRST.id, ranks, *SMALL, "--pc", "none", "--solver", "bicgstab")
        assert result["verification"]["passed"] is True, ranks
        assert result["newton"]["iterations"] == 5, ranks
        assert result["newton"]["iteration_history"].split()[0] == "11", ranks


def test_the_default_stays_block_jacobi_with_its_counts():
    """The counts of 8^3, 2 fixed steps, as before --pc existed (17 Newton; 72 GMRES on one
    rank, 88 on two: block Jacobi's blocks follow the cut)."""
    grid = ("--nx", "8", "--ny", "8", "--nz", "8", "--steps", "2")
    for ranks, linear in ((1, 72), (2, 88)):
        result = run(FIRST.id, ranks, *grid)
        assert result["params"]["pc"] == "bjacobi"
        assert (result["newton"]["iterations"], result["newton"]["linear_iterations"]) == (
            17,
            linear,
        )


def test_bad_pc_is_a_clear_error():
    done = launch(FIRST, 1, "--pc", "ilu", "--steps", "1")
    assert done.returncode == 1
    assert "invalid value --pc ilu: use one of {bjacobi,none}" in done.stderr
    assert done.stderr.count("pflotran: error:") == 1
    assert '{"workload"' not in done.stdout


def test_petsc_library_takes_pcnone():
    """--library petsc --pc none: PETSc's PCNONE, the same Newton solve (its GMRES counts are
    its own: rounding decides the near-stagnating steps, docs/pflotran.md)."""
    stack = next((s for s in base.STACKS if s.id == "openmpi"), None)
    if stack is None:
        pytest.skip("no Debian Open MPI stack")
    linked = subprocess.run(["ldd", str(binary(stack))], capture_output=True, text=True).stdout
    if "libpetsc" not in linked:
        pytest.skip("pflotran built without PETSc")
    env = run_environment(stack) | {"PETSC_OPTIONS": "-ksp_view"}
    program = [str(binary(stack)), "--stream-mb", "0", *SMALL, "--pc", "none"]
    done = subprocess.run(
        mpirun_command(stack, 1, [*program, "--library", "petsc"]),
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "PC Object: 1 MPI process" in done.stdout and "type: none" in done.stdout
    result = base.result_line(done.stdout)
    assert result["params"]["pc"] == "none" and result["params"]["library"] == "petsc"
    assert result["newton"]["iterations"] == 5 and result["verification"]["passed"] is True


def test_a_folded_pc_none_run_takes_the_constant_counts(smpi, tmp_path):
    """S's histories are block Jacobi's: a folded --pc none run of S takes the fixed counts
    and says why."""
    args = ("--size", "S", "--steps", "1", "--pc", "none")
    folded = base.simulate(smpi, tmp_path, 4, 4, {"ESM_FOLD": "1"}, *args)
    params = folded["params"]
    assert params["iterations_from"] == (
        "constant (no history for --pc none: the histories are bjacobi's)"
    )
    assert "history" not in params
    assert (params["newton_iterations"], params["krylov_iterations"]) == base.FOLDED_COUNTS
    assert folded["newton"]["linear_iterations"] == base.FOLDED_COUNTS[0] * base.FOLDED_COUNTS[1]


def test_pc_none_charges_a_copy_and_no_ilu(smpi, tmp_path):
    """Under computation = model PCNONE costs PETSc's VecCopy (8 bytes read and 8 written per
    unknown, no flops) per application and no factorisation."""
    grid = ["--nx", "4", "--ny", "4", "--nz", "4", "--steps", "1", "--stream-mb", "0"]
    model = {"ESM_KERNEL_COST": "model", "ESM_NODE_BANDWIDTH": "1e9", "ESM_KERNEL_REPORT": "1"}
    result = base.simulate(smpi, tmp_path, 2, 2, model, *grid, "--pc", "none")
    kernels = result["fold"]["kernels"]["pflotran"]
    assert "ilu_factor" not in kernels and "ilu_solve" not in kernels
    copy = kernels["pc_none"]
    assert copy["calls"] == 2 * result["kernels"]["pc_apply"]["calls"]  # over both ranks
    assert copy["work"] == copy["calls"] * 32  # cells a rank
    assert copy["bytes"] == copy["work"] * 4 * 16 and copy["flops"] == 0
    assert json.dumps(result["params"]["pc"]) == '"none"'
