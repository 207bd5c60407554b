"""PFLOTRAN proxy: time per step at sizes S (32^3) and M (64^3) on 1 and 2 ranks, and its
stencil kernels (block matrix-vector product, block ILU(0) solve) as a fraction of the STREAM
triad measured in the same run.

    .venv/bin/python benchmarks/pflotran_steps.py [--stack openmpi] [--steps 5] [--repeats 5]
                                                  [--sizes S,M] [--ranks 1,2]

Per configuration: one warm-up run (not counted), then `repeats` runs, alternating the
configurations so drift on this shared machine hits them alike. A run's figure is its timed
section (all `steps` time steps, Newton + Krylov, after set-up) divided by the steps; printed is
the median over runs and the spread [min..max]. Kernel bandwidth is the bytes the kernel must
move (matrix blocks + vectors, counted like STREAM: no write-allocate) over its time on the
slowest rank; fraction = that / the triad of the same run (all ranks at once). The first steps
carry the most Newton iterations (the acid pulse reacts), so seconds per step depend on
`steps`: compare runs with the same value. Load average is recorded before and after.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from esmperf.launch.mpirun import mpirun_command, run_environment  # noqa: E402
from esmperf.mpi.build import build_dir  # noqa: E402
from esmperf.mpi.stacks import discover_stacks  # noqa: E402


def one_run(stack, size: str, ranks: int, steps: int, stream_mb: float) -> dict:
    program = build_dir(stack) / "apps" / "pflotran" / "pflotran"
    command = mpirun_command(
        stack,
        ranks,
        [str(program), "--size", size, "--steps", str(steps), "--stream-mb", str(stream_mb)],
    )
    done = subprocess.run(
        command,
        env=run_environment(stack, os.environ),
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def spread(values: list[float], digits: int = 3) -> str:
    return (
        f"{statistics.median(values):.{digits}f} "
        f"[{min(values):.{digits}f}..{max(values):.{digits}f}]"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--stack", default="openmpi")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sizes", default="S,M")
    parser.add_argument("--ranks", default="1,2")
    parser.add_argument("--stream-mb", type=float, default=64)
    args = parser.parse_args()
    stack = discover_stacks().by_id(args.stack)
    if stack is None or not (build_dir(stack) / "apps" / "pflotran" / "pflotran").is_file():
        raise SystemExit(f"pflotran is not built for stack {args.stack}: run `make build`")
    configurations = [
        (size, int(n)) for size in args.sizes.split(",") for n in args.ranks.split(",")
    ]
    cores = os.cpu_count() or 1
    load_before = os.getloadavg()
    print(
        f"stack {stack.id} ({stack.version.splitlines()[0]}), {cores} cores, "
        f"{args.steps} steps per run, {args.repeats} runs per configuration after 1 warm-up; "
        f"load average at start {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}"
    )
    for size, ranks in configurations:  # warm-up
        one_run(stack, size, ranks, args.steps, args.stream_mb)
    runs: dict[tuple[str, int], list[dict]] = {c: [] for c in configurations}
    for _ in range(args.repeats):
        for configuration in configurations:
            runs[configuration].append(one_run(stack, *configuration, args.steps, args.stream_mb))
    load_after = os.getloadavg()
    print(
        "| size | ranks | grid (rank grid) | s/step (lower is better) | Newton its/step | "
        "Krylov its/step | matvec GB/s | matvec / triad | ILU solve GB/s | ILU / triad | "
        "triad GB/s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (size, ranks), results in runs.items():
        first = results[0]
        per_step = [r["wall"] / r["steps"] for r in results]
        kernels = {k: [r["kernels"][k]["GBps"] for r in results] for k in ("matvec", "pc_apply")}
        fraction = {
            k: [r["kernels"][k].get("fraction", float("nan")) for r in results]
            for k in ("matvec", "pc_apply")
        }
        triad = [r.get("stream", {}).get("triad_GBps", float("nan")) for r in results]
        grid = f"{first['params']['nx']}^3 ({first['params']['rank_grid']})" + (
            " oversubscribed" if ranks > cores else ""
        )
        print(
            f"| {size} | {ranks} | {grid} | {spread(per_step)} | "
            f"{first['model']['newton_iterations_per_step']:.1f} | "
            f"{first['model']['linear_iterations_per_step']:.1f} | "
            f"{spread(kernels['matvec'], 1)} | {spread(fraction['matvec'], 2)} | "
            f"{spread(kernels['pc_apply'], 1)} | {spread(fraction['pc_apply'], 2)} | "
            f"{spread(triad, 1)} |"
        )
    print(f"load average at end {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")


if __name__ == "__main__":
    main()
