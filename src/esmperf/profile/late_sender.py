"""Late-sender time, exact from a timeline trace (`esmperf profile --trace`).

Scalasca's *late sender*: a receiver blocked in a call (MPI_Recv, MPI_Wait, ...) that entered
it before the matching send started; its waiting time is from its entry to the send's start,
at most the call's duration. The profile's receive wait (pop_metrics.receive_wait) is an upper
bound of it; the trace has what the exact figure needs:

- every send: sender, destination, tag and the time it started (the enter time of MPI_Send,
  MPI_Isend, MPI_Sendrecv, ...; of the MPI_Start(all) that started a persistent send);
- every completed receive (trace events of kind 4): its source and tag from its status
  (MPI_ANY_SOURCE and MPI_ANY_TAG resolved), the call that completed it (its enter and exit),
  and when the receive was posted (MPI_Irecv, MPI_Start of a persistent receive, or the
  blocking call itself).

Matching: MPI does not overtake: messages from one sender to one receiver with one tag are
received in the order they were sent, by the receives in the order they were posted. So per
channel (source, destination, tag) the k-th send matches the k-th receive. A blocking call that
completed several receives (MPI_Waitall) waited for the latest of them: its late-sender time
is the largest of its receives'. Calls of the MPI_Test family return at once: their receives
are matched but never late.

Clocks: the ranks of one host share its monotonic clock (header `init_mono`: a reading taken
with the cycle counter at the end of MPI_Init, so a trace time is init_mono + t on that clock);
ranks on several hosts are put on one clock by their `init_epoch` (CLOCK_REALTIME), which is
only as good as the hosts' clock synchronisation (NTP: often 0.1-10 ms): late-sender times below
that offset are noise then, and a receive that seems to complete before its send started counts
in `impossible` (it can only be the clocks). What it cannot see is in docs/profiler.md.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from esmperf.profile.replay import ISENDS, PERSISTENT_SENDS, SENDRECVS, SENDS, base_name
from esmperf.profile.trace import (
    CALL,
    RECEIVED,
    START,
    Event,
    RankTrace,
    TraceError,
    read_trace,
    trace_dir,
)

SEND_CALLS = SENDS | ISENDS | SENDRECVS | {"MPI_Isendrecv", "MPI_Isendrecv_replace"}
RECEIVE_POSTS = {"MPI_Irecv", "MPI_Imrecv", "MPI_Isendrecv", "MPI_Isendrecv_replace"}
PERSISTENT_RECEIVES = {"MPI_Recv_init"}
NONBLOCKING = "MPI_Test"  # MPI_Test, _all, _any, _some


@dataclass
class Receive:
    rank: int
    posted: int  # ns on the common clock
    channel: tuple[int, int, int]  # (source, destination, tag) as world ranks
    call: tuple[int, int, int]  # (rank, thread, index of the completing call)
    function: str  # the completing call
    enter: int  # the completing call's enter and exit, ns on the common clock
    exit: int
    late: int = 0  # ns


def clock_offsets(traces: list[RankTrace]) -> tuple[list[int], str]:
    """Each rank's offset (ns) onto one clock, and which clock: "one host" (the shared monotonic
    clock) or "hosts" (their real-time clocks, as synchronised as the hosts are)."""
    hosts = {t.header.get("host") for t in traces}
    mono = all("init_mono" in t.header for t in traces)
    key = "init_mono" if len(hosts) == 1 and None not in hosts and mono else "init_epoch"
    origin = min(float(t.header[key]) for t in traces)
    offsets = [round((float(t.header[key]) - origin) * 1e9) for t in traces]
    return offsets, ("one host" if key == "init_mono" else f"{len(hosts)} hosts")


def late_sender(traces: list[RankTrace]) -> dict[str, Any] | None:
    """The late-sender time of a traced run (see the module's text), or None for a trace
    written before receives were recorded (no `init_mono` in its header)."""
    if not all("init_mono" in t.header for t in traces):
        return None
    offsets, clock = clock_offsets(traces)
    sends: dict[tuple[int, int, int], list[int]] = defaultdict(list)
    receives: dict[tuple[int, int, int], list[Receive]] = defaultdict(list)
    for trace, offset in zip(traces, offsets, strict=True):
        _events(trace, offset, sends, receives)
    calls: dict[tuple[int, int, int], list[Receive]] = defaultdict(list)
    matched = unmatched_receives = unmatched_sends = impossible = 0
    for channel in sends.keys() | receives.keys():
        started = sorted(sends.get(channel, []))
        posted = sorted(receives.get(channel, []), key=lambda r: (r.posted, r.exit))
        for send, receive in zip(started, posted, strict=False):
            matched += 1
            impossible += receive.exit < send
            if not receive.function.startswith(NONBLOCKING):
                receive.late = max(0, min(send, receive.exit) - receive.enter)
            calls[receive.call].append(receive)
        unmatched_receives += max(0, len(posted) - len(started))
        unmatched_sends += max(0, len(started) - len(posted))
    per_rank = [0.0] * len(traces)
    functions: dict[str, list[float]] = {}
    late_calls = 0
    for (rank, _, _), done in calls.items():
        late = max(receive.late for receive in done) * 1e-9
        if late <= 0:
            continue
        late_calls += 1
        per_rank[rank] += late
        row = functions.setdefault(done[0].function, [0, 0.0])
        row[0] += 1
        row[1] += late
    every = [receive for done in calls.values() for receive in done]
    return {
        "time": sum(per_rank),
        "calls": late_calls,
        "receives": matched,
        "late_receives": sum(1 for receive in every if receive.late > 0),
        "late_receives_per_rank": [
            sum(1 for r in every if r.late > 0 and r.rank == rank) for rank in range(len(traces))
        ],
        "per_rank": per_rank,
        "by_function": [
            {"function": name, "calls": int(n), "time": seconds}
            for name, (n, seconds) in sorted(functions.items(), key=lambda i: (-i[1][1], i[0]))
        ],
        "receive_late": sorted(
            ((r.rank, r.channel[0], r.channel[2], r.late) for r in every),  # late in ns
        ),
        "unmatched_receives": unmatched_receives,
        "unmatched_sends": unmatched_sends,
        "impossible": impossible,
        "clock": clock,
        "lost_events": sum(int(t.header.get("lost", 0)) for t in traces),
    }


def _events(
    trace: RankTrace,
    offset: int,
    sends: dict[tuple[int, int, int], list[int]],
    receives: dict[tuple[int, int, int], list[Receive]],
) -> None:
    """One rank's sends (by channel, start times) and completed receives."""
    me = trace.rank
    last_call: dict[int, tuple[int, Event]] = {}  # thread -> (index, its latest call)
    posted: dict[int, int] = {}  # request -> when the receive was posted
    persistent_tags: dict[int, int] = {}  # persistent send request -> its tag
    for index, e in enumerate(trace.events):
        name = base_name(e.name)
        if e.kind == CALL:
            last_call[e.thread] = (index, e)
            if name in SEND_CALLS and e.peer >= 0:
                sends[(me, e.peer, e.tag)].append(offset + e.t0)
            if name in RECEIVE_POSTS and e.req:
                posted[e.req] = offset + e.t0
            if name in PERSISTENT_SENDS and e.req:
                persistent_tags[e.req] = e.tag
        elif e.kind == START:
            at, call = last_call.get(e.thread, (index, e))  # the MPI_Start(all) that started it
            if e.peer >= 0 and e.req in persistent_tags:
                sends[(me, e.peer, persistent_tags[e.req])].append(offset + call.t0)
            elif e.peer < 0:
                posted[e.req] = offset + call.t0
        elif e.kind == RECEIVED and e.src >= 0 and e.thread in last_call:
            at, call = last_call[e.thread]  # the completing call: its event sorts just before
            enter = offset + call.t0
            receives[(e.src, me, e.tag)].append(
                Receive(
                    rank=me,
                    posted=posted.pop(e.req, enter) if e.req else enter,
                    channel=(e.src, me, e.tag),
                    call=(me, e.thread, at),
                    function=base_name(call.name),
                    enter=enter,
                    exit=offset + call.t1,
                )
            )


def profile_late_sender(profile: Path) -> dict[str, Any] | None:
    """The late-sender time of the run whose profile is `profile`, from its trace
    (PROFILE.trace/); None when it has none, {"error": why} when it cannot be read."""
    if not trace_dir(profile).is_dir():
        return None
    try:
        found = late_sender(read_trace(profile))
    except TraceError as error:
        return {"error": str(error)}
    if found:
        del found["receive_late"]  # one row per receive: late_sender() has it
    return found
