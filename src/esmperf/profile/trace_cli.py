"""`esmperf trace PROFILE`: the profile's timeline trace as Chrome/Perfetto JSON and as a SimGrid
time-independent trace, optionally replayed on a simulated cluster (trace.py, replay.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from esmperf.mpi import platforms
from esmperf.profile.replay import measured_time, write_ti
from esmperf.profile.replay_run import OWN, check_replay, replay
from esmperf.profile.trace import read_trace, write_chrome

console = Console(highlight=False)
# Past this, the Perfetto JSON may not open in a browser: chrome://tracing stops at 256 MiB of
# JSON, ui.perfetto.dev holds a trace in its page's memory (about 2 GiB, several times the
# file's size). docs/profiler.md ("Timeline traces").
PERFETTO_JSON_LIMIT = 256 << 20


def add_trace_command(commands: argparse._SubParsersAction) -> None:
    trace = commands.add_parser(
        "trace",
        help="a profile's timeline trace: Perfetto JSON, SimGrid replay",
        description="Convert the trace of a profile recorded with `esmperf profile --trace` into "
        "Chrome/Perfetto trace JSON (open it at https://ui.perfetto.dev) and into a SimGrid "
        "time-independent trace; --replay runs that on a simulated cluster (smpirun -replay).",
        epilog="example: esmperf trace esmperf-profile.jsonl --replay ib-qdr",
    )
    trace.add_argument("file", type=Path, help="the profile file (.jsonl) whose trace to convert")
    trace.add_argument(
        "--out",
        type=Path,
        metavar="JSON",
        help="Perfetto JSON to write (default: FILE.perfetto.json)",
    )
    trace.add_argument(
        "--otf2",
        type=Path,
        metavar="DIR",
        help="also write the trace as an OTF2 archive in this new folder (DIR/traces.otf2: "
        "Vampir, Scalasca, otf2-print)",
    )
    trace.add_argument(
        "--ti", type=Path, metavar="DIR", help="folder of the SimGrid TI trace (default: FILE.ti/)"
    )
    trace.add_argument(
        "--speed",
        type=_positive_speed,
        default=platforms.HOST_SPEED,
        metavar="FLOPS",
        help="flop/s at which measured computation becomes flops (default: the "
        f"simulated hosts' {platforms.HOST_SPEED:.0e}, 1:1 with this machine)",
    )
    trace.add_argument(
        "--compute",
        choices=("wall", "cpu"),
        help="computation between calls from their wall time, or their CPU time "
        "(a trace recorded with --trace-cpu; default then)",
    )
    trace.add_argument(
        "--replay",
        metavar="PLATFORM",
        help=f"replay on this platform: {OWN} (the trace's own: its ranks on one node with "
        "this machine's shared-memory figures, to check the replay against the measured run) "
        f"or an interconnect ({', '.join(platforms.INTERCONNECTS)})",
    )
    trace.add_argument(
        "--ranks-per-node",
        type=_ranks_per_node,
        default=1,
        metavar="N",
        help="ranks per simulated node for --replay (default 1)",
    )
    trace.set_defaults(handler=_trace)


def _positive_speed(text: str) -> float:
    """--speed: flop/s, above 0 (at 0 every computation would take no time, or forever)."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(
            f"expected flop/s above 0, e.g. --speed {platforms.HOST_SPEED:.0e}, got {text!r}"
        )
    return value


def _ranks_per_node(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(
            f"expected 1 or more ranks per node, e.g. --ranks-per-node 2, got {text!r}"
        )
    return value


def _trace(args: argparse.Namespace) -> int:
    if args.replay:
        check_replay(args.replay, args.ranks_per_node)
    traces = read_trace(args.file)
    out = args.out or Path(f"{args.file}.perfetto.json")
    written = write_chrome(traces, out)
    events = sum(len(t.events) for t in traces)
    lost = sum(t.header["lost"] for t in traces)
    console.print(
        f"[bold]perfetto:[/] {escape(str(out))}: {events} events of {len(traces)} "
        f"ranks ({written} trace entries; open it at https://ui.perfetto.dev)"
    )
    if lost:
        console.print(
            f"[bold yellow]warning:[/] {lost} events past the trace's cap were not "
            "kept (ESMPROF_TRACE_EVENTS): the trace and the replay stop there"
        )
    if out.stat().st_size > PERFETTO_JSON_LIMIT:
        console.print(
            f"[bold yellow]warning:[/] {escape(str(out))} is over "
            f"{PERFETTO_JSON_LIMIT >> 20} MiB: ui.perfetto.dev and chrome://tracing may fail "
            "to load it; serve it with Perfetto's `trace_processor server http` "
            "(docs/profiler.md), or open the OTF2 archive (--otf2 DIR) in Vampir"
        )
    if args.otf2:
        from esmperf.profile.otf2_export import write_otf2  # loads the OTF2 C library

        anchor = write_otf2(traces, args.otf2)
        console.print(f"[bold]otf2:[/] {escape(str(anchor))} (Vampir, otf2-print)")
    compute = args.compute or ("cpu" if all(t.header.get("cpu") for t in traces) else "wall")
    ti = write_ti(traces, args.ti or Path(f"{args.file}.ti"), args.speed, compute)
    console.print(
        f"[bold]simgrid:[/] {escape(str(ti.index))}: {ti.messages} messages, "
        f"computation ({ti.compute} time) at {ti.speed:.3g} flop/s"
    )
    if args.replay:
        result = replay(ti, args.replay, args.ranks_per_node)
        wall = measured_time(traces)
        where = (
            f"its own platform (1 node, {ti.ranks} ranks)" if args.replay == OWN else args.replay
        )
        console.print(
            f"[bold]replay on {escape(where)}:[/] simulated {result.simulated_time:.6g} s "
            f"(measured run: {wall:.6g} s from the first MPI_Init to the last MPI_Finalize)"
        )
    if ti.point_to_point:
        console.print(f"[bold]note:[/] {escape(ti.point_to_point_note())}")
    if ti.not_replayed:
        console.print(f"[bold yellow]caveat:[/] {escape(ti.caveat())}")
    return 0
