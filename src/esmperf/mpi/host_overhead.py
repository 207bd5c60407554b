"""The host's CPU cost per message on a simulated cluster (the `host_overhead` knob of the smpi
stack, docs/simulate.md "The host's cost per message"): LogGP's o, the time the sending and the
receiving core spend in the MPI stack for each message, from published measurements, set as
SimGrid's smpi/os (MPI_Send), smpi/ois (MPI_Isend) and smpi/or (MPI_Recv) options.

SimGrid 3.32 (and 4.1) charges them as a sleep of the rank (smpi_request.cpp): smpi/os on a
detached (eager) send, smpi/ois on every MPI_Isend, smpi/or when a receive completes that
matched a detached send. So the knob needs the eager sends of `eager_limit = mpi`: under
`simgrid` every send is a rendezvous from FOLD_AUTO_RANKS ranks and only MPI_Isend would pay.
SMPI's CPU collectives send through the same requests, so their messages pay it too; an
offloaded collective (the `offload` knob) sends none and pays nothing.

Each option is SimGrid's piecewise-linear form `size:offset:per_byte;...`: from a boundary
(bytes, exclusive) to the next, offset + per_byte x size seconds; at or below the first
boundary the first piece (SimGrid 3.32, smpi_host.cpp; SimGrid 4.1's FactorSet returns 0 there
instead, so on 4.1 a message of 0 bytes pays nothing).

A message between two ranks of one node: its MPI stack's cost through shared memory is not
published for the seeds' stacks, so the band takes its physical ends: nothing at the low end
(`on_node_share` 0) and the interconnect's figure at the high end (SimGrid's options charge
every message alike). The low end is charged by the simulator's plugin, which knows each
message's source and destination host (native/simcount/host_cost.cpp: SMPI's cost callbacks).

Not modelled: the overhead is a sleep, not computation: OS noise does not stretch it.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from esmperf.mpi.knobs import Unsupported

HOST_OVERHEAD_VALUES = ("none", "low", "high")


@dataclass(frozen=True)
class HostOverhead:
    send: str  # smpi/os
    isend: str  # smpi/ois
    recv: str  # smpi/or
    source: str
    on_node_share: float = 1.0  # what a message between two ranks of one host pays of it

    def options(self) -> tuple[str, ...]:
        if self.on_node_share == 1.0:  # SimGrid's own options: every message alike
            prefix, share = "smpi", ()
        else:  # the simulator's plugin charges by destination (native/simcount/host_cost.cpp)
            prefix, share = "esm", (f"--cfg=esm/on-node-share:{self.on_node_share:g}",)
        return (
            f"--cfg={prefix}/os:{self.send}",
            f"--cfg={prefix}/ois:{self.isend}",
            f"--cfg={prefix}/or:{self.recv}",
            *share,
        )


def interpolated(points: tuple[tuple[int, float], ...]) -> str:
    """SimGrid's piecewise form through measured (bytes, seconds) points: linear between each
    point and the next, the first piece below the first point, the last beyond the last."""
    pieces = []
    for (size, o), (next_size, next_o) in zip(points, points[1:], strict=False):
        per_byte = (next_o - o) / (next_size - size)
        pieces.append(f"{size}:{o - per_byte * size:.6e}:{per_byte:.6e}")
    return ";".join(pieces)


Piece = tuple[float, float, float]  # boundary (bytes), offset (s), per byte (s)


def pieces(option: str) -> list[Piece]:
    split = (tuple(float(v) for v in piece.split(":")) for piece in option.split(";"))
    return sorted((boundary, offset, per_byte) for boundary, offset, per_byte in split)


def line(option: list[Piece], size: float) -> tuple[float, float]:
    """The (offset, per_byte) SimGrid 3.32 charges a message of `size` bytes: the piece whose
    boundary is the largest below `size`; the first at or below its boundary."""
    offset, per_byte = option[0][1:]
    for boundary, piece_offset, piece_per_byte in option:
        if size <= boundary:
            break
        offset, per_byte = piece_offset, piece_per_byte
    return offset, per_byte


def charged(option: str, size: int) -> float:
    """Seconds SimGrid 3.32 charges a message of `size` bytes under a piecewise option."""
    offset, per_byte = line(pieces(option), size)
    return offset + per_byte * size


def envelope(a: str, b: str, pick: Callable[[float, float], float]) -> str:
    """The piecewise option that charges each message size pick(a's, b's) charge (min: the
    band's low end, max: its high end), exactly at every whole size: between the two options'
    boundaries both are linear, split once more where they cross."""
    first, second = pieces(a), pieces(b)
    # from -1: the first piece also charges the sizes at or below its boundary (0 bytes)
    edges = sorted({-1.0, *(p[0] for p in first), *(p[0] for p in second)})
    out: list[tuple[int, float, float]] = []
    for start, end in zip(edges, [*edges[1:], float("inf")], strict=True):
        (off_a, slope_a), (off_b, slope_b) = line(first, start + 1), line(second, start + 1)
        cuts = [start]
        if slope_a != slope_b:
            crossing = math.floor((off_b - off_a) / (slope_a - slope_b))
            if start < crossing < end:
                cuts.append(crossing)
        for cut in cuts:
            at = cut + 1
            charges = {
                off_a + slope_a * at: (off_a, slope_a),
                off_b + slope_b * at: (off_b, slope_b),
            }
            chosen = charges[pick(*charges)] if len(charges) == 2 else next(iter(charges.values()))
            if not out or out[-1][1:] != chosen:
                out.append((max(int(cut), 0), *chosen))
    assert all(x[0] < y[0] for x, y in zip(out, out[1:], strict=False)), out
    return ";".join(f"{boundary}:{offset:.9g}:{per_byte:.9g}" for boundary, offset, per_byte in out)


# Netgauge's `loggp` pattern over MPI on ANL's Tukey (MVAPICH over InfiniBand; the file names
# no adapter generation): o_s and o_r in microseconds per message size, the rows 1-8192 B of
# codes-org/codes tests/conf/ng-mpi-tukey.dat (from 16 KiB MVAPICH's rendezvous: o 20 us).
# Netgauge measures no MPI_Isend apart, so ois is o_s (LogGP's o: the CPU time to inject).
TUKEY_SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)
TUKEY_O_S_US = (
    1.103756,
    1.145917,
    1.146528,
    1.149528,
    1.207354,
    1.213187,
    1.240573,
    1.267180,
    1.157971,
    1.190356,
    1.278512,
    1.457158,
    1.834445,
    2.725949,
)
TUKEY_O_R_US = (
    1.139558,
    1.065402,
    1.063513,
    1.074179,
    1.102286,
    1.119839,
    1.145113,
    1.111118,
    1.062125,
    1.131615,
    1.285648,
    1.639430,
    2.498140,
    4.945954,
)
TUKEY_SEND = interpolated(tuple(zip(TUKEY_SIZES, (o * 1e-6 for o in TUKEY_O_S_US), strict=True)))
TUKEY_RECV = interpolated(tuple(zip(TUKEY_SIZES, (o * 1e-6 for o in TUKEY_O_R_US), strict=True)))
TUKEY = HostOverhead(
    TUKEY_SEND,
    TUKEY_SEND,
    TUKEY_RECV,
    "Netgauge loggp, MVAPICH over InfiniBand on ANL's Tukey: o_s 1.10-1.24 us, o_r 1.06-1.15 us "
    "for 1-64 B, 2.73 and 4.95 us at 8 KiB (codes-org/codes, tests/conf/ng-mpi-tukey.dat)",
)
# SimGrid's own calibration of TACC Stampede (MVAPICH2 2.1 over InfiniBand FDR), as published
# in Ezibenroc/platform-calibration, src/calibration/examples/stampede_output.xml: its smpi/os,
# smpi/ois and smpi/or (significant digits kept to 6), boundaries at 4120 and 17408 B.
STAMPEDE = HostOverhead(
    "0:3.33810e-07:1.19758e-10;4120:1.80026e-06:1.37844e-10;17408:0:0",
    "0:2.99560e-07:1.31295e-10;4120:5.22644e-07:5.59286e-12;17408:0:0",
    "0:1.36360e-06:1.08009e-10;4120:0:0;17408:0:0",
    "SMPI calibration of TACC Stampede, MVAPICH2 2.1 over InfiniBand FDR: o_s 0.33 us + "
    "0.12 ns/B, o_r 1.36 us + 0.11 ns/B below 4120 B (Ezibenroc/platform-calibration, "
    "src/calibration/examples/stampede_output.xml)",
)
# SimGrid's calibration of Grid'5000's taurus (Open MPI, btl tcp,self over 10 Gigabit
# Ethernet), Ezibenroc/platform-calibration, data/final_platforms/taurus.xml: its smpi/os,
# smpi/ois and smpi/or (6 significant digits), boundaries at 1420, 33500, 65536 and 320000 B.
TAURUS = HostOverhead(
    "0:3.79946e-06:1.09810e-10;1420:4.06752e-06:8.98783e-11;33500:6.01205e-06:7.10122e-11;"
    "65536:7.28271e-05:1.96833e-10;320000:0:0",
    "0:3.65848e-06:1.33281e-10;1420:3.83674e-06:7.84867e-11;33500:5.57232e-06:6.56689e-11;"
    "65536:4.17803e-06:2.37460e-12;320000:4.70677e-06:3.38065e-13",
    "0:3.51810e-06:3.01847e-10;1420:8.16125e-06:2.66840e-10;33500:1.49348e-05:1.97645e-10;"
    "65536:5.88893e-05:1.29160e-09;320000:0:0",
    "SMPI calibration of Grid'5000 taurus, Open MPI btl tcp over 10 GbE: o_s 3.80 us + "
    "0.11 ns/B, o_r 3.52 us + 0.30 ns/B below 1420 B (Ezibenroc/platform-calibration, "
    "data/final_platforms/taurus.xml)",
)
# The band's ends per platform family. InfiniBand: two published MPI stacks on two clusters,
# neither below the other at every size (Stampede's o_s is a third of Tukey's, its o_r higher
# below 1,817 B), so each option's low end is the smaller of the two at every message size and
# its high end the larger (`envelope`): low <= high for every message and every algorithm.
# Ethernet: one published calibration, so both ends have the same figure between nodes (the GigE
# presets take the 10 GbE cluster's: the per-message cost is the kernel's TCP path, not the
# wire's); within a node the ends differ as on InfiniBand.
# A message within a node pays nothing at the low end and the interconnect's figure at the high
# end (the module's docstring).
IB_LOW = HostOverhead(
    envelope(STAMPEDE.send, TUKEY.send, min),
    envelope(STAMPEDE.isend, TUKEY.isend, min),
    envelope(STAMPEDE.recv, TUKEY.recv, min),
    "the smaller of Stampede's and Tukey's at every size: " + STAMPEDE.source + "; " + TUKEY.source,
    on_node_share=0.0,
)
IB_HIGH = HostOverhead(
    envelope(STAMPEDE.send, TUKEY.send, max),
    envelope(STAMPEDE.isend, TUKEY.isend, max),
    envelope(STAMPEDE.recv, TUKEY.recv, max),
    "the larger of Stampede's and Tukey's at every size: " + STAMPEDE.source + "; " + TUKEY.source,
)
TAURUS_LOW = replace(TAURUS, on_node_share=0.0)
HOST_OVERHEADS: dict[str, dict[str, HostOverhead]] = {
    "ib-qdr": {"low": IB_LOW, "high": IB_HIGH},
    "ib-fdr": {"low": IB_LOW, "high": IB_HIGH},
    "gige": {"low": TAURUS_LOW, "high": TAURUS},
    "10gige": {"low": TAURUS_LOW, "high": TAURUS},
}


def host_overhead_options(name: str, platform: str, eager_limit: str) -> tuple[str, ...]:
    """smpirun's options for host_overhead `name` on `platform`; Unsupported where no figure
    is published or the sends are not eager."""
    if name == "none":
        return ()
    ends = HOST_OVERHEADS.get(platform)
    if ends is None:
        raise Unsupported(
            f"host_overhead = {name} on {platform}: no published per-message overhead of its "
            f"MPI stack; choose host_overhead = none or a platform with one "
            f"({', '.join(HOST_OVERHEADS)})"
        )
    if eager_limit != "mpi":
        raise Unsupported(
            f"host_overhead = {name} is charged on eager sends and their receives: choose "
            "eager_limit = mpi or auto (under simgrid every send is a rendezvous at scale)"
        )
    return ends[name].options()
