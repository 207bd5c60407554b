"""Collectives offloaded to the network on a simulated cluster (the `offload` knob of the smpi
stack, docs/simulate.md "Collective offload"): MPI_Barrier, MPI_Bcast, MPI_Reduce,
MPI_Allreduce, MPI_Allgather and MPI_Allgatherv run "in the switch tree" (native/prof/
prof_offload.c): once the last rank of the communicator has arrived, each rank gets the result
after levels x the latency per tree level + the bytes it receives / the link's bandwidth, with
no CPU time and no OS noise. The levels are the switch levels the communicator's nodes span on
the simulated topology: 1 under one switch (the crossbar, or one leaf of a fat-tree), 2 across
a fat-tree's leaves. A communicator within one node keeps SMPI's CPU algorithms.

The latency per level comes from one published offloaded collective and the depth of the tree
it ran on, both cited where set.
"""

from dataclasses import dataclass

from esmperf.mpi import platforms


@dataclass(frozen=True)
class Offload:
    name: str
    title: str
    level_latency: float  # seconds per switch level of the tree, the way up and down included
    platforms: tuple[str, ...]  # the simulated interconnects that have the hardware
    source: str


# CORE-Direct (ConnectX-2, the seeds' FCA 2.1 era): Rabinovitz, Shamis, Graham, Bloch, Shainer,
# "Network Offloaded Hierarchical Collectives Using ConnectX-2's CORE-Direct Capabilities",
# EuroMPI 2010: the HCA-managed MPI_Barrier over "a two-level communication hierarchy" completes
# in 14.72 us (26.59 us without the topology, 19.04 us for the CPU barrier).
CORE_DIRECT_BARRIER = 14.72e-6
CORE_DIRECT_LEVELS = 2
# SHARP (SwitchIB-2, the first switch ASIC with it): Graham et al., "Scalable Hierarchical
# Aggregation Protocol (SHArP): A Hardware Architecture for Efficient Data Reduction", COMHPC
# workshop at SC16: an 8-byte MPI_Allreduce on 128 hosts in 2.83 us (6.01 us host-based).
# SwitchIB-2 switches have 36 ports, so a non-blocking fat-tree puts at most 18 hosts under a
# leaf: 128 hosts span 2 switch levels.
SHARP_ALLREDUCE_128_HOSTS = 2.83e-6
SHARP_LEVELS_128_HOSTS = 2

OFFLOADS: dict[str, Offload] = {
    offload.name: offload
    for offload in (
        Offload(
            "fca",
            "Mellanox FCA on ConnectX-2 CORE-Direct (the seeds' era)",
            CORE_DIRECT_BARRIER / CORE_DIRECT_LEVELS,
            ("ib-qdr", "ib-fdr", "ib-hdr", "ib-ndr"),
            "Rabinovitz et al., EuroMPI 2010: CORE-Direct MPI_Barrier over a two-level "
            "hierarchy 14.72 us: 7.36 us per level",
        ),
        Offload(
            "sharp",
            "NVIDIA SHARP in the switches (today)",
            SHARP_ALLREDUCE_128_HOSTS / SHARP_LEVELS_128_HOSTS,
            ("ib-hdr", "ib-ndr"),
            "Graham et al., COMHPC@SC16: SHArP 8-byte MPI_Allreduce on 128 hosts 2.83 us; "
            "2 levels of 36-port SwitchIB-2 switches: 1.415 us per level",
        ),
    )
}
OFFLOAD_NAMES = ("none", *OFFLOADS)


def offload_environment(
    name: str, platform: str, topology: str, ranks_per_node: int
) -> tuple[dict[str, str], str]:
    """The variables prof_offload.c reads, and ''; or no variables and why the offload cannot
    run on this platform and topology."""
    if name == "none":
        return {}, ""
    offload = OFFLOADS[name]
    if platform not in offload.platforms:
        return {}, (
            f"offload = {name} needs hardware the {platform} platform does not have "
            f"(platforms: {', '.join(offload.platforms)})"
        )
    if topology == "torus":
        return {}, f"offload = {name} runs in a switch tree: the torus has no switches"
    leaf_nodes = platforms.LEAF_NODES if topology.startswith("fat-tree") else 0
    net = platforms.interconnect(platform)
    env = {
        "ESM_OFFLOAD_LEVEL_LATENCY": f"{offload.level_latency:.12g}",
        "ESM_OFFLOAD_BANDWIDTH": f"{net.bandwidth:.15g}",
        "ESM_OFFLOAD_LEAF_NODES": str(leaf_nodes),
        "ESM_OFFLOAD_RANKS_PER_NODE": str(ranks_per_node),
    }
    return env, ""
