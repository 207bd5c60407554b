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
from esmperf.mpi.knob_setting import knob_setting, write_files  # noqa: E402
from esmperf.mpi.stacks import discover_stacks  # noqa: E402
from esmperf.workloads import load_workloads, parse_result_line  # noqa: E402


def run_once(
    stack, program: list[str], ranks: int, per_node: int, knobs: dict[str, str], scratch: Path
) -> tuple[float, float]:
    """(simulated seconds, real seconds) of one run; SystemExit with its error if it fails."""
    setting = knob_setting(stack, knobs, ranks, 2, per_node, scratch / "platforms")
    write_files(setting)
    command = mpirun_command(stack, ranks, program, setting.launcher_args)
    env = run_environment(stack) | setting.env | {"TMPDIR": str(scratch)}
    started = time.monotonic()
    done = subprocess.run(command, env=env, cwd=scratch, capture_output=True, text=True)
    real = time.monotonic() - started
    result = parse_result_line(done.stdout)
    if done.returncode != 0 or result is None:
        raise SystemExit(f"{' '.join(program)} failed ({done.returncode}):\n{done.stderr[-1500:]}")
    wall = result.get("wall")
    return float(wall) if isinstance(wall, (int, float)) else simulated_time(done.stderr), real


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
        if args.steps:
            program += ["--steps", str(args.steps)]
        times: dict[str, list[tuple[float, float]]] = {"full": [], "folded": []}
        for _ in range(args.repeats):
            for mode in times:
                knobs = {"machine": args.machine, "fold": "on" if mode == "folded" else "off"}
                times[mode].append(
                    run_once(stack, program, args.ranks, args.ranks_per_node, knobs, scratch)
                )
        full = [sim for sim, _ in times["full"]]
        folded = [sim for sim, _ in times["folded"]]
        record = {
            "workload": name,
            "size": args.size,
            "ranks": args.ranks,
            "full": full,
            "folded": folded,
            "ratio": statistics.median(folded) / statistics.median(full),
            "real_full": [real for _, real in times["full"]],
            "real_folded": [real for _, real in times["folded"]],
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
