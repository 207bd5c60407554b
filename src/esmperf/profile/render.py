"""Terminal rendering with rich: the profile summary (the MPI stacks: mpi/stacks_table.py)."""

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from esmperf.mpi.stacks import library_name
from esmperf.profile.groups import rank_ranges
from esmperf.profile.regions import PROBLEM_TEXT, TIMED
from esmperf.profile.summary import UNITS

TOP = 10  # rows shown in each "top" table; `esmperf show --json` has them all


def format_bytes(size: float) -> str:
    for unit_size, unit in UNITS:
        if size >= unit_size:
            return f"{size / unit_size:.1f} {unit}"
    return f"{size:.0f} B"


def format_seconds(seconds: float) -> str:
    if seconds == 0:
        return "0 s"
    if seconds >= 1:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds * 1e6:.3f} us"


def render_summary(summary: dict[str, Any], console: Console) -> None:
    console.print(f"[bold]esmperf profile[/] {escape(summary['file'])}")
    if summary.get("partial"):
        console.print(
            f"[bold yellow]partial profile:[/] {escape(_partial_text(summary['partial']))}"
        )
    console.print(_overview(summary))
    console.print()
    if len(summary.get("programs") or []) > 1:
        console.print(_programs(summary))
    if summary.get("regions"):
        console.print(_regions(summary))
    console.print(_calls_by_time(summary))
    console.print(_calls_by_count(summary))
    if summary["message_sizes"]:
        console.print(_message_sizes(summary))
    if summary["communicators"]:
        console.print(_communicators(summary))
    if summary.get("files"):
        console.print(_files(summary))
    if summary.get("callsites"):
        console.print(_callsites(summary))
    if summary["fortran_warning"]:
        console.print(f"[bold yellow]warning:[/] {escape(summary['fortran_warning'])}")
    if summary.get("unwrapped_communicating"):
        names = ", ".join(summary["unwrapped_communicating"])
        console.print(
            f"[bold yellow]not counted:[/] the MPI library exports calls that communicate "
            f"and the profiler does not wrap: {escape(names)}"
        )
    for problem in summary.get("region_problems") or []:
        console.print(f"[bold yellow]regions:[/] {escape(_problem_text(problem))}")
    spawn = summary.get("spawn") or {}
    if spawn.get("parent"):
        console.print(f"[bold]spawned by[/] the job profiled in {escape(spawn['parent'])}")
    if spawn.get("children"):
        console.print(f"[bold]spawned jobs' profiles:[/] {escape(', '.join(spawn['children']))}")


PARTIAL_REASON_TEXT = {
    "finalize": "in MPI_Finalize, after waiting there for the other ranks",
    "snapshot": "at their last snapshot",
    "requested": "when esmperf asked",
    "exit": "when they exited without MPI_Finalize",
}


def _partial_text(partial: dict[str, Any]) -> str:
    parts = [
        f"ranks {_ranks(ranks)} wrote what they had "
        f"{PARTIAL_REASON_TEXT.get(reason, f'at {reason}')}"
        for reason, ranks in partial["reasons"].items()
    ]
    if partial["missing"]:
        parts.append(f"ranks {_ranks(partial['missing'])} wrote nothing")
    in_calls = partial.get("in_call") or []
    if in_calls:
        shown = [
            f"rank {call['rank']} in {call['function']} for {format_seconds(call['seconds'])}"
            for call in in_calls[:TOP]
        ]
        more = f" and {len(in_calls) - TOP} more" if len(in_calls) > TOP else ""
        parts.append("in MPI when they wrote (counted as MPI time): " + ", ".join(shown) + more)
    return "the run did not reach MPI_Finalize; " + "; ".join(parts)


def _ranks(ranks: list[int]) -> str:
    shown = ", ".join(map(str, ranks[:8]))
    return shown + (" ..." if len(ranks) > 8 else "")


def _files(summary: dict[str, Any]) -> Table:
    table = _table(
        "Top files by bytes (POSIX and stdio, outside MPI)",
        "file",
        "written",
        "read",
        "of which stdio",
        "calls",
        "time",
        "ranks",
    )
    for row in summary["files"][:TOP]:
        table.add_row(
            escape(row["name"]),
            format_bytes(row["write_bytes"]),
            format_bytes(row["read_bytes"]),
            format_bytes(row["stdio_bytes"]),
            str(row["calls"]),
            format_seconds(row["time"]),
            str(row["ranks"]),
        )
    return table


def _callsites(summary: dict[str, Any]) -> Table:
    table = _table(
        "Top call sites by MPI time (innermost first)",
        "function",
        "call site",
        "time",
        "calls",
        "bytes",
        "ranks",
    )
    for row in summary["callsites"][:TOP]:
        table.add_row(
            row["function"],
            escape(" < ".join(row["stack"])),
            format_seconds(row["time"]),
            str(row["calls"]),
            format_bytes(row["sent"] + row["recv"]),
            str(row["ranks"]),
        )
    return table


def _overview(summary: dict[str, Any]) -> Table:
    per_rank, io = summary["bytes_per_rank"], summary["io"]
    overhead = summary["profiler_overhead"]
    imbalance = summary["mpi_time_imbalance"]
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    rows = {
        "command": escape(summary["command"])
        + (
            f" (rank 0's; {len(summary['programs'])} programs, below)"
            if len(summary.get("programs") or []) > 1
            else ""
        ),
        "shown": _shown(summary),
        "ranks": f"{summary['ranks']} on {summary['hosts']} host(s)",
        "MPI library": escape(library_name(summary["mpi_library"])),
        "wall time": f"{format_seconds(summary['wall_time'])} (longest rank)",
        "% MPI": f"{summary['mpi_percent']:.2f} % of wall time (all ranks)",
        "MPI time imbalance": f"{imbalance:.2f} (max / mean)" if imbalance else "-",
        "parallel efficiency": _efficiency_text(summary.get("efficiency")),
        "receive wait": _receive_wait_text(summary["receive_wait"]),
        "late sender": _late_sender_text(summary.get("late_sender")),
        "bytes per rank": (
            f"min {format_bytes(per_rank['min'])} (rank {per_rank['min_rank']}), "
            f"median {format_bytes(per_rank['median'])}, "
            f"max {format_bytes(per_rank['max'])} (rank {per_rank['max_rank']})"
        ),
        "aggregated transfer": f"{format_bytes(summary['transfer']['sent'])} sent by all ranks",
        "POSIX write": _io_total(io["posix_write"]),
        "POSIX read": _io_total(io["posix_read"]),
        "MPI-IO": (
            f"write {format_bytes(io['mpiio_write_bytes'])}, "
            f"read {format_bytes(io['mpiio_read_bytes'])}"
        ),
        "profiler overhead": (
            f"{format_seconds(overhead['seconds'])} ({overhead['calls']} calls x "
            f"{overhead['ns_per_call']:.0f} ns), {overhead['percent_of_wall']:.3f} % of wall time"
        ),
    }
    if len(summary.get("programs") or []) > 1:  # MPMD: two models' ranks are not one balance
        rows["parallel efficiency"] += "; of all programs together (each one's: Programs, below)"
    for key, value in rows.items():
        grid.add_row(key, value)
    return grid


def _shown(summary: dict[str, Any]) -> str:
    """Which part of the run the figures below are: a region, or the whole run."""
    region = summary.get("region")
    if region is None:
        return "the whole run, MPI_Init to MPI_Finalize" + (
            " (one region: esmperf show --region PATH)" if summary.get("regions") else ""
        )
    what = "the timed loop" if region == TIMED else "this region"
    return (
        f"region {escape(region)} ({what}; the whole run: esmperf show --region all); I/O, "
        "communicators and overhead: the whole run"
    )


def _problem_text(problem: dict[str, Any]) -> str:
    what = PROBLEM_TEXT.get(problem["kind"], problem["kind"])
    subject = (
        f"MPI_Pcontrol({problem['name']})"
        if problem["kind"] == "pcontrol_ignored"
        else f"region {problem['name']!r}"
    )
    return f"{subject}: {what}, {problem['count']} time(s) on {problem['ranks']} rank(s)"


def _regions(summary: dict[str, Any]) -> Table:
    table = _table(
        "Regions (inclusive of the regions inside)",
        "region",
        "ranks",
        "enters",
        "wall (longest rank)",
        "% MPI",
        "calls",
        "bytes sent",
        "receive wait",
        "open at end",
    )
    table.columns[0].overflow = "fold"
    for row in summary["regions"]:
        wait = row.get("receive_wait") or {"calls": 0}
        table.add_row(
            escape(row["region"]),
            str(row["ranks"]),
            str(row["enters"]),
            format_seconds(row["wall"]),
            f"{row['mpi_percent']:.2f}",
            str(row["calls"]),
            format_bytes(row["sent"]),
            f"{format_seconds(wait['time'])} ({wait['calls']})" if wait["calls"] else "",
            str(row["open"]) if row["open"] else "",
        )
    return table


def _efficiency_text(efficiency: dict[str, float] | None) -> str:
    if not efficiency:
        return "-"
    return (
        f"{efficiency['parallel_efficiency']:.3f} = load balance "
        f"{efficiency['load_balance']:.3f} x communication efficiency "
        f"{efficiency['communication_efficiency']:.3f} (POP, {efficiency['scope']}; 1 is "
        "ideal)"
    )


def _receive_wait_text(wait: dict[str, Any]) -> str:
    if not wait["calls"]:
        return "-"
    top = ", ".join(
        f"{row['function']} {format_seconds(row['time'])}" for row in wait["by_function"][:3]
    )
    return (
        f"{format_seconds(wait['time'])} in {wait['calls']} calls that completed a "
        f"receive, {wait['percent_of_mpi_time']:.1f} % of MPI time ({top})"
    )


def _late_sender_text(late: dict[str, Any] | None) -> str:
    if late is None:
        return "- (exact from a trace: esmperf profile --trace)"
    if "error" in late:
        return f"- (trace unreadable: {escape(late['error'])})"
    top = ", ".join(
        f"{row['function']} {format_seconds(row['time'])}" for row in late["by_function"][:3]
    )
    text = (
        f"{format_seconds(late['time'])} in {late['calls']} calls, {late['late_receives']} of "
        f"{late['receives']} receives late (exact, from the trace; clocks: {late['clock']})"
        + (f" ({top})" if top else "")
    )
    notes = [
        f"{late[key]} {what}"
        for key, what in (
            ("unmatched_receives", "receives without a send"),
            ("unmatched_sends", "sends without a receive"),
            ("impossible", "receives done before their send started: clock offset"),
            ("lost_events", "events past the trace's cap"),
        )
        if late[key]
    ]
    return text + (f"; {', '.join(notes)}" if notes else "")


def _io_total(total: dict[str, Any]) -> str:
    calls, seconds = total["calls"], format_seconds(total["time"])
    return f"{format_bytes(total['bytes'])} in {calls} calls, {seconds}"


def _table(title: str, *columns: str) -> Table:
    table = Table(title=title, title_justify="left", title_style="bold")
    table.add_column(columns[0])
    for column in columns[1:]:
        table.add_column(column, justify="right")
    return table


def _calls_by_time(summary: dict[str, Any]) -> Table:
    table = _table("Top MPI calls by time", "function", "time", "% MPI time", "calls", "avg")
    for row in summary["calls_by_time"][:TOP]:
        table.add_row(
            row["function"],
            format_seconds(row["time"]),
            f"{row['percent_of_mpi_time']:.2f}",
            str(row["calls"]),
            format_seconds(row["avg_time"]),
        )
    return table


def _calls_by_count(summary: dict[str, Any]) -> Table:
    table = _table("Top MPI calls by count", "function", "calls", "% calls")
    for row in summary["calls_by_count"][:TOP]:
        table.add_row(row["function"], str(row["calls"]), f"{row['percent_of_calls']:.2f}")
    return table


def _message_sizes(summary: dict[str, Any]) -> Table:
    table = _table("Message sizes", "size", "messages", "%")
    for row in summary["message_sizes"]:
        table.add_row(row["label"], str(row["messages"]), f"{row['percent']:.2f}")
    return table


def _programs(summary: dict[str, Any]) -> Table:
    table = _table(
        "Programs (MPMD; the whole run; efficiency: POP, of each program's ranks alone)",
        "program",
        "ranks",
        "wall time",
        "% MPI",
        "MPI time imbalance",
        "load balance",
        "parallel efficiency",
    )
    for row in summary["programs"]:
        efficiency = row.get("efficiency") or {}
        imbalance = row["mpi_time_imbalance"]
        table.add_row(
            escape(" ".join([row["program"], *row["command"][1:]])),
            rank_ranges(row["ranks"]),
            format_seconds(row["wall_time"]),
            f"{row['mpi_percent']:.2f}",
            f"{imbalance:.2f}" if imbalance else "-",
            f"{efficiency['load_balance']:.3f}" if efficiency else "-",
            f"{efficiency['parallel_efficiency']:.3f}" if efficiency else "-",
        )
    return table


def _communicators(summary: dict[str, Any]) -> Table:
    table = _table(
        "Time per communicator (a completion call's time: its requests' communicator)",
        "communicator",
        "size",
        "members (world ranks)",
        "ranks",
        "time",
        "calls",
        "bytes",
    )
    for row in summary["communicators"][:TOP]:
        table.add_row(
            escape(row["communicator"]),
            str(row["size"]),
            escape(row.get("members") or "-"),
            str(row["ranks"]),
            format_seconds(row["time"]),
            str(row["calls"]),
            format_bytes(row["bytes"]),
        )
    return table
