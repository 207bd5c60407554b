"""HOMME ne120 at the seed's scale under SimGrid SMPI: what simulating it costs here (wall time,
CPU time, peak resident memory) at 1,024, 4,096 and 13,824 simulated ranks on JUROPA nodes of 8
cores (IB QDR), folded or not, and with which simulator settings.

    .venv/bin/python benchmarks/homme_scale.py [--ranks 1024,4096,13824] [--fold on,off]
        [--steps 2] [--repeats 1] [--computation off|model] [--cfg FLAG ...] [--raw FILE]

Each run is `homme --size ne120 --steps N --stream 0` launched by smpirun directly (the smpi
stack's platform and host files for `platform = ib-qdr`, `machine = juropa`, 8 ranks per node),
with ESM_FOLD=1 when folded. `--computation off` (default) simulates the network alone;
`model` charges each kernel its modelled bytes over the node's bandwidth share (deterministic).
The simulator flags default to the ones measured best here (docs/homme.md, "Simulating at
scale"); `--cfg` replaces them. Each run is measured by measured_run.py: peak RSS and CPU are the
run's (wait4: smpirun and every process it starts), wall and CPU this machine's, "simulated"
SimGrid's clock at the end of the run.
"""

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from esmperf.launch.mpirun import mpirun_command, run_environment  # noqa: E402
from esmperf.mpi.build import build_dir  # noqa: E402
from esmperf.mpi.knob_setting import knob_setting, write_files  # noqa: E402
from esmperf.mpi.stacks import discover_stacks  # noqa: E402
from measured_run import measured_run  # noqa: E402
from median_spread import spread  # noqa: E402

RANKS_PER_NODE = 8  # JUROPA: 2 x quad-core Nehalem
# Measured at 1,024 ranks (docs/homme.md): small sends not detached (SimGrid removes finished
# detached sends from a list by a linear scan: quadratic in the messages in flight), each rank's
# data segment switched by mmap (not a dlopen'd copy of the binary per rank), events less than
# 10 ns apart handled together (simulated time -0.02 %, half the CPU time).
BEST_FLAGS = (
    "--cfg=smpi/send-is-detached-thresh:0",
    "--cfg=smpi/privatization:mmap",
    "--cfg=surf/precision:1e-8",
)


def one_run(
    stack,
    ranks: int,
    fold: bool,
    steps: int,
    computation: str,
    flags: tuple[str, ...],
    workdir: Path,
) -> dict:
    knobs = {"platform": "ib-qdr", "machine": "juropa", "computation": computation}
    setting = knob_setting(stack, knobs, ranks, 2, RANKS_PER_NODE, workdir / "platforms")
    write_files(setting)
    program = [
        str(build_dir(stack) / "apps" / "homme" / "homme"),
        "--size",
        "ne120",
        "--steps",
        str(steps),
        "--stream",
        "0",
    ]
    command = mpirun_command(stack, ranks, program, (*flags, *setting.launcher_args))
    env = run_environment(stack, os.environ) | setting.env | {"TMPDIR": str(workdir)}
    if fold:
        env["ESM_FOLD"] = "1"
    run = measured_run(command, env, workdir)
    result = run["result"]
    return {
        "ranks": ranks,
        "fold": fold,
        "wall": run["wall"],
        "cpu": run["cpu"],
        "rss_gb": run["rss_gb"],
        "simulated": run["simulated"],
        "messages": result["comm"]["messages"],
        "load": run["load_after"],
        "flags": list(flags),
        "result": result,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ranks", default="1024,4096,13824")
    parser.add_argument("--fold", default="on", help="on, off or on,off")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--computation", default="off", choices=("off", "model"))
    parser.add_argument("--cfg", action="append", help="SMPI flag (replaces the defaults)")
    parser.add_argument("--raw", type=Path, help="also write every run's figures here (JSON lines)")
    args = parser.parse_args()
    stack = discover_stacks().by_id("smpi")
    if stack is None or not (build_dir(stack) / "apps" / "homme" / "homme").is_file():
        raise SystemExit("the smpi stack is not built: run `esmperf build --stack smpi`")
    flags = tuple(args.cfg) if args.cfg else BEST_FLAGS
    folds = [f == "on" for f in args.fold.split(",")]
    runs: dict[tuple[int, bool], list[dict]] = {}
    for _ in range(args.repeats):
        for ranks in map(int, args.ranks.split(",")):
            for fold in folds:
                with tempfile.TemporaryDirectory() as tmp:
                    run = one_run(
                        stack, ranks, fold, args.steps, args.computation, flags, Path(tmp)
                    )
                runs.setdefault((ranks, fold), []).append(run)
                print(
                    f"  {ranks} ranks, fold {'on' if fold else 'off'}: {run['wall']:.1f} s, "
                    f"{run['rss_gb']:.2f} GB, load {run['load']:.1f}",
                    file=sys.stderr,
                )
                if args.raw:
                    with args.raw.open("a") as raw:
                        raw.write(
                            json.dumps({k: v for k, v in run.items() if k != "result"}) + "\n"
                        )
    print(
        f"homme ne120, {args.steps} steps, computation {args.computation}, "
        f"{RANKS_PER_NODE} ranks per node, flags: {' '.join(flags)}"
    )
    print(
        "| ranks | nodes | fold | wall (s) | CPU (s) | peak RSS (GB) | simulated (s) | "
        "messages | wall per simulated rank-step (ms) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for (ranks, fold), reps in runs.items():
        walls = [r["wall"] for r in reps]
        print(
            f"| {ranks} | {ranks // RANKS_PER_NODE} | {'on' if fold else 'off'} | "
            f"{spread(walls)} | {spread([r['cpu'] for r in reps])} | "
            f"{spread([r['rss_gb'] for r in reps], 2)} | {reps[0]['simulated']:.6g} | "
            f"{reps[0]['messages']} | "
            f"{spread([w / (ranks * args.steps) * 1e3 for w in walls], 2)} |"
        )


if __name__ == "__main__":
    main()
