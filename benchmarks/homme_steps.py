"""HOMME proxy time per step at sizes S (ne=4, 8) and M (ne=16, 30) on 1 and 2 ranks, with the
element kernel's bandwidth as a fraction of the STREAM triad measured in the same run.

    .venv/bin/python benchmarks/homme_steps.py [--repeats 5] [--stacks openmpi,mpich] [--case tc2]

Each run is `homme --size S|M --ne NE --steps N` (tc2, the full shallow-water step: 4 RK stages
and 2 hyperviscosity passes, 6 DSS) whose first step is a warm-up outside the timed section,
then a STREAM triad of 64 MiB arrays per rank. Runs go round all configurations once per repeat
(so drift on this shared machine hits them alike); a configuration's figures are the median,
min and max over repeats. Printed per configuration: ms per step, element-steps per second
(per rank), the share of the step spent in the DSS (the slowest rank's dss timer), the
tendency kernel's effective bandwidth (its modelled bytes over its time) and the triad, both
for all ranks together, and their ratio.
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

# (size, ne, steps): about a second of stepping each on one rank
CONFIGURATIONS = (("S", 4, 400), ("S", 8, 150), ("M", 16, 40), ("M", 30, 12))
RANKS = (1, 2)


def one_run(stack, size: str, ne: int, steps: int, ranks: int, case: str) -> dict:
    binary = build_dir(stack) / "apps" / "homme" / "homme"
    command = mpirun_command(
        stack,
        ranks,
        [
            str(binary),
            "--size",
            size,
            "--ne",
            str(ne),
            "--steps",
            str(steps),
            "--case",
            case,
            "--stream",
            "64",
        ],
    )
    out = subprocess.run(
        command, env=run_environment(stack, os.environ), capture_output=True, text=True, timeout=900
    )
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def spread(values: list[float], scale: float = 1.0, digits: int = 2) -> str:
    med = statistics.median(values) * scale
    return f"{med:.{digits}f} [{min(values) * scale:.{digits}f}..{max(values) * scale:.{digits}f}]"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--stacks", default="openmpi,mpich")
    parser.add_argument("--case", default="tc2", choices=("tc2", "tc1"))
    parser.add_argument("--raw", type=Path, help="also write every run's result line here")
    args = parser.parse_args()
    wanted = args.stacks.split(",")
    stacks = [
        s
        for s in discover_stacks().stacks
        if s.id in wanted and (build_dir(s) / "apps" / "homme" / "homme").is_file()
    ]
    if not stacks:
        raise SystemExit(f"homme is not built for {args.stacks}: run `make build`")
    loads = [os.getloadavg()[0]]
    runs: dict[tuple, list[dict]] = {}
    for _ in range(args.repeats):
        for stack in stacks:
            for size, ne, steps in CONFIGURATIONS:
                for ranks in RANKS:
                    key = (stack.id, size, ne, ranks)
                    runs.setdefault(key, []).append(
                        one_run(stack, size, ne, steps, ranks, args.case)
                    )
        loads.append(os.getloadavg()[0])
    if args.raw:
        args.raw.write_text("".join(json.dumps(r) + "\n" for rs in runs.values() for r in rs))
    print(
        f"load average (1 min) during the runs: {min(loads):.2f}..{max(loads):.2f} on "
        f"{os.cpu_count()} cores; {args.repeats} repeats, median [min..max]"
    )
    print(
        "| stack | size | ne | elements | ranks | ms/step (lower is better) | "
        "element-steps/s per rank (higher is better) | DSS % of step | kernel GB/s | "
        "triad GB/s | kernel / triad |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (stack_id, size, ne, ranks), results in runs.items():
        elements = results[0]["params"]["elements"]
        ms = [1000.0 / r["fom"]["value"] for r in results]
        rate = [r["fom"]["value"] * elements / ranks for r in results]
        dss = [100.0 * r["timers"]["dss"] / r["wall"] for r in results]
        kernel = [r["kernels"]["tendency"]["GBps"] for r in results]
        triad = [r["stream"]["triad_GBps"] for r in results]
        fraction = [r["kernels"]["tendency"]["fraction"] for r in results]
        print(
            f"| {stack_id} | {size} | {ne} | {elements} | {ranks} | {spread(ms, digits=3)} | "
            f"{spread(rate, 1e-3, 1)}k | {spread(dss, digits=0)} | {spread(kernel, digits=1)} | "
            f"{spread(triad, digits=1)} | {spread(fraction)} |"
        )


if __name__ == "__main__":
    main()
