"""A real run replayed on a simulated cluster: the profiler's trace (trace.py) written as a
SimGrid time-independent (TI) trace, one action file per rank, and `smpirun -replay` on one of
esmperf's platforms, or on the trace's own (replay_run.py runs it).

TI actions (SimGrid 3.32's smpi_replay.cpp; `init` without a datatype: sizes are bytes):
`R init`, `R compute FLOPS`, `R send|isend DST TAG BYTES`, `R recv|irecv SRC TAG BYTES`,
`R wait SRC DST TAG`, `R waitall`, the collectives of replay_collectives.py, `R finalize`.
A receive names the source and tag its completion's status reported (MPI_ANY_SOURCE and
MPI_ANY_TAG resolved, each request its own). The time between two replayed calls is
computation, converted to flops at `speed` (default the simulated hosts' speed, so a burst costs
there what it cost here): its wall time (`compute="wall"`), or, for a trace recorded with
ESMPROF_TRACE=cpu, the thread's CPU time in it (`compute="cpu"`: what a preempted or
oversubscribed burst really computed; time blocked in I/O or page faults is then not counted).
What SimGrid's replay cannot express is folded into computation with its measured time,
and counted (`not_replayed`, which `esmperf trace` prints as the replay's caveat): collectives
on intercommunicators or on communicators whose members the trace does not list (collectives on
other communicators are replay_subcomm.py's point-to-point messages), non-blocking, persistent
and neighbourhood collectives, matched probes, RMA, MPI-IO, and every call of threads other
than the main one
(one simulated actor per rank replays one sequence: several threads' calls in time order can
deadlock).
docs/profiler.md ("Replaying a run") lists the other approximations.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict, deque
from dataclasses import dataclass, field
from pathlib import Path

from esmperf.errors import EsmperfError
from esmperf.mpi import platforms
from esmperf.profile import replay_collectives as coll
from esmperf.profile import replay_subcomm as subcomm
from esmperf.profile.replay_collectives import base_name
from esmperf.profile.trace import CALL, RECEIVED, START, Event, RankTrace

SENDS = {"MPI_Send", "MPI_Bsend", "MPI_Ssend", "MPI_Rsend"}
ISENDS = {"MPI_Isend", "MPI_Ibsend", "MPI_Issend", "MPI_Irsend"}
SENDRECVS = {"MPI_Sendrecv", "MPI_Sendrecv_replace"}
WAIT_ONE = {"MPI_Wait", "MPI_Waitany", "MPI_Test", "MPI_Testany", "MPI_Waitsome", "MPI_Testsome"}
WAIT_ALL = {"MPI_Waitall", "MPI_Testall"}
PERSISTENT_SENDS = {"MPI_Send_init", "MPI_Bsend_init", "MPI_Ssend_init", "MPI_Rsend_init"}
# Calls that take no time worth replaying and are not communication: their time is computation.
LOCAL = re.compile(
    r"MPI_(Comm_(rank|size|get_name|set_name|test_inter|compare|group)|Group_\w+|"
    r"Type_\w+|Get_\w+|Wtime|Wtick|Initialized|Finalized|Query_thread|"
    r"Request_free|Error_\w+|Info_\w+|Op_\w+|Attr_\w+|\w+_get_attr|Iprobe|Probe)$"
)


class ReplayError(EsmperfError):
    """A trace that cannot be replayed, or a replay that failed."""


@dataclass
class TiTrace:
    index: Path  # the file smpirun -replay reads: one rank file per line
    ranks: int
    speed: float  # flop/s the computation was converted at
    compute: str = "wall"  # computation from the gaps' wall time, or CPU time
    messages: int = 0  # send and isend actions
    actions: Counter = field(default_factory=Counter)
    not_replayed: Counter = field(default_factory=Counter)  # MPI function (why) -> calls folded
    point_to_point: Counter = field(default_factory=Counter)  # collective -> calls replayed as
    # point-to-point messages (on other communicators: replay_subcomm.py)
    hosts: int = 1  # hosts the traced ranks ran on
    ranks_per_host: int = 1  # the most ranks one of them ran

    def caveat(self) -> str:
        """What the replay counts as computation although the run communicated there; empty
        when every call was replayed."""
        if not self.not_replayed:
            return ""
        calls = sum(self.not_replayed.values())
        listed = ", ".join(f"{name} {n}" for name, n in self.not_replayed.most_common(8))
        more = len(self.not_replayed) - 8
        return (
            f"{calls} calls not replayed, their measured time counted as computation "
            f"(docs/profiler.md, Replaying a run): {listed}"
            + (f" and {more} more" if more > 0 else "")
        )

    def point_to_point_note(self) -> str:
        """How many collectives on other communicators were replayed as point-to-point
        messages (replay_subcomm.py); empty when none were."""
        if not self.point_to_point:
            return ""
        listed = ", ".join(f"{name} {n}" for name, n in self.point_to_point.most_common())
        return (
            f"{sum(self.point_to_point.values())} collectives on communicators other than "
            "MPI_COMM_WORLD's group replayed as the point-to-point messages of a linear "
            f"algorithm (SimGrid's replay has collectives on MPI_COMM_WORLD only): {listed}"
        )


def write_ti(
    traces: list[RankTrace],
    folder: Path,
    speed: float = platforms.HOST_SPEED,
    compute: str = "wall",
) -> TiTrace:
    """The TI trace of `traces` in `folder` (rank-N.txt and traces.txt, the index)."""
    if compute not in ("wall", "cpu"):
        raise ReplayError(f"computation from {compute!r}: choose wall or cpu")
    if compute == "cpu" and not all(t.header.get("cpu") for t in traces):
        raise ReplayError(
            "this trace has no CPU times: record it with ESMPROF_TRACE=cpu "
            "(esmperf profile --trace-cpu), or convert with wall-clock computation"
        )
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("rank-*.txt"):
        old.unlink()
    ranks = len(traces)
    sizes = _send_sizes(traces)
    shapes = coll.shapes(traces)
    per_host = Counter(t.header.get("host", "") for t in traces)
    ti = TiTrace(
        folder.resolve() / "traces.txt",
        ranks,
        speed,
        compute,
        hosts=len(per_host),
        ranks_per_host=max(per_host.values()),
    )
    paths = []
    starts = start_offsets(traces)
    for trace in traces:
        lines = _rank_actions(trace, sizes, shapes, ti, starts[trace.rank])
        path = folder.resolve() / f"rank-{trace.rank}.txt"
        path.write_text("\n".join(lines) + "\n")
        paths.append(str(path))
    ti.index.write_text("\n".join(paths) + "\n")
    return ti


def start_offsets(traces: list[RankTrace]) -> dict[int, float]:
    """Rank -> seconds after the first rank that it left MPI_Init: the run's start replayed as
    it happened (each rank's events count from its own MPI_Init). On one host the ranks share
    one clock (header init_mono); across hosts their clocks are not comparable to a millisecond,
    so there the ranks start together."""
    if len({t.header.get("host") for t in traces}) > 1:
        return {t.rank: 0.0 for t in traces}
    mono = {t.rank: t.header.get("init_mono", 0.0) for t in traces}
    return {rank: at - min(mono.values()) for rank, at in mono.items()}


def measured_time(traces: list[RankTrace]) -> float:
    """Seconds from the first rank's end of MPI_Init to the last rank's MPI_Finalize: what a
    replay of the run on its own platform reproduces."""
    starts = start_offsets(traces)
    return max(starts[t.rank] + t.header["wall"] for t in traces)


def _persistent(trace: RankTrace) -> dict[int, tuple[str, int, int]]:
    """Request -> ("isend" or "irecv", peer, tag) of the persistent point-to-point requests made
    (MPI_Send_init, MPI_Recv_init, ...); a handle reused later names its latest request."""
    made = {}
    for e in trace.events:
        name = base_name(e.name)
        if e.kind == CALL and e.req and (name in PERSISTENT_SENDS or name == "MPI_Recv_init"):
            made[e.req] = ("isend" if name in PERSISTENT_SENDS else "irecv", e.peer, e.tag)
    return made


def _send_sizes(traces: list[RankTrace]) -> dict[tuple[int, int, int], deque[int]]:
    """(source, destination, tag) -> the sizes of its messages in order (MPI does not overtake):
    a receive takes its size from the matching send, known on the sending rank."""
    sizes: dict[tuple[int, int, int], deque[int]] = defaultdict(deque)
    for trace in traces:
        made = _persistent(trace)
        for e in trace.events:
            name = base_name(e.name)
            if e.thread != 0:
                continue
            if (
                e.kind == CALL
                and e.peer >= 0
                and (name in SENDS or name in ISENDS or name in SENDRECVS)
            ):
                sizes[(trace.rank, e.peer, e.tag)].append(e.sent)
            elif e.kind == START and made.get(e.req, ("",))[0] == "isend" and e.peer >= 0:
                sizes[(trace.rank, e.peer, made[e.req][2])].append(e.sent)
    return sizes


def _statuses(trace: RankTrace) -> dict[int, tuple[int, int]]:
    """id(receive) -> (source, tag) its completion's status reported (the RECEIVED events):
    an MPI_Irecv's or started persistent receive's from the first RECEIVED of its request after
    it (each request its own, however many one MPI_Waitall completes), a blocking receive's
    (MPI_Recv, MPI_Sendrecv) from the one at its exit. MPI_ANY_SOURCE and MPI_ANY_TAG are so
    replaced by what the run matched."""
    at_exit = {(e.thread, e.t1): e for e in trace.events if e.kind == RECEIVED and not e.req}
    found = {}
    pending: dict[int, Event] = {}  # request -> the receive that posted or started it
    for e in trace.events:
        name = base_name(e.name)
        if e.kind == START or (e.kind == CALL and name == "MPI_Irecv"):
            if e.req:
                pending[e.req] = e
        elif e.kind == CALL and (name == "MPI_Recv" or name in SENDRECVS):
            status = at_exit.get((e.thread, e.t1))
            if status is not None and status.src >= 0:
                found[id(e)] = (status.src, status.tag)
        elif e.kind == RECEIVED and e.req and e.src >= 0:
            posted = pending.pop(e.req, None)
            if posted is not None:
                found[id(posted)] = (e.src, e.tag)
    return found


def _rank_actions(
    trace: RankTrace, sizes: dict, shapes: coll.Shapes, ti: TiTrace, start: float
) -> list[str]:
    me = trace.rank
    out = [f"{me} init"]
    if start * ti.speed >= 1:  # left MPI_Init that much after the first rank
        out.append(f"{me} compute {start * ti.speed:.0f}")
    done = 0  # ns: end of the last replayed call
    cpu = 0.0  # CPU ns since then (compute="cpu")
    calls = [e for e in trace.events if e.kind in (CALL, START) and e.thread == 0]
    for e in trace.events:
        if e.kind == CALL and e.thread != 0:
            ti.not_replayed[f"{base_name(e.name)} (threads)"] += 1
    state = _RankState(trace, ti, shapes, sizes)
    for e in calls:
        name = base_name(e.name)
        cpu += e.cpu_gap
        actions = state.started(e) if e.kind == START else state.actions(e, name)
        if isinstance(actions, str):  # not replayed: why
            if not LOCAL.match(name):
                ti.not_replayed[actions] += 1
            continue
        flops = (cpu if ti.compute == "cpu" else max(0, e.t0 - done)) * 1e-9 * ti.speed
        cpu = 0.0
        if flops >= 1:
            out.append(f"{me} compute {flops:.0f}")
        done = max(done, e.t1)
        for action in actions:
            out.append(f"{me} {action}")
            verb = action.split()[0]
            ti.actions[verb] += 1
            ti.messages += verb in ("send", "isend")
    tail = int(trace.header["wall"] * 1e9) - done
    if tail * 1e-9 * ti.speed >= 1:
        out.append(f"{me} compute {tail * 1e-9 * ti.speed:.0f}")
    out.append(f"{me} finalize")
    return out


class _RankState:
    """One rank's conversion: its requests in flight and how many of each collective it made."""

    def __init__(self, trace: RankTrace, ti: TiTrace, shapes: coll.Shapes, sizes: dict):
        self.me, self.ranks, self.ti = trace.rank, ti.ranks, ti
        self.world, self.members = trace.world_comms(), trace.comm_members()
        self.groups = {c: coll.group_of(m) for c, m in self.members.items()}
        self.made, self.statuses = _persistent(trace), _statuses(trace)
        self.shapes, self.sizes, self.peers = shapes, sizes, coll.peer_bytes(trace)
        self.completed: dict[tuple[int, int], list[int]] = {}  # (thread, exit) -> requests
        for e in trace.events:
            if e.kind == RECEIVED and e.req:
                self.completed.setdefault((e.thread, e.t1), []).append(e.req)
        self.outstanding: dict[int, tuple[int, int, int]] = {}  # request -> (src, dst, tag)
        self.seen: Counter = Counter()

    def recv_size(self, src: int, tag: int, fallback: int) -> int:
        queue = self.sizes.get((src, self.me, tag))
        return queue.popleft() if queue else fallback

    def started(self, e: Event) -> list[str]:
        """A persistent request started by MPI_Start(all): its isend or irecv."""
        verb, peer, tag = self.made.get(e.req, ("", -1, 0))
        if verb == "isend" and e.peer >= 0:
            self.outstanding[e.req] = (self.me, e.peer, tag)
            return [f"isend {e.peer} {tag} {e.sent}"]
        if verb == "irecv":
            peer, tag = self.statuses.get(id(e), (peer, tag))
            if peer >= 0 and tag >= 0:
                self.outstanding[e.req] = (peer, self.me, tag)
                return [f"irecv {peer} {tag} {self.recv_size(peer, tag, 0) or 1}"]
        return []

    def actions(self, e: Event, name: str) -> list[str] | str:
        """The TI actions of one call, or why it is not replayed (folded into computation)."""
        me = self.me
        if name in SENDS:
            return [f"send {e.peer} {e.tag} {e.sent}"] if e.peer >= 0 else []
        if name in ISENDS:
            if e.peer < 0:
                return []
            self.outstanding[e.req] = (me, e.peer, e.tag)
            return [f"isend {e.peer} {e.tag} {e.sent}"]
        if name == "MPI_Recv":
            src, tag = self.statuses.get(id(e), (e.peer if e.peer >= 0 else e.src, e.tag))
            if src < 0:
                return []  # MPI_PROC_NULL
            return [f"recv {src} {tag} {self.recv_size(src, tag, e.recv)}"]
        if name == "MPI_Irecv":
            # MPI_PROC_NULL, or never completed (cancelled): nothing to replay
            src, tag = self.statuses.get(id(e), (e.peer, e.tag))
            if src < 0 or tag < 0:
                return []
            self.outstanding[e.req] = (src, me, tag)
            return [f"irecv {src} {tag} {self.recv_size(src, tag, 0) or 1}"]
        if name in SENDRECVS:
            src, tag = self.statuses.get(id(e), (e.src, e.tag))
            out = []
            if e.peer >= 0:
                out += [f"isend {e.peer} {e.tag} {e.sent}"]
            if src >= 0:
                out += [f"irecv {src} {tag} {self.recv_size(src, tag, e.recv) or 1}"]
            if e.peer >= 0:
                out += [f"wait {me} {e.peer} {e.tag}"]
            if src >= 0:
                out += [f"wait {src} {me} {tag}"]
            return out
        if name in PERSISTENT_SENDS or name in ("MPI_Recv_init", "MPI_Start", "MPI_Startall"):
            return []  # replayed by the START events of the requests started
        if name in WAIT_ONE:  # the receives it completed (RECEIVED events), and its last request
            requests = dict.fromkeys([*self.completed.get((e.thread, e.t1), []), e.req])
            keys = [self.outstanding.pop(r) for r in requests if r in self.outstanding]
            return [f"wait {src} {dst} {tag}" for src, dst, tag in keys]
        if name in WAIT_ALL:
            if name == "MPI_Testall" and not e.req:
                return []
            self.outstanding.clear()
            return ["waitall"]
        if name not in coll.COLLECTIVES:
            return name
        return self.collective(e, name)

    def collective(self, e: Event, name: str) -> list[str] | str:
        """On MPI_COMM_WORLD's group SimGrid's own action; on another communicator whose
        members the trace names, its point-to-point messages (replay_subcomm.py)."""
        members = self.members.get(e.comm)
        group = None if e.comm in self.world or members is None else self.groups[e.comm]
        counts = self.peers.get((e.thread, e.t1))
        if name == "MPI_Alltoallv" and counts is None and (e.sent or e.recv):
            return f"{name} (no per-peer counts in the trace)"
        if name == "MPI_Alltoallv" and e.comm not in self.world:  # its peers: in the counts
            self.ti.point_to_point[name] += 1
            return subcomm.pairwise(self.me, counts or {})
        if group is None and e.comm not in self.world:
            return f"{name} (other communicator)"
        k = self.seen[(name, group)]
        self.seen[(name, group)] += 1
        if group is None:
            return [coll.action(e, name, k, self.ranks, self.shapes, self.peers)]
        self.ti.point_to_point[name] += 1
        row = self.shapes[(name, group, k)]
        return subcomm.actions(e, name, self.me, members, row, coll.root_of(name, row))
