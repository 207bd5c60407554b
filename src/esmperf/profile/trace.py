"""Timeline traces written by the profiler (`ESMPROF_TRACE=1`, `esmperf profile --trace`):
reading PROFILE.trace/RANK.bin, and the Chrome/Perfetto trace JSON (one process track per
rank, one thread track per thread, ts in microseconds) that ui.perfetto.dev and
chrome://tracing open. The file layout is in docs/profile-format.md ("Traces")."""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from esmperf.errors import EsmperfError

RECORD = struct.Struct("<QQQQQiiiiHBBf")  # native/prof/prof_trace.c: esm_event, 64 bytes
CALL, ENTER, EXIT, START, RECEIVED, PEER_BYTES = 0, 1, 2, 3, 4, 5
# START: MPI_Start(all) started a persistent request; RECEIVED: a point-to-point receive
# completed in the call just before (its source and tag from the status: late_sender.py);
# PEER_BYTES: an MPI_Alltoallv's bytes to and from one peer (the replay's per-peer counts)


class TraceError(EsmperfError):
    """A trace that is missing or cannot be read."""


@dataclass(frozen=True)
class Event:
    kind: int  # CALL, ENTER (a region), EXIT, START (a persistent request started), RECEIVED,
    # PEER_BYTES
    name: str  # MPI function or region name
    thread: int
    t0: int  # ns since this rank's end of MPI_Init
    t1: int
    sent: int
    recv: int
    req: int  # the request posted or completed (its handle's bits), 0 for none
    peer: int  # a send's destination or the source a receive names (world rank), -1
    src: int  # the source a completed receive came from (world rank), -1
    tag: int
    comm: int  # communicator id on this rank (header "comms"), -1
    cpu_gap: float  # ESMPROF_TRACE=cpu: the thread's CPU ns since its previous event's exit


@dataclass
class RankTrace:
    header: dict[str, Any]
    events: list[Event] = field(default_factory=list)

    @property
    def rank(self) -> int:
        return int(self.header["rank"])

    def world_comms(self) -> set[int]:
        """Ids of this rank's communicators whose group is MPI_COMM_WORLD's."""
        return {c["id"] for c in self.header["comms"] if c["world"]}

    def comm_members(self) -> dict[int, tuple[int, ...]]:
        """Id -> world ranks of the members, of this rank's other intracommunicators (traces
        written since the header lists them)."""
        return {c["id"]: tuple(c["members"]) for c in self.header["comms"] if "members" in c}


def trace_dir(profile: Path) -> Path:
    return Path(f"{profile}.trace")


def read_trace(profile: Path) -> list[RankTrace]:
    """Every rank's trace of the profile `profile`, in rank order."""
    folder = trace_dir(profile)
    files = sorted(folder.glob("*.bin"), key=lambda p: int(p.stem)) if folder.is_dir() else []
    if not files:
        raise TraceError(
            f"{profile} has no trace ({folder}/ is missing or empty): profile the "
            "program with `esmperf profile --trace -- ...` (or ESMPROF_TRACE=1)"
        )
    traces = [read_rank(path) for path in files]
    ranks = traces[0].header["ranks"]
    missing = sorted(set(range(ranks)) - {t.rank for t in traces})
    if missing:
        raise TraceError(
            f"{folder}: no trace of rank(s) {missing[:10]} of {ranks}: the run "
            "did not finalise (see `esmperf show` on the profile)"
        )
    return traces


def read_rank(path: Path) -> RankTrace:
    data = path.read_bytes()
    end = data.find(b"\n")
    try:
        header = json.loads(data[:end])
    except ValueError as error:
        raise TraceError(f"{path}: not an esmperf trace ({error})") from None
    if header.get("format") != "esmperf-trace" or header.get("version") != 1:
        raise TraceError(f"{path}: not a version-1 esmperf trace: update esmperf to read it")
    if (
        header["record_bytes"] != RECORD.size
        or len(data) - end - 1 != header["events"] * RECORD.size
    ):
        raise TraceError(
            f"{path}: truncated ({header['events']} events announced): rerun the "
            "program to write it again"
        )
    functions, regions = header["functions"], header["regions"]
    events = []
    for (
        t0,
        t1,
        sent,
        recv,
        req,
        peer,
        src,
        tag,
        comm,
        fid,
        thread,
        kind,
        cpu_gap,
    ) in RECORD.iter_unpack(data[end + 1 :]):
        name = regions[fid] if kind in (ENTER, EXIT) else functions[fid]
        events.append(
            Event(kind, name, thread, t0, t1, sent, recv, req, peer, src, tag, comm, cpu_gap)
        )
    events.sort(key=lambda e: (e.t0, e.t1))
    return RankTrace(header, events)


def chrome_trace(traces: list[RankTrace]) -> dict[str, Any]:
    """Chrome trace-event JSON: an X (complete) event per MPI call, B/E events per region
    (a region left open is closed at the rank's last event; an exit without its entry is
    dropped), process and thread names, all ranks on one clock (their MPI_Init epochs)."""
    origin = min(t.header["init_epoch"] for t in traces)
    events: list[dict[str, Any]] = []
    for trace in traces:
        pid = trace.rank
        shift = (trace.header["init_epoch"] - origin) * 1e6
        events.append(
            {"ph": "M", "name": "process_name", "pid": pid, "args": {"name": f"rank {pid}"}}
        )
        events.append(
            {"ph": "M", "name": "process_sort_index", "pid": pid, "args": {"sort_index": pid}}
        )
        for thread in sorted({e.thread for e in trace.events}):
            events.append(
                {
                    "ph": "M",
                    "name": "thread_name",
                    "pid": pid,
                    "tid": thread,
                    "args": {"name": "main" if thread == 0 else f"thread {thread}"},
                }
            )
        open_regions: dict[int, list[str]] = {}
        last = 0.0
        for e in trace.events:
            ts = shift + e.t0 / 1e3
            last = max(last, shift + e.t1 / 1e3)
            if e.kind == CALL:
                events.append(
                    {
                        "ph": "X",
                        "cat": "mpi",
                        "name": e.name,
                        "pid": pid,
                        "tid": e.thread,
                        "ts": ts,
                        "dur": (e.t1 - e.t0) / 1e3,
                        "args": _call_args(e),
                    }
                )
            elif e.kind in (START, RECEIVED, PEER_BYTES):
                continue  # shown by the call that started or completed the request
            elif e.kind == ENTER:
                open_regions.setdefault(e.thread, []).append(e.name)
                events.append(
                    {
                        "ph": "B",
                        "cat": "region",
                        "name": e.name,
                        "pid": pid,
                        "tid": e.thread,
                        "ts": ts,
                    }
                )
            elif e.name in open_regions.get(e.thread, []):
                stack = open_regions[e.thread]
                while stack:  # an inner region left open ends here too
                    name = stack.pop()
                    events.append(
                        {
                            "ph": "E",
                            "cat": "region",
                            "name": name,
                            "pid": pid,
                            "tid": e.thread,
                            "ts": ts,
                        }
                    )
                    if name == e.name:
                        break
        for thread, stack in open_regions.items():
            for name in reversed(stack):
                events.append(
                    {
                        "ph": "E",
                        "cat": "region",
                        "name": name,
                        "pid": pid,
                        "tid": thread,
                        "ts": last,
                    }
                )
    lost = {t.rank: t.header["lost"] for t in traces if t.header["lost"]}
    return {
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {
            "source": "esmperf profile --trace",
            "ranks": len(traces),
            "lost_events": lost,
        },
    }


def _call_args(e: Event) -> dict[str, Any]:
    args: dict[str, Any] = {}
    if e.peer >= 0:
        args["peer"] = e.peer
    if e.src >= 0 and e.src != e.peer:
        args["source"] = e.src
    if e.peer >= 0 or e.src >= 0:
        args["tag"] = e.tag
    if e.comm >= 0:
        args["comm"] = e.comm
    if e.sent:
        args["sent"] = e.sent
    if e.recv:
        args["recv"] = e.recv
    return args


def write_chrome(traces: list[RankTrace], out: Path) -> int:
    """Write the Chrome trace JSON to `out`; the number of trace events written."""
    document = chrome_trace(traces)
    out.write_text(json.dumps(document, separators=(",", ":")))
    return len(document["traceEvents"])
