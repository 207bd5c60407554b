"""The seeds' machines, and today's nodes, as named node presets for simulated runs
(docs/simulate.md, "Node presets", "Today's clusters"): what a node has (cores, memory, memory bandwidth, core speed), where each figure
comes from, and the node model and connection-memory model they feed.

A preset is the `machine` knob of the smpi stack. It gives the simulated node to the workload
core through the environment (native/core/esm_fold.h): a kernel's simulated time is
max(in-core time, bytes / (node bandwidth / ranks on the node)), the in-core time being the
measured time / core speed, or (computation = model) the kernel's flops / (flops per cycle x
clock): the ECM model's in-core part, which scales with 1/frequency while the memory part does
not (docs/simulate.md, "The computation model"). The `frequency` knob sets the clock among the
preset's settings.

Rules for the figures (issue 13: no fitting to the seeds' answers):
- cores, memory and memory channels come from the seeds and the vendors' specifications;
- a node's bandwidth is its theoretical peak (channels x transfer rate x 8 bytes) times
  STREAM_EFFICIENCY, one named guess for every preset;
- a core's speed relative to this machine's is a named guess (no benchmark of those CPUs can
  run here): clock ratio x an IPC ratio, stated per preset.
Today's nodes (issue 22) take their bandwidth from a published STREAM triad of the node
instead (`stream_triad`, cited beside it) and their IPC ratio from a vendor's stated figure.
"""

from dataclasses import dataclass

from esmperf.errors import EsmperfError

# STREAM triad reaches about 60 % of the DRAM peak on two- and four-socket DDR3 servers of
# 2009-2011 (a guess from published STREAM results of that era, the same for every preset).
STREAM_EFFICIENCY = 0.6
# This machine's core clock, for the clock ratio of the core-speed guesses (AMD EPYC, as
# /proc/cpuinfo names it; its nominal clock is taken as 2.5 GHz, a guess: the VM hides it).
HOST_CLOCK_GHZ = 2.5
# MPI memory per connection on JUROPA's ParaStation MPI over InfiniBand (seed 002: about
# 0.55 MB per connection at send/receive queue size 16); used for every preset, a guess
# for the Open MPI clusters of the other seeds.
CONNECTION_BYTES = 0.55e6
# Time one rank takes to set up one InfiniBand connection (create a queue pair, swap its
# address with the peer out of band, move it INIT -> RTR -> RTS): 1 ms, A GUESS, of the order
# of the one public figure found: Intel MPI 2021.2 over UCX 1.10 spent 68-72 s of MPI_Init
# creating endpoints to all peers on 76,000 ranks, about 0.9 ms a peer (openucx/ucx issue
# 6658; DC transport on EDR/HDR, not JUROPA's RC on QDR). No QDR-era figure was found.
CONNECTION_SECONDS = 1e-3


class MachineError(EsmperfError):
    """An unknown machine preset."""


class FrequencyError(EsmperfError):
    """A clock a machine preset does not offer."""


@dataclass(frozen=True)
class Machine:
    """One node type: the figures of the node model, with their sources."""

    name: str
    title: str
    cores: int  # per node
    memory: float  # bytes per node
    memory_peak: float  # bytes/s: channels x transfer rate x 8 bytes, the whole node
    clock_ghz: float
    ipc_ratio: float  # instructions per clock relative to this machine's core: a guess
    interconnects: tuple[str, ...]  # the seed's interconnects (platform knob values)
    source: str
    # Today's nodes: a published STREAM triad of the node (bytes/s), used instead of the
    # peak x STREAM_EFFICIENCY guess of the seeds' nodes, with where it was measured.
    stream_triad: float | None = None
    stream_source: str = ""
    # The core: double-precision flops per cycle (its SIMD floating-point units at full
    # throughput, the ECM model's in-core peak) and the clocks (MHz) the frequency knob offers,
    # each with its source.
    flops_per_cycle: int = 4
    flops_source: str = ""
    frequencies_mhz: tuple[int, ...] = ()
    frequency_source: str = ""

    @property
    def nominal_mhz(self) -> int:
        return round(self.clock_ghz * 1000)

    @property
    def bandwidth(self) -> float:
        """The node's memory bandwidth the model charges against (bytes/s)."""
        if self.stream_triad is not None:
            return self.stream_triad
        return self.memory_peak * STREAM_EFFICIENCY

    @property
    def core_speed(self) -> float:
        """A core's speed relative to this machine's (a guess: clock ratio x IPC ratio)."""
        return self.clock_ghz / HOST_CLOCK_GHZ * self.ipc_ratio

    def clock_mhz(self, frequency: str) -> int:
        """The clock of a `frequency` knob value: `nominal` or one of the preset's settings."""
        if frequency == "nominal":
            return self.nominal_mhz
        mhz = int(frequency)
        if mhz not in self.frequencies_mhz and len(self.frequencies_mhz) == 1:
            raise FrequencyError(
                f"{self.name} runs at its nominal {self.nominal_mhz} MHz only (no other clock "
                f"of its CPU is cited), not {mhz}: choose nominal"
            )
        if mhz not in self.frequencies_mhz:
            raise FrequencyError(
                f"{self.name} runs at {', '.join(map(str, self.frequencies_mhz))} MHz "
                f"(its range {min(self.frequencies_mhz)}-{max(self.frequencies_mhz)} MHz), "
                f"not {mhz}: choose one of them or nominal"
            )
        return mhz

    def environment(self, ranks_per_node: int, frequency: str = "nominal") -> dict[str, str]:
        """What the workload core reads (esm_fold.h), the core at `frequency`: the in-core
        part of a kernel scales with the clock (core speed, peak flops), memory does not."""
        mhz = self.clock_mhz(frequency)
        return {
            "ESM_NODE_RANKS": str(ranks_per_node),
            "ESM_NODE_BANDWIDTH": f"{self.bandwidth:.6g}",
            "ESM_CORE_SPEED": f"{self.core_speed * mhz / self.nominal_mhz:.6g}",
            "ESM_CORE_FLOPS": f"{self.flops_per_cycle * mhz * 1e6:.6g}",
        }

    def preconnect_limit(self, ranks_per_node: int, bytes_per_rank: float = 0.0) -> int:
        """The largest rank count whose ranks, pre-connected to every other rank, still fit
        the node's memory (with `bytes_per_rank` of the model's own per rank)."""
        free = self.memory / ranks_per_node - bytes_per_rank
        return max(0, int(free // CONNECTION_BYTES) + 1)


def connection_memory(ranks: int, peers: int, preconnected: bool) -> float:
    """MPI connection memory of one rank: a connection to every other rank when pre-connected
    (ParaStation by default, PSP_ONDEMAND=0), else only to the peers it talks to."""
    return CONNECTION_BYTES * ((ranks - 1) if preconnected else min(peers, ranks - 1))


def connection_time(ranks: int, peers: int, preconnected: bool) -> float:
    """Seconds one rank spends setting up its MPI connections, one after another: all
    (ranks - 1) in MPI_Init when pre-connected, else one per peer at its first message (in
    the first time step, on the critical path of that exchange)."""
    return CONNECTION_SECONDS * ((ranks - 1) if preconnected else min(peers, ranks - 1))


DDR3_1333 = 10.667e9  # bytes/s per channel
DDR3_1066 = 8.533e9
DDR5_4800 = 38.4e9
# Double-precision flops per cycle of a core (two 128-bit SSE2 pipes, one adding and one
# multiplying two doubles each: 4), with their sources.
K10_FLOPS = (
    "AMD, 'AMD Opteron 6200 Series Processors Linux Tuning Guide' (April 2012, v1), 1.5 "
    "Floating Point Capabilities: four double-precision flops per cycle per core, 'comparable "
    "to the floating point performance per core per cycle of an AMD Opteron 6100' (Magny-Cours, "
    "the 6174's family)"
)
NEHALEM_FLOPS = (
    "Intel 64 and IA-32 Architectures Optimization Reference Manual (order 248966), Intel "
    "microarchitecture code name Nehalem: a 128-bit SSE floating-point multiply (port 0) and add "
    "(port 1) issued each cycle, 4 double-precision flops; Westmere is its 32 nm shrink. "
    "SSE2 add and multiply throughput measured on a Westmere X5690: A. Vladimirov, 'Arithmetics on Intel's Sandy Bridge and "
    "Westmere CPUs: not all FLOPs are created equal', Colfax International, 2012-04-30"
)
ZEN4_FLOPS = (
    "AMD, 'Software Optimization Guide for the AMD Zen4 Microarchitecture' (pub. 57647, 2023): "
    "two 256-bit FMA pipes (AVX-512 in two halves), 2 x 4 doubles x 2 = 16 flops per cycle"
)
NOMINAL_ONLY = "no P-state table of this CPU cited: its nominal clock only"
# Zen 5 (this machine's core: /proc/cpuinfo family 26, i.e. 1Ah) against Zen 4: AMD's stated
# +16 % instructions per clock (Zen 5 launch, Computex 2024; the press reported 16-17 %).
ZEN5_OVER_ZEN4_IPC = 1.16

MACHINES: dict[str, Machine] = {
    m.name: m
    for m in (
        Machine(
            "dell-m610",
            "Dell PowerEdge M610: 2x Xeon X5670 (6 cores, 2.93 GHz)",
            12,
            24e9,
            2 * 3 * DDR3_1333,
            2.93,
            0.6,
            ("ib-qdr", "gige"),
            "CESM deck (seed 000): 38 nodes, 2x six-core X5670 2.93 GHz, 24 GB DDR3-1333, "
            "ConnectX-2 QDR and 1GigE; Westmere-EP: 3 DDR3 channels per socket. IPC ratio "
            "0.6 against this machine's EPYC core: a guess",
            flops_source=NEHALEM_FLOPS,
            frequencies_mhz=(2930,),
            frequency_source=NOMINAL_ONLY,
        ),
        Machine(
            "dell-r815",
            "Dell PowerEdge R815: 4x Opteron 6174 (12 cores, 2.2 GHz)",
            48,
            128e9,
            4 * 4 * DDR3_1333,
            2.2,
            0.5,
            ("ib-qdr", "10gige", "gige"),
            "HYCOM and PFLOTRAN decks (seeds 001, 004): 11 nodes, 4x twelve-core Opteron "
            "6174 2.2 GHz, 128 GB DDR3-1333, ConnectX-2 QDR (dual rail), 10GigE, 1GigE; "
            "Magny-Cours: 2 dies of 2 DDR3 channels per socket. IPC ratio 0.5: a guess",
            flops_source=K10_FLOPS,
            frequencies_mhz=(1400, 1800, 2200),
            frequency_source="the clocks the PFLOTRAN deck (seed 004) compares, as settings it "
            "studied (not a result): 2200 MHz is the Opteron 6174's nominal clock (AMD Opteron "
            "6100 Series product data); 1800 and 1400 MHz lie below it",
        ),
        Machine(
            "juropa",
            "JUROPA: 2x Xeon X5570 (4 cores, 2.93 GHz)",
            8,
            24e9,
            2 * 3 * DDR3_1066,
            2.93,
            0.55,
            ("ib-qdr",),
            "HOMME/POPperf white paper (seed 002): 2,208 nodes of 2x quad-core X5570 "
            "Nehalem-EP, Mellanox QDR fat tree; 24 GB DDR3-1066 per node (public JUROPA "
            "specification; 3 channels per socket). IPC ratio 0.55: a guess",
            flops_source=NEHALEM_FLOPS,
            frequencies_mhz=(2930,),
            frequency_source=NOMINAL_ONLY,
        ),
        Machine(
            "azure-hbv4",
            "Azure HBv4: 2x EPYC 9V33X (Genoa-X, 96 cores, 176 for the VM, 2.4 GHz)",
            176,
            688e9,
            2 * 12 * DDR5_4800,
            2.4,
            1 / ZEN5_OVER_ZEN4_IPC,
            ("ib-ndr",),
            "Microsoft Learn, 'HBv4-series' (size table: Standard_HB176rs_v4, 176 physical "
            "cores, 688 GB, 2.4 GHz base, 400 Gb/s NDR InfiniBand) and 'HBv4-series virtual "
            "machine overview' (2x 96-core EPYC 9V33X, 16 cores kept by the hypervisor, 4 NUMA "
            "domains of 6 DDR5 channels). IPC ratio 1/1.16: AMD's stated Zen 5 gain over "
            "Zen 4, this machine being a Zen 5 EPYC",
            stream_triad=750e9,
            stream_source="Microsoft Learn, 'HBv4-series VM sizes performance and "
            "scalability' (2023-05-22): STREAM Triad 750-780 GB/s of DDR5 (its 'STREAM "
            "benchmark' page: ~650-780 GB/s); used: 750 GB/s, the lower end of the first",
            flops_per_cycle=16,
            flops_source=ZEN4_FLOPS,
            frequencies_mhz=(2400,),
            frequency_source=NOMINAL_ONLY,
        ),
    )
}
MACHINE_NAMES = ("none", *MACHINES)
# The frequency knob's values: nominal, or any preset's clock setting (MHz); a preset refuses
# the clocks it does not offer.
FREQUENCIES = (
    "nominal",
    *map(str, sorted({mhz for m in MACHINES.values() for mhz in m.frequencies_mhz})),
)


def machine(name: str) -> Machine:
    try:
        return MACHINES[name]
    except KeyError:
        raise MachineError(
            f"unknown machine {name!r} (machines: {', '.join(MACHINES)}; "
            "`esmperf knobs --stack smpi` lists them)"
        ) from None
