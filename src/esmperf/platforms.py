"""Simulated clusters for SimGrid SMPI (docs/simulate.md): the named interconnects, as data, and
the SimGrid platform file and hostfile of one run.

A platform here is one switched cluster: `nodes` hosts, each with `cores` cores, each host on
its own full-duplex link to a non-blocking crossbar switch (SimGrid's <cluster> without a
backbone: full bisection bandwidth). Between two nodes a message crosses the sender's link and
the receiver's link, so each link gets half the end-to-end latency: with the analytic CM02
network model a message of n bytes takes exactly latency + n / bandwidth between nodes (SMPI
3.32 adds 16 bytes to every message, measured by tests/test_smpi.py). Ranks on one node talk
through the node's loopback, given this machine's measured shared-memory figures.

Computation is not modelled from flops: SMPI measures each computation burst of every rank on
this machine's core (ranks run one at a time, so never oversubscribed) and charges it to the
simulated host. Hosts and SMPI's own reference speed are both HOST_SPEED, so a burst costs
on the simulated node what it cost here (`computation = "off"` charges nothing).
"""

from dataclasses import dataclass
from xml.sax.saxutils import quoteattr

from esmperf.errors import EsmperfError

HOST_SPEED = 1e9  # flop/s of every simulated core and SMPI's smpi/host-speed: a 1:1 scaling
MESSAGE_OVERHEAD_BYTES = 16  # SMPI 3.32 charges each message 16 bytes more than its payload
NODE_PREFIX = "node-"


@dataclass(frozen=True)
class Interconnect:
    """One named interconnect: its MPI-level figures between two nodes and where they come from."""

    name: str
    title: str
    bandwidth: float  # bytes/s: the link's data rate after line encoding
    latency: float  # seconds: small-message MPI latency between two nodes, one way
    source: str


# One place for the interconnects (docs/simulate.md prints this table with the sources).
INTERCONNECTS: dict[str, Interconnect] = {
    net.name: net
    for net in (
        Interconnect("gige", "1 Gigabit Ethernet (TCP)", 1e9 / 8, 50e-6,
                     "1 Gb/s line rate; 50 us: MPI over TCP on GigE measures 30-60 us one way "
                     "(the HPC Advisory Council decks' 1GigE clusters)"),
        Interconnect("10gige", "10 Gigabit Ethernet (TCP)", 10e9 / 8, 10e-6,
                     "10 Gb/s line rate; 10 us: MPI over kernel TCP on 10GbE, 8-15 us"),
        Interconnect("ib-qdr", "InfiniBand QDR 4x", 32e9 / 8, 1.3e-6,
                     "40 Gb/s signalling, 8b/10b encoding: 32 Gb/s data; 1.3 us: ConnectX-2 "
                     "QDR MPI latency in the HPC Advisory Council decks"),
        Interconnect("ib-fdr", "InfiniBand FDR 4x", 54.5e9 / 8, 0.7e-6,
                     "56 Gb/s signalling, 64b/66b: 54.5 Gb/s data; 0.7 us: ConnectX-3 FDR "
                     "MPI latency (Mellanox)"),
        Interconnect("ib-hdr", "InfiniBand HDR 4x", 200e9 * 64 / 66 / 8, 1.0e-6,
                     "200 Gb/s, 64b/66b encoding; 1.0 us: osu_latency across one HDR switch "
                     "(ConnectX-6 adapter alone: 0.6 us)"),
    )
}
# Within a node: this machine's shared memory (DESIGN.md: 0.12-0.2 us, 9-13 GB/s measured).
LOOPBACK_BANDWIDTH = 10e9
LOOPBACK_LATENCY = 0.2e-6


class PlatformError(EsmperfError):
    """An unknown interconnect or an impossible cluster shape."""


def interconnect(name: str) -> Interconnect:
    try:
        return INTERCONNECTS[name]
    except KeyError:
        raise PlatformError(f"unknown platform {name!r} (platforms: "
                            f"{', '.join(INTERCONNECTS)}; see docs/simulate.md)") from None


def check_shape(nodes: int, ranks_per_node: int) -> None:
    if nodes < 1 or ranks_per_node < 1:
        raise PlatformError(f"a simulated cluster needs at least one node and one rank per "
                            f"node (got {nodes} nodes, {ranks_per_node} ranks per node): "
                            "e.g. --nodes 1,2,4,8 --ranks-per-node 2")


def nodes_for(ranks: int, ranks_per_node: int) -> int:
    return -(-ranks // ranks_per_node)


def platform_xml(net: Interconnect, nodes: int, cores: int) -> str:
    """SimGrid platform (DTD 4.1) of `nodes` hosts of `cores` cores on interconnect `net`."""
    check_shape(nodes, cores)
    cluster = {
        "id": net.name, "prefix": NODE_PREFIX, "suffix": "", "radical": f"0-{nodes - 1}",
        "speed": f"{HOST_SPEED:.0f}f", "core": str(cores),
        "bw": f"{net.bandwidth:.15g}Bps", "lat": f"{net.latency / 2:.15g}s",
        "sharing_policy": "SPLITDUPLEX",
        "loopback_bw": f"{LOOPBACK_BANDWIDTH:.15g}Bps",
        "loopback_lat": f"{LOOPBACK_LATENCY:.15g}s",
    }
    attributes = "\n           ".join(f"{key}={quoteattr(value)}" for key, value in cluster.items())
    return (
        "<?xml version='1.0'?>\n"
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
        f"<!-- esmperf platform {net.name}: {net.title}, {nodes} nodes x {cores} cores, "
        "non-blocking crossbar (docs/simulate.md) -->\n"
        '<platform version="4.1">\n'
        '<zone id="world" routing="Full">\n'
        f"  <cluster {attributes}/>\n"
        "</zone>\n"
        "</platform>\n"
    )


def hostfile(ranks: int, ranks_per_node: int) -> str:
    """One line per rank: ranks fill node 0 first, then node 1, ... (block placement)."""
    return "".join(f"{NODE_PREFIX}{rank // ranks_per_node}\n" for rank in range(ranks))


def platform_name(net: Interconnect, nodes: int, cores: int) -> str:
    return f"{net.name}-{nodes}n{cores}c"
