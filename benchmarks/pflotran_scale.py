"""PFLOTRAN 100_100_100 at the seed's scale under SimGrid SMPI: what simulating it costs here
(wall time, CPU time, peak resident memory, per simulated rank-step) on 1-8 (and 11) Dell R815
nodes of 48 cores, folded or not.

    .venv/bin/python benchmarks/pflotran_scale.py [--ranks 384] [--fold on] [--steps 2]
        [--repeats 1] [--platform ib-qdr] [--computation off|model] [--cfg FLAG ...]
        [--raw FILE] [-- extra pflotran options]

Each run is `pflotran --size 100_100_100 --steps N` launched by smpirun directly (the smpi
stack's platform and host files for the platform, `machine = dell-r815`, 48 ranks per node),
with ESM_FOLD=1 when folded (then the Newton and Krylov counts are the program's folded
defaults unless given after `--`). `--computation off` (default) simulates the network alone;
`model` charges each kernel its modelled bytes over the node's bandwidth share
(deterministic). Each run is measured by measured_run.py: peak RSS and CPU are the run's (wait4:
smpirun and every process it starts), wall and CPU this machine's; "simulated" is SimGrid's
clock at the end of the run.
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

RANKS_PER_NODE = 48  # Dell R815: 4 x twelve-core Opteron 6174


def one_run(
    stack,
    ranks: int,
    fold: bool,
    steps: int,
    platform: str,
    computation: str,
    flags: tuple[str, ...],
    extra: list[str],
    workdir: Path,
) -> dict:
    knobs = {"platform": platform, "machine": "dell-r815", "computation": computation}
    setting = knob_setting(stack, knobs, ranks, 2, RANKS_PER_NODE, workdir / "platforms")
    write_files(setting)
    program = [
        str(build_dir(stack) / "apps" / "pflotran" / "pflotran"),
        "--size",
        "100_100_100",
        "--steps",
        str(steps),
        "--stream-mb",
        "0",
        *extra,
    ]
    command = mpirun_command(stack, ranks, program, (*flags, *setting.launcher_args))
    env = run_environment(stack, os.environ) | setting.env | {"TMPDIR": str(workdir)}
    if fold:
        env["ESM_FOLD"] = "1"
    run = measured_run(command, env, workdir, statuses=(0, 2))
    result = run["result"]
    return {
        "ranks": ranks,
        "fold": fold,
        "wall": run["wall"],
        "cpu": run["cpu"],
        "rss_gb": run["rss_gb"],
        "simulated": run["simulated"],
        "rank_grid": result["params"]["rank_grid"],
        "newton": result["newton"]["iterations"],
        "krylov": result["newton"]["linear_iterations"],
        "messages": result["comm"]["messages"],
        "iterations_from": result["params"]["iterations_from"],
        "history": result["params"].get("history", ""),
        "load": run["load_before"],
        "load_after": run["load_after"],
        "flags": list(flags),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ranks", default="384")
    parser.add_argument("--fold", default="on", help="on, off or on,off")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--platform", default="ib-qdr")
    parser.add_argument("--computation", default="off", choices=("off", "model"))
    parser.add_argument("--cfg", action="append", default=[], help="an extra SMPI flag")
    parser.add_argument("--raw", type=Path, help="also write every run's figures here (JSON lines)")
    parser.add_argument("extra", nargs="*", help="pflotran options (after --)")
    args = parser.parse_args()
    stack = discover_stacks().by_id("smpi")
    if stack is None or not (build_dir(stack) / "apps" / "pflotran" / "pflotran").is_file():
        raise SystemExit("the smpi stack is not built: run `esmperf build --stack smpi`")
    folds = [f == "on" for f in args.fold.split(",")]
    runs: dict[tuple[int, bool], list[dict]] = {}
    for _ in range(args.repeats):
        for ranks in map(int, args.ranks.split(",")):
            for fold in folds:
                with tempfile.TemporaryDirectory() as tmp:
                    run = one_run(
                        stack,
                        ranks,
                        fold,
                        args.steps,
                        args.platform,
                        args.computation,
                        tuple(args.cfg),
                        args.extra,
                        Path(tmp),
                    )
                runs.setdefault((ranks, fold), []).append(run)
                print(
                    f"  {ranks} ranks, fold {'on' if fold else 'off'}: {run['wall']:.1f} s, "
                    f"{run['rss_gb']:.2f} GB, load {run['load']:.1f}",
                    file=sys.stderr,
                )
                if args.raw:
                    with args.raw.open("a") as raw:
                        raw.write(json.dumps(run) + "\n")
    print(
        f"pflotran 100_100_100, {args.steps} steps, {args.platform}, computation "
        f"{args.computation}, {RANKS_PER_NODE} ranks per node, extra: "
        f"{' '.join(args.cfg + args.extra) or 'none'}"
    )
    print(
        "| ranks | nodes | rank grid | fold | Newton / Krylov its | wall (s) | CPU (s) | "
        "peak RSS (GB) | simulated (s) | messages | CPU per simulated rank-step (ms) | "
        "load before, after |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (ranks, fold), reps in runs.items():
        first = reps[0]
        print(
            f"| {ranks} | {-(-ranks // RANKS_PER_NODE)} | {first['rank_grid']} | "
            f"{'on' if fold else 'off'} | {first['newton']} / {first['krylov']} | "
            f"{spread([r['wall'] for r in reps])} | {spread([r['cpu'] for r in reps])} | "
            f"{spread([r['rss_gb'] for r in reps], 2)} | {first['simulated']:.6g} | "
            f"{first['messages']} | "
            f"{spread([r['cpu'] / (ranks * args.steps) * 1e3 for r in reps], 2)} | "
            f"{first['load']:.1f}, {first['load_after']:.1f} |"
        )
    for (ranks, fold), reps in runs.items():
        first = reps[0]
        counts = f"{first['iterations_from']}: {first['history']}".rstrip(": ")
        print(f"{ranks} ranks, fold {'on' if fold else 'off'}: counts from {counts}")


if __name__ == "__main__":
    main()
