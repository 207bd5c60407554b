"""Where a PFLOTRAN run's compute goes, by solver phase, from `perf record -g` samples.

    perf record -F 499 --call-graph dwarf,16384 -o real.data -- $PFLOTRAN/src/pflotran/pflotran \\
        -pflotranin pflotran.in
    perf script -i real.data -F tid,ip,sym > real.txt
    .venv/bin/python benchmarks/perf_phases.py real.txt --code real --hz 499

(`--code proxy` for build/*/apps/pflotran/pflotran). Each sample goes to the phase of the frames
on its stack (phase_of_real, phase_of_proxy: PFLOTRAN's RTResidual and RTJacobian and their
parts, PETSc's PCSetUp and KSPSolve's MatMult and PCApply; the proxy's transport_* and block_*
kernels). Only the main thread counts (the one most often sampled inside main(), or `--tid`):
a threaded BLAS's idle workers spin on their own threads. A sample whose stack stops in PETSc's MatSetValuesBlocked
(unwinding fails in Debian's stripped libpetsc) is the Jacobian's insertion: in the time steps
only RTJacobian inserts. Seconds are samples / `--hz`. docs/pflotran.md, "Compute per
iteration, real against proxy", has the table this printed for both codes.
"""

import argparse
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

OTHER = "other (start-up, output, step set-up)"


def samples(text: str) -> Iterator[tuple[str, list[str]]]:
    """(thread id, frames leaf first) of each sample of `perf script -F tid,ip,sym`."""
    tid, frames = "", []
    for line in text.splitlines():
        fields = line.split(None, 1)
        if not fields:
            if frames:
                yield tid, frames
            tid, frames = "", []
        elif len(fields) == 1 and fields[0].isdigit() and not frames:
            tid = fields[0]  # the sample's header: its thread
        else:  # a frame: address, symbol (and " (dso)" where asked for)
            frames.append(fields[1].split(" (")[0] if len(fields) > 1 else "[unknown]")
    if frames:
        yield tid, frames


def _on(stack: list[str], *names: str) -> bool:
    return any(name in frame.lower() for frame in stack for name in names)


def phase_of_real(stack: list[str]) -> str:
    """The phase of a sample of the real PFLOTRAN (2023, PETSc 3.18), by the frames it is in."""
    if _on(stack, "matsetvaluesblocked", "islocaltoglobalmappingapplyblock"):
        return "jacobian: matrix insertion (MatSetValuesBlockedLocal)"
    if _on(stack, "rtjacobian"):
        if _on(stack, "tfluxderivative", "tfluxcoef", "rtjacobianflux"):
            return "jacobian: transport, flux derivatives"
        if _on(stack, "rreactionderivative"):
            return "jacobian: reaction, rate derivative"
        if _on(stack, "matdiagonalscale", "matzeroentries", "matassembly", "matscale"):
            return "jacobian: zero, log scaling, assembly"
        return "jacobian: transport, accumulation"
    if _on(stack, "rtresidual"):
        if _on(stack, "rtupdateauxvars"):
            return "residual: speciation (aux vars)"
        if _on(stack, "rreaction"):
            return "residual: reaction rate"
        if _on(stack, "rtresidualflux"):
            return "residual: flux terms"
        return "residual: accumulation, exp, ghost update"
    return _solver_phase(stack, "pcsetup", "matlufactornumeric")


def phase_of_proxy(stack: list[str]) -> str:
    """The phase of a sample of the proxy (native/apps/pflotran), by the frames it is in."""
    if _on(stack, "transport_jacobian"):
        return "jacobian"
    if _on(stack, "transport_residual"):
        return "residual"
    if _on(stack, "transport_update", "ghost_chemistry"):
        return "residual: speciation (the iterate's update)"
    return _solver_phase(stack, "block_ilu_factor", "preconditioner_setup")


def _solver_phase(stack: list[str], *setup: str) -> str:
    """The phases both codes name alike: the preconditioner's set-up, the Krylov solve's parts."""
    if _on(stack, *setup):
        return "preconditioner set-up (ILU(0) factorisation)"
    if _on(stack, "kspsolve", "krylov_solve"):
        if _on(stack, "matmult", "block_matrix_multiply", "local_product", "off_rank_product"):
            return "krylov: MatMult"
        if _on(stack, "pcapply", "matsolve", "block_ilu_solve", "preconditioner_apply"):
            return "krylov: PC apply (triangular solves)"
        return "krylov: orthogonalisation, norms, vector work"
    if _on(stack, "snessolve", "newton_solve"):
        return "newton: norms, update, convergence test"
    return OTHER


def phases(text: str, code: str, tid: str = "") -> Counter:
    """Samples per phase of thread `tid` (by default the one most often sampled in main())."""
    classify = phase_of_real if code == "real" else phase_of_proxy
    stacks = list(samples(text))
    if not tid:  # the thread running main(): a BLAS's spinning workers have other stacks
        busiest = Counter(t for t, frames in stacks if "main" in frames).most_common(1)
        tid = busiest[0][0] if busiest else ""
    return Counter(classify(frames) for t, frames in stacks if t == tid)


def table(counts: Counter, hz: float) -> str:
    total = sum(counts.values())
    lines = ["| phase | samples | s | % |", "|---|---|---|---|"]
    for name in sorted(counts):
        n = counts[name]
        lines.append(f"| {name} | {n} | {n / hz:.2f} | {100 * n / total:.1f} |")
    lines.append(f"| total | {total} | {total / hz:.2f} | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("script", type=Path, help="output of perf script -F tid,ip,sym")
    parser.add_argument("--code", choices=["real", "proxy"], required=True)
    parser.add_argument("--hz", type=float, required=True, help="perf record's -F")
    parser.add_argument("--tid", default="", help="the thread to count (default: main()'s)")
    args = parser.parse_args(argv)
    print(table(phases(args.script.read_text(), args.code, args.tid), args.hz))


if __name__ == "__main__":
    main()
