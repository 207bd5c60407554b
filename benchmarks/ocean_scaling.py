"""Per-step performance of the ocean proxies (pop, hycom) for sizes S and M on 1 and 2 ranks,
and their kernels' memory bandwidth as a fraction of the STREAM triad measured in the same run.

Size `cache` is one 32x24 block (40 levels for pop, 26 layers for hycom) whose fields, about
2 MB, stay in the caches from step to step (L2 and L3: 1 MB of L2 per core on this VM, 32 MB
of L3); the kernels wait little for memory (pop's tracers are still written to memory by
non-temporal stores), so their rate approaches their compute ceiling. A kernel whose M rate is
close to its cache rate is compute-bound, and its fraction of STREAM cannot pass its cache
rate over STREAM, whatever the memory does.

    .venv/bin/python benchmarks/ocean_scaling.py [--repeats 5] [--stack openmpi]
                                                 [--sizes S,M,cache] [--ranks 1,2] [--json out.json]
                                                 [--baseline OTHER_TREE]

--baseline compares two versions of the code on the same machine at the same time: OTHER_TREE
is another esmperf tree (e.g. `git worktree add /tmp/before <commit> && make -C /tmp/before
build`) whose binaries run interleaved with this tree's, each row once per tree.

Each configuration runs `repeats` times; every run warms up one step, then times its steps
(wall = the slowest rank's timed section). Runs go round-robin over the configurations so the
drift of this shared machine hits all of them alike. Printed: the median time per step with
its spread (min..max over runs), steps/s, simulated years per day, the kernels' bandwidth
(bytes the kernels' loops move by the workload's own count, over the time spent in them) and
that bandwidth over the STREAM triad of the same run (medians). The load average is printed
before and after: the figures mean little when it is high.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from esmperf.launch.mpirun import mpirun_command, run_environment  # noqa: E402
from esmperf.mpi.build import build_dir  # noqa: E402
from esmperf.mpi.stacks import discover_stacks  # noqa: E402

STEPS = {
    ("pop", "S"): 10,
    ("pop", "M"): 5,
    ("hycom", "S"): 20,
    ("hycom", "M"): 5,
    ("pop", "cache"): 200,
    ("hycom", "cache"): 200,
}
GRID = {
    ("pop", "cache"): ["--grid", "32x24", "--levels", "40", "--block", "32x24"],
    ("hycom", "cache"): ["--grid", "32x24", "--layers", "26", "--block", "32x24"],
}
KERNELS = {"pop": ("tracer", "barotropic"), "hycom": ("all",)}


def program_path(build: Path, app: str) -> Path:
    program = build / "apps" / app / app
    if not program.exists():
        raise SystemExit(f"no {program}: build that tree first (make -C {build.parents[1]} build)")
    return program


def one_run(stack, build: Path, app: str, size: str, ranks: int) -> dict:
    program = program_path(build, app)
    grid = GRID.get((app, size), ["--size", size])
    args = [str(program), *grid, "--steps", str(STEPS.get((app, size), 5))]
    done = subprocess.run(
        mpirun_command(stack, ranks, args),
        env=run_environment(stack, os.environ),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith('{"workload"')]
    if done.returncode != 0 or not lines:
        raise SystemExit(
            f"{' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
        )
    return json.loads(lines[-1])


def spread(values: list[float], scale: float = 1.0, digits: int = 1) -> str:
    med = statistics.median(values) * scale
    digits = digits if med >= 1 else digits + 2
    return f"{med:.{digits}f} [{min(values) * scale:.{digits}f}..{max(values) * scale:.{digits}f}]"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--stack", default="openmpi")
    parser.add_argument("--apps", default="pop,hycom")
    parser.add_argument("--sizes", default="S,M,cache")
    parser.add_argument("--ranks", default="1,2")
    parser.add_argument("--json", type=Path, help="also write every run's result here")
    parser.add_argument(
        "--baseline", type=Path, help="another esmperf tree to compare, interleaved"
    )
    args = parser.parse_args()
    stack = discover_stacks().by_id(args.stack)
    if stack is None:
        raise SystemExit(f"no stack {args.stack}: see `esmperf stacks`")
    builds = {"current": build_dir(stack)}
    if args.baseline:
        builds = {"baseline": args.baseline.resolve() / "build" / stack.id, **builds}
    configurations = [
        (tree, app, size, int(ranks))
        for app in args.apps.split(",")
        for size in args.sizes.split(",")
        for ranks in args.ranks.split(",")
        for tree in builds
        if size != "cache" or ranks == "1"
    ]  # one block, one core
    for tree, app, *_ in configurations:
        program_path(builds[tree], app)
    print(
        f"stack {stack.id}; {os.cpu_count()} cores; load average at start: "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    started = time.monotonic()
    runs: dict[tuple, list[dict]] = {c: [] for c in configurations}
    for _ in range(args.repeats):
        for configuration in configurations:
            tree, *rest = configuration
            runs[configuration].append(one_run(stack, builds[tree], *rest))
    print(
        f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
        f"({time.monotonic() - started:.0f} s, {args.repeats} runs per row)\n"
    )
    tree_column = "tree | " if args.baseline else ""
    print(
        f"| {tree_column}workload | size | ranks | ms/step (lower is better), median [min..max] | "
        "steps/s | SYPD (higher is better) | kernel GB/s (higher is better) | STREAM triad GB/s | "
        "kernel / STREAM |"
    )
    print("|---" * (9 + bool(args.baseline)) + "|")
    for (tree, app, size, ranks), results in runs.items():
        per_step = [r["wall"] / r["steps"] for r in results]
        stream = [r["stream"]["triad_GBps"] for r in results]
        kernels = "; ".join(
            f"{k} {statistics.median(r['kernels'][k]['GBps'] for r in results):.1f}"
            for k in KERNELS[app]
        )
        fractions = "; ".join(
            f"{k} {statistics.median(r['kernels'][k]['fraction'] for r in results):.2f}"
            for k in KERNELS[app]
        )
        tree_cell = f"{tree} | " if args.baseline else ""
        print(
            f"| {tree_cell}{app} | {size} | {ranks} | {spread(per_step, 1e3)} | "
            f"{statistics.median(r['model']['steps_per_second'] for r in results):.2f} | "
            f"{statistics.median(r['fom']['value'] for r in results):.0f} | {kernels} | "
            f"{spread(stream)} | {fractions} |"
        )
    if args.json:
        args.json.write_text(
            json.dumps({f"{t}/{a}/{s}/{n}": v for (t, a, s, n), v in runs.items()}, indent=1)
        )


if __name__ == "__main__":
    main()
