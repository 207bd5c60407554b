"""Per-step performance of the ocean proxies (pop, hycom) for sizes S and M on 1 and 2 ranks,
and their kernels' memory bandwidth as a fraction of the STREAM triad measured in the same run.

Size `L2` is a grid whose whole working set fits in one core's L2 cache (one 32x24 block, 40
levels for pop, 26 layers for hycom): there the kernels never wait for memory, so their rate
is their compute ceiling. A kernel whose M rate is close to its L2 rate is compute-bound, and
its fraction of STREAM cannot pass its L2 rate over STREAM, whatever the memory does.

    .venv/bin/python benchmarks/ocean_scaling.py [--repeats 5] [--stack openmpi]
                                                 [--sizes S,M,L2] [--ranks 1,2] [--json out.json]

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

from esmperf.build import build_dir  # noqa: E402
from esmperf.launch import mpirun_command, run_environment  # noqa: E402
from esmperf.stacks import discover_stacks  # noqa: E402

STEPS = {("pop", "S"): 10, ("pop", "M"): 5, ("hycom", "S"): 20, ("hycom", "M"): 5,
         ("pop", "L2"): 200, ("hycom", "L2"): 200}
GRID = {("pop", "L2"): ["--grid", "32x24", "--levels", "40", "--block", "32x24"],
        ("hycom", "L2"): ["--grid", "32x24", "--layers", "26", "--block", "32x24"]}
KERNELS = {"pop": ("tracer", "barotropic"), "hycom": ("all",)}


def one_run(stack, app: str, size: str, ranks: int) -> dict:
    program = build_dir(stack) / "apps" / app / app
    grid = GRID.get((app, size), ["--size", size])
    args = [str(program), *grid, "--steps", str(STEPS.get((app, size), 5))]
    done = subprocess.run(mpirun_command(stack, ranks, args), env=run_environment(stack, os.environ),
                          capture_output=True, text=True, timeout=1800)
    lines = [line for line in done.stdout.splitlines() if line.startswith('{"workload"')]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return json.loads(lines[-1])


def spread(values: list[float], scale: float = 1.0, digits: int = 1) -> str:
    med = statistics.median(values) * scale
    digits = digits if med >= 1 else digits + 2
    return f"{med:.{digits}f} [{min(values) * scale:.{digits}f}..{max(values) * scale:.{digits}f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--stack", default="openmpi")
    parser.add_argument("--apps", default="pop,hycom")
    parser.add_argument("--sizes", default="S,M,L2")
    parser.add_argument("--ranks", default="1,2")
    parser.add_argument("--json", type=Path, help="also write every run's result here")
    args = parser.parse_args()
    stack = discover_stacks().by_id(args.stack)
    if stack is None:
        raise SystemExit(f"no stack {args.stack}: see `esmperf stacks`")
    configurations = [(app, size, int(ranks)) for app in args.apps.split(",")
                      for size in args.sizes.split(",") for ranks in args.ranks.split(",")
                      if size != "L2" or ranks == "1"]  # L2: one block, one core
    print(f"stack {stack.id}; {os.cpu_count()} cores; load average at start: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    started = time.monotonic()
    runs: dict[tuple, list[dict]] = {c: [] for c in configurations}
    for _ in range(args.repeats):
        for configuration in configurations:
            runs[configuration].append(one_run(stack, *configuration))
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"({time.monotonic() - started:.0f} s, {args.repeats} runs per row)\n")
    print("| workload | size | ranks | ms/step (lower is better), median [min..max] | steps/s | SYPD "
          "(higher is better) | kernel GB/s (higher is better) | STREAM triad GB/s | kernel / STREAM |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (app, size, ranks), results in runs.items():
        per_step = [r["wall"] / r["steps"] for r in results]
        stream = [r["stream"]["triad_GBps"] for r in results]
        kernels = "; ".join(f"{k} {statistics.median(r['kernels'][k]['GBps'] for r in results):.1f}"
                            for k in KERNELS[app])
        fractions = "; ".join(f"{k} {statistics.median(r['kernels'][k]['fraction'] for r in results):.2f}"
                              for k in KERNELS[app])
        print(f"| {app} | {size} | {ranks} | {spread(per_step, 1e3)} | "
              f"{statistics.median(r['model']['steps_per_second'] for r in results):.2f} | "
              f"{statistics.median(r['fom']['value'] for r in results):.0f} | {kernels} | "
              f"{spread(stream)} | {fractions} |")
    if args.json:
        args.json.write_text(json.dumps({f"{a}/{s}/{n}": v for (a, s, n), v in runs.items()}, indent=1))


if __name__ == "__main__":
    main()
