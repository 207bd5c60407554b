"""The commands that read a study store: `esmperf report` (the HTML report), `compare` (what
changed between two stores) and `export` (every table as Parquet or CSV; the profiles as
Caliper JSON for Hatchet and Thicket, the traces as OTF2)."""

import argparse
import json
from pathlib import Path
from typing import Any

from rich.markup import escape

from esmperf.errors import EsmperfError
from esmperf.study.cli_common import console

EXPORT_FORMATS = ("parquet", "csv", "caliper", "otf2")
REGRESSION_EXIT = 3  # `esmperf compare`: a significant regression beyond the threshold


def add_results_commands(commands: Any) -> None:
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

    export = commands.add_parser(
        "export",
        help="write a store's tables (Parquet, CSV), profiles (Caliper JSON) or traces (OTF2)",
        description="parquet, csv: every table, one file each. caliper: one Caliper JSON "
        "(json-split) file per profiled repetition, with the run's metadata under Adiak's names, "
        "for Hatchet and Thicket (Thicket.from_caliper). otf2: one OTF2 archive per traced "
        "repetition (ESMPROF_TRACE=1 in the study's env), for Vampir, Scalasca, otf2-print.",
        epilog="example: esmperf export results/demo.duckdb --format caliper",
    )
    export.add_argument("store", type=Path, help="the study's .duckdb file")
    export.add_argument("--format", choices=EXPORT_FORMATS, default="parquet")
    export.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="directory (default: beside the store, <store>/export for tables, "
        "<store>/caliper, <store>/otf2)",
    )
    export.set_defaults(handler=_export)


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

    # the tables in <store>/export/, the profiles and traces each in a folder of their own
    # (Thicket.from_caliper reads every file of the folder it is given)
    folder = "export" if args.format in ("parquet", "csv") else args.format
    out = args.out or args.store.with_suffix("") / folder
    with Store(args.store, read_only=True) as store:
        if args.format == "caliper":
            from esmperf.store.export_caliper import export_caliper

            written = export_caliper(store, out)
            what = "profiles as Caliper JSON (Thicket.from_caliper reads them)"
        elif args.format == "otf2":
            from esmperf.store.export_otf2 import export_store_traces

            written = export_store_traces(store, out)
            what = "traces as OTF2 archives"
        else:
            written = store.export(out, args.format)
            what = "tables"
    console.print(f"exported {len(written)} {what} to {escape(str(out))}/")
    return 0
