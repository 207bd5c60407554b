"""The commands that say what is here: `esmperf knobs` (the knobs and what implements them on
each stack) and `esmperf workloads` (the workloads and where they are built)."""

import argparse
from typing import Any

from rich.markup import escape
from rich.table import Table

from esmperf.errors import EsmperfError
from esmperf.mpi.knob_setting import knob_table
from esmperf.mpi.knobs import KNOBS, implementation_of
from esmperf.mpi.stacks import discover_stacks, library_name
from esmperf.study.cli_common import console
from esmperf.study.matrix import STACK_IDS
from esmperf.workloads import load_workloads


def add_catalog_commands(commands: Any) -> None:
    knobs = commands.add_parser("knobs", help="the knobs and what implements them on each stack")
    knobs.add_argument("--stack", metavar="ID", help="only this stack")
    knobs.set_defaults(handler=_knobs)

    workloads = commands.add_parser("workloads", help="the workloads and where they are built")
    workloads.set_defaults(handler=_workloads)


def _knobs(args: argparse.Namespace) -> int:
    stacks = discover_stacks().stacks
    if args.stack:
        stacks = [s for s in stacks if s.id == args.stack]
        if not stacks:
            raise EsmperfError(f"unknown MPI stack {args.stack!r} (see `esmperf stacks`)")
    for knob in KNOBS.values():
        console.print(
            f"[bold]{knob.name}[/]{f' ({escape(knob.analog)})' if knob.analog else ''}: "
            f"{escape(knob.description)}; "
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
