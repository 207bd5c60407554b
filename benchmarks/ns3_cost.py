"""What the ns3 network model costs in simulator time against CM02, on a small seed-shaped block
(docs/simulate.md, "TCP over Ethernet: the ns3 network model").

    .venv/bin/python benchmarks/ns3_cost.py [--workload pflotran] [--size S] [--steps 2]
                                            [--nodes 2,4] [--ranks-per-node 8]
                                            [--platform gige] [--models cm02,ns3]
                                            [--switch-buffer low] [--timeout 120]
                                            [--knob fold=on ...] [--program-args '...']

Each case is one smpirun of the workload with computation = model on Dell R815 nodes (the
PFLOTRAN and HYCOM decks' node), the ranks filling each node, built with the smpi stack's own
knob settings (esmperf.mpi.knob_setting). Printed per case: the SimGrid and its ns-3 binding's
connections (kept under `make setup-simgrid`'s 4.1 with ESMPERF_SIMGRID, one per message under
Debian's), the simulated time, the workload's figure of merit (or the error: a run that printed
no result line, e.g. SimGrid's "Deadlock detected"), and the simulator's cost here: CPU seconds
of smpirun and its children (user + system) and real seconds; a case past --timeout is
reported as such (its smpirun is killed by subprocess's timeout). Runs one case at a time, at the caller's nice level.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from esmperf.launch.mpirun import mpirun_command, run_environment  # noqa: E402
from esmperf.launch.smpirun import simulated_time  # noqa: E402
from esmperf.mpi.knob_setting import knob_setting, write_files  # noqa: E402
from esmperf.mpi.knobs import check_knob  # noqa: E402
from esmperf.mpi.ns3_network import kept_connections  # noqa: E402
from esmperf.mpi.stacks import discover_stacks  # noqa: E402
from esmperf.study.classify import simulator_critical  # noqa: E402
from esmperf.workloads import fom_from_result, load_workloads, parse_result_line  # noqa: E402


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_case(args: argparse.Namespace, nodes: int, model: str, scratch: Path) -> dict:
    stack = discover_stacks().by_id("smpi")
    if stack is None:
        raise SystemExit("SimGrid SMPI is not installed: make setup, esmperf build --stack smpi")
    ranks = nodes * args.ranks_per_node
    knobs = {
        "platform": args.platform,
        "network_model": model,
        "computation": "model",
        "machine": "dell-r815",
    }
    if model in ("ns3", "cm02-tcp"):
        knobs["switch_buffer"] = args.switch_buffer
    knobs |= dict(item.split("=", 1) for item in args.knob)
    setting = knob_setting(stack, knobs, ranks, 2, args.ranks_per_node, scratch / "platforms")
    write_files(setting)
    program = [
        str(load_workloads()[args.workload].executable_path(stack.id)),
        "--size",
        args.size,
        "--steps",
        str(args.steps),
        *args.program_args.split(),
    ]
    command = mpirun_command(stack, ranks, program, setting.launcher_args)
    env = run_environment(stack) | {"TMPDIR": str(scratch)} | setting.env
    cpu, wall = children_cpu(), time.monotonic()
    try:
        result = subprocess.run(
            command,
            env=env,
            cwd=scratch,
            capture_output=True,
            text=True,
            timeout=args.timeout,
            start_new_session=True,
        )
    except subprocess.TimeoutExpired:
        return {"model": model, "nodes": nodes, "ranks": ranks, "timed_out_after_s": args.timeout}
    cpu, wall = children_cpu() - cpu, time.monotonic() - wall
    record = parse_result_line(result.stdout)
    if result.returncode != 0:
        error = result.stderr[-400:]
    elif record is None:  # SMPI can exit 0 when SimGrid stopped its ranks
        error = "no result line: " + (simulator_critical(result.stderr) or result.stderr[-400:])
    else:
        error = ""
    return {
        "simgrid": stack.version,
        "connections": "kept" if kept_connections(stack.mpicc) else "one per message",
        "workload": args.workload,
        "size": args.size,
        "steps": args.steps,
        "platform": args.platform,
        "model": model,
        "switch_buffer": knobs.get("switch_buffer", ""),
        "nodes": nodes,
        "ranks": ranks,
        "returncode": result.returncode,
        "simulated_s": simulated_time(result.stderr),
        "figure": fom_from_result(record) if record else None,
        "verification": record.get("verification", {}).get("status") if record else None,
        "cpu_s": round(cpu, 2),
        "wall_s": round(wall, 2),
        "error": error,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="pflotran")
    parser.add_argument("--size", default="S")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--nodes", default="2,4")
    parser.add_argument("--ranks-per-node", type=int, default=8)
    parser.add_argument("--platform", default="gige")
    parser.add_argument("--models", default="cm02,ns3", help="cm02, smpi, ns3, cm02-tcp")
    parser.add_argument("--switch-buffer", default="low", help="under ns3 and cm02-tcp")
    parser.add_argument("--timeout", type=float, default=120, help="seconds a case may take")
    parser.add_argument("--knob", action="append", default=[], help="KNOB=VALUE, e.g. fold=on")
    parser.add_argument("--program-args", default="", help="e.g. '--time-stepping deck'")
    args = parser.parse_args()
    for item in args.knob:  # one line naming the fix, before any run
        name, _, value = item.partition("=")
        try:
            check_knob(name, value)
        except ValueError as error:
            parser.error(f"--knob {item}: {error} (a workload's own option: --program-args)")
    with tempfile.TemporaryDirectory(prefix="ns3-cost-") as scratch:
        for nodes in map(int, args.nodes.split(",")):
            for model in args.models.split(","):
                case = Path(scratch) / f"{model}-{nodes}"
                case.mkdir()
                print(json.dumps(run_case(args, nodes, model, case)), flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
