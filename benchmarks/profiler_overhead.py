"""What the profiler adds to MPI latency: 0-byte ping-pong (one way), 8-byte MPI_Allreduce and a
non-blocking 0-byte exchange (MPI_Irecv + MPI_Isend + MPI_Waitall: the request table's path) on
2 ranks, with and without libesmprof, in the same session, per Debian stack.

    .venv/bin/python benchmarks/profiler_overhead.py [--pairs 9] [--iters 5000] [--baseline DIR]...
                                                     [--bare] [--regions] [--stack openmpi]
                                                     [--modes profile,trace,trace-cpu,callsites]

--modes: the profiler's optional modes measured too, each against its own unprofiled runs:
`trace` (ESMPROF_TRACE=1: every call is also an event in the trace buffer, written at the end),
`trace-cpu` (ESMPROF_TRACE=cpu: and two thread-CPU clock reads per call),
`callsites` (ESMPROF_CALLSITES=1: the wrapper's return address), `callsites-2` (two frames: a
backtrace per call), `regions` (the batches inside a region, as --regions, both runs of the
pair alike), `snapshots` (ESMPROF_SNAPSHOT_SECONDS=1: the helper thread writes a partial
profile every second), `no-signals` (ESMPROF_SIGNALS=0: no helper thread, no signal handlers),
`disabled` (ESMPROF_DISABLE=1: the wrappers interpose but record nothing: the floor of being
preloaded). Default: profile only. Each profiled
run also reports what the profiler calibrated at MPI_Init (rank 0: cheapest of 20 batches, so a
busy machine inflates it little): the profile's cost per call and what each mode adds.

--regions runs the timed batches inside a region (MPI_Pcontrol(1, "timed"), every run alike): with
--baseline DIR of a build without regions, the ratio is the cost of regions on against today's.

--baseline DIR also runs another build of the profiler (DIR/<stack>/prof/libesmprof.so, e.g.
the build/ of another tree) in the same session: runs then go off, this build, the baseline's,
and the table adds the baseline's cost and the ratio of the medians (this / baseline). Given
several times (and with --bare), every build alternates in each round: the cost of the
features between two commits, measured side by side (docs/profiler.md, "What each feature
costs").

--bare compares with the bare wrapper (native/bench/bare_wrapper.c), a PMPI wrapper of the
timed calls that only counts each call and reads a clock before and after it, built twice:
with the TSC (build/<stack>/bench/libbarewrap_tsc.so, libesmprof's clock) and with
clock_gettime(CLOCK_MONOTONIC) (libbarewrap_monotonic.so, the portable clock). The ratios are
libesmprof's cost against the floor of a profiler that counts and times its calls.

Runs alternate (off, on, off, on, ...) so drift on this shared machine hits both alike. Each run
reports 30 batch means; a run's figure is their median; a pair's cost is on - off. Printed: the
median over pairs of both figures and of the cost, its spread (min..max over pairs), and the
cost per wrapped call (a one-way ping-pong hop crosses two wrapped calls: Send and Recv; an
exchange three: Irecv, Isend, Waitall).
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

from esmperf.launch.mpirun import mpirun_command, run_environment  # noqa: E402
from esmperf.mpi.build import build_dir, profiler_library  # noqa: E402
from esmperf.mpi.stacks import discover_stacks  # noqa: E402

CALLS_ON_PATH = {"pingpong_us": 2, "allreduce_us": 1, "exchange_us": 3}
MODES = {
    "profile": {},
    "trace": {"ESMPROF_TRACE": "1"},
    "trace-cpu": {"ESMPROF_TRACE": "cpu"},
    "callsites": {"ESMPROF_CALLSITES": "1"},
    "callsites-2": {"ESMPROF_CALLSITES": "2"},
    "snapshots": {"ESMPROF_SNAPSHOT_SECONDS": "1"},
    "no-signals": {"ESMPROF_SIGNALS": "0"},
    "disabled": {"ESMPROF_DISABLE": "1"},
    "regions": {},  # the batches inside a region, its unprofiled runs alike (REGION_MODES)
}
REGION_MODES = {"regions"}


LATENCY_ARGS: list[str] = []  # ["regions"]: the batches inside MPI_Pcontrol(1, "timed")


def one_run(
    stack,
    iters: int,
    profiled: bool,
    scratch: Path,
    library: Path | None = None,
    mode: str = "profile",
) -> dict[str, float]:
    env = run_environment(stack, os.environ)
    if profiled:
        env["LD_PRELOAD"] = str(library or profiler_library(stack))
        env["ESMPROF_OUT"] = str(scratch / "overhead.jsonl")
        env.update(MODES[mode])
        (scratch / "overhead.jsonl").unlink(missing_ok=True)  # none is written when disabled
    command = mpirun_command(
        stack, 2, [str(build_dir(stack) / "bench" / "latency"), str(iters), *latency_args(mode)]
    )
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True, timeout=300)
    batches = json.loads(out.stdout.strip().splitlines()[-1])
    figures = {key: statistics.median(values) for key, values in batches.items()}
    if profiled and (scratch / "overhead.jsonl").is_file():  # the bare wrapper writes none
        figures.update(calibrated(scratch / "overhead.jsonl"))
    return figures


def latency_args(mode: str) -> list[str]:
    return ["regions"] if mode in REGION_MODES else LATENCY_ARGS


def calibrated(profile: Path) -> dict[str, float]:
    """What the profiler calibrated at MPI_Init on rank 0: the profile's cost per call, and
    what a trace event and a call site add to it."""
    rank = json.loads(profile.read_text().splitlines()[1])
    out = {"calibrated_ns": rank["overhead"]["ns_per_call"]}
    trace = Path(f"{profile}.trace") / "0.bin"
    if trace.is_file():
        out["trace_ns"] = json.loads(trace.open("rb").readline())["ns_per_event"]
    if "callsites" in rank:
        out["callsite_ns"] = rank["callsites"]["ns_per_call"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", type=int, default=9)
    parser.add_argument("--iters", type=int, default=5000)
    parser.add_argument(
        "--baseline",
        type=Path,
        action="append",
        default=[],
        help="another build root to compare with (repeatable)",
    )
    parser.add_argument(
        "--bare", action="store_true", help="compare with the bare counting-and-timing wrapper"
    )
    parser.add_argument("--stack", help="comma-separated stack ids (default: every built one)")
    parser.add_argument("--modes", default="profile", help="comma-separated: " + ",".join(MODES))
    parser.add_argument(
        "--regions",
        action="store_true",
        help='time the batches inside a region (MPI_Pcontrol(1, "timed"))',
    )
    args = parser.parse_args()
    if args.regions:
        LATENCY_ARGS.append("regions")
    if args.baseline or args.bare:
        compare(args)
        return
    load = os.getloadavg()[0]
    print(f"load average at start: {load:.2f} (2 ranks on {os.cpu_count()} cores)")
    modes = args.modes.split(",")
    unknown = sorted(set(modes) - set(MODES))
    if unknown:
        sys.exit(f"profiler_overhead.py: unknown mode(s) {unknown}: choose from {', '.join(MODES)}")
    print(
        "| stack | mode | operation | without (us) | with (us) "
        "| added (ns), median [min..max] | added per call (ns) |"
    )
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as scratch:
        for stack in measured_stacks(args):
            for mode in modes:
                runs = [
                    (
                        one_run(stack, args.iters, False, Path(scratch), mode=mode),
                        one_run(stack, args.iters, True, Path(scratch), mode=mode),
                    )
                    for _ in range(args.pairs)
                ]
                for key, calls in CALLS_ON_PATH.items():
                    off = [pair[0][key] for pair in runs]
                    on = [pair[1][key] for pair in runs]
                    added = [1000 * (b - a) for a, b in zip(off, on)]
                    med = statistics.median(added)
                    print(
                        f"| {stack.id} | {mode} | {key.removesuffix('_us')} "
                        f"| {statistics.median(off):.3f} | {statistics.median(on):.3f} "
                        f"| {med:.1f} [{min(added):.1f}..{max(added):.1f}] | {med / calls:.1f} |",
                        flush=True,
                    )
                for key in ("calibrated_ns", "trace_ns", "callsite_ns"):
                    values = [pair[1][key] for pair in runs if key in pair[1]]
                    if values:
                        med = statistics.median(values)
                        print(
                            f"| {stack.id} | {mode} | {key} at MPI_Init (ns per call) | | "
                            f"| {med:.1f} [{min(values):.1f}..{max(values):.1f}] | |"
                        )
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


def measured_stacks(args: argparse.Namespace) -> list:
    """The Debian and wheel stacks with a built latency benchmark, or those --stack names."""
    return [
        stack
        for stack in discover_stacks().stacks
        if not stack.simulated  # the profiler does not load under SimGrid SMPI (docs/simulate.md)
        and (build_dir(stack) / "bench" / "latency").is_file()
        and (not args.stack or stack.id in args.stack.split(","))
    ]


def baselines(args: argparse.Namespace, stack) -> list[tuple[str, Path]]:
    """(label, library) of what this build is compared with on `stack`."""
    others = [
        (f"baseline {root}", root / stack.id / "prof" / "libesmprof.so") for root in args.baseline
    ]
    if args.bare:
        bench = build_dir(stack) / "bench"
        others += [(f"bare wrapper, {clock}", bench / f"libbarewrap_{clock}.so") for clock in BARE]
    return others


# the bare wrapper's clocks (native/bench/CMakeLists.txt): the TSC, as libesmprof reads it, and
# clock_gettime(CLOCK_MONOTONIC), the portable one (MPI_Wtime's on Linux)
BARE = ("tsc", "monotonic")


def compare(args: argparse.Namespace) -> None:
    """Runs alternate: off, this build, then each baseline; per operation, the cost of each
    (median [min..max] over the rounds), per wrapped call, and the ratio this / baseline."""
    load = os.getloadavg()[0]
    print(f"load average at start: {load:.2f} (2 ranks on {os.cpu_count()} cores)")
    print(
        "| stack | operation | without (us) | compared with | added, this build (ns) "
        "median [min..max] | added, compared (ns) median [min..max] | per call this / "
        "compared (ns) | ratio |"
    )
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as scratch:
        for stack in measured_stacks(args):
            others = baselines(args, stack)
            missing = [str(library) for _, library in others if not library.is_file()]
            if missing:
                print(f"| {stack.id} | (not built: {', '.join(missing)}) |")
                continue
            runs = [
                [
                    one_run(stack, args.iters, False, Path(scratch)),
                    one_run(stack, args.iters, True, Path(scratch)),
                    *(one_run(stack, args.iters, True, Path(scratch), lib) for _, lib in others),
                ]
                for _ in range(args.pairs)
            ]
            for key, calls in CALLS_ON_PATH.items():
                off = [run[0][key] for run in runs]
                new = [1000 * (run[1][key] - run[0][key]) for run in runs]
                med_new = statistics.median(new)
                for number, (label, _) in enumerate(others, start=2):
                    old = [1000 * (run[number][key] - run[0][key]) for run in runs]
                    med_old = statistics.median(old)
                    ratio = f"{med_new / med_old:.2f}" if med_old > 0 else "n/a"
                    print(
                        f"| {stack.id} | {key.removesuffix('_us')} | "
                        f"{statistics.median(off):.3f} | {label} | "
                        f"{med_new:.1f} [{min(new):.1f}..{max(new):.1f}] | "
                        f"{med_old:.1f} [{min(old):.1f}..{max(old):.1f}] | "
                        f"{med_new / calls:.1f} / {med_old / calls:.1f} | {ratio} |",
                        flush=True,
                    )
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
