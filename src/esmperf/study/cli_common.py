"""What the study commands share: the console, the Slurm and store options of the commands
that run a study, and running a study from the command line (or printing its plan with
--dry-run)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from esmperf.errors import EsmperfError
from esmperf.launch import launcher_names
from esmperf.mpi.build import build_dir
from esmperf.mpi.stacks import Stack
from esmperf.slurm.batch import MPI_LAUNCHERS, with_command_line
from esmperf.study.configuration import Study
from esmperf.workloads import load_workloads

if TYPE_CHECKING:
    from esmperf.study.outcome import Outcome

console = Console()
RESULTS = Path("results")


def run_options(parser: argparse.ArgumentParser) -> None:
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
    parser.add_argument(
        "--prune",
        action="store_true",
        help="remove the store's configurations that the study no longer has (an edited "
        "study file resumed; without it they are kept and said)",
    )
    parser.add_argument("--report", action="store_true", help="write the HTML report at the end")
    parser.add_argument(
        "--jobs",
        type=_jobs,
        metavar="N",
        help="simulations (computation = model or off) run N at a time (default: the cores)",
    )
    parser.add_argument(
        "--order-seed",
        type=_order_seed,
        metavar="N",
        help="the seed that shuffles the interleaved rounds of repetitions (default: a new one, "
        "stored with the session; give a stored one to replay its order)",
    )
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


def split_list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def axis(item: str, flag: str) -> tuple[str, list[str]]:
    """A NAME=V1,V2 flag's (name, values), or one error naming the form."""
    name, _, values = item.partition("=")
    if not name.strip() or not split_list(values):
        raise EsmperfError(f"{flag} {item!r}: write NAME=VALUE[,VALUE...]")
    return name.strip(), split_list(values)


def default_stacks(stacks: list[Stack]) -> list[str]:
    """Stacks a study uses when it names none: those built here, else all found."""
    built = [s.id for s in stacks if (build_dir(s) / "prof" / "libesmprof.so").is_file()]
    return built or [s.id for s in stacks] or ["openmpi"]


def run_study_command(
    study: Study, args: argparse.Namespace, stacks: list[Stack], command: str
) -> int:
    from esmperf.study.orchestrate import run_study
    from esmperf.study.plan import plan_study
    from esmperf.study.side_by_side import default_jobs

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
    jobs = getattr(args, "jobs", None) or default_jobs()
    outcome = run_study(
        study,
        store_path,
        stacks,
        workloads,
        console,
        args.retry_failed,
        command,
        slurm=slurm,
        jobs=jobs,
        order_seed=getattr(args, "order_seed", None),
        prune=getattr(args, "prune", False),
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
    _fail_when_nothing_completed(study, outcome)
    return 0


def _order_seed(text: str) -> int:
    """--order-seed: a non-negative integer."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a non-negative integer seed, got {text!r}")
    return int(text)


def _fail_when_nothing_completed(study: Study, outcome: Outcome) -> None:
    """A study none of whose configurations completed (each failed, timed out or was
    skipped) is an error: one line, after the store and the report have kept every reason.
    Configurations still queued elsewhere (Slurm batch jobs) are not counted as either."""
    ended = outcome.failed + outcome.timeout + outcome.skipped
    if outcome.complete or not study.configurations or ended < len(study.configurations):
        return  # something completed, or is still queued
    counts = ", ".join(
        f"{n} {what}"
        for n, what in (
            (outcome.failed, "failed"),
            (outcome.timeout, "timed out"),
            (outcome.skipped, "skipped"),
        )
        if n
    )
    total = len(study.configurations)
    what = (
        f"none of its {total} configurations completed"
        if total > 1
        else "its one configuration did not complete"
    )
    raise EsmperfError(
        f"study {study.name}: {what} ({counts}): the reasons are above and in {outcome.store}"
    )


def _jobs(text: str) -> int:
    """--jobs: a positive number of simulations at once."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected 1 or more simulations at once, got {text!r}")
    return int(text)
