"""The study commands of the `esmperf` CLI: study, run, simulate, report, compare, export,
knobs, workloads. Parsing only; the work is in study/, store/ and report/. Over 400 lines: eight
commands, each its parser and a short handler, read best side by side."""

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from esmperf.errors import EsmperfError
from esmperf.launch import launcher_names
from esmperf.mpi.build import build_dir
from esmperf.mpi.knob_setting import knob_table
from esmperf.mpi.knobs import FOLD_AUTO_RANKS, KNOBS, implementation_of
from esmperf.mpi.machines import machine
from esmperf.mpi.platforms import check_topology, interconnect
from esmperf.mpi.stacks import SMPI, Stack, discover_stacks, library_name
from esmperf.slurm.batch import MPI_LAUNCHERS, with_command_line
from esmperf.study.configuration import Study
from esmperf.study.file import STACK_IDS, load_study, study_from_dict
from esmperf.workloads import load_workloads

console = Console()
RESULTS = Path("results")
REGRESSION_EXIT = 3  # `esmperf compare`: a significant regression beyond the threshold


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
    _run_options(study)
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
        "--size", type=_list, help="sizes, comma-separated (default: the workload's default size)"
    )
    run.add_argument(
        "--ranks",
        type=_list,
        default=["1", "2", "4"],
        help="rank counts, comma-separated (default: 1,2,4)",
    )
    run.add_argument(
        "--stack", type=_list, help="MPI stacks, comma-separated (default: every stack built here)"
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
    _run_options(run)
    run.set_defaults(handler=_run)

    simulate = commands.add_parser(
        "simulate",
        help="run a workload on simulated clusters (SimGrid SMPI): interconnects x node counts",
        description="Run a workload, unmodified, on simulated clusters of the given "
        "interconnects and node counts (SimGrid SMPI, docs/simulate.md): the one-line study "
        "of the smpi stack, with the same statistics, store and report as `esmperf study`. "
        "Times are simulated; computation is each rank's bursts as measured on this machine.",
        epilog="example: esmperf simulate hycom --platform gige,ib-qdr --nodes 1,2,4,8,16",
    )
    simulate.add_argument("workload", help="a workload (see `esmperf workloads`)")
    simulate.add_argument(
        "--platform",
        type=_list,
        default=["gige", "ib-qdr"],
        help="interconnects, comma-separated (default: gige,ib-qdr; see "
        "`esmperf knobs --stack smpi`)",
    )
    simulate.add_argument(
        "--topology",
        type=_list,
        metavar="crossbar,fat-tree-2to1,...",
        help="how the nodes are wired: crossbar (the default), "
        "fat-tree-1to1, fat-tree-2to1, fat-tree-4to1 (leaves of 4 nodes, "
        "B:1 blocking), torus (3-D); comma-separated",
    )
    simulate.add_argument(
        "--nodes",
        type=_list,
        default=["1", "2", "4", "8"],
        help="node counts, comma-separated (default: 1,2,4,8)",
    )
    simulate.add_argument(
        "--ranks",
        type=_list,
        metavar="504,2442",
        help="rank counts instead of --nodes: each on ceil(ranks / "
        "ranks-per-node) nodes, the last one partly filled (the seeds' 504 "
        "cores on 48-core nodes)",
    )
    simulate.add_argument(
        "--ranks-per-node",
        type=int,
        default=1,
        metavar="N",
        help="ranks (cores used) per node (default 1)",
    )
    simulate.add_argument(
        "--size", type=_list, help="sizes, comma-separated (default: the workload's default size)"
    )
    simulate.add_argument("--steps", type=int, help="time steps (the workload's --steps)")
    simulate.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=V1,V2",
        help="a workload option axis, e.g. halo=persistent,isend",
    )
    simulate.add_argument(
        "--computation",
        type=_list,
        metavar="measured,off,model",
        help="charge the measured compute bursts (measured, the default), "
        "none (off: network only, deterministic) or each kernel's bytes over "
        "its node's bandwidth share (model: deterministic, needs --machine)",
    )
    simulate.add_argument(
        "--machine",
        type=_list,
        metavar="dell-m610,dell-r815,juropa",
        help="the simulated node (default none: a core of this machine per "
        "rank): its memory bandwidth shared by the ranks on it and its core "
        "speed (`esmperf knobs --stack smpi`)",
    )
    simulate.add_argument(
        "--fold",
        type=_list,
        metavar="auto,on,off",
        help="folded simulation for runs at scale (default auto: on from "
        f"{FOLD_AUTO_RANKS} ranks for the workloads that fold)",
    )
    simulate.add_argument(
        "--network-model",
        type=_list,
        metavar="cm02,smpi",
        help="SimGrid network model (default cm02: latency + n/bandwidth)",
    )
    simulate.add_argument(
        "--profile",
        action="store_true",
        help="profile one run per configuration (simulated times, the "
        "profiler linked into the workload)",
    )
    simulate.add_argument(
        "--repeats",
        type=int,
        default=3,
        metavar="N",
        help="measured repetitions per configuration (default 3)",
    )
    simulate.add_argument("--timeout", type=float, default=600, help="seconds per run (600)")
    _run_options(simulate)
    simulate.add_argument(
        "--dry-run",
        action="store_true",
        help="print the configurations and their smpirun commands; run nothing",
    )
    simulate.set_defaults(handler=_simulate)

    report = commands.add_parser(
        "report",
        help="write the HTML report (figures and findings) of a study store",
        epilog="example: esmperf report results/demo.duckdb",
    )
    report.add_argument("store", type=Path, help="the study's .duckdb file")
    report.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="directory for index.html and figures/ (default: beside the store, <store>/report)",
    )
    report.set_defaults(handler=_report)

    compare = commands.add_parser(
        "compare",
        help="what changed between two study stores, with statistics",
        description="For every configuration in both stores: the change of the median with "
        "its CI and a Mann-Whitney test. Exit status 3 when a change is a significant "
        "regression beyond the threshold (usable in CI), 0 otherwise.",
        epilog="example: esmperf compare before.duckdb after.duckdb --threshold 5",
    )
    compare.add_argument("before", type=Path, help="the reference store (A)")
    compare.add_argument("after", type=Path, help="the store to judge (B)")
    compare.add_argument(
        "--threshold",
        type=float,
        default=5.0,
        metavar="PERCENT",
        help="smallest worsening that counts as a regression (default 5 %%)",
    )
    compare.add_argument(
        "--alpha", type=float, default=0.05, help="significance level of the test (default 0.05)"
    )
    compare.add_argument("--json", action="store_true", help="print the comparison as JSON")
    compare.set_defaults(handler=_compare)

    export = commands.add_parser("export", help="write every table of a store as Parquet or CSV")
    export.add_argument("store", type=Path, help="the study's .duckdb file")
    export.add_argument("--format", choices=("parquet", "csv"), default="parquet")
    export.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="directory (default: beside the store, <store>/export)",
    )
    export.set_defaults(handler=_export)

    knobs = commands.add_parser("knobs", help="the knobs and what implements them on each stack")
    knobs.add_argument("--stack", metavar="ID", help="only this stack")
    knobs.set_defaults(handler=_knobs)

    workloads = commands.add_parser("workloads", help="the workloads and where they are built")
    workloads.set_defaults(handler=_workloads)


def _run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DB",
        help="the study store (default: results/<study name>.duckdb)",
    )
    parser.add_argument(
        "--retry-failed",
        action="store_true",
        help="run configurations that failed or timed out before again",
    )
    parser.add_argument("--report", action="store_true", help="write the HTML report at the end")
    slurm = parser.add_argument_group("Slurm (docs/slurm.md; default: the study's [slurm] table)")
    slurm.add_argument(
        "--launcher",
        choices=launcher_names(),
        help="local: mpirun on this machine (default); srun: inside this Slurm "
        "allocation; slurm: submit every configuration as batch jobs",
    )
    for name, what in (
        ("partition", "partition"),
        ("account", "account to charge"),
        ("qos", "quality of service"),
        ("constraint", "node features"),
    ):
        slurm.add_argument(f"--{name}", help=f"sbatch --{name}: the {what}")
    slurm.add_argument(
        "--mpi-launcher",
        choices=MPI_LAUNCHERS,
        help="in a batch job: the stack's mpirun (default) or srun",
    )
    slurm.add_argument(
        "--srun-mpi",
        metavar="PLUGIN",
        help="srun --mpi=PLUGIN when srun starts the ranks (default: pmix for "
        "Open MPI, pmi2 for MPICH when this Slurm has them; srun --mpi=list)",
    )


def _list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def default_stacks(stacks: list[Stack]) -> list[str]:
    """Stacks a study uses when it names none: those built here, else all found."""
    built = [s.id for s in stacks if (build_dir(s) / "prof" / "libesmprof.so").is_file()]
    return built or [s.id for s in stacks] or ["openmpi"]


def _study(args: argparse.Namespace) -> int:
    stacks = discover_stacks().stacks
    study = load_study(args.file, default_stacks(stacks))
    return _run_study(study, args, stacks, " ".join(["esmperf", *sys.argv[1:]]))


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
            axis, _, values = item.partition("=")
            if not axis or not values:
                raise EsmperfError(f"--{group[:-1]} {item!r}: write NAME=VALUE[,VALUE...]")
            block.setdefault(group, {})[axis.strip()] = _list(values)
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
    return _run_study(study, args, stacks, command)


def _simulate(args: argparse.Namespace) -> int:
    nodes = [_positive(text, "--nodes", "node counts", "1,2,4,8") for text in args.nodes]
    if not nodes:
        raise EsmperfError("--nodes is empty: give node counts, e.g. --nodes 1,2,4,8")
    ranks = [count * args.ranks_per_node for count in nodes]
    if args.ranks:
        ranks = [_positive(text, "--ranks", "rank counts", "48,96,504") for text in args.ranks]
    if args.ranks_per_node < 1:
        raise EsmperfError(
            f"--ranks-per-node {args.ranks_per_node}: give 1 or more ranks per "
            "node, e.g. --ranks-per-node 2"
        )
    if args.repeats < 1:
        raise EsmperfError(f"--repeats {args.repeats}: give 1 or more repetitions")
    for name in args.platform:
        interconnect(name)  # one clear error for an unknown platform
    for name in args.topology or []:
        check_topology(name)
    stacks = discover_stacks().stacks
    if not any(stack.simulated for stack in stacks):
        raise EsmperfError(
            "SimGrid SMPI is not installed here (no smpicc and smpirun on PATH): "
            "`make setup` installs Debian's libsimgrid-dev (as root), or put "
            "SimGrid's bin directory on PATH; then `esmperf build --stack smpi`"
        )
    knobs: dict[str, list[str]] = {"platform": args.platform}
    if args.computation:
        knobs["computation"] = args.computation
    if args.topology:
        knobs["topology"] = args.topology
    if args.network_model:
        knobs["network_model"] = args.network_model
    for name in args.machine or []:
        if name != "none":
            machine(name)  # one clear error for an unknown machine
    if args.machine:
        knobs["machine"] = args.machine
    if args.fold:
        knobs["fold"] = args.fold
    block: dict[str, Any] = {
        "workload": args.workload,
        "stack": [SMPI],
        "knobs": knobs,
        "ranks": ranks,
        "ranks_per_node": args.ranks_per_node,
        "repeats": {"warmup": 0, "min": args.repeats, "max": args.repeats},
        "timeout": args.timeout,
        "profile": args.profile,
    }
    if args.size:
        block["size"] = args.size
    if args.steps is not None:
        block["steps"] = args.steps
    for item in args.option:
        axis, _, values = item.partition("=")
        if not axis or not values:
            raise EsmperfError(f"--option {item!r}: write NAME=VALUE[,VALUE...]")
        block.setdefault("options", {})[axis.strip()] = _list(values)
    command = " ".join(["esmperf", *sys.argv[1:]])
    data = {
        "name": f"simulate-{args.workload}",
        "title": f"esmperf simulate {args.workload}: {', '.join(args.platform)}"
        f"{' (' + ', '.join(args.topology) + ')' if args.topology else ''} on "
        + (
            f"{', '.join(map(str, ranks))} ranks, {args.ranks_per_node} per node"
            if args.ranks
            else f"{', '.join(map(str, nodes))} nodes x {args.ranks_per_node} ranks"
        ),
        "matrix": [block],
    }
    study = study_from_dict(data, "the command line", command, [SMPI])
    return _run_study(study, args, stacks, command)


def _positive(text: str, flag: str, what: str, example: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise EsmperfError(f"{flag} {text!r}: {what} are positive integers, e.g. {flag} {example}")
    return value


def _int(text: str, flag: str) -> int | str:
    try:
        return int(text)
    except ValueError:
        return text  # the study check names the bad value


def _run_study(study: Study, args: argparse.Namespace, stacks: list[Stack], command: str) -> int:
    from esmperf.study.orchestrate import run_study
    from esmperf.study.plan import plan_study

    store_path = args.out or RESULTS / f"{study.name}.duckdb"
    workloads = load_workloads()
    slurm = with_command_line(
        study.slurm,
        launcher=args.launcher,
        partition=args.partition,
        account=args.account,
        qos=args.qos,
        constraint=args.constraint,
        mpi_launcher=args.mpi_launcher,
        srun_mpi=args.srun_mpi,
    )
    if getattr(args, "dry_run", False):
        for note in study.notes:
            console.print(f"[yellow]note:[/] {escape(note)}")
        plan = plan_study(study, stacks, workloads, store_path, slurm=slurm)
        table = Table(title=f"{study.name}: {len(plan)} configurations", title_justify="left")
        for column in ("#", "configuration", "runs as / skipped because"):
            table.add_column(column, overflow="fold")
        for planned in plan:
            what = (
                f"[yellow]skip:[/] {escape(planned.skip_reason)}"
                if planned.skip_reason
                else escape(" ".join(planned.argv))
            )
            table.add_row(str(planned.position + 1), escape(planned.config.label), what)
        console.print(table)
        return 0
    console.print(
        f"[bold]esmperf:[/] study {escape(study.name)}: "
        f"{len(study.configurations)} configurations -> {escape(str(store_path))}"
    )
    outcome = run_study(
        study, store_path, stacks, workloads, console, args.retry_failed, command, slurm=slurm
    )
    console.print(
        f"[bold]study {escape(study.name)}:[/] {outcome.complete} complete, {outcome.failed} "
        f"failed, {outcome.timeout} timed out, {outcome.skipped} skipped; "
        f"{outcome.repetitions} runs this time"
        + (
            f" ({outcome.killed_after_result} killed after their verified result, counted)"
            if outcome.killed_after_result
            else ""
        )
        + f". Store: {escape(str(store_path))}"
    )
    if args.report:
        from esmperf.report.html import write_report

        path = write_report(store_path)
        console.print(f"[bold]report:[/] {escape(str(path))}")
    else:
        console.print(f"report: esmperf report {escape(str(store_path))}")
    return 0


def _report(args: argparse.Namespace) -> int:
    from esmperf.report.html import write_report

    path = write_report(args.store, args.out)
    console.print(f"[bold]report:[/] {escape(str(path))}")
    return 0


def _compare(args: argparse.Namespace) -> int:
    from esmperf.report.compare import compare_stores, render_comparison

    if args.threshold < 0 or not 0 < args.alpha < 1:
        raise EsmperfError("--threshold must be >= 0 (percent) and --alpha between 0 and 1")
    comparison = compare_stores(args.before, args.after, args.threshold / 100, args.alpha)
    if args.json:
        print(json.dumps(comparison.as_dict(), indent=2))
    else:
        render_comparison(comparison, console)
    return REGRESSION_EXIT if comparison.regressions else 0


def _export(args: argparse.Namespace) -> int:
    from esmperf.store.database import Store

    out = args.out or args.store.with_suffix("") / "export"
    with Store(args.store, read_only=True) as store:
        written = store.export(out, args.format)
    console.print(f"exported {len(written)} tables to {escape(str(out))}/")
    return 0


def _knobs(args: argparse.Namespace) -> int:
    stacks = discover_stacks().stacks
    if args.stack:
        stacks = [s for s in stacks if s.id == args.stack]
        if not stacks:
            raise EsmperfError(f"unknown MPI stack {args.stack!r} (see `esmperf stacks`)")
    for knob in KNOBS.values():
        console.print(
            f"[bold]{knob.name}[/] ({escape(knob.analog)}): {escape(knob.description)}; "
            f"baseline {knob.baseline}",
            highlight=False,
        )
    for stack in stacks:
        table = Table(
            title=f"{stack.id}: {library_name(stack.version)} ({implementation_of(stack).name})",
            title_justify="left",
        )
        for column in ("knob", "value", "implemented by"):
            table.add_column(column, overflow="fold")
        for name, value, how in knob_table(stack):
            table.add_row(name, value, escape(how))
        console.print(table)
    if not stacks:
        console.print(f"no MPI stack found (stack ids: {', '.join(STACK_IDS)})")
    return 0


def _workloads(args: argparse.Namespace) -> int:
    workloads = load_workloads()
    stacks = discover_stacks().stacks
    if not workloads:
        console.print(
            "no workloads yet: none of native/apps/*/workload.toml exists "
            "(docs/workloads.md says how to add one)"
        )
        return 0
    table = Table(title="workloads", title_justify="left")
    for column in ("name", "sizes", "figure of merit", "options", "built for"):
        table.add_column(column, overflow="fold")
    for workload in workloads.values():
        built = [s.id for s in stacks if workload.is_built(s.id)]
        direction = "higher" if workload.higher_is_better else "lower"
        options = "; ".join(f"{k}: {', '.join(map(str, v))}" for k, v in workload.options.items())
        table.add_row(
            workload.name,
            ", ".join(workload.sizes),
            f"{workload.fom_unit} ({direction} is better)",
            escape(options),
            ", ".join(built) or "[yellow]not built: make build[/]",
        )
    console.print(table)
    return 0
