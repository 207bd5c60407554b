"""Knob values on the simulated stack `smpi` (SimGrid SMPI, docs/simulate.md): smpirun's
options, the platform file and hostfile of the simulated cluster, and the variables the workload
core reads for the machine, computation and fold knobs. The knobs of a real interconnect are
not simulated (SMPI_NOT_SIMULATED says why)."""

from dataclasses import replace
from pathlib import Path

from esmperf.mpi import (
    eager,
    file_system,
    host_overhead,
    machines,
    ns3_network,
    offload,
    platforms,
    tcp_model,
)
from esmperf.mpi.collectives import SMPI_ALGORITHMS
from esmperf.mpi.global_state import PRIVATIZATION
from esmperf.mpi.knobs import (
    FOLD_AUTO_RANKS,
    KNOBS,
    SIMULATION_KNOBS,
    KnobSetting,
    Unsupported,
    check_knob,
)
from esmperf.mpi.links import LinkChoice, node_channel_rate

# The smpirun options of every simulated run: SMPI's reference speed equal to the hosts' (a
# measured burst costs what it cost here), the simulated time printed at the end (stderr),
# SimGrid's configuration chatter silenced.
SMPI_ALWAYS = (
    f"--cfg=smpi/host-speed:{platforms.HOST_SPEED:.0f}f",
    "--cfg=smpi/display-timing:yes",
    "--log=xbt_cfg.thres:warning",
)
# SimGrid tuned for thousands of simulated ranks, from FOLD_AUTO_RANKS ranks up (measured on
# homme ne120 folded, docs/simulate.md "What a simulation costs"): no detached small sends
# under eager_limit = simgrid (SimGrid 3.32 removes a finished detached send from a list by
# scanning it: quadratic in the messages in flight; homme 1,024 ranks 148 -> 63 s before dlopen
# privatization); the solver's precision 1e-8 instead of smpirun's 1e-9 (half the CPU time
# then, simulated time within 0.02 %).
PRECISION = "--cfg=surf/precision:"
NO_DETACHED_SENDS = "--cfg=smpi/send-is-detached-thresh:0"
SMPI_AT_SCALE = (NO_DETACHED_SENDS, f"{PRECISION}1e-8")
# Each rank's globals, for a program that keeps some (one that keeps none runs with privatization
# off: global_state.privatization_args): below SMPI_MMAP_RANKS ranks smpirun's default, one
# dlopen'd copy of the program per rank; from it one copy of the program's data segment per
# rank, mapped in by mmap at every switch between ranks. dlopen costs memory (0.53 MB a rank more: a copy of the
# program's file; each copy 5-6 memory maps, past Linux's 65,530 near 11,000 ranks), mmap a
# system call and page faults at each switch: 61 % of the CPU of pflotran 100^3 folded on 384
# ranks (33.1 -> 12.8 s), 24 % of homme ne120 on 1,024 (9.6 -> 7.3 s) and 34 % on 3,456 (52.4 ->
# 34.6 s, 0.86 -> 2.72 GB), simulated times equal to the bit (docs/simulate.md, "Where the
# simulator's time goes"; benchmarks/simulator_profile.py).
SMPI_MMAP_RANKS = 4096
SMPI_MMAP = f"{PRIVATIZATION}mmap"
# And the collectives the seeds' MPI libraries run at scale where SimGrid's default is none of
# theirs and ruins the simulator: SMPI's default MPI_Allgather(v) posts a send and a receive
# between every pair of ranks at once (ranks^2 flows in the network model); MPICH uses Bruck's
# algorithm for short allgathers and a ring for long ones (CESM's rearranger plans allgatherv
# their index lists: 1deg on 384 ranks finished in 252 s of CPU with these, the default was
# stopped unfinished). MPI_Allreduce keeps SMPI's default (a linear reduce and a binomial
# broadcast) although the seeds' MPIs use recursive doubling for short vectors: with `rdb`
# PFLOTRAN 100^3 on 384 ranks was stopped after 12.5 min of CPU (143 s before), so recursive
# doubling is the allreduce_algorithm knob's choice, not the default. From FOLD_AUTO_RANKS
# ranks, unless the knob of the collective chooses another, and under collectives = simgrid only
# (Open MPI's and MPICH's rules choose Bruck, recursive doubling or a ring themselves)
# (docs/simulate.md, "What a simulation costs").
SMPI_COLLECTIVES_AT_SCALE = {"allgather": "bruck", "allgatherv": "mpich_ring"}
# The smpi model's factors were calibrated against a TCP cluster's line rate: its bandwidth
# factor for messages of 65472 bytes or more is 0.940694 (SimGrid 3.32's default smpi/bw-factor,
# src/simgrid/sg_config.cpp), TCP's framing (1448 / 1538 = 0.9415, mpi/links.py). Under it the
# Ethernet platforms keep their line rate, so that the framing is not taken off twice.
SMPI_NETWORK_MODELS = {
    "cm02": ("--cfg=network/model:CM02", "--cfg=network/crosstraffic:0"),
    "smpi": ("--cfg=network/model:SMPI",),
    # ns-3's random numbers seeded: the same run gives the same simulated time
    "ns3": ("--cfg=network/model:ns-3", "--cfg=ns3/seed:1"),
    # CM02 with the incast of the plugin tcp_model sets up (LD_PRELOAD)
    tcp_model.CM02_TCP: ("--cfg=network/model:CM02", "--cfg=network/crosstraffic:0"),
}
SMPI_NOT_SIMULATED = {
    "transport": "the smpi stack simulates its interconnect: choose it with the platform knob "
    f"({', '.join(platforms.INTERCONNECTS)})",
    "single_copy": "single copy (CMA/KNEM) is not simulated by SimGrid SMPI",
    "connections": "connection set-up is not simulated by SimGrid SMPI",
    "binding": "process binding has no meaning on a simulated cluster (each rank has a core)",
}


def smpi_setting(
    knobs: dict[str, str], ranks: int, ranks_per_node: int, platform_dir: Path
) -> KnobSetting:
    """smpirun options for `knobs` on a simulated cluster of ceil(ranks / ranks_per_node)
    nodes, with the platform file and hostfile to write."""
    chosen = {knob.name: knob.baseline for knob in KNOBS.values() if knob.name in SIMULATION_KNOBS}
    for name, value in sorted(knobs.items()):
        check_knob(name, value)
        if name in SMPI_NOT_SIMULATED:
            raise Unsupported(SMPI_NOT_SIMULATED[name])
        chosen[name] = value
    collectives = []
    for name, value in sorted(chosen.items()):
        op = name.removesuffix("_algorithm")
        if op == name or value == "default":
            continue
        algorithm = SMPI_ALGORITHMS[op].get(value)
        if algorithm is None:
            raise Unsupported(
                f"SimGrid SMPI has no {value} algorithm for MPI_{op.capitalize()} "
                f"(it has: {', '.join(SMPI_ALGORITHMS[op])})"
            )
        collectives.append(f"--cfg=smpi/{op}:{algorithm}")
    if chosen["collectives"] != "simgrid":
        collectives.append(f"--cfg=smpi/coll-selector:{chosen['collectives']}")
    elif ranks >= FOLD_AUTO_RANKS:
        collectives.extend(
            f"--cfg=smpi/{op}:{algorithm}"
            for op, algorithm in SMPI_COLLECTIVES_AT_SCALE.items()
            if chosen.get(f"{op}_algorithm", "default") == "default"
        )
    platforms.check_shape(platforms.nodes_for(ranks, ranks_per_node), ranks_per_node)
    net = platforms.interconnect(chosen["platform"])
    line_rate = chosen["network_model"] == "smpi" and net.wire_rate != net.bandwidth
    if line_rate:  # SimGrid's SMPI factors take TCP's framing off the line rate themselves
        net = replace(net, bandwidth=net.wire_rate)
    nodes = platforms.nodes_for(ranks, ranks_per_node)
    topology = chosen["topology"]
    noise_name, noise_seed = chosen["noise"], int(chosen["noise_seed"])
    if noise_name != "none" and chosen["computation"] == "off":
        raise Unsupported(
            "OS noise delays computation and computation = off charges none: "
            "choose computation = measured or model"
        )
    ns3 = chosen["network_model"] == "ns3"
    check_ns3(chosen, net)
    if ns3 and noise_name != "none":
        raise Unsupported(
            "OS noise is written into CM02 platforms only, not yet into ns-3's: "
            "choose network_model = cm02 or noise = none"
        )
    choice = link_choice(chosen)
    shape = (net, nodes, ranks_per_node, topology, noise_name, noise_seed, choice)
    stem = platforms.platform_name(*shape) + ("-ns3" if ns3 else "")
    stem += "-line-rate" if line_rate else ""
    xml = platform_dir / f"{stem}.xml"
    hosts = platform_dir / f"{stem}-{ranks}ranks.hosts"
    args = [
        "-platform",
        str(xml),
        "-hostfile",
        str(hosts),
        *SMPI_ALWAYS,
        *SMPI_NETWORK_MODELS[chosen["network_model"]],
        *collectives,
    ]
    env = node_environment(chosen, ranks, ranks_per_node)
    env.update(file_system.file_system_environment(chosen["file_system"]))
    offloaded, reason = offload.offload_environment(
        chosen["offload"], chosen["platform"], topology, ranks_per_node
    )
    if reason:
        raise Unsupported(reason)
    env.update(offloaded)
    if ns3:
        env["NS_ATTRIBUTE_DEFAULT"] = ns3_network.ns3_attributes(net, chosen["switch_buffer"])
    env.update(tcp_model.tcp_environment(chosen, net))
    if chosen["computation"] != "measured":
        args.append("--cfg=smpi/simulate-computation:no")
    eager_limit = eager.resolved(chosen["eager_limit"], chosen["platform"])
    eager_mpi = eager_limit == "mpi"
    if eager_mpi:
        args.extend(eager.eager_options(eager.eager_limit(chosen["platform"]).limit))
    args.extend(
        host_overhead.host_overhead_options(
            chosen["host_overhead"], chosen["platform"], eager_limit
        )
    )
    if ranks >= FOLD_AUTO_RANKS:
        # under ns-3 the coarser solver precision loses flows that end together: SimGrid
        # reports a deadlock (pflotran S, 32 ranks on 4 gige nodes: tests/test_ns3.py)
        args.extend(
            arg
            for arg in SMPI_AT_SCALE
            if not (ns3 and arg.startswith(PRECISION))
            and not (eager_mpi and arg == NO_DETACHED_SENDS)
        )
    if ranks >= SMPI_MMAP_RANKS:
        args.append(SMPI_MMAP)
    files = (
        (
            xml,
            ns3_network.ns3_platform_xml(net, nodes, ranks_per_node)
            if ns3
            else platforms.platform_xml(*shape),
        ),
        (
            hosts,
            ns3_network.ns3_hostfile(ranks, ranks_per_node)
            if ns3
            else platforms.hostfile(ranks, ranks_per_node),
        ),
    )
    return KnobSetting(env, tuple(args), files)


def link_choice(chosen: dict[str, str]) -> LinkChoice:
    """The link knobs (mpi/links.py): Unsupported with the reason where they cannot apply."""
    shared = chosen["node_channel"] == "shared"
    if chosen["network_model"] == "ns3" and (chosen["rails"] != "1" or shared):
        raise Unsupported(
            "rails and node_channel are written into the cm02 and smpi models' platforms, "
            "not into ns-3's: choose network_model = cm02 or rails = 1 and node_channel = per_pair"
        )
    if not shared:
        return LinkChoice(chosen["bandwidth_end"], int(chosen["rails"]))
    if chosen["machine"] == "none":
        raise Unsupported(
            "node_channel = shared is the node's memory bandwidth: choose a machine "
            f"({', '.join(machines.MACHINES)})"
        )
    if chosen["topology"] != "crossbar":
        raise Unsupported(
            "node_channel = shared is written for the crossbar only (SimGrid 3.32 gives a "
            "fat-tree's or torus' <cluster> a per-pair loopback): choose topology = crossbar"
        )
    memory = machines.machine(chosen["machine"]).bandwidth
    return LinkChoice(chosen["bandwidth_end"], int(chosen["rails"]), node_channel_rate(memory))


def check_ns3(chosen: dict[str, str], net: platforms.Interconnect) -> None:
    """The ns3 network model simulates TCP over the Ethernet platforms, on one switch."""
    if chosen["network_model"] not in ("ns3", tcp_model.CM02_TCP):
        if chosen["switch_buffer"] != "low":
            raise Unsupported(
                "switch_buffer is a switch port's buffer under network_model = ns3 or "
                f"{tcp_model.CM02_TCP} "
                f"(the {chosen['network_model']} model has no switch buffers)"
            )
        return
    if chosen["network_model"] != "ns3":
        return
    if net.name not in ns3_network.NS3_INTERCONNECTS:
        raise Unsupported(
            f"network_model = ns3 simulates TCP over Ethernet: platform "
            f"{' or '.join(ns3_network.NS3_INTERCONNECTS)}, not {net.name}"
        )
    if chosen["topology"] != "crossbar":
        raise Unsupported(
            "network_model = ns3 wires the nodes to one switch: topology = crossbar (SimGrid's "
            "ns-3 binding takes no fat-tree or torus <cluster>)"
        )


def node_environment(chosen: dict[str, str], ranks: int, ranks_per_node: int) -> dict[str, str]:
    """What the workload core reads for the machine, computation and fold knobs (esm_fold.h)."""
    env: dict[str, str] = {}
    frequency = chosen["frequency"]
    if frequency != "nominal" and chosen["machine"] == "none":
        raise Unsupported(
            f"frequency = {frequency} sets a simulated node's clock: choose a machine "
            f"({', '.join(machines.MACHINES)})"
        )
    if frequency != "nominal" and chosen["computation"] == "off":
        raise Unsupported(
            "computation = off charges no computation for the clock to change: "
            "choose computation = measured or model"
        )
    if chosen["machine"] != "none":
        node = machines.machine(chosen["machine"])
        if ranks_per_node > node.cores:
            raise Unsupported(
                f"{node.name} has {node.cores} cores per node: at most {node.cores} ranks per node"
            )
        try:
            env.update(node.environment(ranks_per_node, frequency))
        except machines.FrequencyError as error:
            raise Unsupported(str(error)) from None
    if chosen["computation"] == "model":
        if chosen["machine"] == "none":
            raise Unsupported(
                "computation = model charges each kernel's flops and bytes on its node's "
                "core and memory bandwidth: choose a machine "
                f"({', '.join(machines.MACHINES)})"
            )
        env["ESM_KERNEL_COST"] = "model"
    elif chosen["computation"] == "off":
        env["ESM_KERNEL_COST"] = "off"
    if chosen["fold"] == "on" or (chosen["fold"] == "auto" and ranks >= FOLD_AUTO_RANKS):
        env["ESM_FOLD"] = "1"
    return env
