"""The study commands of the `esmperf` CLI: study, run, simulate (cli_simulate.py), predict
(cli_predict.py), report,
compare, export (cli_results.py), knobs and workloads (cli_catalog.py). Parsing only; the work
is in study/, store/ and report/. This module registers them all and holds `study` and `run`;
what they share is cli_common.py."""

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from esmperf.errors import EsmperfError
from esmperf.mpi.stacks import discover_stacks
from esmperf.study.cli_catalog import add_catalog_commands
from esmperf.study.cli_common import (
    axis,
    default_stacks,
    run_options,
    run_study_command,
    split_list,
)
from esmperf.study.cli_predict import add_predict_command
from esmperf.study.cli_results import add_results_commands
from esmperf.study.cli_simulate import add_simulate_command
from esmperf.study.file import load_study, study_from_dict


def add_commands(commands: Any) -> None:
    study = commands.add_parser(
        "study",
        help="run a study file (a matrix of runs), resumably, into a DuckDB store",
        description="Run every configuration of a study file: warm-up, repetitions until the "
        "CI of the median is narrow enough, profiles; each repetition is committed as it ends, "
        "so running the same command again resumes where it stopped.",
        epilog="example: esmperf study studies/demo.toml --report",
    )
    study.add_argument("file", type=Path, help="the study file (.toml, see docs/studies.md)")
    run_options(study)
    study.add_argument(
        "--dry-run",
        action="store_true",
        help="print the configurations (and what would be skipped); run nothing",
    )
    study.set_defaults(handler=_study)

    run = commands.add_parser(
        "run",
        help="the one-line study: one workload or command over ranks, stacks, knobs",
        description="Measure one workload (or any command) over sizes, rank counts, MPI "
        "stacks and knobs, with the same statistics and store as `esmperf study`.",
        epilog="examples: esmperf run hycom --size S --ranks 1,2,4 --stack openmpi,mpich "
        "--profile\n  esmperf run --command '{build}/tests/prof_test_c {scratch}' --ranks 4 "
        "--knob transport=shm,tcp",
    )
    run.add_argument("workload", nargs="?", help="a workload (see `esmperf workloads`)")
    run.add_argument(
        "--command",
        help="instead of a workload: a command line (placeholders "
        "{build}, {scratch}, {ranks}, {size}, {stack}, {mpirun})",
    )
    run.add_argument("--name", help="name of the command (default: its program's name)")
    run.add_argument(
        "--fom-regex",
        help="regex whose group 1 is the command's figure of merit (default: the elapsed time)",
    )
    run.add_argument("--fom-unit", default="", help="unit of the --fom-regex value")
    run.add_argument(
        "--lower-is-better",
        action="store_true",
        help="the --fom-regex value is a time or cost (default: higher is better)",
    )
    run.add_argument(
        "--no-launcher",
        action="store_true",
        help="run the command as given, not under the stack's mpirun",
    )
    run.add_argument(
        "--size",
        type=split_list,
        help="sizes, comma-separated (default: the workload's default size)",
    )
    run.add_argument(
        "--ranks",
        type=split_list,
        default=["1", "2", "4"],
        help="rank counts, comma-separated (default: 1,2,4)",
    )
    run.add_argument(
        "--stack",
        type=split_list,
        help="MPI stacks, comma-separated (default: every stack built here)",
    )
    run.add_argument("--steps", type=int, help="time steps (the workload's --steps)")
    run.add_argument(
        "--knob",
        action="append",
        default=[],
        metavar="NAME=V1,V2",
        help="a knob axis, e.g. transport=shm,tcp (see `esmperf knobs`)",
    )
    run.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=V1,V2",
        help="a workload option axis, e.g. solver=pcg,chrongear",
    )
    run.add_argument("--profile", action="store_true", help="profile one run per configuration")
    run.add_argument("--repeats", type=int, metavar="N", help="exactly N measured repetitions")
    run.add_argument("--min", type=int, default=3, help="fewest repetitions (default 3)")
    run.add_argument("--max", type=int, default=10, help="most repetitions (default 10)")
    run.add_argument(
        "--ci-width",
        type=float,
        default=0.05,
        help="stop when the 95%% CI of the median is this fraction of it (0.05)",
    )
    run.add_argument("--warmup", type=int, default=1, help="warm-up runs (default 1)")
    run.add_argument("--timeout", type=float, default=600, help="seconds per run (600)")
    run_options(run)
    run.set_defaults(handler=_run)
    add_simulate_command(commands)
    add_results_commands(commands)
    add_predict_command(commands)
    add_catalog_commands(commands)


def _study(args: argparse.Namespace) -> int:
    stacks = discover_stacks().stacks
    study = load_study(args.file, default_stacks(stacks))
    return run_study_command(study, args, stacks, " ".join(["esmperf", *sys.argv[1:]]))


def _run(args: argparse.Namespace) -> int:
    if bool(args.workload) == bool(args.command):
        raise EsmperfError(
            "give a workload (esmperf run pop ...) or --command '...', "
            "not both or neither (see `esmperf workloads`)"
        )
    block: dict[str, Any] = {"ranks": [_int(r, "--ranks") for r in args.ranks]}
    if args.workload:
        block["workload"] = args.workload
        name = f"run-{args.workload}"
    else:
        block["command"] = args.command
        try:
            program = Path(shlex.split(args.command)[0]).name
        except (ValueError, IndexError):
            raise EsmperfError(f"cannot read --command {args.command!r}") from None
        block["name"] = args.name or program.replace("{", "").replace("}", "") or "command"
        block["launcher"] = not args.no_launcher
        if args.fom_regex:
            block["fom"] = {
                "regex": args.fom_regex,
                "unit": args.fom_unit,
                "higher_is_better": not args.lower_is_better,
            }
        name = f"run-{block['name']}"
    if args.size:
        block["size"] = args.size
    if args.stack:
        block["stack"] = args.stack
    if args.steps is not None:
        block["steps"] = args.steps
    for flag, group in ((args.knob, "knobs"), (args.option, "options")):
        for item in flag:
            name, values = axis(item, f"--{group[:-1]}")
            block.setdefault(group, {})[name] = values
    repeats = (
        {"min": args.repeats, "max": args.repeats}
        if args.repeats
        else {"min": args.min, "max": max(args.max, args.min)}
    )
    block["repeats"] = {**repeats, "ci_width": args.ci_width, "warmup": args.warmup}
    block["timeout"] = args.timeout
    block["profile"] = args.profile
    stacks = discover_stacks().stacks
    command = " ".join(["esmperf", *sys.argv[1:]])
    data = {
        "name": name,
        "title": f"esmperf run {args.workload or block['name']}",
        "matrix": [block],
    }
    study = study_from_dict(data, "the command line", command, default_stacks(stacks))
    return run_study_command(study, args, stacks, command)


def _int(text: str, flag: str) -> int | str:
    try:
        return int(text)
    except ValueError:
        return text  # the study check names the bad value
