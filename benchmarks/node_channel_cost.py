"""What `node_channel = shared` costs the simulator against `per_pair`, and what it changes
(docs/simulate.md, "Links as built"): three small cases, network only (computation off).

    .venv/bin/python benchmarks/node_channel_cost.py [--timeout 300]

- bench/pingpong, 24 pairs on one 48-core dell-r815 node at once (0 B, 64 KiB, 4 MiB);
- a 576-node ib-qdr platform with 2 ranks on its first and last node: the platform file's size
  and what parsing it costs;
- hycom S, 3 steps, 24 ranks on 2 dell-m610 nodes of 12, unfolded.
Printed per case and channel: the platform file's bytes, the simulator's CPU seconds (smpirun
and its children, user + system) and real seconds, SimGrid's simulated time and the program's
output line (pingpong's one-way times, hycom's result). One case at a time, at the caller's
nice level.
"""

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from esmperf.launch.mpirun import mpirun_command, run_environment  # noqa: E402
from esmperf.launch.smpirun import simulated_time  # noqa: E402
from esmperf.mpi.build import build_dir  # noqa: E402
from esmperf.mpi.knob_setting import knob_setting, write_files  # noqa: E402
from esmperf.mpi.stacks import discover_stacks  # noqa: E402

CASES = {  # name: (ranks, ranks per node, machine, program under build/smpi, hostfile or None)
    "pingpong-48-on-1-node": (48, 48, "dell-r815", ["bench/pingpong", "10", "0", "65536", "4194304"], None),
    "platform-576-nodes": (576, 1, "dell-r815", ["bench/pingpong", "10", "0", "4194304"], "node-0\nnode-575\n"),
    "hycom-S-24-on-2-nodes": (24, 12, "dell-m610", ["apps/hycom/hycom", "--size", "S", "--steps", "3"], None),
}  # fmt: skip


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_case(name: str, channel: str, scratch: Path, timeout: float) -> str:
    stack = discover_stacks().by_id("smpi")
    if stack is None:
        raise SystemExit("SimGrid SMPI is not installed: make setup, esmperf build --stack smpi")
    ranks, per_node, machine, program, hosts = CASES[name]
    knobs = {"computation": "off", "fold": "off", "platform": "ib-qdr", "machine": machine}
    setting = knob_setting(stack, knobs | {"node_channel": channel}, ranks, 2, per_node, scratch)
    if hosts:  # only these nodes run a rank
        setting = replace(
            setting,
            files=tuple((p, hosts if p.suffix == ".hosts" else t) for p, t in setting.files),
        )
        ranks = hosts.count("\n")
    write_files(setting)
    xml = next(path for path, _ in setting.files if path.suffix == ".xml")
    argv = [str(build_dir(stack) / program[0]), *program[1:]]
    command = mpirun_command(stack, ranks, argv, setting.launcher_args)
    env = run_environment(stack) | setting.env | {"TMPDIR": str(scratch)}
    cpu, start = children_cpu(), time.time()
    try:
        done = subprocess.run(
            command, env=env, cwd=scratch, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return f"{name} {channel}: past {timeout:g} s"
    cost = f"cpu {children_cpu() - cpu:.2f} s, real {time.time() - start:.2f} s"
    last = done.stdout.strip().splitlines()[-1][:240] if done.stdout.strip() else done.stderr[-240:]
    return (
        f"{name} {channel}: exit {done.returncode}, platform {xml.stat().st_size} B, {cost}, "
        f"simulated {simulated_time(done.stderr)} s\n  {last}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="node-channel-") as scratch:
        for name in CASES:
            for channel in ("per_pair", "shared"):
                print(run_case(name, channel, Path(scratch), args.timeout), flush=True)


if __name__ == "__main__":
    main()
