"""What recording one MPI call costs, with regions on and off, against another build (e.g. main's,
without regions), measured where a busy machine disturbs it least: on one rank, no peer to wait
for (native/bench/record_cost.c: MPI_Comm_rank and an 8-byte MPI_Sendrecv to itself).

    .venv/bin/python benchmarks/record_cost.py --baseline DIR [--rounds 7] [--iters 20000]
                                               [--instructions]

Variants, run in turn each round: no profiler; DIR's profiler (DIR/<stack>/prof/libesmprof.so);
this build's profiler with the calls outside every region; this build's with the calls inside
the region "timed". A run's figure is its cheapest batch of 30 (ns per call); a variant's added
cost is its figure minus the unprofiled run's of the same round. Printed: median [min..max] over
rounds, and the ratio of the medians against the baseline's added cost.
--instructions also counts instructions under valgrind (callgrind): each variant at ITERS and
2 x ITERS, the difference per loop iteration (one Comm_rank and one Sendrecv), which no load
disturbs.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from esmperf.launch.mpirun import mpirun_command, run_environment  # noqa: E402
from esmperf.mpi.build import build_dir, profiler_library  # noqa: E402
from esmperf.mpi.stacks import discover_stacks  # noqa: E402

VARIANTS = ("none", "baseline", "outside regions", "regions on")
OPERATIONS = ("comm_rank_ns", "sendrecv_ns")


def command_env(
    stack, variant: str, baseline: Path, scratch: Path, iters: int, valgrind: bool = False
) -> tuple[list[str], dict[str, str]]:
    env = run_environment(stack, os.environ)
    library = {
        "baseline": baseline / stack.id / "prof" / "libesmprof.so",
        "outside regions": profiler_library(stack),
        "regions on": profiler_library(stack),
    }.get(variant)
    if library:
        env["LD_PRELOAD"] = str(library)
        env["ESMPROF_OUT"] = str(scratch / "cost.jsonl")
    program = [str(build_dir(stack) / "bench" / "record_cost"), str(iters)]
    if variant != "outside regions":
        program.append("regions")
    if valgrind:
        program = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + program
    return mpirun_command(stack, 1, program), env


def one_run(stack, variant: str, baseline: Path, scratch: Path, iters: int) -> dict[str, float]:
    command, env = command_env(stack, variant, baseline, scratch, iters)
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True, timeout=300)
    return json.loads(out.stdout.strip().splitlines()[-1])


def instructions(stack, variant: str, baseline: Path, scratch: Path, iters: int) -> int:
    command, env = command_env(stack, variant, baseline, scratch, iters, valgrind=True)
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True, timeout=900)
    counts = [int(n.replace(",", "")) for n in re.findall(r"Collected : ([\d,]+)", out.stderr)]
    if not counts:
        raise SystemExit(f"no instruction count from valgrind: {out.stderr[-500:]}")
    return counts[-1]


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} [{min(values):.1f}..{max(values):.1f}]"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline", type=Path, required=True, help="a build root without regions")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--iters", type=int, default=20000)
    parser.add_argument("--instructions", action="store_true")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f} (1 rank on {os.cpu_count()} cores)")
    stacks = [
        s
        for s in discover_stacks().stacks
        if not s.simulated
        and (build_dir(s) / "bench" / "record_cost").is_file()
        and (args.baseline / s.id / "prof" / "libesmprof.so").is_file()
    ]
    with tempfile.TemporaryDirectory() as scratch:
        print(
            "| stack | call | unprofiled (ns) | added: baseline | added: outside regions | "
            "added: regions on | regions on / baseline |"
        )
        print("|---|---|---|---|---|---|---|")
        for stack in stacks:
            runs = [
                {v: one_run(stack, v, args.baseline, Path(scratch), args.iters) for v in VARIANTS}
                for _ in range(args.rounds)
            ]
            for op in OPERATIONS:
                added = {v: [r[v][op] - r["none"][op] for r in runs] for v in VARIANTS[1:]}
                base, on = (
                    statistics.median(added["baseline"]),
                    statistics.median(added["regions on"]),
                )
                ratio = f"{on / base:.2f}" if base > 0 else "n/a"
                print(
                    f"| {stack.id} | {op.removesuffix('_ns')} | "
                    f"{spread([r['none'][op] for r in runs])} | {spread(added['baseline'])} | "
                    f"{spread(added['outside regions'])} | {spread(added['regions on'])} | "
                    f"{ratio} |"
                )
        if args.instructions:
            print()
            print(
                "| stack | instructions per Comm_rank + Sendrecv: unprofiled | added: baseline | "
                "added: outside regions | added: regions on | regions on / baseline |"
            )
            print("|---|---|---|---|---|---|")
            small = max(1, args.iters // 10)
            for stack in stacks:
                per = {}
                for v in VARIANTS:
                    low = instructions(stack, v, args.baseline, Path(scratch), small)
                    high = instructions(stack, v, args.baseline, Path(scratch), 2 * small)
                    per[v] = (high - low) / (small * 30)
                added = {v: per[v] - per["none"] for v in VARIANTS[1:]}
                print(
                    f"| {stack.id} | {per['none']:.1f} | {added['baseline']:.1f} | "
                    f"{added['outside regions']:.1f} | {added['regions on']:.1f} | "
                    f"{added['regions on'] / added['baseline']:.3f} |"
                )
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
