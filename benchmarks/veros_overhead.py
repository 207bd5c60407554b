"""What profiling costs Veros (a real ocean model in Python, MPI through mpi4py): its ACC setup
run with and without libesmprof preloaded, alternating, on Open MPI.

    .venv/bin/python benchmarks/veros_overhead.py [--pairs 7] [--ranks 2] [--steps 5] [--size S]
    .venv/bin/python benchmarks/veros_overhead.py --callgrind [--steps 1]

Needs `make setup-veros` and `make build`. Each pair runs off and on (the order swaps every
pair, so drift on a shared machine hits both alike); the profiled run has the time steps as the
regions "timed" and "timestep" (scripts/veros_run.py). Per run: the timed steps' wall time
(the driver's `wall`: max over ranks) and CPU time (its `cpu`: summed over ranks), the whole
run's elapsed time (Python start-up, imports, set-up and MPI_Finalize included) and the CPU
time of the run's processes (user + system, from getrusage of the children: less disturbed by
other load than wall time). Printed: median
[min..max] over the pairs of each, of the added cost per pair ((on - off) / off, in %), the
load average before the runs, and the profiler's own estimate from the profiles (calibrated ns
per call x wrapped calls, as % of the ranks' wall time).

--callgrind counts instructions instead, which the machine's load does not change: one
profiled run with every rank under valgrind's callgrind, then per rank the instructions
executed in libesmprof's own code (exclusive), and inclusive of what they call (libc, MPI) the
profiler's start-up (esm_init_hook) and the writing of the profile (esm_write_profile), each as
a share of all the rank's instructions. Instructions spent busy-polling inside MPI calls
(waiting for the other rank) still depend on timing.
"""

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from esmperf.launch.mpirun import mpirun_command, run_environment  # noqa: E402
from esmperf.mpi.build import profiler_library  # noqa: E402
from esmperf.mpi.stacks import discover_stacks  # noqa: E402
from median_spread import spread  # noqa: E402

VEROS_PYTHON = ROOT / ".venv" / "veros" / "bin" / "python"
DRIVER = ROOT / "scripts" / "veros_run.py"


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_run(stack, args: argparse.Namespace, profiled: bool, scratch: Path) -> dict[str, float]:
    env = run_environment(stack, os.environ)
    out = scratch / "veros.jsonl"
    if profiled:
        env["LD_PRELOAD"] = str(profiler_library(stack))
        env["ESMPROF_OUT"] = str(out)
    command = mpirun_command(
        stack,
        args.ranks,
        [str(VEROS_PYTHON), str(DRIVER), "--size", args.size, "--steps", str(args.steps)],
    )
    load = os.getloadavg()[0]
    cpu, start = children_cpu(), time.perf_counter()
    run = subprocess.run(command, env=env, capture_output=True, text=True, cwd=scratch, timeout=900)
    elapsed, cpu = time.perf_counter() - start, children_cpu() - cpu
    if run.returncode != 0:
        raise SystemExit(
            f"veros run failed ({run.returncode}):\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
        )
    result = json.loads([line for line in run.stdout.splitlines() if line.startswith("{")][-1])
    if not result["verification"]["passed"]:
        raise SystemExit(f"veros run not verified: {result['verification']}")
    figures = {
        "wall": result["wall"],
        "steps_cpu": result["cpu"],
        "elapsed": elapsed,
        "cpu": cpu,
        "load": load,
    }
    if profiled:
        lines = [json.loads(line) for line in out.read_text().splitlines()[1:-1]]
        overhead = sum(line["overhead"]["seconds"] for line in lines)
        figures["estimate_percent"] = 100 * overhead / sum(line["wall"] for line in lines)
        figures["calls"] = sum(line["overhead"]["calls"] for line in lines)
        figures["ns_per_call"] = max(line["overhead"]["ns_per_call"] for line in lines)
    return figures


def callgrind(stack, args: argparse.Namespace, scratch: Path) -> None:
    """One profiled run, each rank under callgrind; the profiler's share of instructions."""
    if not shutil.which("valgrind"):
        raise SystemExit("valgrind is missing: apt-get install valgrind")
    env = run_environment(stack, os.environ)
    env["LD_PRELOAD"] = str(profiler_library(stack))
    env["ESMPROF_OUT"] = str(scratch / "veros.jsonl")
    tool = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={scratch}/callgrind.%p"]
    program = [str(VEROS_PYTHON), str(DRIVER), "--size", args.size, "--steps", str(args.steps)]
    run = subprocess.run(
        mpirun_command(stack, args.ranks, tool + program),
        env=env,
        cwd=scratch,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if run.returncode != 0:
        raise SystemExit(f"veros under callgrind failed:\n{run.stderr[-3000:]}")
    print(
        f"veros {args.size}, {args.steps} timed step(s), {args.ranks} ranks, profiled, each "
        f"rank under callgrind; load average {os.getloadavg()[0]:.2f}"
    )
    print(
        "| rank (pid) | instructions | libesmprof's own code | start-up, inclusive | "
        "writing the profile, inclusive |"
    )
    print("|---|---|---|---|---|")
    tops = []
    for out in sorted(scratch.glob("callgrind.*")):
        exclusive = annotate(out, inclusive=False)
        inclusive = annotate(out, inclusive=True)
        total = exclusive["PROGRAM TOTALS"]
        own = sum(ir for name, ir in exclusive.items() if "libesmprof" in name)
        hooks = [
            sum(ir for name, ir in inclusive.items() if f":{hook} " in name)
            for hook in ("esm_init_hook", "esm_write_profile")
        ]
        print(
            f"| {out.suffix[1:]} | {total:,} | {100 * own / total:.3f} % | "
            f"{100 * hooks[0] / total:.3f} % | {100 * hooks[1] / total:.3f} % |"
        )
        mine = sorted((ir, name) for name, ir in exclusive.items() if "libesmprof" in name)
        tops.append(
            ", ".join(
                f"{name.split(':')[-1].split()[0]} {100 * ir / total:.3f} %"
                for ir, name in reversed(mine[-4:])
            )
        )
    for out, top in zip(sorted(scratch.glob("callgrind.*")), tops):
        print(f"{out.suffix[1:]}: the profiler's own code by function: {top}")


def annotate(out: Path, inclusive: bool) -> dict[str, int]:
    """callgrind_annotate's lines: "file:function [object]" (and "PROGRAM TOTALS") -> Ir."""
    text = subprocess.run(
        [
            "callgrind_annotate",
            f"--inclusive={'yes' if inclusive else 'no'}",
            "--threshold=100",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = {}
    for line in text.splitlines():
        match = re.match(r"\s*([\d,]+) \([^)]*\)\s+(.*)", line)
        if match:
            lines[match.group(2).strip()] = int(match.group(1).replace(",", ""))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--size", default="S")
    parser.add_argument(
        "--callgrind",
        action="store_true",
        help="count instructions with valgrind's callgrind instead of timing",
    )
    args = parser.parse_args()
    if not VEROS_PYTHON.is_file():
        raise SystemExit(f"{VEROS_PYTHON} is missing: run `make setup-veros`")
    stack = next((s for s in discover_stacks().stacks if s.id == "openmpi"), None)
    if stack is None or not profiler_library(stack).is_file():
        raise SystemExit("the openmpi stack is not built: run `make build`")
    if args.callgrind:
        with tempfile.TemporaryDirectory() as scratch:
            callgrind(stack, args, Path(scratch))
        return
    print(
        f"veros {args.size}, {args.steps} steps, {args.ranks} ranks on {os.cpu_count()} cores, "
        f"{args.pairs} pairs; load average at start {os.getloadavg()[0]:.2f}"
    )
    runs: dict[bool, list[dict[str, float]]] = {False: [], True: []}
    with tempfile.TemporaryDirectory() as scratch:
        for pair in range(args.pairs):
            for profiled in (False, True) if pair % 2 == 0 else (True, False):
                runs[profiled].append(one_run(stack, args, profiled, Path(scratch)))
            off, on = runs[False][-1], runs[True][-1]
            print(
                f"pair {pair + 1}: steps wall off {off['wall']:.3f} s on {on['wall']:.3f} s, "
                f"steps cpu off {off['steps_cpu']:.3f} s on {on['steps_cpu']:.3f} s, "
                f"cpu off {off['cpu']:.2f} s on {on['cpu']:.2f} s, load {off['load']:.1f}",
                flush=True,
            )
    off, on = runs[False], runs[True]
    print("| figure | without | with | added per pair (%), median [min..max] |")
    print("|---|---|---|---|")
    for key, label in (
        ("wall", "timed steps, wall (s)"),
        ("steps_cpu", "timed steps, CPU of all ranks (s)"),
        ("elapsed", "whole run, elapsed (s)"),
        ("cpu", "whole run, CPU user+sys (s)"),
    ):
        added = [100 * (b[key] - a[key]) / a[key] for a, b in zip(off, on, strict=True)]
        print(
            f"| {label} | {spread([r[key] for r in off], 3)} | {spread([r[key] for r in on], 3)} "
            f"| {spread(added, 2)} |"
        )
    print(f"load average before the runs: {spread([r['load'] for r in off + on], 2)}")
    print(
        "profiler's own estimate (calibrated ns/call x calls, % of wall): "
        f"{spread([r['estimate_percent'] for r in on], 4)}; wrapped calls per run (all ranks) "
        f"{spread([r['calls'] for r in on], 0)}, "
        f"ns per call {spread([r['ns_per_call'] for r in on], 1)}"
    )


if __name__ == "__main__":
    main()
