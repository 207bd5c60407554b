"""TCP over Ethernet, packet by packet: the `ns3` network model of the smpi stack
(docs/simulate.md, "TCP over Ethernet: the ns3 network model").

Debian's SimGrid 3.32 is built with ns-3 3.37 (`--cfg=network/model:ns-3`). Its binding builds
the ns-3 network from the platform file: every route of ONE link becomes an ns-3 point-to-point
link between the route's two ends (routes of more links are ignored), hosts and routers become
ns-3 nodes with an IPv4 stack, and ns-3's global routing finds the paths. A `<cluster>` is
refused beyond the flat shape and adds a shared CSMA bus between its hosts. So the ns-3
platform here is written out as one-link routes: a router per node on its own link to one
router, the switch, and a host per core on its own link to its node's router
(`ns3_platform_xml`). The switch's port towards a node is the ns-3 device at the switch's end
of that node's link: its queue is the switch port's buffer.

The TCP connections depend on the SimGrid. SimGrid's own binding (Debian's 3.32) opens a new
connection for every MPI message (a socket per message: connect, send, close; the message ends
when the close completes). The SimGrid 4.1 that `make setup-simgrid` builds carries esmperf's
patch (native/simnet/simgrid-4.1-ns3-connections.patch): one connection per pair of hosts (of
ranks: a host per core), opened by the first message and kept open as Open MPI keeps its
connections, a message received when its last byte is read; `kept_connections` says which.
Either way ns-3's TCP (NewReno) runs with Linux's constants set by ns-3 attributes in
`NS_ATTRIBUTE_DEFAULT` (ns-3 reads it when it creates each object; it overrides the binding's own
defaults). Defects of the binding and what is done about each: see `ns3_attributes` and
docs/simulate.md.
"""

from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import quoteattr

from esmperf.mpi.platforms import (
    HOST_SPEED,
    LOOPBACK_BANDWIDTH,
    LOOPBACK_LATENCY,
    NODE_PREFIX,
    Interconnect,
    check_shape,
)

# What scripts/setup_simgrid.sh writes into its prefix's .installed: the patches' checksum.
PATCHED_STAMP = "patches:"

# The Ethernet interconnects the model applies to.
NS3_INTERCONNECTS = ("gige", "10gige")
SWITCH_ROUTER = "switch"

# Linux's TCP constants, each with its source.
# Minimum retransmission timeout: TCP_RTO_MIN = HZ/5 = 200 ms (Linux include/net/tcp.h; RFC
# 6298 section 2.4 recommends 1 s, Linux uses 200 ms). ns-3's default is 1 s.
LINUX_MIN_RTO_MS = 200
# Delayed ACK: TCP_DELACK_MIN = HZ/25 = 40 ms (include/net/tcp.h), an ACK at least every second
# full-sized segment (RFC 1122 4.2.3.2, RFC 5681 4.2). ns-3's defaults: 200 ms; SimGrid sets 1.
LINUX_DELAYED_ACK_MS = 40
DELAYED_ACK_SEGMENTS = 2
# Maximum segment size: a 1500-byte Ethernet MTU less IPv4 (20), TCP (20) and the timestamp
# option (12): Linux sends timestamps by default (net.ipv4.tcp_timestamps = 1, Documentation/
# networking/ip-sysctl.txt), hence its MSS of 1448. SimGrid sets 1000 and timestamps off.
MSS_BYTES = 1448
# Initial window of the seeds' era (2010-2011, Linux 2.6.18-2.6.32): RFC 3390,
# min(4 MSS, max(2 MSS, 4380 bytes)) = 4380 bytes = 3 segments of 1448. Linux 2.6.39 (2011)
# moved to 10 segments, later RFC 6928: INITIAL_WINDOW_TODAY, for a cluster of today.
INITIAL_WINDOW_2010 = min(4 * MSS_BYTES, max(2 * MSS_BYTES, 4380)) // MSS_BYTES
INITIAL_WINDOW_TODAY = 10
# Initial (SYN) retransmission timeout of the era: 3 s (RFC 2988; Linux TCP_TIMEOUT_INIT = 3*HZ
# until 3.1, then 1 s per RFC 6298). Under SimGrid's own binding every message opens a
# connection, so a lost SYN or SYN-ACK costs 3 s; with kept connections only a pair's first.
SYN_TIMEOUT_S = 3
# Retransmissions before a connection gives up: Linux's net.ipv4.tcp_retries2 = 15 (ip-sysctl.txt:
# "a hypothetical timeout of 924.6 seconds") for data, tcp_syn_retries = 5 for SYNs (the 2.6.32
# ip-sysctl.txt: "5, which corresponds to 180seconds"). ns-3's defaults, 6 and 6, end a
# connection after 6 data timeouts: HYCOM glb0.08 on 10.5 GigE nodes at the low buffer end
# lost one so at 196.6 s simulated (a kept connection then stops the run).
LINUX_DATA_RETRIES = 15
LINUX_SYN_RETRIES = 5
# Receive buffer: Linux 2.6.32's largest autotuned receive window, net.ipv4.tcp_rmem max =
# 4194304 bytes (ip-sysctl.txt of the time).
LINUX_RECEIVE_BUFFER = 4 * 1024 * 1024
# Workaround for defect 1: the binding aborts a message larger than the socket's send buffer
# (ns-3's default 131072 bytes: "total_bytes (=N) is not sent_bytes(=M)"), because it closes the
# socket once the message is buffered and counts the bytes acknowledged before the close. A
# send buffer larger than any message (1 GiB; memory is used only for bytes in flight) avoids
# it. Linux's own send buffer would block the writer instead; what leaves the host is bounded
# by the congestion window either way.
SEND_BUFFER_BYTES = 1 << 30
# A full Ethernet frame as a switch stores it: 1500 bytes of MTU + 14 header + 4 FCS.
FRAME_BYTES = 1518
# The queues that are not a switch port's, per link end (platform properties that esmperf's
# patch to SimGrid 4.1 reads; SimGrid's own binding gives every queue the switch port's size):
# a node's transmit queue towards the switch holds Linux's default 1000 packets (txqueuelen:
# DEFAULT_TX_QUEUE_LEN, include/linux/netdevice.h, set by ether_setup for every Ethernet
# device), and memory inside a node drops nothing (a queue no run fills).
NODE_TRANSMIT_QUEUE = "1000p"
MEMORY_QUEUE = "1000000p"


@dataclass(frozen=True)
class SwitchBuffer:
    """The packet buffer one congested switch port can use, and where the figure comes from."""

    bytes_per_port: int
    source: str

    @property
    def packets(self) -> int:
        return self.bytes_per_port // FRAME_BYTES


# Switch port buffers: the seeds do not name their Ethernet switches, so a band from public
# descriptions of the era's switches; the `switch_buffer` knob chooses its end.
MIB = 1024 * 1024
SWITCH_BUFFERS: dict[str, dict[str, SwitchBuffer]] = {
    "gige": {
        "low": SwitchBuffer(
            2 * MIB // 48,
            "Cisco Catalyst 2960S-48 (2010, a common 48-port GigE access switch): 2 MB of packet "
            "memory shared by its ports (J. Warner, UCSC 'Packet buffers' survey, 2960X page); "
            "even share of 48 ports, every port congested: 43,690 bytes, 28 frames",
        ),
        "high": SwitchBuffer(
            1 * MIB,
            "same switch, one congested port taking a whole pool: the survey notes the 48-port "
            "model's two ASICs, so its 2 MB may be two 1 MB pools: 1,048,576 bytes, 690 frames",
        ),
    },
    "10gige": {
        "low": SwitchBuffer(
            640 * 1024,
            "Cisco Nexus 5548P (2010): 'a dedicated pool of 640 KB' per interface, shared by "
            "ingress and egress (Cisco white paper 'Cisco Nexus 5548P Switch Architecture', "
            "c11-622479): 655,360 bytes, 431 frames",
        ),
        "high": SwitchBuffer(
            1_258_000,
            "Arista 7124SX (Intel FM4000, 2008-2012): 1.238 MB dynamic pool + 0.02 MB fixed per "
            "port, the most one port can hold (J. Warner, UCSC survey, arista_7124SX page, from "
            "Intel's FM4000 data sheet and the Lippis report 2013): 828 frames",
        ),
    },
}
SWITCH_BUFFER_ENDS = ("low", "high")


def ns3_attributes(net: Interconnect, switch_buffer: str) -> str:
    """NS_ATTRIBUTE_DEFAULT for `net` with the `switch_buffer` end of its band.

    The queue: ns-3 3.37 puts a traffic-control queue disc (FqCoDel) in front of every device
    and flow-controls the device's own queue (100 packets) from it, so a switch port holds
    the device queue plus the disc, with CoDel's delay-based drops and per-flow round robin,
    none of which a 2010 Ethernet switch has. Made into one FIFO of the port's buffer: the
    device queue 1 packet, the disc one flow queue (Flows=1) of buffer - 1 packets, CoDel's
    target and interval far beyond any run (no delay-based drop), one packet dropped per
    overflow (DropBatchSize=1). One difference stays: on overflow ns-3 drops the packet at
    the head of the queue, a switch the arriving one (tail drop); the loss count is the same.
    Under SimGrid's own binding every other queue gets the same size (ns-3 attributes are per
    type, and that binding sets only a link's rate and delay): a node's egress to the switch
    and the shared-memory links inside it too, where a Linux node would not drop. esmperf's
    patched binding (kept_connections) reads a queue per link end from the platform instead
    (ns3_platform_xml: NODE_TRANSMIT_QUEUE, MEMORY_QUEUE); docs/simulate.md says what each means.
    """
    buffer = SWITCH_BUFFERS[net.name][switch_buffer]
    attributes = {
        "ns3::TcpSocket::SndBufSize": str(SEND_BUFFER_BYTES),
        "ns3::TcpSocket::RcvBufSize": str(LINUX_RECEIVE_BUFFER),
        "ns3::TcpSocket::SegmentSize": str(MSS_BYTES),
        "ns3::TcpSocketBase::Timestamp": "true",
        "ns3::TcpSocket::InitialCwnd": str(INITIAL_WINDOW_2010),
        "ns3::TcpSocketBase::MinRto": f"{LINUX_MIN_RTO_MS}ms",
        "ns3::TcpSocket::DelAckTimeout": f"{LINUX_DELAYED_ACK_MS}ms",
        "ns3::TcpSocket::DelAckCount": str(DELAYED_ACK_SEGMENTS),
        "ns3::TcpSocket::ConnTimeout": f"{SYN_TIMEOUT_S}s",
        "ns3::TcpSocket::DataRetries": str(LINUX_DATA_RETRIES),
        "ns3::TcpSocket::ConnCount": str(LINUX_SYN_RETRIES),
        # A router forwards a packet not addressed to it without comparing the destination
        # with the addresses of its every interface (RFC 1122's strong end-system model; ns-3's
        # default, the weak one, scans them: 15 % of a 48-core node's simulation). Nothing
        # changes but the cost: hosts have one link, and routers end no connection.
        "ns3::Ipv4::WeakEsModel": "false",
        "ns3::DropTailQueue<Packet>::MaxSize": "1p",
        "ns3::FqCoDelQueueDisc::Flows": "1",
        "ns3::FqCoDelQueueDisc::DropBatchSize": "1",
        "ns3::FqCoDelQueueDisc::Interval": "1000s",
        "ns3::FqCoDelQueueDisc::Target": "100s",
        "ns3::FqCoDelQueueDisc::MaxSize": f"{buffer.packets - 1}p",
    }
    return ";".join(f"{name}={value}" for name, value in attributes.items())


def link(name: str, figures: str, source_queue: str, destination_queue: str) -> str:
    """A link of the ns-3 platform; the queues of its route's ends, where not the default (the
    switch port's buffer, NS_ATTRIBUTE_DEFAULT), as properties for esmperf's patched SimGrid."""
    props = [
        f'<prop id="esmperf/ns3_queue_{end}" value="{queue}"/>'
        for end, queue in (("src", source_queue), ("dst", destination_queue))
        if queue
    ]
    return f'  <link id="{name}" {figures}>' + "".join(props) + "</link>"


def rank_host(node: int, core: int) -> str:
    return f"{NODE_PREFIX}{node}-{core}"


def ns3_platform_xml(net: Interconnect, nodes: int, cores: int) -> str:
    """SimGrid platform (DTD 4.1) that SimGrid's ns-3 binding accepts, every route one link.
    Each node is a router `node-N` with one link to the switch (the interconnect's line rate,
    half its latency: the CM02 crossbar's figures), and each of its `cores` cores a host
    `node-N-C` of one core with its own link to the node's router at this machine's shared
    memory figures (LOOPBACK_BANDWIDTH, half of LOOPBACK_LATENCY). A host per rank, because
    SimGrid's binding finishes a message between two ranks of one host at once (ns-3 cannot send
    from a node to itself): under it messages inside a node cross TCP at shared-memory speed.
    Each host names its node and the node's memory figures (properties): esmperf's patched
    binding (kept_connections) makes a message between two hosts of one node a memory copy,
    as the MPI's shared-memory transport does, with no packet. A node's messages to other nodes
    share its one link to the switch."""
    check_shape(nodes, cores)
    hosts, links, routes = [], [], []
    speed = quoteattr(f"{HOST_SPEED:.0f}f")
    loopback = (
        f"bandwidth={quoteattr(f'{LOOPBACK_BANDWIDTH:.15g}Bps')} "
        f"latency={quoteattr(f'{LOOPBACK_LATENCY / 2:.15g}s')}"
    )
    port = (
        f"bandwidth={quoteattr(f'{net.wire_rate:.15g}Bps')} "  # ns-3 frames packets itself
        f"latency={quoteattr(f'{net.latency / 2:.15g}s')}"
    )
    in_memory = (  # read by the patched binding (kept_connections): a copy within a node
        ("esmperf/memory_latency", f"{LOOPBACK_LATENCY:.15g}"),
        ("esmperf/memory_bandwidth", f"{LOOPBACK_BANDWIDTH:.15g}"),
    )
    routers = [f'  <router id="{SWITCH_ROUTER}"/>']
    for node in range(nodes):
        router = f"{NODE_PREFIX}{node}"
        routers.append(f'  <router id="{router}"/>')
        links.append(link(f"port-{node}", port, NODE_TRANSMIT_QUEUE, ""))
        routes.append(route(router, SWITCH_ROUTER, f"port-{node}"))
        for core in range(cores):
            host = rank_host(node, core)
            hosts.append(
                f'  <host id="{host}" speed={speed} core="1">'
                + "".join(
                    f"<prop id={quoteattr(name)} value={quoteattr(value)}/>"
                    for name, value in in_memory
                )
                + f'<prop id="esmperf/node" value="{router}"/></host>'
            )
            links.append(link(f"loopback-{node}-{core}", loopback, MEMORY_QUEUE, MEMORY_QUEUE))
            routes.append(route(host, router, f"loopback-{node}-{core}"))
    return (
        "<?xml version='1.0'?>\n"
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
        f"<!-- esmperf platform {net.name} for the ns3 network model: {net.title}, {nodes} "
        f"nodes x {cores} cores, a host per core on its node's router, each node's router on "
        "its own link to one switch (docs/simulate.md) -->\n"
        '<platform version="4.1">\n'
        '<zone id="world" routing="Full">\n'
        + "\n".join(hosts + routers + links + routes)
        + "\n</zone>\n</platform>\n"
    )


def route(source: str, destination: str, link: str) -> str:
    return f'  <route src="{source}" dst="{destination}"><link_ctn id="{link}"/></route>'


def ns3_hostfile(ranks: int, ranks_per_node: int) -> str:
    """One line per rank, block placement as platforms.hostfile: rank r on core r mod
    ranks_per_node of node r / ranks_per_node, each core its own host."""
    return "".join(
        f"{rank_host(rank // ranks_per_node, rank % ranks_per_node)}\n" for rank in range(ranks)
    )


def kept_connections(smpicc: Path) -> bool:
    """Whether the SimGrid of `smpicc` (a stack's mpicc) carries esmperf's ns-3 patch, built by
    `make setup-simgrid` (its prefix's .installed names the patches): one TCP connection per
    pair of hosts, kept open. SimGrid's own binding (Debian's) opens one per message."""
    stamp = smpicc.resolve().parent.parent / ".installed"
    return stamp.is_file() and PATCHED_STAMP in stamp.read_text()
