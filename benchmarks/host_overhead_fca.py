"""FCA against the CPU collectives with and without the host's cost per message
(docs/simulate.md, "The host's cost per message: `host_overhead`"): pflotran 100_100_100 (or
cesm) folded on simulated Dell R815 nodes over IB QDR, computation = model (deterministic),
eager_limit = mpi, for each collective selector and host_overhead end, offload none and fca.
Prints one JSON line per run: its simulated program time, MPI share, MPI_Allreduce's and
MPI_Barrier's shares of MPI time (the profiler, summed over ranks) and the simulator's CPU
seconds; then the ratio of each fca run's figure of merit over its offload = none twin.

    .venv/bin/python benchmarks/host_overhead_fca.py [--case pflotran|cesm] [--nodes 8]
        [--ranks-per-node 48] [--size S] [--platform ib-qdr] [--offloads none,fca] [--overheads none,low,high] [--collectives simgrid,ompi]
        [--program-args "--newton-iterations 2 --krylov-iterations 15"]
"""

import argparse
import json
import os
import shlex
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from esmperf.launch.mpirun import mpirun_command, run_environment  # noqa: E402
from esmperf.mpi.build import build_dir  # noqa: E402
from esmperf.mpi.knob_setting import knob_setting, write_files  # noqa: E402
from esmperf.mpi.stacks import discover_stacks  # noqa: E402
from esmperf.profile.read import read_profile  # noqa: E402
from esmperf.study.execute import execute  # noqa: E402

CASES = {  # the program, its seed-scale size, the seed's node
    "pflotran": (("pflotran", "--stream-mb", "0"), "100_100_100", "dell-r815"),
    "cesm": (("cesm",), "1deg", "dell-m610"),
}


def one_run(
    case: str, ranks: int, per_node: int, knobs: dict[str, str], extra: list[str], platform: str
) -> dict:
    stack = discover_stacks().by_id("smpi")
    (name, *args), _, machine = CASES[case]
    chosen = {"platform": platform, "machine": machine, "computation": "model", "fold": "on"}
    chosen |= {"eager_limit": "mpi", **knobs}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        setting = knob_setting(stack, chosen, ranks, 2, per_node, workdir / "platforms")
        write_files(setting)
        program = [str(build_dir(stack) / "apps" / name / name), *args, *extra]
        env = run_environment(stack, os.environ) | setting.env | {"TMPDIR": tmp}
        env["ESMPROF_OUT"] = str(workdir / "profile.jsonl")
        command = mpirun_command(stack, ranks, program, setting.launcher_args)
        done = execute(command, env, workdir, timeout=1800)
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if done.returncode != 0 or not lines:
            return {**knobs, "failed": done.stderr[-500:], "cpu_s": done.cpu_time}
        result = json.loads(lines[-1])
        ranks_seen = read_profile(workdir / "profile.jsonl").ranks
    wall = sum(rank["wall"] for rank in ranks_seen)
    mpi = sum(rank["mpi_time"] for rank in ranks_seen)

    def share(function: str) -> float:
        return sum(rank["calls"].get(function, {}).get("time", 0.0) for rank in ranks_seen) / mpi

    return {
        **knobs,
        "fom": (result.get("fom") or {}).get("value"),
        "program_s": result.get("wall"),
        "mpi_share": round(mpi / wall, 4),
        "allreduce_of_mpi": round(share("MPI_Allreduce"), 4),
        "barrier_of_mpi": round(share("MPI_Barrier"), 4),
        "cpu_s": round(done.cpu_time, 1),
        "load": os.getloadavg()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--case", default="pflotran", choices=sorted(CASES))
    parser.add_argument("--nodes", type=int, default=8)
    parser.add_argument("--ranks-per-node", type=int, default=48)
    parser.add_argument("--size", help="the workload's size (default: the seed's)")
    parser.add_argument("--steps", type=int, default=1)
    parser.add_argument("--overheads", default="none,low,high")
    parser.add_argument("--collectives", default="simgrid,ompi")
    parser.add_argument("--offloads", default="none,fca", help="none alone off InfiniBand")
    parser.add_argument("--platform", default="ib-qdr")
    parser.add_argument("--program-args", default="", help="more arguments for the workload")
    options = parser.parse_args()
    size = options.size or CASES[options.case][1]
    extra = ["--size", size, "--steps", str(options.steps), *shlex.split(options.program_args)]
    ranks = options.nodes * options.ranks_per_node
    runs = []
    for selector in options.collectives.split(","):
        for overhead in options.overheads.split(","):
            for offload in options.offloads.split(","):
                knobs = {"collectives": selector, "host_overhead": overhead, "offload": offload}
                run = one_run(
                    options.case, ranks, options.ranks_per_node, knobs, extra, options.platform
                )
                print(json.dumps(run), flush=True)
                runs.append(run)
    for run in runs:
        if run["offload"] == "none" or "fom" not in run:
            continue
        twin = next(
            other
            for other in runs
            if other["offload"] == "none"
            and (other["collectives"], other["host_overhead"])
            == (run["collectives"], run["host_overhead"])
        )
        if twin.get("fom"):
            ratio = run["fom"] / twin["fom"]
            print(f"{run['collectives']} {run['host_overhead']}: fca / none = {ratio:.4f}")


if __name__ == "__main__":
    main()
