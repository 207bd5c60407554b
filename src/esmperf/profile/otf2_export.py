"""A profile's trace (`esmperf profile --trace`, trace.py) as an OTF2 archive, the format Vampir,
Scalasca, otf2-print and the `otf2` Python reader read (written with PyPI's `otf2`, which bundles
the OTF2 C library).

One location group (an MPI process) per rank on a system-tree node per host, one location per
thread. Every MPI call is an enter/leave of its region with, inside, its messages: a send when
posted (MPI_Send, MPI_Isend, a persistent send at its MPI_Start), a receive when completed, with
the source and tag of its status; a blocking collective is a collective begin/end with its bytes.
Regions (`MPI_Pcontrol`) are enters and leaves of user regions. Ranks in message and collective
events are ranks of the event's communicator: each communicator is written with the group of its
members' world ranks (the header's `comms`), which index the group of every rank's main thread,
so a reader maps a communicator rank to its process. docs/profiler.md ("OTF2") says what is not
written."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import otf2

from esmperf.profile.trace import CALL, ENTER, EXIT, RECEIVED, START, Event, RankTrace, TraceError

SENDS = {"MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend", "MPI_Sendrecv", "MPI_Sendrecv_replace"}
ISENDS = {"MPI_Isend", "MPI_Issend", "MPI_Ibsend", "MPI_Irsend"}
SEND_INITS = {"MPI_Send_init", "MPI_Ssend_init", "MPI_Bsend_init", "MPI_Rsend_init"}
IRECVS = {"MPI_Irecv", "MPI_Imrecv"}
COLLECTIVES = {
    f"MPI_{name.capitalize()}": getattr(otf2.CollectiveOp, name.upper())
    for name in (
        *("barrier", "bcast", "gather", "gatherv", "scatter", "scatterv", "allgather"),
        *("allgatherv", "alltoall", "alltoallv", "alltoallw", "allreduce", "reduce"),
        *("reduce_scatter", "reduce_scatter_block", "scan", "exscan"),
    )
}
NO_ROOT = 0xFFFFFFFF  # OTF2_UNDEFINED_UINT32: the trace does not record a collective's root


def write_otf2(traces: list[RankTrace], directory: Path) -> Path:
    """Write the traces as the OTF2 archive `directory`/traces.otf2; return that anchor file."""
    directory = Path(directory)
    if directory.exists() and any(directory.iterdir()):
        raise TraceError(
            f"{directory} exists and is not empty: give a new folder for the OTF2 archive "
            "(OTF2 never writes over an archive)"
        )
    origin = min(t.header["init_epoch"] for t in traces)
    with otf2.writer.open(str(directory), timer_resolution=1_000_000_000) as archive:
        registry = archive.definitions
        locations = _locations(registry, traces)
        comms = _Communicators(registry, [locations[(t.rank, 0)] for t in traces])
        regions = _Regions(registry)
        for trace in traces:
            shift = round((trace.header["init_epoch"] - origin) * 1e9)
            by_id = comms.of_rank(trace)
            threads: dict[int, list[Event]] = defaultdict(list)
            for event in trace.events:
                threads[event.thread].append(event)
            for thread, events in sorted(threads.items()):
                writer = archive.event_writer_from_location(locations[(trace.rank, thread)])
                _write_thread(writer, events, shift, regions, by_id, comms.world)
        archive._realtime_timestamp = origin  # the run's start, not the moment of writing
    return directory / "traces.otf2"


def _locations(registry: Any, traces: list[RankTrace]) -> dict[tuple[int, int], Any]:
    """(rank, thread) -> location; ranks grouped under a system-tree node per host."""
    machine = registry.system_tree_node("machine", class_name="machine")
    hosts: dict[str, Any] = {}
    locations = {}
    for trace in traces:
        host = str(trace.header.get("host", "host"))
        if host not in hosts:
            hosts[host] = registry.system_tree_node(host, class_name="node", parent=machine)
        process = registry.location_group(
            f"rank {trace.rank}",
            location_group_type=otf2.LocationGroupType.PROCESS,
            system_tree_parent=hosts[host],
        )
        for thread in sorted({e.thread for e in trace.events} | {0}):
            name = "main" if thread == 0 else f"thread {thread}"
            locations[(trace.rank, thread)] = registry.location(
                f"rank {trace.rank} {name}", type=otf2.LocationType.CPU_THREAD, group=process
            )
    return locations


class _Communicators:
    """One OTF2 communicator per group of world ranks, MPI_COMM_WORLD's first."""

    def __init__(self, registry: Any, main_threads: list[Any]) -> None:
        self.registry = registry
        registry.group(
            "MPI ranks",
            group_type=otf2.GroupType.COMM_LOCATIONS,
            paradigm=otf2.Paradigm.MPI,
            members=main_threads,
        )
        self.by_members: dict[tuple[int, ...], Any] = {}
        self.world = None
        self.world = self._comm(tuple(range(len(main_threads))), "MPI_COMM_WORLD")

    def _comm(self, members: tuple[int, ...], name: str) -> Any:
        if members not in self.by_members:
            group = self.registry.group(
                f"{name} group",
                group_type=otf2.GroupType.COMM_GROUP,
                paradigm=otf2.Paradigm.MPI,
                members=members,
            )
            self.by_members[members] = self.registry.comm(name, group=group, parent=self.world)
        return self.by_members[members]

    def _name(self, members: tuple[int, ...], world: tuple[int, ...]) -> str:
        if members == world:
            return "MPI_COMM_WORLD"
        if len(members) == 1:
            return f"MPI_COMM_SELF of rank {members[0]}"
        return f"communicator {len(self.by_members)} ({len(members)} ranks)"

    def of_rank(self, trace: RankTrace) -> dict[int, tuple[Any, tuple[int, ...]]]:
        """The rank's communicator ids -> (OTF2 communicator, its members' world ranks)."""
        world = tuple(range(int(trace.header["ranks"])))
        mapped = {}
        for comm in trace.header["comms"]:
            members = world if comm["world"] else tuple(comm.get("members") or ())
            if members:
                mapped[comm["id"]] = (self._comm(members, self._name(members, world)), members)
        return mapped


class _Regions:
    def __init__(self, registry: Any) -> None:
        self.registry = registry
        self.made: dict[tuple[str, bool], Any] = {}

    def get(self, name: str, mpi: bool) -> Any:
        if (name, mpi) not in self.made:
            self.made[(name, mpi)] = self.registry.region(
                name,
                region_role=otf2.RegionRole.FUNCTION if mpi else otf2.RegionRole.CODE,
                paradigm=otf2.Paradigm.MPI if mpi else otf2.Paradigm.USER,
            )
        return self.made[(name, mpi)]


def _write_thread(
    writer: Any,
    events: list[Event],
    shift: int,
    regions: _Regions,
    comms: dict[int, tuple[Any, tuple[int, ...]]],
    world: Any,
) -> None:
    """One thread's events in time order: calls with their messages, regions properly nested
    (a region left open is closed at the thread's last event; a leave without its enter is
    dropped)."""
    attached: dict[tuple[str, int], list[Event]] = defaultdict(list)
    for e in events:
        if e.kind in (START, RECEIVED):
            attached[(e.name, e.t0)].append(e)
    send_init_tags: dict[int, int] = {}  # a persistent send's request -> its tag
    open_regions: list[str] = []
    last = 0
    for e in events:
        t0, t1 = shift + e.t0, shift + e.t1
        last = max(last, t1)
        if e.kind == ENTER:
            open_regions.append(e.name)
            writer.enter(t0, regions.get(e.name, mpi=False))
        elif e.kind == EXIT and e.name in open_regions:
            while open_regions:
                name = open_regions.pop()
                writer.leave(t0, regions.get(name, mpi=False))
                if name == e.name:
                    break
        elif e.kind == CALL:
            base = e.name.removesuffix("_c")
            if base in SEND_INITS and e.req:
                send_init_tags[e.req] = e.tag
            comm, members = comms.get(e.comm, (world, ()))
            writer.enter(t0, regions.get(e.name, mpi=True))
            _posted(writer, e, base, t0, comm, members)
            for done in attached.pop((e.name, e.t1), []):
                comm_done, members_done = comms.get(done.comm, (comm, members))
                if done.kind == START and done.peer >= 0:  # a persistent send
                    receiver = _rank_in(members_done, done.peer)
                    tag = send_init_tags.get(done.req, 0)
                    writer.mpi_isend(t1, receiver, comm_done, tag, done.sent, done.req)
                elif done.kind == START:  # a persistent receive
                    writer.mpi_irecv_request(t1, done.req)
                elif done.kind == RECEIVED and done.src >= 0:
                    sender = _rank_in(members_done, done.src)
                    if done.req:
                        writer.mpi_irecv(t1, sender, comm_done, done.tag, done.recv, done.req)
                    else:
                        writer.mpi_recv(t1, sender, comm_done, done.tag, done.recv)
            if base in COLLECTIVES:
                writer.mpi_collective_end(t1, COLLECTIVES[base], comm, NO_ROOT, e.sent, e.recv)
            writer.leave(t1, regions.get(e.name, mpi=True))
    for name in reversed(open_regions):
        writer.leave(last, regions.get(name, mpi=False))


def _posted(writer: Any, e: Event, base: str, t0: int, comm: Any, members: tuple[int, ...]):
    """What a call posts at its start: a send, a receive request, a collective's begin."""
    if base in SENDS and e.peer >= 0:
        writer.mpi_send(t0, _rank_in(members, e.peer), comm, e.tag, e.sent)
    elif base in ISENDS and e.peer >= 0:
        writer.mpi_isend(t0, _rank_in(members, e.peer), comm, e.tag, e.sent, e.req)
    elif base in IRECVS and e.req:
        writer.mpi_irecv_request(t0, e.req)
    elif base in COLLECTIVES:
        writer.mpi_collective_begin(t0)


def _rank_in(members: tuple[int, ...], world_rank: int) -> int:
    """A world rank's rank in the communicator of these members (world: itself)."""
    return members.index(world_rank) if members else world_rank
