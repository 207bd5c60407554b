"""How close a folded simulation comes to a free-running one: each workload that folds, at two
sizes, simulated on the same cluster, free-running and folded runs interleaved.

    .venv/bin/python benchmarks/fold_accuracy.py [--workloads pop,hycom,...] [--ranks 4,16]
                         [--sizes pflotran:S+100_100_100,...] [--repeats 1]
                         [--computation model|measured] [--ranks-per-node 8]
                         [--machine juropa] [--json out.json]

The free-running run is the workload as a user runs it unfolded: private fields, every kernel
call executed, its solvers iterating to convergence. The folded run shares the fields, runs
each kernel on its first calls only and charges the others, and makes the iteration counts it
is given when folded (PFLOTRAN: its deck's recorded history, at the nearest rank count
recorded; POP: the deck's count per solve; docs/simulate.md, "Folded iteration counts"). So
the two differ by what folding leaves out: the sampling of the kernels' cost (with the
computation measured) and any difference between the folded counts and the free run's.

`--computation model` (the default) charges each kernel its bytes over the node's bandwidth
share, deterministically: one run of each mode says it all, and the ratio isolates the
iteration counts. `--computation measured` adds this machine's timing of the kernels (repeat
it: its spread is printed).

Printed per workload, size and rank count: the simulated seconds of the timed steps, free and
folded (median [min..max]), their ratio, the messages and allreduces of each, and the real
seconds each mode took (the simulator's cost).
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
from esmperf.mpi.knob_setting import knob_setting, write_files  # noqa: E402
from esmperf.mpi.stacks import discover_stacks  # noqa: E402
from esmperf.workloads import load_workloads, parse_result_line  # noqa: E402

# Two sizes per workload, each with the steps both runs make (the same in both: a folded
# HOMME run's default is 2 steps, a free one's all its days).
SIZES = {
    "cesm": [("S", 4), ("M", 2)],
    "homme": [("S", 10), ("M", 4)],
    "hycom": [("S", 20), ("M", 2)],
    "pflotran": [("S", 50), ("100_100_100", 2)],
    "pop": [("S", 10), ("M", 2)],
}


def run_once(
    stack, program: list[str], ranks: int, per_node: int, knobs: dict[str, str], scratch: Path
) -> dict:
    """One run's result line, with its simulated and real seconds; SystemExit with its error
    if it fails."""
    setting = knob_setting(stack, knobs, ranks, 2, per_node, scratch / "platforms")
    write_files(setting)
    command = mpirun_command(stack, ranks, program, setting.launcher_args)
    env = run_environment(stack) | setting.env | {"TMPDIR": str(scratch)}
    started = time.monotonic()
    done = subprocess.run(command, env=env, cwd=scratch, capture_output=True, text=True)
    real = time.monotonic() - started
    result = parse_result_line(done.stdout)
    # Exit 2 is a failed verification (a folded run is never verified anyway).
    if done.returncode not in (0, 2) or result is None:
        raise SystemExit(f"{' '.join(program)} failed ({done.returncode}):\n{done.stderr[-1500:]}")
    wall = result.get("wall")
    result["simulated"] = (
        float(wall) if isinstance(wall, (int, float)) else simulated_time(done.stderr)
    )
    result["real"] = real
    return result


def compare(
    stack,
    workload,
    size: str,
    steps: int,
    ranks: int,
    per_node: int,
    knobs: dict[str, str],
    repeats: int,
    scratch: Path,
) -> dict:
    """Free-running against folded runs of one size at one rank count: their simulated and
    real seconds, the ratio of the medians (folded / free), and each mode's communication."""
    program = [str(workload.executable_path(stack.id)), "--size", size, "--steps", str(steps)]
    runs: dict[str, list[dict]] = {"free": [], "folded": []}
    for _ in range(repeats):
        for mode in runs:
            mode_knobs = knobs | {"fold": "on" if mode == "folded" else "off"}
            runs[mode].append(run_once(stack, program, ranks, per_node, mode_knobs, scratch))
    record = {"workload": workload.name, "size": size, "steps": steps, "ranks": ranks}
    for mode, results in runs.items():
        comm = results[0].get("comm", {})
        record[mode] = [r["simulated"] for r in results]
        record[f"real_{mode}"] = [r["real"] for r in results]
        record[f"messages_{mode}"] = comm.get("messages")
        record[f"allreduces_{mode}"] = comm.get("allreduce")
    record["iterations_from"] = {
        mode: results[0].get("params", {}).get("iterations_from") for mode, results in runs.items()
    }
    record["ratio"] = statistics.median(record["folded"]) / statistics.median(record["free"])
    return record


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.4g} [{min(values):.4g}..{max(values):.4g}]"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workloads", help="default: every workload that folds")
    parser.add_argument("--sizes", help="workload:SIZE+SIZE,... (default: SIZES above)")
    parser.add_argument("--steps", type=int, help="instead of each size's steps in SIZES")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--ranks", default="16", help="comma-separated rank counts")
    parser.add_argument("--ranks-per-node", type=int, default=8)
    parser.add_argument("--machine", default="juropa")
    parser.add_argument("--computation", choices=["model", "measured"], default="model")
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
    sizes = {name: list(SIZES.get(name, [("S", 2)])) for name in names}
    for item in args.sizes.split(",") if args.sizes else []:
        name, _, listed = item.partition(":")
        steps = dict(SIZES.get(name, []))
        sizes[name] = [(size, steps.get(size, 2)) for size in listed.split("+")]
    knobs = {"machine": args.machine, "computation": args.computation}
    scratch = Path(tempfile.mkdtemp(prefix="fold-accuracy-"))
    records = []
    for name in names:
        for size, steps in sizes[name]:
            for ranks in [int(r) for r in args.ranks.split(",")]:
                record = compare(
                    stack,
                    workloads[name],
                    size,
                    args.steps or steps,
                    ranks,
                    min(args.ranks_per_node, ranks),
                    knobs,
                    args.repeats,
                    scratch,
                )
                records.append(record)
                print(
                    f"{name:9} {size} {record['steps']} steps, {ranks} ranks: free "
                    f"{spread(record['free'])} s, folded {spread(record['folded'])} s, "
                    f"folded/free {record['ratio']:.3f}; messages {record['messages_free']} / "
                    f"{record['messages_folded']}, allreduces {record['allreduces_free']} / "
                    f"{record['allreduces_folded']}; real s {spread(record['real_free'])} / "
                    f"{spread(record['real_folded'])}",
                    flush=True,
                )
    if args.json:
        args.json.write_text(json.dumps(records, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
