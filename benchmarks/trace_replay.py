"""How well a real run's trace, replayed on a simulated cluster, matches SMPI running the same
program on that cluster (docs/profiler.md "Replaying a run").

    .venv/bin/python benchmarks/trace_replay.py [--workload pop] [--size S] [--ranks 4]
        [--platform gige] [--stack openmpi] [--repeats 3] [-- extra workload args]

Per repeat, in one session: (a) the workload on a real stack under `esmperf profile --trace`,
its trace (ESMPROF_TRACE=cpu) written as a SimGrid TI trace (computation at the simulated hosts'
speed, from the wall time between calls, and (a') from the thread's CPU time) and replayed
with `smpirun -replay` on the platform (one rank per node, the options of `esmperf simulate`);
(b) the same workload built for SMPI run by smpirun on the same platform with the same options
(what `esmperf simulate` runs), and (c) SMPI's own TI trace of that run (-trace-ti) replayed, a
check of the replay machinery; (d) and (e): (a) and (b) with no computation charged (SMPI's
computation = off), the network alone, deterministic. Printed: the simulated seconds of each
(whole run, MPI_Init to MPI_Finalize), median [min..max] over repeats, the ratios to (b) and to
(e), and the load.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from esmperf.launch.mpirun import mpirun_command, run_environment  # noqa: E402
from esmperf.mpi import smpi_knobs  # noqa: E402
from esmperf.mpi.build import build_dir, profiler_library  # noqa: E402
from esmperf.mpi.stacks import discover_stacks  # noqa: E402
from esmperf.profile.replay import ReplayError, TiTrace, measured_time, write_ti  # noqa: E402
from esmperf.profile.replay_run import replay  # noqa: E402
from esmperf.profile.trace import read_trace  # noqa: E402
from median_spread import spread  # noqa: E402


def simulated_time(text: str) -> float:
    found = re.findall(r"Simulated time: ([0-9.eE+-]+) seconds", text)
    if not found:
        raise SystemExit(f"no simulated time in smpirun's output:\n{text[-2000:]}")
    return float(found[-1])


def real_run(
    stack, workload: str, args: list[str], ranks: int, scratch: Path
) -> tuple[list, float]:
    env = run_environment(stack, os.environ)
    env.update(
        LD_PRELOAD=str(profiler_library(stack)),
        ESMPROF_OUT=str(scratch / "real.jsonl"),
        ESMPROF_TRACE="cpu",
    )
    binary = build_dir(stack) / "apps" / workload / workload
    subprocess.run(
        mpirun_command(stack, ranks, [str(binary), *args]),
        env=env,
        check=True,
        capture_output=True,
        timeout=1800,
    )
    traces = read_trace(scratch / "real.jsonl")
    return traces, measured_time(traces)


def smpi_run(
    smpi,
    workload: str,
    args: list[str],
    ranks: int,
    platform: str,
    scratch: Path,
    computation: str = "measured",
) -> tuple[float, Path]:
    setting = smpi_knobs.smpi_setting(
        {"platform": platform, "computation": computation}, ranks, 1, scratch
    )
    for path, text in setting.files:
        path.write_text(text)
    env = {**os.environ, **setting.env, "TMPDIR": str(scratch)}
    ti = scratch / "smpi-ti.txt"
    binary = build_dir(smpi) / "apps" / workload / workload
    command = [
        str(smpi.mpirun),
        "-np",
        str(ranks),
        *setting.launcher_args,
        f"--cfg=smpi/tmpdir:{scratch}",
        "-trace-ti",
        f"--cfg=tracing/filename:{ti}",
        str(binary),
        *args,
    ]
    run = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=3600, cwd=scratch
    )
    if run.returncode != 0:
        raise SystemExit(f"smpirun failed: {run.stderr[-2000:]}")
    return simulated_time(run.stderr + run.stdout), ti


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workload", default="pop")
    parser.add_argument("--size", default="S")
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--platform", default="gige")
    parser.add_argument("--stack", default="openmpi")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("extra", nargs=argparse.REMAINDER, help="workload arguments after --")
    args = parser.parse_args()
    stacks = {s.id: s for s in discover_stacks().stacks}
    real, smpi = stacks[args.stack], stacks["smpi"]
    wargs = ["--size", args.size, *[a for a in args.extra if a != "--"]]
    print(
        f"{args.workload} {' '.join(wargs)} on {args.ranks} ranks; real runs on {real.id}, "
        f"simulated on {args.platform} (1 rank per node)"
    )
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    rows: dict[str, list[float]] = {
        "measured wall (real run)": [],
        "(a) replay of the real run": [],
        "(a') the same, computation from CPU time": [],
        "(b) SMPI run": [],
        "(c) replay of SMPI's own TI trace": [],
        "(d) replay of the real run, computation off": [],
        "(e) SMPI run, computation off": [],
    }
    messages = []
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="trace-replay-") as tmp:
            scratch = Path(tmp)
            traces, wall = real_run(real, args.workload, wargs, args.ranks, scratch)
            ti = write_ti(traces, scratch / "real.ti")
            replayed = replay(ti, args.platform, count_messages=True)
            smpi_time, smpi_ti = smpi_run(
                smpi, args.workload, wargs, args.ranks, args.platform, scratch
            )
            try:  # SimGrid 3.32 cannot replay all it traces (no Startall action)
                control = replay(
                    TiTrace(smpi_ti, args.ranks, ti.speed), args.platform
                ).simulated_time
            except ReplayError as error:
                print(f"(c) failed: {str(error).splitlines()[-2:]}")
                control = float("nan")
            rows["measured wall (real run)"].append(wall)
            rows["(a) replay of the real run"].append(replayed.simulated_time)
            cpu_ti = write_ti(traces, scratch / "real-cpu.ti", compute="cpu")
            rows["(a') the same, computation from CPU time"].append(
                replay(cpu_ti, args.platform).simulated_time
            )
            rows["(b) SMPI run"].append(smpi_time)
            rows["(c) replay of SMPI's own TI trace"].append(control)
            network = write_ti(traces, scratch / "network.ti", speed=0.0)  # no compute actions
            rows["(d) replay of the real run, computation off"].append(
                replay(network, args.platform).simulated_time
            )
            rows["(e) SMPI run, computation off"].append(
                smpi_run(smpi, args.workload, wargs, args.ranks, args.platform, scratch, "off")[0]
            )
            messages.append((ti.messages, replayed.messages, dict(ti.not_replayed)))
    print("| run | seconds, median [min..max] | / (b) | / (e) |")
    print("|---|---|---|---|")
    b = statistics.median(rows["(b) SMPI run"])
    e = statistics.median(rows["(e) SMPI run, computation off"])
    for name, values in rows.items():
        values = [v for v in values if v == v] or [float("nan")]
        print(
            f"| {name} | {spread(values, 4)} | {statistics.median(values) / b:.3f} | "
            f"{statistics.median(values) / e:.3f} |"
        )
    print(
        f"messages in the trace / replayed: {[m[:2] for m in messages]}; "
        f"folded into computation: {messages[0][2]}"
    )
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
