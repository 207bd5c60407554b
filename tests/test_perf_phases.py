"""benchmarks/perf_phases.py: perf samples of the real PFLOTRAN and of its proxy put in solver
phases by the frames on their stacks (docs/pflotran.md, "Compute per iteration, real against
proxy"). Samples written as `perf script -F tid,ip,sym` prints them, leaf first."""

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "perf_phases.py"


def load():
    spec = importlib.util.spec_from_file_location("perf_phases", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sample(tid: str, *frames: str) -> str:
    lines = [f" {tid} "] + [f"\t{0x1000 + k:16x} {frame}" for k, frame in enumerate(frames)]
    return "\n".join(lines) + "\n\n"


MAIN = ("main", "_start")
SNES = ("SNESSolve", "__pmc_base_class_MOD_pmcbasestepdt") + MAIN
REAL = "".join([
    # an insertion whose unwinding stops in PETSc's MatSetValuesBlocked: the Jacobian's
    sample("7", "[unknown]", "MatSetValuesBlocked"),
    sample("7", "[unknown]", "MatSetValuesBlocked"),
    sample("7", "__transport_module_MOD_tfluxderivative",
           "__reactive_transport_module_MOD_rtjacobian", "SNESComputeJacobian", *SNES),
    sample("7", "__reaction_mineral_module_MOD_rkineticmineral",
           "__reaction_module_MOD_rreactionderivative", "rtjacobiannonflux",
           "__reactive_transport_module_MOD_rtjacobian", *SNES),
    sample("7", "__ieee754_log_fma", "__reaction_module_MOD_rtotalaqueous",
           "__reactive_transport_module_MOD_rtupdateauxvars", "rtresidualflux",
           "__reactive_transport_module_MOD_rtresidual", *SNES),
    sample("7", "[unknown]", "MatLUFactorNumeric", "PCSetUp", "KSPSetUp", "KSPSolve", *SNES),
    sample("7", "[unknown]", "MatMult", "KSPGMRESCycle", "KSPSolve", *SNES),
    sample("7", "[unknown]", "MatSolve", "PCApply", "KSPGMRESCycle", "KSPSolve", *SNES),
    sample("7", "VecMDot", "KSPGMRESClassicalGramSchmidtOrthogonalization", "KSPSolve", *SNES),
    sample("7", "__output_tecplot_module_MOD_writetecplotstructuredgrid", *MAIN),
    # OpenBLAS's idle worker spinning on its own thread: not counted
    sample("9", "__schedule", "do_sched_yield", "__sched_yield", "blas_thread_server"),
    sample("9", "__schedule", "do_sched_yield", "__sched_yield", "blas_thread_server"),
    sample("9", "__schedule", "do_sched_yield", "__sched_yield", "blas_thread_server"),
])  # fmt: skip
PROXY = "".join([
    sample("3", "multiply_add", "transport_jacobian", "newton_solve", *MAIN),
    sample("3", "__GI___exp", "speciate", "transport_update", "newton_solve", *MAIN),
    sample("3", "block_ilu_factor", "newton_solve", *MAIN),
    sample("3", "block_ilu_solve", "krylov_solve", "newton_solve", *MAIN),
    sample("3", "block_matrix_multiply", "krylov_solve", "newton_solve", *MAIN),
    sample("3", "global_dots", "krylov_solve", "newton_solve", *MAIN),
    sample("3", "calcite_rate", "transport_residual", "newton_solve", *MAIN),
])  # fmt: skip


def test_real_pflotran_samples_by_phase():
    """Every phase of the real code's table gets its samples; the spinning BLAS thread none."""
    counts = load().phases(REAL, "real")
    assert counts == {
        "jacobian: matrix insertion (MatSetValuesBlockedLocal)": 2,
        "jacobian: transport, flux derivatives": 1,
        "jacobian: reaction, rate derivative": 1,
        "residual: speciation (aux vars)": 1,
        "preconditioner set-up (ILU(0) factorisation)": 1,
        "krylov: MatMult": 1,
        "krylov: PC apply (triangular solves)": 1,
        "krylov: orthogonalisation, norms, vector work": 1,
        "other (start-up, output, step set-up)": 1,
    }
    assert sum(load().phases(REAL, "real", tid="9").values()) == 3  # asked for: that thread


def test_proxy_samples_by_phase_and_the_table(tmp_path, capsys):
    module = load()
    assert module.phases(PROXY, "proxy") == {
        "jacobian": 1,
        "residual": 1,
        "residual: speciation (the iterate's update)": 1,
        "preconditioner set-up (ILU(0) factorisation)": 1,
        "krylov: MatMult": 1,
        "krylov: PC apply (triangular solves)": 1,
        "krylov: orthogonalisation, norms, vector work": 1,
    }
    path = tmp_path / "proxy.txt"
    path.write_text(PROXY)
    module.main([str(path), "--code", "proxy", "--hz", "2"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "| phase | samples | s | % |"
    assert "| jacobian | 1 | 0.50 | 14.3 |" in lines
    assert lines[-1] == "| total | 7 | 3.50 | |"
