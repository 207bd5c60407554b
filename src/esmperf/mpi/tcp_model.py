"""TCP over Ethernet on SimGrid's flow model (docs/simulate.md, "TCP on the flow model"): the
kernel's CPU cost per byte (the `tcp_kernel` knob) and switch-port incast with TCP's
retransmission timeout (`network_model = cm02-tcp`). Both live in the plugin
native/simnet/esm_tcp_model.cpp, which smpirun preloads (LD_PRELOAD) and which reads its figures
from the environment this module writes, each figure with its source here.

Why a plugin: ns-3 simulates TCP packet by packet (the ns3 network model) at 11-19x CM02's CPU,
too slow for the seed studies; SimGrid 3.32 lets a program set a latency factor and a bandwidth
factor per transfer by callback (kernel/resource/NetworkModelIntf.hpp), given the transfer's
size, hosts and route, as it starts. The incast model's form and constants come from ns-3 runs
of native/bench/incast.c (benchmarks/incast_sweep.py), never from a seed's claim.
"""

from pathlib import Path

from esmperf.mpi import machines, ns3_network
from esmperf.mpi.knobs import Unsupported
from esmperf.mpi.platforms import Interconnect
from esmperf.mpi.stacks import SMPI
from esmperf.paths import stack_build_dir

TCP_INTERCONNECTS = ns3_network.NS3_INTERCONNECTS
CM02_TCP = "cm02-tcp"
# The kernel's CPU cost per byte: the rule of thumb that a host needs 1 Hz of CPU per bit/s of
# TCP it sends or receives, 8 cycles a byte at each end. A. P. Foong, T. R. Huff, H. H. Hum,
# J. R. Patwardhan, G. J. Regnier (Intel), "TCP Performance Re-Visited", ISPASS 2003, measured
# Linux 2.4's stack against it (CPU scaling, memory bus load) and concluded, in its abstract,
# that "we would be hard-pressed to continue relying on the 1 GHz/1 Gbps rule of thumb"; the
# Wikipedia article "TCP offload engine" states the rule and that "full-duplex gigabit TCP
# could consume more than 80% of a 2.4 GHz Pentium 4" (2 Gb/s on 2.4 GHz: the rule). One
# core's stack then moves clock / 8 bytes/s, and since the kernel copies while the wire
# carries, a transfer between nodes runs at min(that, the route's rate).
CYCLES_PER_BYTE = 8
# Incast (network_model = cm02-tcp): the plugin's form (esm_tcp_model.cpp) with the ns3 model's
# physical figures (ns3_network: Linux's minimum RTO 200 ms, the era's initial window of 3
# segments of 1448 bytes, the switch port buffers' band in 1518-byte frames) and one constant
# fitted to ns-3 (benchmarks/incast_sweep.py, 2026-11-27, gige, low buffer, one rank a node):
# long messages (256 KiB, 1 MiB) from 3 senders, each flow's share of the port's buffer and
# the packets in flight (28 + 8.2) / 3 = 12.1 packets, recovered without a timeout; from 4
# senders (9.05 packets) every case waited the RTO. The threshold: their midpoint.
RECOVERY_WINDOW = (12.07 + 9.05) / 2


def plugin_library() -> Path:
    """Where `esmperf build --stack smpi` puts the plugin (native/simnet/CMakeLists.txt)."""
    return stack_build_dir(SMPI) / "simnet" / "libesmtcp.so"


def kernel_rate(machine: machines.Machine) -> float:
    """Bytes/s one core's TCP stack moves under the 1 Hz per bit/s rule."""
    return machine.clock_ghz * 1e9 / CYCLES_PER_BYTE


def incast_buffer_packets(net: Interconnect, switch_buffer: str) -> int:
    """The switch port's buffer in full frames: the ns3 model's band (ns3_network)."""
    return ns3_network.SWITCH_BUFFERS[net.name][switch_buffer].packets


def tcp_environment(chosen: dict[str, str], net: Interconnect) -> dict[str, str]:
    """The plugin's variables (and LD_PRELOAD) for the tcp_kernel and network_model knobs;
    empty when neither asks for it. Unsupported with the fix when they cannot apply."""
    kernel = chosen["tcp_kernel"] != "none"
    incast = chosen["network_model"] == CM02_TCP
    if not kernel and not incast:
        return {}
    asked = "tcp_kernel" if kernel else f"network_model = {CM02_TCP}"
    if net.name not in TCP_INTERCONNECTS:
        raise Unsupported(
            f"{asked} models kernel TCP over Ethernet: platform "
            f"{' or '.join(TCP_INTERCONNECTS)}, not {net.name}"
        )
    if kernel and chosen["network_model"] not in ("cm02", CM02_TCP):
        # ns3 is not a flow model; the smpi model's calibrated bandwidth factors would be
        # replaced by the plugin's (SimGrid takes one bandwidth factor callback or config)
        raise Unsupported(
            f"tcp_kernel caps CM02's flows: network_model = cm02 or {CM02_TCP}, not "
            f"{chosen['network_model']}"
        )
    env = {}
    if kernel:
        if chosen["machine"] == "none":
            raise Unsupported(
                "tcp_kernel charges 8 cycles a byte at the node's clock: choose a machine "
                f"({', '.join(machines.MACHINES)})"
            )
        env["ESM_TCP_KERNEL_RATE"] = f"{kernel_rate(machines.machine(chosen['machine'])):.9g}"
    if incast:
        if chosen["topology"] != "crossbar":
            raise Unsupported(
                f"network_model = {CM02_TCP} holds to ns-3 on one switch: topology = crossbar"
            )
        env |= {
            "ESM_TCP_INCAST_BUFFER_PACKETS": str(
                incast_buffer_packets(net, chosen["switch_buffer"])
            ),
            "ESM_TCP_INCAST_INITIAL_WINDOW": str(ns3_network.INITIAL_WINDOW_2010),
            "ESM_TCP_INCAST_MSS": str(ns3_network.MSS_BYTES),
            "ESM_TCP_INCAST_FRAME": str(ns3_network.FRAME_BYTES),
            "ESM_TCP_INCAST_RTO": f"{ns3_network.LINUX_MIN_RTO_MS / 1000:g}",
            "ESM_TCP_INCAST_RECOVERY_WINDOW": f"{RECOVERY_WINDOW:g}",
        }
    library = plugin_library()
    if not library.is_file():
        raise Unsupported(f"{asked} needs {library}: run `esmperf build --stack smpi`")
    env["LD_PRELOAD"] = str(library)
    return env
