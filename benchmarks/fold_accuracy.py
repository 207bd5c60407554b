"""How close a folded simulation comes to a full one: each workload that folds, simulated on
the same cluster with the computation measured, full and folded runs interleaved.

    .venv/bin/python benchmarks/fold_accuracy.py [--workloads pop,hycom,...] [--repeats 5]
                                                 [--ranks 16] [--ranks-per-node 8]
                                                 [--machine juropa] [--size S] [--json out.json]

A full run executes every kernel call on every simulated rank (private fields); a folded run
shares the fields between ranks and executes each kernel on its first calls only
(ESM_KERNEL_SAMPLES over all ranks), charging the others from their mean cost per point. Both
apply the same node model (--machine). Their simulated times differ by what the sampling
misses (cold first calls, calls of other sizes, the caches seeing shared fields) and by this
machine's noise in the measured bursts: the full runs' own spread is printed beside it.

The solvers that iterate to convergence are given a fixed count in both runs (a folded run
cannot test convergence: its values mean nothing), so that both make the same messages; the
benchmark stops if their message counts or bytes differ. Kernels are timed in the simulator's
thread CPU time, as SMPI times the code between MPI calls, so other processes on this machine
do not count (docs/simulate.md).

Printed per workload: simulated seconds of the full and the folded runs, median [min..max],
the ratio of the medians (folded / full), and each mode's real seconds (the simulator's cost).
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from esmperf.launch.mpirun import mpirun_command, run_environment  # noqa: E402
from esmperf.launch.smpirun import simulated_time  # noqa: E402
from esmperf.mpi.knobs import knob_setting, write_files  # noqa: E402
from esmperf.mpi.stacks import discover_stacks  # noqa: E402
from esmperf.workloads import load_workloads, parse_result_line  # noqa: E402

# Both runs iterate exactly this often (chosen before any run, near a full S run's counts).
FIXED_ITERATIONS = {
    "pop": ["--iterations", "200"],
    "pflotran": ["--newton-iterations", "3", "--krylov-iterations", "25"],
}


def run_once(
    stack, program: list[str], ranks: int, per_node: int, knobs: dict[str, str], scratch: Path
) -> tuple[float, float, tuple]:
    """(simulated seconds, real seconds, (messages, bytes)) of one run; SystemExit with its
    error if it fails."""
    setting = knob_setting(stack, knobs, ranks, 2, per_node, scratch / "platforms")
    write_files(setting)
    command = mpirun_command(stack, ranks, program, setting.launcher_args)
    env = run_environment(stack) | setting.env | {"TMPDIR": str(scratch)}
    started = time.monotonic()
    done = subprocess.run(command, env=env, cwd=scratch, capture_output=True, text=True)
    real = time.monotonic() - started
    result = parse_result_line(done.stdout)
    # Exit 2 is a failed verification: a solver held to a fixed count need not converge,
    # and the timing stands (a folded run is never verified anyway).
    if done.returncode not in (0, 2) or result is None:
        raise SystemExit(f"{' '.join(program)} failed ({done.returncode}):\n{done.stderr[-1500:]}")
    wall = result.get("wall")
    simulated = float(wall) if isinstance(wall, (int, float)) else simulated_time(done.stderr)
    comm = result.get("comm", {})
    return simulated, real, (comm.get("messages"), comm.get("bytes_sent"))


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.4g} [{min(values):.4g}..{max(values):.4g}]"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workloads", help="default: every workload that folds")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--ranks", type=int, default=16)
    parser.add_argument("--ranks-per-node", type=int, default=8)
    parser.add_argument("--machine", default="juropa")
    parser.add_argument("--size", default="S")
    parser.add_argument("--steps", type=int)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    stack = discover_stacks().by_id("smpi")
    if stack is None:
        raise SystemExit("SimGrid SMPI is not installed: make setup")
    workloads = load_workloads()
    names = (
        args.workloads.split(",")
        if args.workloads
        else [name for name, w in workloads.items() if w.folds]
    )
    scratch = Path(tempfile.mkdtemp(prefix="fold-accuracy-"))
    records = []
    for name in names:
        program = [str(workloads[name].executable_path(stack.id)), "--size", args.size]
        program += FIXED_ITERATIONS.get(name, [])
        if args.steps:
            program += ["--steps", str(args.steps)]
        times: dict[str, list[tuple]] = {"full": [], "folded": []}
        for _ in range(args.repeats):
            for mode in times:
                knobs = {"machine": args.machine, "fold": "on" if mode == "folded" else "off"}
                times[mode].append(
                    run_once(stack, program, args.ranks, args.ranks_per_node, knobs, scratch)
                )
        traffic = {mode: {run[2] for run in runs} for mode, runs in times.items()}
        if traffic["full"] != traffic["folded"]:
            raise SystemExit(
                f"{name}: messages and bytes differ, full {traffic['full']} "
                f"against folded {traffic['folded']}: not the same run"
            )
        full = [run[0] for run in times["full"]]
        folded = [run[0] for run in times["folded"]]
        record = {
            "workload": name,
            "size": args.size,
            "ranks": args.ranks,
            "full": full,
            "folded": folded,
            "ratio": statistics.median(folded) / statistics.median(full),
            "real_full": [run[1] for run in times["full"]],
            "real_folded": [run[1] for run in times["folded"]],
        }
        records.append(record)
        print(
            f"{name:9} {args.size} {args.ranks} ranks: full {spread(full)} s, folded "
            f"{spread(folded)} s, folded/full {record['ratio']:.3f}; real seconds full "
            f"{spread(record['real_full'])}, folded {spread(record['real_folded'])}"
        )
    if args.json:
        args.json.write_text(json.dumps(records, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
