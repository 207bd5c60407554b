"""Collectives of a trace as SimGrid time-independent actions (replay.py writes the rest).

SimGrid 3.32's replay (smpi_replay.cpp) knows these collectives, on MPI_COMM_WORLD only, sizes
in bytes (the trace's `init` names no datatype, so MPI_BYTE):
`barrier`, `bcast BYTES ROOT`, `reduce BYTES 0 ROOT`, `allreduce BYTES 0`, `scan BYTES 0`,
`exscan BYTES 0`, `alltoall SEND RECV` (per peer), `allgather SEND RECV` (RECV per peer),
`gather SEND RECV ROOT`, `scatter SEND RECV ROOT`, `alltoallv SENDBUF S0..Sn-1 RECVBUF R0..Rn-1`,
`allgatherv SEND R0..Rn-1`, `gatherv SEND R0..Rn-1 ROOT`, `scatterv S0..Sn-1 RECV ROOT`,
`reducescatter R0..Rn-1 0`. The numbers a v-collective needs from other ranks come from their
traces: the k-th call of a collective on one communicator is the same call on every rank, so
rank i's bytes in its k-th call are its entry in everyone's counts; a root is the rank whose
k-th call sends (bcast, scatter) or receives (reduce, gather) the root's bytes. Alltoallv's
per-peer counts are the rank's own, recorded by the profiler as PEER_BYTES events after the call
(traces written before they were are folded: `no per-peer counts in the trace`). Collectives
on other communicators are replay_subcomm.py's; their occurrences are counted per group (the
communicator's members), the world's as group None.
"""

from __future__ import annotations

from collections import Counter

from esmperf.profile.trace import PEER_BYTES, Event, RankTrace

# MPI collective -> its TI action
COLLECTIVES = {
    "MPI_Barrier": "barrier",
    "MPI_Bcast": "bcast",
    "MPI_Reduce": "reduce",
    "MPI_Allreduce": "allreduce",
    "MPI_Scan": "scan",
    "MPI_Exscan": "exscan",
    "MPI_Alltoall": "alltoall",
    "MPI_Alltoallv": "alltoallv",
    "MPI_Allgather": "allgather",
    "MPI_Allgatherv": "allgatherv",
    "MPI_Gather": "gather",
    "MPI_Gatherv": "gatherv",
    "MPI_Scatter": "scatter",
    "MPI_Scatterv": "scatterv",
    "MPI_Reduce_scatter": "reducescatter",
    "MPI_Reduce_scatter_block": "reducescatter",
}
ROOT_SENDS = {"MPI_Bcast", "MPI_Scatter", "MPI_Scatterv"}
ROOT_RECEIVES = {"MPI_Reduce", "MPI_Gather", "MPI_Gatherv"}
# (collective, group, occurrence) -> each member's (sent, recv) bytes in it, in rank order
Shapes = dict[tuple, list[tuple[int, int]]]


def base_name(function: str) -> str:
    """MPI_X of MPI_X_c (MPI-4 large counts)."""
    return function[:-2] if function.endswith("_c") else function


Group = str | None  # a communicator's members as "1,2,3" (world ranks; a string keeps its hash,
# a tuple is hashed again at every lookup); None: MPI_COMM_WORLD's group


def group_of(members: tuple[int, ...]) -> str:
    return ",".join(map(str, members))


def collectives(trace: RankTrace) -> list[tuple[str, Group, int, Event]]:
    """The main thread's collective calls on communicators whose members the trace knows:
    (name, group, this rank's index in it, event); the world's group is None."""
    world = trace.world_comms()
    groups = {
        c: (group_of(m), m.index(trace.rank))
        for c, m in trace.comm_members().items()
        if trace.rank in m
    }
    out = []
    for e in trace.events:
        name = base_name(e.name)
        if e.kind != 0 or e.thread != 0 or name not in COLLECTIVES:
            continue
        if e.comm in world:
            out.append((name, None, trace.rank, e))
        elif e.comm in groups:
            out.append((name, *groups[e.comm], e))
    return out


def shapes(traces: list[RankTrace]) -> Shapes:
    """Every member's (sent, recv) bytes in each occurrence of each collective on each group:
    (collective, group, occurrence) -> a row in the group's rank order (world ranks for None)."""
    out: Shapes = {}
    for trace in traces:
        seen: Counter = Counter()
        for name, group, index, e in collectives(trace):
            k = seen[(name, group)]
            seen[(name, group)] += 1
            size = len(traces) if group is None else group.count(",") + 1
            out.setdefault((name, group, k), [(0, 0)] * size)[index] = (e.sent, e.recv)
    return out


def peer_bytes(trace: RankTrace) -> dict[tuple[int, int], dict[int, tuple[int, int]]]:
    """(thread, the call's exit) -> {peer: (bytes sent to it, received from it)}: the
    PEER_BYTES events the profiler writes for an alltoallv, keyed to their call."""
    out: dict[tuple[int, int], dict[int, tuple[int, int]]] = {}
    for e in trace.events:
        if e.kind == PEER_BYTES and e.peer >= 0:
            out.setdefault((e.thread, e.t1), {})[e.peer] = (e.sent, e.recv)
    return out


def root_of(name: str, row: list[tuple[int, int]]) -> int:
    if name in ROOT_SENDS:
        return next((rank for rank, (sent, _) in enumerate(row) if sent > 0), 0)
    if name in ROOT_RECEIVES:
        return next((rank for rank, (_, recv) in enumerate(row) if recv > 0), 0)
    return 0


def action(e: Event, name: str, k: int, ranks: int, table: Shapes, peers: dict) -> str:
    """The TI action of the k-th call of collective `name` (e) on MPI_COMM_WORLD's group."""
    verb = COLLECTIVES[name]
    row = table.get((name, None, k), [(0, 0)] * ranks)
    root = root_of(name, row)
    sent = [s for s, _ in row]
    recv = [r for _, r in row]
    if name == "MPI_Barrier":
        return verb
    if name == "MPI_Bcast":
        return f"{verb} {max(e.sent, e.recv)} {root}"
    if name == "MPI_Reduce":
        return f"{verb} {e.sent} 0 {root}"
    if name in ("MPI_Allreduce", "MPI_Scan", "MPI_Exscan"):
        return f"{verb} {e.sent} 0"
    if name == "MPI_Alltoall":
        return f"{verb} {e.sent // ranks} {e.recv // ranks}"
    if name == "MPI_Allgather":
        return f"{verb} {e.sent} {e.recv // ranks}"
    if name == "MPI_Gather":
        return f"{verb} {e.sent} {e.sent} {root}"
    if name == "MPI_Scatter":
        return f"{verb} {e.recv} {e.recv} {root}"
    if name == "MPI_Allgatherv":
        return f"{verb} {e.sent} {_join(sent)}"
    if name == "MPI_Gatherv":
        return f"{verb} {e.sent} {_join(sent)} {root}"
    if name == "MPI_Scatterv":
        return f"{verb} {_join(recv)} {e.recv} {root}"
    if name in ("MPI_Reduce_scatter", "MPI_Reduce_scatter_block"):
        return f"{verb} {_join(recv)} 0"
    counts = peers.get((e.thread, e.t1), {})  # MPI_Alltoallv
    to = [counts.get(p, (0, 0))[0] for p in range(ranks)]
    frm = [counts.get(p, (0, 0))[1] for p in range(ranks)]
    return f"{verb} {sum(to)} {_join(to)} {sum(frm)} {_join(frm)}"


def _join(numbers: list[int]) -> str:
    return " ".join(str(n) for n in numbers)
