"""Simulated clusters for SimGrid SMPI (docs/simulate.md): the named interconnects and
topologies, as data, and the SimGrid platform file and hostfile of one run. Longer than 420
lines: the interconnect table is data, each figure with its derivation and source beside it.

A platform here is one cluster: `nodes` hosts, each with `cores` cores, wired by full-duplex
links of the interconnect's bandwidth. The topology says how:
- crossbar (the default): each host on its own link to one non-blocking switch (SimGrid's
  <cluster> without a backbone: full bisection bandwidth). Between two nodes a message crosses
  the sender's link and the receiver's link, so each link gets half the end-to-end latency:
  with the analytic CM02 network model a message of n bytes takes exactly latency + n /
  bandwidth between nodes (SMPI 3.32 adds 16 bytes to every message, measured by
  tests/test_smpi.py).
- fat-tree-<B>to1: SimGrid's 2-level FAT_TREE, leaves of LEAF_NODES hosts, each leaf with
  LEAF_NODES / B uplinks, one to each spine switch: B:1 blocking (1 = full bisection). The
  links are the crossbar's (half the latency each), so two nodes under one leaf see exactly the
  crossbar's figures, and a message between leaves crosses four links: twice the latency.
- torus: SimGrid's TORUS, a ring per dimension (torus_dimensions), each link one hop carrying
  the whole latency, so nearest neighbours see the table's latency and k hops k times it.
Ranks on one node talk through the node's loopback, given this machine's measured
shared-memory figures: each pair its own (SimGrid's cluster loopback is a FATPIPE), or, with the
node_channel knob, also through a channel all the node's messages share (its memory, links.py).

Computation is not modelled from flops: SMPI measures each computation burst of every rank on
this machine's core (ranks run one at a time, so never oversubscribed) and charges it to the
simulated host. Hosts and SMPI's own reference speed are both HOST_SPEED, so a burst costs
on the simulated node what it cost here (`computation = "off"` charges nothing).
"""

from dataclasses import dataclass
from math import isqrt
from xml.sax.saxutils import quoteattr

from esmperf.errors import EsmperfError
from esmperf.mpi import noise
from esmperf.mpi.links import (
    AS_BEFORE,
    IB_MTU_BYTES,
    IB_QDR_MTU_BYTES,
    PCIE_GEN2_X8,
    PCIE_GEN3_X8,
    PCIE_GEN4_X16,
    LinkChoice,
    Pcie,
    ib_payload_rate,
    tcp_payload_rate,
)

HOST_SPEED = 1e9  # flop/s of every simulated core and SMPI's smpi/host-speed: a 1:1 scaling
MESSAGE_OVERHEAD_BYTES = 16  # SMPI 3.32 charges each message 16 bytes more than its payload
NODE_PREFIX = "node-"


@dataclass(frozen=True)
class Interconnect:
    """One named interconnect: its MPI-level figures between two nodes and where they come from."""

    name: str
    title: str
    # bytes/s: what one MPI pair is delivered: the link's payload rate after framing and
    # packet headers, or its adapter's PCIe slot's if smaller (links.py); or a published
    # ping-pong's (Slingshot-11, EFA)
    bandwidth: float
    latency: float  # seconds: small-message MPI latency between two nodes, one way
    source: str
    # Today's interconnects cite each figure on its own (the seeds' give one `source`): what
    # the bandwidth is and what limits it, and where the latency was measured. A range a
    # source gives is written here with the end used (a figure has one value in the model).
    bandwidth_source: str = ""
    latency_source: str = ""
    # Where the bandwidth has a range (the host bus of the seeds' adapters, links.py), its high
    # end; `bandwidth` is the low end, the baseline (0: no range).
    bandwidth_high: float = 0.0
    # bytes/s on the wire before framing, for models that frame packets themselves (ns-3's
    # TCP); 0: the same as `bandwidth`
    line_rate: float = 0.0

    def bandwidth_at(self, end: str) -> float:
        """The bandwidth at one end ("low", "high") of its range (the `bandwidth_end` knob)."""
        return self.bandwidth_high if end == "high" and self.bandwidth_high else self.bandwidth

    @property
    def wire_rate(self) -> float:
        return self.line_rate or self.bandwidth


# Today's interconnects: the figures their bandwidths are derived from (docs/simulate.md,
# "Today's clusters", shows each derivation).
# InfiniBand data rates (InfiniBand Architecture Specification, the 4x widths): what the lanes
# carry after line encoding (and FEC from HDR on), bytes/s. QDR: 4 lanes of 10 Gb/s signalling,
# 8b/10b. FDR: 4 lanes of 14.0625 Gb/s, 64b/66b. HDR and NDR are named by their data rate, 200
# and 400 Gb/s (4 lanes of 50 and 100 Gb/s after encoding and FEC: no encoding to take off).
IB_QDR_DATA_RATE = 4 * 10e9 * 8 / 10 / 8
IB_FDR_DATA_RATE = 4 * 14.0625e9 * 64 / 66 / 8
IB_HDR_DATA_RATE = 200e9 / 8
IB_NDR_DATA_RATE = 400e9 / 8
# RoCEv2 on Ethernet: a 4096-byte payload carries 82 bytes more on the wire (preamble and
# start delimiter 8, Ethernet header 14, IPv4 20, UDP 8, base transport header 12, invariant
# CRC 4, frame check sequence 4, inter-frame gap 12: IEEE 802.3, IETF RFC 791/768, IBTA RoCEv2
# annex A17); 86 with an 802.1Q VLAN tag, the other end of the range.
ROCE_PACKET_OVERHEAD_BYTES = 82
# Oracle's published bound for RDMA latency between the nodes of its RoCEv2 cluster networks.
ROCE_LATENCY_BOUND = 2.0e-6


def roce(gigabits: int) -> "Interconnect":
    rate = gigabits * 1e9 / 8
    return Interconnect(
        f"roce-{gigabits}",
        f"RoCEv2 over {gigabits} Gigabit Ethernet",
        rate * IB_MTU_BYTES / (IB_MTU_BYTES + ROCE_PACKET_OVERHEAD_BYTES),
        ROCE_LATENCY_BOUND,
        f"{gigabits} Gb/s less 82 bytes of Ethernet/IP/UDP/RoCE framing per 4096-byte packet; "
        "2 us: Oracle's published bound for RDMA latency on its RoCEv2 cluster networks",
        bandwidth_source=f"{gigabits} Gb/s Ethernet (IEEE 802.3) x 4096 / (4096 + 82): "
        f"{rate * 4096 / 4178 / 1e9:.2f} GB/s (with an 802.1Q tag, 86 bytes: "
        f"{rate * 4096 / 4182 / 1e9:.2f} GB/s; used: untagged). Limit: the link; a "
        "ConnectX-6 Dx (100/200 GbE) sits on PCIe Gen4 x16 (NVIDIA ConnectX-6 Dx "
        "documentation), about 28.8 GB/s after 128b/130b and TLP headers",
        latency_source="Oracle Architecture Center, 'Deploy High-performance Computing "
        "(HPC) on Oracle Cloud Infrastructure': RDMA networking between nodes 'provides below "
        "two-microsecond latency', RoCEv2; used: the bound, 2 us. The bound is not given per "
        "link rate: the same for 100 and 200 GbE",
    )


# Published large-message ping-pongs: the one-way times at 2 MiB and 4 MiB, whose difference
# is 2 MiB at the delivered rate (the latency cancels out).
SLINGSHOT11_ONE_WAY_2M_4M = (94.06e-6, 180.44e-6)  # Cray MPICH 8.1.32, EESSI blog 2025-11-14
EFA_HPC6A_ONE_WAY_2M_4M = (379.37e-6, 725.62e-6)  # Intel MPI 2021.6, aws-parallelcluster#6449


def link_or_bus(link: float, bus: Pcie, end: str) -> float:
    """What an adapter delivers: its link's payload rate or its PCIe slot's at `end` of the Max
    Payload Size range, the smaller (links.py)."""
    return min(link, bus.payload_rate(end))


def delivered_rate(one_way_2m_4m: tuple[float, float]) -> float:
    """Bytes/s a published ping-pong delivers between its 2 MiB and 4 MiB messages."""
    return 2 * 1024 * 1024 / (one_way_2m_4m[1] - one_way_2m_4m[0])


# One place for the interconnects (docs/simulate.md prints this table with the sources).
INTERCONNECTS: dict[str, Interconnect] = {
    net.name: net
    for net in (
        Interconnect(
            "gige",
            "1 Gigabit Ethernet (TCP)",
            tcp_payload_rate(1e9 / 8),
            50e-6,
            "1 Gb/s line rate less Ethernet/IP/TCP framing (1448 of 1538 bytes): 117.7 MB/s; "
            "50 us: MPI over TCP on GigE measures 30-60 us one way (the HPC Advisory Council "
            "decks' 1GigE clusters)",
            bandwidth_source="1 Gb/s (IEEE 802.3) x 1448 / 1538: a 1500-byte MTU frame takes "
            "1538 bytes of wire time (preamble 8, header 14, FCS 4, inter-frame gap 12) and "
            "carries 1448 bytes of TCP payload (IPv4 20, TCP 20, timestamps 12: RFC 791, 793, "
            "7323). Limit: the link",
            line_rate=1e9 / 8,
        ),
        Interconnect(
            "10gige",
            "10 Gigabit Ethernet (TCP)",
            tcp_payload_rate(10e9 / 8),
            10e-6,
            "10 Gb/s line rate less Ethernet/IP/TCP framing (1448 of 1538 bytes): 1.177 GB/s; "
            "10 us: MPI over kernel TCP on 10GbE, 8-15 us",
            bandwidth_source="10 Gb/s (IEEE 802.3ae) x 1448 / 1538, the framing of `gige`. "
            "Limit: the link (a PCIe 2.0 x8 10GbE adapter's slot carries over 3 GB/s)",
            line_rate=10e9 / 8,
        ),
        Interconnect(
            "ib-qdr",
            "InfiniBand QDR 4x",
            link_or_bus(ib_payload_rate(IB_QDR_DATA_RATE, IB_QDR_MTU_BYTES), PCIE_GEN2_X8, "low"),
            1.3e-6,
            "ConnectX-2 on PCIe 2.0 x8: 3.368-3.657 GB/s of TLP payload (Max Payload Size "
            "128-256 B), under the link's 3.950 GB/s (32 Gb/s data, 26 header bytes per "
            "2048-byte packet); 1.3 us: ConnectX-2 QDR MPI latency in the HPC Advisory Council "
            "decks",
            bandwidth_source="link: 40 Gb/s signalling, 8b/10b: 4 GB/s x 2048 / 2074 = 3.950 "
            "GB/s. Host bus: PCIe 2.0 x8, 5 GT/s x 8 lanes, 8b/10b: 4 GB/s, less 24 bytes per "
            "TLP: 4 x 128 / 152 = 3.368 GB/s (MPS 128 B, used) to 4 x 256 / 280 = 3.657 GB/s "
            "(MPS 256 B, bandwidth_end = high). Limit: the host bus",
            bandwidth_high=link_or_bus(
                ib_payload_rate(IB_QDR_DATA_RATE, IB_QDR_MTU_BYTES), PCIE_GEN2_X8, "high"
            ),
        ),
        Interconnect(
            "ib-fdr",
            "InfiniBand FDR 4x",
            link_or_bus(ib_payload_rate(IB_FDR_DATA_RATE, IB_MTU_BYTES), PCIE_GEN3_X8, "low"),
            0.7e-6,
            "ConnectX-3 on PCIe 3.0 x8: 6.633 GB/s (MPS 128 B) to the link's 6.775 GB/s (54.5 "
            "Gb/s data, 26 header bytes per 4096-byte packet); 0.7 us: ConnectX-3 FDR MPI "
            "latency (Mellanox)",
            bandwidth_source="link: 4 x 14.0625 Gb/s, 64b/66b: 6.818 GB/s x 4096 / 4122 = "
            "6.775 GB/s. Host bus: PCIe 3.0 x8, 8 GT/s x 8 lanes, 128b/130b: 7.877 GB/s, x 128 "
            "/ 152 = 6.633 GB/s (MPS 128 B, used: the bus limits) or x 256 / 280 = 7.202 GB/s "
            "(MPS 256 B: the link limits, 6.775 GB/s with bandwidth_end = high)",
            bandwidth_high=link_or_bus(
                ib_payload_rate(IB_FDR_DATA_RATE, IB_MTU_BYTES), PCIE_GEN3_X8, "high"
            ),
        ),
        Interconnect(
            "ib-hdr",
            "InfiniBand HDR 4x",
            link_or_bus(ib_payload_rate(IB_HDR_DATA_RATE, IB_MTU_BYTES), PCIE_GEN4_X16, "low"),
            1.2e-6,
            "200 Gb/s data rate less 26 header bytes per 4096-byte packet: 24.84 GB/s; 1.2 us: "
            "Azure HBv3's published RDMA latency on HDR",
            bandwidth_source="200 Gb/s HDR 4x data rate (after 64b/66b and FEC: not taken off "
            "again) x 4096 / 4122 = 24.84 GB/s. Limit: the link; ConnectX-6 on PCIe 4.0 x16 "
            "carries 26.53-28.81 GB/s (MPS 128-256 B)",
            latency_source="Microsoft Learn, 'HBv3-series VM sizes performance and "
            "scalability': RDMA latency 1.2 microseconds (1 byte), 200 Gb/s HDR InfiniBand",
        ),
        Interconnect(
            "ib-ndr",
            "InfiniBand NDR 4x",
            ib_payload_rate(IB_NDR_DATA_RATE, IB_MTU_BYTES),
            2.0e-6,
            "400 Gb/s data rate less 26 header bytes per 4096-byte packet; 2 us: Azure's "
            "published bound for RDMA latency on NDR (< 2 us)",
            bandwidth_source="400 Gb/s NDR 4x data rate (InfiniBand Architecture "
            "Specification) x 4096 / (4096 + 26): 49.68 GB/s. Limit: the link; the host's "
            "ConnectX-7 sits on PCIe Gen5 x16 (NVIDIA ConnectX-7 user manual), 63.0 GB/s after "
            "128b/130b, about 57.6 GB/s after TLP headers (24 bytes per 256-byte payload)",
            latency_source="Microsoft Learn, 'HBv4-series VM sizes performance and "
            "scalability' (2023-05-22): RDMA latency < 2 microseconds (1 byte), 400 Gb/s "
            "one-way; used: the bound itself, 2 us (no lower end published there)",
        ),
        roce(100),
        roce(200),
        Interconnect(
            "slingshot-11",
            "HPE Slingshot-11 (Cassini NIC)",
            delivered_rate(SLINGSHOT11_ONE_WAY_2M_4M),
            2.76e-6,
            "osu_latency on two Slingshot-11 nodes (EESSI blog, 2025-11-14): 2 MiB a "
            "94.06 -> 180.44 us step, 24.28 GB/s; 2.76 us at 1 byte (Cray MPICH)",
            bandwidth_source="200 Gb/s ports (HPE's product description of the "
            "Slingshot 200Gb 64-port switch R4K41B, as resellers publish it: 64 ports each "
            "capable of 200 Gbps), 25 GB/s; delivered 24.28 GB/s, from osu_latency's one-way times at "
            "2 MiB (94.06 us) and 4 MiB (180.44 us), Cray MPICH 8.1.32 on HPE Cray EX "
            "'Olivia' (EESSI blog 'MPI at Warp Speed: EESSI Meets Slingshot-11', "
            "2025-11-14). Limit: the link (HPC Ethernet framing, not published in a form "
            "found here, takes the other 2.9 %)",
            latency_source="same osu_latency: 2.76 us at 1 byte with Cray MPICH 8.1.32 (GPU "
            "buffers on Grace Hopper nodes, so an upper bound for host buffers); the same "
            "post measured 11.71 us with EESSI's Open MPI 5: range 2.76-11.71 us, used 2.76",
        ),
        Interconnect(
            "efa",
            "AWS Elastic Fabric Adapter (hpc6a, 100 Gb/s)",
            delivered_rate(EFA_HPC6A_ONE_WAY_2M_4M),
            9.87e-6,
            "osu_latency on two hpc6a instances (aws/aws-parallelcluster#6449, 2025-08-20): "
            "2 MiB a 379.37 -> 725.62 us step, 6.06 GB/s; 9.87 us at 1 byte (Intel MPI)",
            bandwidth_source="100 Gb/s EFA on hpc6a (12.5 GB/s); delivered 6.06 GB/s, from "
            "osu_latency's one-way times at 2 MiB (379.37 us) and 4 MiB (725.62 us), Intel "
            "MPI 2021.6, EFA installer 1.30, cluster placement group (GitHub "
            "aws/aws-parallelcluster issue 6449, comment of 2025-08-20, 'Cluster 1'). "
            "Limit: what one MPI pair gets over EFA's SRD transport, half the line rate; "
            "the source does not say which part limits it",
            latency_source="same osu_latency: 9.87 us at 1 byte (9.85-10.37 us up to 64 "
            "bytes; used 9.87)",
        ),
    )
}
# Within a node: this machine's shared memory (DESIGN.md: 0.12-0.2 us, 9-13 GB/s measured).
LOOPBACK_BANDWIDTH = 10e9
LOOPBACK_LATENCY = 0.2e-6


# Fat-tree leaves: small, so that the seeds' 4-32 node runs span several leaves (a real leaf
# switch has 18-24 hosts; a 36-port QDR switch gives 18 down and 18 or 9 up).
LEAF_NODES = 4
FAT_TREE_BLOCKING = {"fat-tree-1to1": 1, "fat-tree-2to1": 2, "fat-tree-4to1": 4}
TOPOLOGIES = ("crossbar", *FAT_TREE_BLOCKING, "torus")


class PlatformError(EsmperfError):
    """An unknown interconnect or topology, or an impossible cluster shape."""


def interconnect(name: str) -> Interconnect:
    try:
        return INTERCONNECTS[name]
    except KeyError:
        raise PlatformError(
            f"unknown platform {name!r} (platforms: "
            f"{', '.join(INTERCONNECTS)}; see docs/simulate.md)"
        ) from None


def check_topology(name: str) -> None:
    if name not in TOPOLOGIES:
        raise PlatformError(
            f"unknown topology {name!r} (topologies: {', '.join(TOPOLOGIES)}; see docs/simulate.md)"
        )


def describe_topology(name: str) -> str:
    """The shape of a topology for any node count (`esmperf knobs`)."""
    check_topology(name)
    if name == "crossbar":
        return "each node on its own link to one non-blocking switch"
    if name == "torus":
        return (
            "3-D torus, the most cubic a x b x c = nodes, a ring per dimension, "
            "dimension-order routing, the latency per hop"
        )
    blocking = FAT_TREE_BLOCKING[name]
    return (
        f"2-level fat-tree: leaves of {LEAF_NODES} nodes, each with {LEAF_NODES // blocking} "
        f"uplink(s), one per spine switch: {blocking}:1{blocking_word(blocking)}"
    )


@dataclass(frozen=True)
class Wiring:
    """How one topology wires `nodes` nodes as a SimGrid <cluster>."""

    hosts: int  # hosts in the cluster: the nodes, plus idle ones filling the last fat-tree leaf
    link_latency: float  # seconds per link
    attributes: dict[str, str]  # the <cluster>'s topology attributes (none for the crossbar)
    shape: str  # for the platform file's comment


def wiring(topology: str, net: Interconnect, nodes: int) -> Wiring:
    check_topology(topology)
    if topology == "crossbar":  # node - switch - node: two links, half the latency each
        return Wiring(nodes, net.latency / 2, {}, "non-blocking crossbar")
    if topology == "torus":  # a hop is one link: nearest neighbours see the table's latency
        dims = torus_dimensions(nodes)
        return Wiring(
            nodes,
            net.latency,
            {"topology": "TORUS", "topo_parameters": ",".join(map(str, dims))},
            f"{'x'.join(map(str, dims))} torus",
        )
    blocking = FAT_TREE_BLOCKING[topology]
    leaves = -(-nodes // LEAF_NODES)
    uplinks = LEAF_NODES // blocking
    # SimGrid's levels;down-links;up-links;link-count: a host has 1 leaf, a leaf `uplinks`
    # spines, one link to each; a leaf switch has LEAF_NODES hosts, a spine one link per leaf.
    # The crossbar's links: under one leaf, the crossbar's figures exactly.
    parameters = f"2;{LEAF_NODES},{leaves};1,{uplinks};1,1"
    return Wiring(
        leaves * LEAF_NODES,
        net.latency / 2,
        {"topology": "FAT_TREE", "topo_parameters": parameters},
        f"2-level fat-tree, {leaves} leaves of {LEAF_NODES} nodes"
        f"{idle_note(leaves * LEAF_NODES - nodes)}, {uplinks} spines, "
        f"{blocking}:1{blocking_word(blocking)}",
    )


def blocking_word(blocking: int) -> str:
    return " (non-blocking)" if blocking == 1 else " blocking"


def idle_note(idle: int) -> str:
    return f" ({idle} of them idle)" if idle else ""


def torus_dimensions(nodes: int) -> tuple[int, ...]:
    """The most cubic 3-D shape a x b x c = nodes (a >= b >= c, a smallest), sizes 1 dropped:
    16 -> 4x2x2, 8 -> 2x2x2, 12 -> 3x2x2, 6 -> 3x2, 7 -> 7 (a ring). The first dimension
    varies fastest, so consecutive nodes are neighbours along it."""
    shapes = [
        (nodes // (b * c), b, c)
        for c in range(1, round(nodes ** (1 / 3)) + 2)
        for b in range(c, isqrt(nodes // c) + 1)
        if nodes % (b * c) == 0 and nodes // (b * c) >= b
    ]
    return tuple(size for size in min(shapes) if size > 1) or (1,)


def check_shape(nodes: int, ranks_per_node: int) -> None:
    if nodes < 1 or ranks_per_node < 1:
        raise PlatformError(
            f"a simulated cluster needs at least one node and one rank per "
            f"node (got {nodes} nodes, {ranks_per_node} ranks per node): "
            "e.g. --nodes 1,2,4,8 --ranks-per-node 2"
        )


def nodes_for(ranks: int, ranks_per_node: int) -> int:
    return -(-ranks // ranks_per_node)


def platform_xml(
    net: Interconnect,
    nodes: int,
    cores: int,
    topology: str = "crossbar",
    noise_name: str = "none",
    noise_seed: int = 0,
    links: LinkChoice = AS_BEFORE,
) -> str:
    """SimGrid platform (DTD 4.1) of `nodes` hosts of `cores` cores on interconnect `net`,
    wired as `topology`, each host with the OS noise `noise_name` (mpi/noise.py), its links as
    `links` chooses (links.py: the bandwidth's end, rails, a shared on-node channel)."""
    check_shape(nodes, cores)
    wires = wiring(topology, net, nodes)
    bandwidth = net.bandwidth_at(links.bandwidth_end) * links.rails
    if links.node_channel:
        if topology != "crossbar":
            raise PlatformError(
                "a shared on-node channel is written for the crossbar only (SimGrid 3.32 gives a "
                "fat-tree's or torus' <cluster> a per-pair loopback): choose topology = crossbar"
            )
        zone = node_channel_zone(net.name, wires, cores, bandwidth, links.node_channel)
    else:
        cluster = {
            "id": net.name,
            "prefix": NODE_PREFIX,
            "suffix": "",
            "radical": f"0-{wires.hosts - 1}",
            "speed": f"{HOST_SPEED:.0f}f",
            "core": str(cores),
            "bw": f"{bandwidth:.15g}Bps",
            "lat": f"{wires.link_latency:.15g}s",
            "sharing_policy": "SPLITDUPLEX",
            "loopback_bw": f"{LOOPBACK_BANDWIDTH:.15g}Bps",
            "loopback_lat": f"{LOOPBACK_LATENCY:.15g}s",
            **wires.attributes,
        }
        attributes = "\n           ".join(
            f"{key}={quoteattr(value)}" for key, value in cluster.items()
        )
        zone = f"  <cluster {attributes}/>\n"
    return (
        "<?xml version='1.0'?>\n"
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
        f"<!-- esmperf platform {net.name}: {net.title}, {nodes} nodes x {cores} cores, "
        f"{wires.shape}{links_note(links)} (docs/simulate.md) -->\n"
        '<platform version="4.1">\n'
        '<zone id="world" routing="Full">\n'
        f"{zone}"
        f"{noise.platform_elements(noise_name, noise_seed, wires.hosts, NODE_PREFIX)}"
        "</zone>\n"
        "</platform>\n"
    )


def links_note(links: LinkChoice) -> str:
    """What the platform file's comment adds for the link knobs ('' for the defaults)."""
    notes = [f"{links.bandwidth_end} end of the bandwidth"] if links.bandwidth_end != "low" else []
    notes += [f"{links.rails} rails"] if links.rails != 1 else []
    notes += ["a shared on-node channel"] if links.node_channel else []
    return "".join(f", {note}" for note in notes)


def node_channel_zone(
    name: str, wires: Wiring, cores: int, bandwidth: float, channel: float
) -> str:
    """The crossbar <cluster> written out as the StarZone it is (SimGrid's routing="Cluster":
    per host its split-duplex link to the switch), with each host's on-node route through two
    links: the per-pair loopback (FATPIPE: each message its own copy rate) and the node's
    memory channel (SHARED: every message of the node at once). Six lines per node."""
    lines = [f'  <zone id="{name}" routing="Cluster">']
    for node in range(wires.hosts):
        host = f"{NODE_PREFIX}{node}"
        lines += [
            f'    <host id="{host}" speed="{HOST_SPEED:.0f}f" core="{cores}"/>',
            f'    <link id="{name}_link_{node}" bandwidth="{bandwidth:.15g}Bps" '
            f'latency="{wires.link_latency:.15g}s" sharing_policy="SPLITDUPLEX"/>',
            f'    <host_link id="{host}" up="{name}_link_{node}_UP" '
            f'down="{name}_link_{node}_DOWN"/>',
            f'    <link id="{name}_copy_{node}" bandwidth="{LOOPBACK_BANDWIDTH:.15g}Bps" '
            f'latency="{LOOPBACK_LATENCY:.15g}s" sharing_policy="FATPIPE"/>',
            f'    <link id="{name}_memory_{node}" bandwidth="{channel:.15g}Bps" latency="0s"/>',
        ]
    for node in range(wires.hosts):
        lines.append(
            f'    <route src="{NODE_PREFIX}{node}" dst="{NODE_PREFIX}{node}">'
            f'<link_ctn id="{name}_copy_{node}"/><link_ctn id="{name}_memory_{node}"/></route>'
        )
    return "\n".join([*lines, "  </zone>"]) + "\n"


def hostfile(ranks: int, ranks_per_node: int) -> str:
    """One line per rank: ranks fill node 0 first, then node 1, ... (block placement)."""
    return "".join(f"{NODE_PREFIX}{rank // ranks_per_node}\n" for rank in range(ranks))


def platform_name(
    net: Interconnect,
    nodes: int,
    cores: int,
    topology: str = "crossbar",
    noise_name: str = "none",
    noise_seed: int = 0,
    links: LinkChoice = AS_BEFORE,
) -> str:
    wired = "" if topology == "crossbar" else f"-{topology}"  # the crossbar keeps its old names
    noisy = "" if noise_name == "none" else f"-noise-{noise_name}-seed{noise_seed}"
    return f"{net.name}{wired}-{nodes}n{cores}c{noisy}{links.suffix()}"
