"""What the profiler adds to MPI latency: 0-byte ping-pong (one way) and 8-byte MPI_Allreduce on
2 ranks, with and without libesmprof, in the same session, per Debian stack.

    .venv/bin/python benchmarks/profiler_overhead.py [--pairs 9] [--iters 5000] [--baseline DIR]
                                                     [--regions]

--baseline DIR also runs another build of the profiler (DIR/<stack>/prof/libesmprof.so, e.g.
the build/ of another tree) in the same session: runs then go off, this build, the baseline's,
and the table adds the baseline's cost and the ratio of the medians (this / baseline).
--regions runs the timed batches inside a region (MPI_Pcontrol(1, "timed"), every run alike): with
--baseline DIR of a build without regions, the ratio is the cost of regions on against today's.

Runs alternate (off, on, off, on, ...) so drift on this shared machine hits both alike. Each run
reports 30 batch means; a run's figure is their median; a pair's cost is on - off. Printed: the
median over pairs of both figures and of the cost, its spread (min..max over pairs), and the
cost per wrapped call (a one-way ping-pong hop crosses two wrapped calls: Send and Recv).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from esmperf.mpi.build import build_dir, profiler_library  # noqa: E402
from esmperf.launch.mpirun import mpirun_command, run_environment  # noqa: E402
from esmperf.mpi.stacks import discover_stacks  # noqa: E402

CALLS_ON_PATH = {"pingpong_us": 2, "allreduce_us": 1}


def one_run(stack, iters: int, profiled: bool, scratch: Path, library: Path | None = None,
            regions: bool = False) -> dict[str, float]:
    env = run_environment(stack, os.environ)
    if profiled:
        env["LD_PRELOAD"] = str(library or profiler_library(stack))
        env["ESMPROF_OUT"] = str(scratch / "overhead.jsonl")
    command = mpirun_command(stack, 2, [str(build_dir(stack) / "bench" / "latency"), str(iters)]
                             + (["regions"] if regions else []))
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True, timeout=300)
    batches = json.loads(out.stdout.strip().splitlines()[-1])
    return {key: statistics.median(values) for key, values in batches.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=9)
    parser.add_argument("--iters", type=int, default=5000)
    parser.add_argument("--baseline", type=Path, help="another build root to compare with")
    parser.add_argument("--regions", action="store_true",
                        help="time the batches inside a region (MPI_Pcontrol(1, \"timed\"))")
    args = parser.parse_args()
    if args.baseline:
        compare(args)
        return
    load = os.getloadavg()[0]
    print(f"load average at start: {load:.2f} (2 ranks on {os.cpu_count()} cores)")
    print("| stack | operation | without (us) | with (us) | added (ns), median [min..max] | added per call (ns) |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as scratch:
        for stack in discover_stacks().stacks:
            if stack.simulated or not (build_dir(stack) / "bench" / "latency").is_file():
                continue  # the profiler does not load under SimGrid SMPI (docs/simulate.md)
            runs = [(one_run(stack, args.iters, False, Path(scratch), regions=args.regions),
                     one_run(stack, args.iters, True, Path(scratch), regions=args.regions))
                    for _ in range(args.pairs)]
            for key, calls in CALLS_ON_PATH.items():
                off = [pair[0][key] for pair in runs]
                on = [pair[1][key] for pair in runs]
                added = [1000 * (b - a) for a, b in zip(off, on)]
                med = statistics.median(added)
                print(f"| {stack.id} | {key.removesuffix('_us')} | {statistics.median(off):.3f} | "
                      f"{statistics.median(on):.3f} | {med:.1f} [{min(added):.1f}..{max(added):.1f}] | "
                      f"{med / calls:.1f} |")


def compare(args: argparse.Namespace) -> None:
    load = os.getloadavg()[0]
    print(f"load average at start: {load:.2f} (2 ranks on {os.cpu_count()} cores)")
    print("| stack | operation | without (us) | added, this build (ns) median [min..max] | "
          "added, baseline (ns) median [min..max] | per call this / baseline (ns) | ratio |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as scratch:
        for stack in discover_stacks().stacks:
            baseline = args.baseline / stack.id / "prof" / "libesmprof.so"
            if stack.simulated or not (build_dir(stack) / "bench" / "latency").is_file():
                continue
            if not baseline.is_file():
                print(f"| {stack.id} | (no baseline build at {baseline}) |")
                continue
            runs = [(one_run(stack, args.iters, False, Path(scratch), regions=args.regions),
                     one_run(stack, args.iters, True, Path(scratch), regions=args.regions),
                     one_run(stack, args.iters, True, Path(scratch), baseline, args.regions))
                    for _ in range(args.pairs)]
            for key, calls in CALLS_ON_PATH.items():
                off = [run[0][key] for run in runs]
                new = [1000 * (run[1][key] - run[0][key]) for run in runs]
                old = [1000 * (run[2][key] - run[0][key]) for run in runs]
                med_new, med_old = statistics.median(new), statistics.median(old)
                ratio = f"{med_new / med_old:.2f}" if med_old > 0 else "n/a"
                print(f"| {stack.id} | {key.removesuffix('_us')} | {statistics.median(off):.3f} | "
                      f"{med_new:.1f} [{min(new):.1f}..{max(new):.1f}] | "
                      f"{med_old:.1f} [{min(old):.1f}..{max(old):.1f}] | "
                      f"{med_new / calls:.1f} / {med_old / calls:.1f} | {ratio} |")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
