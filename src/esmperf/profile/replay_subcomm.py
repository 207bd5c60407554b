"""Collectives on a communicator SimGrid's replay cannot name (its collective actions run on
MPI_COMM_WORLD: a model's own communicator in a coupled run, a row of a process grid), replayed
as the point-to-point messages of a linear algorithm among the communicator's members (their
world ranks, from the trace header's `comms`): a fan-in to a root (reduce, gather(v)), a
fan-out from it (bcast, scatter(v)), both (barrier, allreduce, reduce_scatter: through the
first member), everyone to everyone (allgather(v), alltoall, alltoallv: the per-peer counts the
trace records), a chain (scan, exscan). The bytes are the run's; the algorithm is not the MPI
library's (a tree or a ring moves them in fewer steps), so `esmperf trace` says how many
collectives were replayed this way. Each message carries SUBCOMM_TAG, which keeps them apart
from the program's own, and is waited for by its own `wait`.
"""

from __future__ import annotations

from esmperf.profile.trace import Event

SUBCOMM_TAG = 1_000_000_007


def exchange(me: int, sends: list[tuple[int, int]], recvs: list[tuple[int, int]]) -> list[str]:
    """Post every send and receive ((peer, bytes)), then wait for each: no order can deadlock."""
    sends = [(p, n) for p, n in sends if p != me]
    recvs = [(p, n) for p, n in recvs if p != me]
    return (
        [f"isend {p} {SUBCOMM_TAG} {n}" for p, n in sends]
        + [f"irecv {p} {SUBCOMM_TAG} {n}" for p, n in recvs]
        + [f"wait {me} {p} {SUBCOMM_TAG}" for p, _ in sends]
        + [f"wait {p} {me} {SUBCOMM_TAG}" for p, _ in recvs]
    )


def fan_in(me: int, members: tuple[int, ...], root: int, sizes: list[int]) -> list[str]:
    """Every member sends its sizes[j] bytes to member `root` (an index)."""
    if members[root] == me:
        return exchange(me, [], list(zip(members, sizes)))
    return exchange(me, [(members[root], sizes[members.index(me)])], [])


def fan_out(me: int, members: tuple[int, ...], root: int, sizes: list[int]) -> list[str]:
    """Member `root` (an index) sends member j its sizes[j] bytes."""
    if members[root] == me:
        return exchange(me, list(zip(members, sizes)), [])
    return exchange(me, [], [(members[root], sizes[members.index(me)])])


def pairwise(me: int, counts: dict[int, tuple[int, int]]) -> list[str]:
    """An alltoallv as its messages (`counts`: world peer -> bytes to it, from it)."""
    return exchange(
        me,
        [(p, sent) for p, (sent, _) in sorted(counts.items()) if sent],
        [(p, recv) for p, (_, recv) in sorted(counts.items()) if recv],
    )


def actions(
    e: Event, name: str, me: int, members: tuple[int, ...], row: list[tuple[int, int]], root: int
) -> list[str]:
    """The point-to-point actions of collective `name` (e) on the communicator of `members`;
    `row`: each member's (sent, recv) bytes in this call, `root` the root's index. MPI_Alltoallv
    is pairwise()'s."""
    n = len(members)
    i = members.index(me)
    sent = [s for s, _ in row]
    recv = [r for _, r in row]
    if name == "MPI_Barrier":
        return fan_in(me, members, 0, [0] * n) + fan_out(me, members, 0, [0] * n)
    if name == "MPI_Bcast":
        return fan_out(me, members, root, [max(e.sent, e.recv)] * n)
    if name == "MPI_Reduce":
        return fan_in(me, members, root, [e.sent] * n)
    if name == "MPI_Allreduce":
        return fan_in(me, members, 0, [e.sent] * n) + fan_out(me, members, 0, [e.sent] * n)
    if name in ("MPI_Gather", "MPI_Gatherv"):
        return fan_in(me, members, root, sent)
    if name in ("MPI_Scatter", "MPI_Scatterv"):
        return fan_out(me, members, root, recv)
    if name in ("MPI_Allgather", "MPI_Allgatherv"):
        others = [p for p in members if p != me]
        return exchange(me, [(p, e.sent) for p in others], list(zip(members, sent)))
    if name == "MPI_Alltoall":
        return exchange(
            me, [(p, e.sent // n) for p in members], [(p, e.recv // n) for p in members]
        )
    if name in ("MPI_Reduce_scatter", "MPI_Reduce_scatter_block"):
        total = sum(recv)
        return fan_in(me, members, 0, [total] * n) + fan_out(me, members, 0, recv)
    # MPI_Scan, MPI_Exscan: a chain, member i receives the prefix from i - 1, then passes it on
    before = [f"recv {members[i - 1]} {SUBCOMM_TAG} {e.sent}"] if i > 0 else []
    return before + ([f"send {members[i + 1]} {SUBCOMM_TAG} {e.sent}"] if i < n - 1 else [])
