"""Knobs: one name and a few portable values for each MPI tuning the seeds study, mapped to
each MPI library's own variables or launcher options. Every run records the knobs it asked for
and the exact variables and options that implement them.

The analogs on one node (see docs/studies.md):
- transport    shm | tcp             interconnect (InfiniBand vs Ethernet): shared memory vs TCP
                                     loopback, forced onto `lo`
- single_copy  on | off              KNEM: Open MPI's CMA single copy (MPICH 4.2+ CMA)
- connections  on_demand | eager     ParaStation's PSP_ONDEMAND: Open MPI `mpi_preconnect_mpi`
- binding      none | core | socket  process binding (the decks' --bind-to-core)
- <op>_algorithm (allreduce, bcast, barrier, reduce, allgather, alltoall): collective algorithm
  selection, a choice of CPU algorithm: Open MPI `coll_tuned_*`, MPICH
  `MPIR_CVAR_*_INTRA_ALGORITHM` (the decks' FCA is the smpi stack's `offload` knob).

Knobs of the simulated stack `smpi` (SimGrid SMPI, docs/simulate.md), unsupported elsewhere:
- platform       gige | 10gige | ib-qdr | ib-fdr | ib-hdr   the simulated interconnect; the node
                 count is ranks / ranks_per_node (the study's axis; 1 rank per node if unset)
- topology       crossbar | fat-tree-1to1 | fat-tree-2to1 | fat-tree-4to1 | torus   how the
                 nodes are wired: one non-blocking switch, a 2-level fat-tree blocking B:1 at
                 its leaves, or a 3-D torus (mpi/platforms.py)
- network_model  cm02 | smpi | ns3 | cm02-tcp   SimGrid's analytic latency + n/bandwidth, its
                 piecewise model calibrated on a TCP cluster, TCP packet by packet through ns-3
                 (mpi/ns3_network.py), or cm02 with incast derived from ns-3 (mpi/tcp_model.py);
                 the last two on the Ethernet platforms only
- switch_buffer  low | high      a switch port's packet buffer under ns3 or cm02-tcp: the ends
                                 of the band the era's switches give (mpi/ns3_network.py)
- tcp_kernel     none | 1hz-per-bit   the kernel's CPU cost of TCP between nodes, a rule of
                 thumb at the machine's clock (mpi/tcp_model.py)
- bandwidth_end  low | high      an interconnect's bandwidth range (an adapter's PCIe Max
                                 Payload Size, mpi/links.py): which end
- rails          1 | 2           adapters per node, striped as Open MPI does (mpi/links.py)
- node_channel   per_pair | shared   on-node messages: each pair its own loopback, or also the
                 node's memory as one channel they share (needs a machine; mpi/links.py)
- computation    measured | off | model   charge each rank's measured compute bursts, nothing
                 (the network alone), or each kernel's ECM time: its flops at the core's peak
                 overlapped with its bytes over its node's bandwidth share (deterministic;
                 needs a machine)
- machine        none | dell-m610 | dell-r815 | juropa   the simulated node (mpi/machines.py): its
                 memory bandwidth shared by the ranks on it, its core speed relative to here
- frequency      nominal | MHz   the cores' clock among the machine's settings: a kernel's
                 in-core part scales with it, its memory part does not (mpi/machines.py)
- noise          none | linux-2007-low | linux-2007-high | linux-today-low | linux-today-high
                 OS noise on every simulated node (mpi/noise.py), with noise_seed 0-9 the
                 nodes' phases
- file_system    none | nfs-low | nfs-high   the shared file system as one rank reads it: NFS
                 over GigE from the head node, the published single-client band
                 (mpi/file_system.py), for workloads that read input on a root
- offload        none | fca | sharp   Barrier, Bcast, Reduce, Allreduce, Allgather(v) in the
                 switch tree, a published latency per level (mpi/offload.py): the FCA of the
                 seeds' decks as the hardware did it, not as an algorithm choice
- eager_limit    auto | simgrid | mpi   sends below it eager, from it rendezvous: SMPI's choice
                 (65536 bytes below FOLD_AUTO_RANKS ranks, none from it) or the seeds' MPI's
                 limit for the platform at every scale (mpi/eager.py); auto = mpi where that
                 limit is sourced (gige, 10gige, ib-qdr, ib-fdr), simgrid elsewhere
- host_overhead  none | low | high   the CPU time each message costs its sender and receiver
                 (LogGP's o), the ends of the published band for the platform's family
                 (mpi/host_overhead.py; needs eager sends: eager_limit auto or mpi;
                 gige, 10gige, ib-qdr, ib-fdr)
- collectives    simgrid | ompi | mpich   which rules choose SMPI's collective algorithms:
                 SimGrid's defaults, or Open MPI's or MPICH's decision rules as SimGrid
                 transcribes them (smpi/coll-selector); an <op>_algorithm knob overrides them
                 for its collective
- fold           auto | on | off  folded simulation (esm_fold.h): fields and replicated data
                 shared between simulated ranks, kernels sampled then charged; auto folds from
                 FOLD_AUTO_RANKS ranks up, for the workloads that fold

A value a library cannot honour is `Unsupported` with the reason: the runner skips those runs
and says so; it never runs them with the knob silently ignored.

This module says what the knobs are; their values' implementation: knob_setting.py (the entry
point), library_knobs.py (Open MPI, MPICH, Intel MPI), smpi_knobs.py (SimGrid's options) and
collectives.py (each library's collective algorithms by portable name).
"""

import re
from dataclasses import dataclass, field
from pathlib import Path

from esmperf.mpi import file_system, links, machines, noise, ns3_network, offload, platforms
from esmperf.mpi.collectives import COLLECTIVES, MPICH_ALGORITHMS, OPENMPI_ALGORITHMS
from esmperf.mpi.stacks import SMPI, Stack

# fold = auto folds a simulated run of a workload that folds from this many ranks up. A full
# simulation runs every rank's computation one after another here, so a seed-size problem costs
# its whole computation whatever the rank count: pflotran 100_100_100 unfolded on 48-192
# simulated ranks took 15-25 minutes a run, folded 2-9 s of CPU for 2 steps (docs/pflotran.md).
# The seeds' smallest runs are one 48-core node: folding starts below it.
FOLD_AUTO_RANKS = 32


@dataclass(frozen=True)
class Knob:
    name: str
    values: tuple[str, ...]
    baseline: str  # the library default, against which gains are measured
    analog: str  # what it stands for in the seeds
    description: str
    # why it cannot change anything on one rank ('' if it can): there it is a control, which
    # must show no effect (report/conditions.py)
    inert_alone: str = ""


@dataclass(frozen=True)
class Implementation:
    """Which MPI library a stack is, for the knob tables: family, major version, details."""

    name: str  # "openmpi", "mpich", "impi"
    version: tuple[int, ...]
    netmods: tuple[str, ...] = ()  # MPICH ch4 network modules ("ucx", "ofi")

    @property
    def major(self) -> int:
        return self.version[0] if self.version else 0


@dataclass(frozen=True)
class KnobSetting:
    """What implements a set of knobs for one stack: variables and launcher options."""

    env: dict[str, str] = field(default_factory=dict)
    launcher_args: tuple[str, ...] = ()
    files: tuple[tuple[Path, str], ...] = ()  # (path, text) to write before the run (SMPI)


class Unsupported(Exception):
    """The stack cannot honour this knob value; the message says why."""


def _algorithm_knob(op: str) -> Knob:
    names = sorted({*OPENMPI_ALGORITHMS[op], *MPICH_ALGORITHMS[op]})
    return Knob(
        name=f"{op}_algorithm",
        values=("default", *names),
        baseline="default",
        analog="",  # a CPU algorithm stands in for no seed setting (FCA is `offload`)
        description=f"MPI_{op.capitalize()} algorithm: default = the library's own choice",
        inert_alone="a collective on one rank sends no message",
    )


KNOBS: dict[str, Knob] = {
    knob.name: knob
    for knob in (
        Knob(
            "transport",
            ("shm", "tcp"),
            "shm",
            "interconnect (InfiniBand vs Ethernet)",
            "how ranks on this node talk: shared memory, or TCP forced onto loopback",
            "no message crosses the transport on one rank",
        ),
        Knob(
            "single_copy",
            ("on", "off"),
            "on",
            "KNEM",
            "single-copy (CMA) transfers of large messages within a node",
            "one rank has no on-node peer to copy from",
        ),
        Knob(
            "connections",
            ("on_demand", "eager"),
            "on_demand",
            "PSP_ONDEMAND",
            "connection set-up: lazily at the first message, or all at MPI_Init",
            "one rank has no peer to connect to",
        ),
        Knob("binding", ("none", "core", "socket"), "none", "--bind-to-core", "process binding"),
        *(_algorithm_knob(op) for op in COLLECTIVES),
        Knob(
            "platform",
            tuple(platforms.INTERCONNECTS),
            "gige",
            "interconnect (1GigE vs IB)",
            "simulated cluster interconnect (smpi stack only; docs/simulate.md)",
        ),
        Knob(
            "topology",
            platforms.TOPOLOGIES,
            "crossbar",
            "cluster size and blocking",
            "simulated cluster wiring: one non-blocking switch, a 2-level fat-tree (leaves of "
            f"{platforms.LEAF_NODES} nodes, B:1 blocking) or a 3-D torus (smpi stack only)",
        ),
        Knob(
            "network_model",
            ("cm02", "smpi", "ns3", "cm02-tcp"),
            "cm02",
            "simulation model",
            "SimGrid network model: cm02 = latency + n/bandwidth exactly, smpi = SimGrid's "
            "piecewise model calibrated on a TCP cluster, ns3 = TCP packet by packet through "
            "ns-3 with Linux's constants (connections kept open per pair of ranks on `make "
            "setup-simgrid`'s SimGrid 4.1, one per message on SimGrid's own binding), "
            "cm02-tcp = cm02 with switch-port incast and TCP's retransmission timeout derived "
            "from ns-3 (mpi/tcp_model.py); ns3 and cm02-tcp gige and 10gige only (smpi stack "
            "only)",
        ),
        Knob(
            "tcp_kernel",
            ("none", "1hz-per-bit"),
            "none",
            "simulation model",
            "the kernel's CPU cost of TCP between nodes: none, or 1 Hz per bit/s at each end "
            "at the machine's clock (Foong et al., ISPASS 2003), which caps a transfer at "
            "clock / 8 bytes/s (mpi/tcp_model.py; gige and 10gige, needs a machine; smpi "
            "stack only)",
        ),
        Knob(
            "switch_buffer",
            ns3_network.SWITCH_BUFFER_ENDS,
            "low",
            "Ethernet switch",
            "a switch port's packet buffer under network_model = ns3 or cm02-tcp: the low or "
            "high end of "
            "the band the era's switches give (smpi stack only)",
        ),
        Knob(
            "bandwidth_end",
            links.BANDWIDTH_ENDS,
            "low",
            "interconnect adapter (host bus)",
            "which end of an interconnect's bandwidth range: InfiniBand adapters on PCIe "
            "with a Max Payload Size of 128 (low) or 256 bytes (high); the same figure where "
            "there is no range (mpi/links.py; smpi stack only)",
            "one rank sends no message",
        ),
        Knob(
            "rails",
            links.RAILS,
            "1",
            "dual rail (two adapters per node)",
            "adapters per node, each on its own fabric, as Open MPI stripes them: every link "
            "at rails x its bandwidth, the same latency (mpi/links.py; smpi stack only)",
            "one rank sends no message",
        ),
        Knob(
            "node_channel",
            links.NODE_CHANNELS,
            "per_pair",
            "node memory (shared-memory MPI)",
            "messages between ranks of a node: each pair its own loopback, or also one "
            "channel all of them share, the node's memory bandwidth over 2 (needs a machine; "
            "crossbar only; mpi/links.py; smpi stack only)",
            "one rank has no on-node peer",
        ),
        Knob(
            "computation",
            ("measured", "off", "model"),
            "measured",
            "simulation model",
            "simulated compute: each rank's bursts as measured on this machine's core, none "
            "(network only, deterministic), or each kernel's flops at the core's peak "
            "overlapped with its bytes over the node's bandwidth share (ECM; deterministic; "
            "needs a machine; smpi stack only)",
        ),
        Knob(
            "machine",
            machines.MACHINE_NAMES,
            "none",
            "cluster node",
            "simulated node: none = a core of this machine per rank, no shared memory "
            "bandwidth; or a seed's or today's node (cores, memory bandwidth, core speed; "
            "smpi stack only)",
        ),
        Knob(
            "frequency",
            machines.FREQUENCIES,
            "nominal",
            "CPU core frequency",
            "the simulated cores' clock: nominal, or MHz among the machine's settings; a "
            "kernel's in-core time scales with 1/clock, its memory time does not (needs a "
            "machine and computation measured or model; smpi stack only)",
        ),
        Knob(
            "eager_limit",
            ("auto", "simgrid", "mpi"),
            "auto",
            "MPI eager limit (btl_tcp/btl_openib_eager_limit)",
            "sends below it eager, from it rendezvous: simgrid = SMPI's default below "
            f"{FOLD_AUTO_RANKS} ranks and every send a rendezvous from it; mpi = Open MPI's "
            "eager limit of the platform's transport at every scale (mpi/eager.py); auto = mpi "
            "where that limit is sourced, simgrid elsewhere (smpi stack only)",
            "one rank sends no message",
        ),
        Knob(
            "host_overhead",
            ("none", "low", "high"),
            "none",
            "MPI stack's CPU cost per message (LogGP o)",
            "the CPU time each eager message costs its sender (MPI_Send, MPI_Isend) and its "
            "receiver: none, or the low or high end of the published figures for the "
            "platform's family (mpi/host_overhead.py; needs eager sends: eager_limit auto or "
            "mpi; smpi stack only)",
            "one rank sends no message",
        ),
        Knob(
            "collectives",
            ("simgrid", "ompi", "mpich"),
            "simgrid",
            "the MPI library's collective algorithms",
            "which rules choose the collective algorithms: SimGrid SMPI's defaults, or Open "
            "MPI's or MPICH's decision rules as SimGrid transcribes them (smpi/coll-selector); "
            "an <op>_algorithm knob overrides them for its collective (smpi stack only)",
            "a collective on one rank sends no message",
        ),
        Knob(
            "fold",
            ("auto", "on", "off"),
            "auto",
            "simulation at scale",
            "folded simulation: fields shared between simulated ranks, kernels timed on their "
            f"first calls then charged; auto = on from {FOLD_AUTO_RANKS} ranks for workloads "
            "that fold (smpi stack only)",
        ),
        Knob(
            "noise",
            noise.NOISE_NAMES,
            "none",
            "OS noise (jitter)",
            "OS noise on every simulated node: none, or a published signature of periodic "
            "detours (timer interrupts) that slow each node's computation (mpi/noise.py; smpi "
            "stack only; needs computation measured or model)",
        ),
        Knob(
            "noise_seed",
            noise.NOISE_SEEDS,
            "0",
            "OS noise (jitter)",
            "seed of the nodes' noise phases: the same seed, the same simulated times "
            "(smpi stack only)",
        ),
        Knob(
            "file_system",
            file_system.FILE_SYSTEM_NAMES,
            "none",
            "shared file system",
            "the cluster's shared file system as one rank reads it: none, or NFS over GigE "
            "from the head node at the low (60 MB/s, from the server's disk) or high (120 "
            "MB/s, from its cache) end of the published single-client rates "
            "(mpi/file_system.py; smpi stack only, for workloads that read input)",
        ),
        Knob(
            "offload",
            offload.OFFLOAD_NAMES,
            "none",
            "collective offload (Mellanox FCA, SHARP)",
            "Barrier, Bcast, Reduce, Allreduce and Allgather(v) run in the switch tree: a "
            "published latency per tree level, no CPU time, no noise (mpi/offload.py; smpi "
            "stack only, InfiniBand platforms, not the torus)",
            "a collective on one rank sends no message",
        ),
    )
}
SIMULATION_KNOBS = (
    "platform",
    "topology",
    "bandwidth_end",
    "rails",
    "node_channel",
    "network_model",
    "switch_buffer",
    "tcp_kernel",
    "computation",
    "machine",
    "frequency",
    "eager_limit",
    "host_overhead",
    "collectives",
    "fold",
    "noise",
    "noise_seed",
    "file_system",
    "offload",
)


def implementation_of(stack: Stack) -> Implementation:
    """The library behind a stack, from its MPI_Get_library_version string."""
    text = stack.version
    match = re.search(r"Open MPI v(\d+)\.(\d+)(?:\.(\d+))?", text)
    if match:
        return Implementation("openmpi", tuple(int(g) for g in match.groups() if g))
    match = re.search(r"Intel\(R\) MPI Library (\d+)(?:\.(\d+))?", text)
    if match:
        return Implementation("impi", tuple(int(g) for g in match.groups() if g))
    match = re.search(r"SimGrid SMPI (\d+)\.(\d+)(?:\.(\d+))?", text)
    if match:
        return Implementation(SMPI, tuple(int(g) for g in match.groups() if g))
    match = re.search(r"MPICH Version:\s*(\d+)\.(\d+)(?:\.(\d+))?", text)
    if match:
        device = re.search(r"MPICH Device:\s*(.*)", text)
        netmods = tuple(re.findall(r"ucx|ofi", device.group(1))) if device else ()
        return Implementation("mpich", tuple(int(g) for g in match.groups() if g), netmods)
    return Implementation(stack.family, ())


def check_knob(name: str, value: str) -> None:
    """ValueError with a clear message for an unknown knob or value."""
    knob = KNOBS.get(name)
    if knob is None:
        raise ValueError(f"unknown knob {name!r} (knobs: {', '.join(KNOBS)}; see `esmperf knobs`)")
    if value not in knob.values:
        raise ValueError(f"knob {name} has no value {value!r} (values: {', '.join(knob.values)})")
