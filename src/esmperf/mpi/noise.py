"""OS noise on simulated nodes (the `noise` knob of the smpi stack, docs/simulate.md "OS noise"):
named signatures of detours (an interrupt or a daemon taking the core away from the program:
how often, for how long) from published measurements, and their SimGrid speed profiles.

A detour is written into the platform file as a speed profile of each host (<trace> and
<trace_connect kind="SPEED">): the host computes at DETOUR_SPEED_SCALE of its speed during a
detour and at full speed otherwise. So only computation is delayed (SMPI's measured bursts, or
the kernels' charged cost under computation = model); messages, and time a rank spends waiting
in MPI, are not. Every node has its own phase, drawn from the noise seed: the nodes' noise is
not synchronised, and the same seed gives the same profiles, so the same simulated times.

A source that gives a range is two signatures, its low and its high end; a figure derived from
a published one says how.
"""

import random
from dataclasses import dataclass
from math import lcm

from esmperf.errors import EsmperfError

# SimGrid 3.32 ignores a speed scale of 0 in a profile (measured: the detour then costs nothing),
# so a detour runs the host at a millionth of its speed: a 15 us detour lets 15 ps of computation
# through, below every figure the tests compare.
DETOUR_SPEED_SCALE = 1e-6
NOISE_SEEDS = tuple(str(seed) for seed in range(10))

# The seeds' era (Linux 2.6 with a 1000 Hz tick): D. Tsafrir (IBM T.J. Watson) measured the
# overhead of the periodic timer interrupt with a sorting program at several tick rates: "0.5-1.5%
# at 1000 Hz, linearly proportional to the tick rate" (the handler's time plus the indirect cost
# of the caches it disturbs).
TSAFRIR_2007 = (
    "Tsafrir, 'The Context-Switch Overhead Inflicted by Hardware Interrupts (and the Enigma of "
    "Do-Nothing Loops)', ExpCS 2007: overall tick overhead 0.5-1.5 % at 1000 Hz on IA32, IA64 "
    "and Power; per tick: 0.5 % and 1.5 % of the 1 ms period = 5 us and 15 us"
)
TICK_2007_HZ = 1000.0
TICK_2007_OVERHEAD_LOW = 0.005  # of the tick period
TICK_2007_OVERHEAD_HIGH = 0.015
# Today's Linux: the kernel's osnoise tracer documentation (Documentation/trace/osnoise-tracer.rst,
# Linux 5.14 on, by the tracer's author D. Bristot de Oliveira) shows one second of each of 8
# CPUs with 1002-1016 IRQs (the 1000 Hz tick and little else; that example was taken on a virtual
# machine, whose host's interference it counts as hardware noise, left out here), and, in its
# tracepoint example, two timer interrupts: "local_timer:236 ... duration 1845 ns" and
# "duration 2848 ns".
OSNOISE_DOC = (
    "Linux kernel documentation, Documentation/trace/osnoise-tracer.rst: 1002-1016 IRQs per CPU "
    "per second (on a virtual machine); local_timer interrupts traced at 1845 ns and 2848 ns"
)
TICK_TODAY_HZ = 1000.0
TICK_TODAY_LOW = 1.845e-6  # s
TICK_TODAY_HIGH = 2.848e-6


@dataclass(frozen=True)
class Detour:
    """One source of noise: every 1/frequency seconds it takes the core for `duration`."""

    what: str
    frequency: float  # Hz
    duration: float  # seconds
    source: str

    @property
    def period_ns(self) -> int:
        return round(1e9 / self.frequency)


@dataclass(frozen=True)
class NoiseSignature:
    name: str
    title: str
    detours: tuple[Detour, ...]

    @property
    def share(self) -> float:
        """The fraction of a core the detours take."""
        return sum(detour.frequency * detour.duration for detour in self.detours)


def tick(hz: float, duration: float, source: str) -> Detour:
    return Detour("timer interrupt", hz, duration, source)


SIGNATURES: dict[str, NoiseSignature] = {
    signature.name: signature
    for signature in (
        NoiseSignature(
            "linux-2007-low",
            "Linux of the seeds' era, 1000 Hz tick, low end (0.5 %)",
            (tick(TICK_2007_HZ, TICK_2007_OVERHEAD_LOW / TICK_2007_HZ, TSAFRIR_2007),),
        ),
        NoiseSignature(
            "linux-2007-high",
            "Linux of the seeds' era, 1000 Hz tick, high end (1.5 %)",
            (tick(TICK_2007_HZ, TICK_2007_OVERHEAD_HIGH / TICK_2007_HZ, TSAFRIR_2007),),
        ),
        NoiseSignature(
            "linux-today-low",
            "today's Linux, 1000 Hz tick, shortest traced timer interrupt (1.845 us)",
            (tick(TICK_TODAY_HZ, TICK_TODAY_LOW, OSNOISE_DOC),),
        ),
        NoiseSignature(
            "linux-today-high",
            "today's Linux, 1000 Hz tick, longest traced timer interrupt (2.848 us)",
            (tick(TICK_TODAY_HZ, TICK_TODAY_HIGH, OSNOISE_DOC),),
        ),
    )
}
NOISE_NAMES = ("none", *SIGNATURES)


def signature(name: str) -> NoiseSignature:
    found = SIGNATURES.get(name)
    if found is None:
        raise EsmperfError(
            f"unknown noise signature {name!r} (signatures: {', '.join(NOISE_NAMES)})"
        )
    return found


def node_detours(noise: NoiseSignature, seed: int, node: int) -> tuple[int, list[tuple[int, int]]]:
    """(profile period, [(start, end)] of the detours in one period), in ns, for one node: each
    detour source at its own phase, drawn from (signature, seed, node); overlaps merged."""
    period = lcm(*(detour.period_ns for detour in noise.detours))
    rng = random.Random(f"{noise.name}:{seed}:{node}")
    spans = []
    for detour in noise.detours:
        length = round(detour.duration * 1e9)
        phase = rng.randrange(0, detour.period_ns - length)
        spans.extend((start, start + length) for start in range(phase, period, detour.period_ns))
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return period, merged


def platform_elements(name: str, seed: int, hosts: int, host_prefix: str) -> str:
    """The <trace> and <trace_connect> elements giving each of `hosts` hosts its noise ('' for
    none: the platform file of before, byte for byte)."""
    if name == "none":
        return ""
    noise = signature(name)
    lines = []
    for node in range(hosts):
        period, spans = node_detours(noise, seed, node)
        events = ["0 1.0"] if spans[0][0] > 0 else []
        for start, end in spans:
            events.append(f"{start * 1e-9:.9f} {DETOUR_SPEED_SCALE:g}")
            events.append(f"{end * 1e-9:.9f} 1.0")
        trace = f"noise-{host_prefix}{node}"
        lines.append(f'  <trace id="{trace}" periodicity="{period * 1e-9:.9f}">')
        lines.extend(events)
        lines.append("  </trace>")
        lines.append(
            f'  <trace_connect kind="SPEED" trace="{trace}" element="{host_prefix}{node}"/>'
        )
    return "\n".join(lines) + "\n"
