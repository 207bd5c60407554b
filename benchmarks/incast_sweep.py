"""Incast under ns-3 and under the flow model cm02-tcp: the sweep the incast model is derived
from and checked against (docs/simulate.md, "TCP on the flow model").

    .venv/bin/python benchmarks/incast_sweep.py [--senders 4,8,16] [--bytes 1448,32768]
                                                [--buffers low,high] [--platform gige]
                                                [--models ns3,cm02-tcp] [--timeout 120]
                                                [--rounds 2] [--compare-round 1]

Each case is one smpirun of bench/incast (every sender sends one message of --bytes to rank 0
at once, --rounds rounds), one rank per node (senders + 1 nodes), network only (computation
off), built with the smpi stack's own knob settings. Printed per case (one JSON line): the round
times, the simulator's cost here (CPU seconds of smpirun and its children, real seconds), and
for each case run under both ns3 and cm02-tcp the relative difference of cm02-tcp's round
--compare-round from ns-3's; at the end a summary (agreement on a timeout, cases within 10 %).
Runs one case at a time, at the caller's nice level. Needs the smpi stack built (`esmperf build --stack
smpi`). Which ns-3 binding runs: SimGrid's own (a TCP connection per message: every round
alike) or, with ESMPERF_SIMGRID naming `make setup-simgrid`'s 4.1, esmperf's (connections kept
open: the first round opens them, later rounds start from the windows the earlier left, so
--compare-round 2 compares the steady state); each line names it.
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
from esmperf.mpi.build import build_dir  # noqa: E402
from esmperf.mpi.knob_setting import knob_setting, write_files  # noqa: E402
from esmperf.mpi.ns3_network import kept_connections  # noqa: E402
from esmperf.mpi.stacks import discover_stacks  # noqa: E402

TIMED_OUT_S = 0.1  # a round this long waited a retransmission timeout (200 ms)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_case(
    senders: int, size: int, buffer: str, model: str, args: argparse.Namespace, scratch: Path
) -> dict:
    stack = discover_stacks().by_id("smpi")
    if stack is None:
        raise SystemExit("SimGrid SMPI is not installed: make setup, esmperf build --stack smpi")
    ranks = senders + 1
    knobs = {"platform": args.platform, "network_model": model, "computation": "off"}
    if model in ("ns3", "cm02-tcp"):
        knobs["switch_buffer"] = buffer
    setting = knob_setting(stack, knobs, ranks, 2, 1, scratch / "platforms")
    write_files(setting)
    program = [str(build_dir(stack) / "bench" / "incast"), str(args.rounds), str(size)]
    command = mpirun_command(stack, ranks, program, setting.launcher_args)
    env = run_environment(stack) | {"TMPDIR": str(scratch)} | setting.env
    case = {"platform": args.platform, "senders": senders, "bytes": size, "model": model}
    if model == "ns3":
        case["connections"] = "kept" if kept_connections(stack.mpicc) else "one per message"
    case["buffer"] = buffer if "switch_buffer" in knobs else ""
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
        return case | {"timed_out_after_s": args.timeout}
    rounds = None
    if result.returncode == 0:
        rounds = json.loads(result.stdout.strip().splitlines()[-1])["round_s"]
    return case | {
        "round_s": rounds,
        "cpu_s": round(children_cpu() - cpu, 2),
        "wall_s": round(time.monotonic() - wall, 2),
        "error": "" if result.returncode == 0 else result.stderr[-400:],
    }


def summary(compared: list[tuple[float, float]]) -> dict:
    """How often the two models agree on a timeout, and how close they are where both wait."""
    both = [(a, b) for a, b in compared if a > TIMED_OUT_S and b > TIMED_OUT_S]
    return {
        "cases": len(compared),
        "ns3_timed_out": sum(a > TIMED_OUT_S for a, _ in compared),
        "cm02_tcp_timed_out": sum(b > TIMED_OUT_S for _, b in compared),
        "agree_on_timeout": sum((a > TIMED_OUT_S) == (b > TIMED_OUT_S) for a, b in compared),
        "both_timed_out": len(both),
        "both_timed_out_within_10_percent": sum(abs(b / a - 1) <= 0.1 for a, b in both),
        "within_10_percent": sum(abs(b / a - 1) <= 0.1 for a, b in compared),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--senders", default="4,8,16")
    parser.add_argument("--bytes", default="1448,32768")
    parser.add_argument("--buffers", default="low,high")
    parser.add_argument("--platform", default="gige")
    parser.add_argument("--models", default="ns3,cm02-tcp")
    parser.add_argument("--timeout", type=float, default=120, help="seconds a case may take")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--compare-round", type=int, default=1, help="1 = the first round")
    args = parser.parse_args()
    if not 1 <= args.compare_round <= args.rounds:
        parser.error(f"--compare-round {args.compare_round}: from 1 to --rounds {args.rounds}")
    at = args.compare_round - 1
    compared: list[tuple[float, float]] = []  # (ns3, cm02-tcp) round --compare-round
    with tempfile.TemporaryDirectory(prefix="incast-sweep-") as scratch:
        for buffer in args.buffers.split(","):
            for size in map(int, args.bytes.split(",")):
                for senders in map(int, args.senders.split(",")):
                    found = {}
                    for model in args.models.split(","):
                        case = Path(scratch) / f"{model}-{buffer}-{size}-{senders}"
                        case.mkdir()
                        found[model] = run_case(senders, size, buffer, model, args, case)
                        print(json.dumps(found[model]), flush=True)
                    ns3, flow = found.get("ns3", {}), found.get("cm02-tcp", {})
                    if ns3.get("round_s") and flow.get("round_s"):
                        compared.append((ns3["round_s"][at], flow["round_s"][at]))
                        difference = flow["round_s"][at] / ns3["round_s"][at] - 1
                        print(json.dumps({"cm02_tcp_vs_ns3": round(difference, 4)}), flush=True)
    if compared:
        print(json.dumps(summary(compared)))
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
