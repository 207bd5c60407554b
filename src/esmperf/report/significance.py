"""What a comparison can and cannot show, in words, and which findings lead the report.

A comparison whose repetitions cannot reach p < alpha whatever the data (3 against 3 cannot:
the smallest two-sided Mann-Whitney p is 0.1) is inconclusive, never "no difference": its
sentence gives the effect with its Hodges-Lehmann interval and the repetitions per side that
would detect a change of that size (at least DETECT) at the measured spread. Findings carry a
weight: the size of an effect as a log ratio, how far a scaling curve falls, how much of the
run one MPI call takes; the report shows the heaviest LEADING first, the rest folded below."""

import math
from collections.abc import Sequence
from typing import Protocol, TypeVar

from esmperf import stats

DETECT = 0.2  # the smallest change "run with at least N repetitions" is sized for
LEADING = 8  # findings shown first; the rest are folded
PER_TOPIC = 3  # of the leading findings, at most this many of one topic (scaling, knob, ...)
SIGNIFICANT, INCONCLUSIVE, NO_DIFFERENCE = 1.0, 0.6, 0.2  # weight factors of a comparison


def underpowered(difference: stats.Difference, alpha: float) -> bool:
    return not stats.can_reach(difference.n_a, difference.n_b, alpha)


def sizes(items: Sequence[stats.Difference]) -> str:
    ns = sorted({n for d in items for n in (d.n_a, d.n_b)})
    return " and ".join(map(str, ns))


def repetitions_needed(
    difference: stats.Difference, a: Sequence[float], b: Sequence[float], alpha: float
) -> int:
    """Repetitions per side that detect this comparison's change (at least DETECT) with 80 %
    power at the spread of its two samples."""
    shift = max(
        abs(math.log1p(difference.change)) if difference.change > -1 else math.inf,
        math.log1p(DETECT),
    )
    change = math.expm1(min(shift, 50.0))
    return stats.repetitions_to_detect(change, stats.log_spread(a, b), alpha)


def estimate_text(difference: stats.Difference) -> str:
    """ "22.4% worse (Hodges-Lehmann estimate, 90 % CI -25.0% to -20.1%)"."""
    return (
        f"{stats.format_change(difference.change)} (Hodges-Lehmann estimate, "
        f"{difference.confidence:.0%} CI "
        f"{stats.format_change_ci(difference.ci_low, difference.ci_high)})"
    )


def inconclusive_text(items: Sequence[stats.Difference], needed: int, alpha: float) -> str:
    return (
        f"inconclusive: n = {sizes(items)} cannot show p < {alpha:g}; run with at least "
        f"{needed} repetitions (80% power for the change seen, or {DETECT:.0%} if smaller, "
        "at the measured spread)"
    )


def comparison_weight(difference: stats.Difference, oversubscribed: bool, alpha: float) -> float:
    factor = (
        SIGNIFICANT
        if difference.significant
        else INCONCLUSIVE
        if underpowered(difference, alpha)
        else NO_DIFFERENCE
    )
    size = abs(math.log1p(difference.change)) if difference.change > -1 else 5.0
    return size * factor * (0.3 if oversubscribed else 1.0)


def scaling_weight(efficiencies: Sequence[float], breaks: bool) -> float:
    """How far the curve falls below ideal at its worst point; a break below the good
    efficiency weighs more."""
    loss = max(0.0, 1.0 - min(efficiencies, default=1.0))
    return loss + 0.2 if breaks else loss / 2


def call_weight(mpi_percent: float, call_share: float) -> float:
    """One MPI call's share of the whole run (its share of MPI time x MPI's share of the run),
    and a little for naming the dominant call at all."""
    return call_share / 100 * mpi_percent / 100 + 0.1


class Weighted(Protocol):  # findings.Finding
    topic: str
    weight: float


F = TypeVar("F", bound=Weighted)


def ranked(
    found: Sequence[F], leading: int = LEADING, per_topic: int = PER_TOPIC
) -> tuple[list[F], list[F]]:
    """(the `leading` heaviest findings, heaviest first, at most `per_topic` of one topic while
    others remain; the others in their given order). A seed's claims always lead: the study
    was built to check them."""
    order = sorted(range(len(found)), key=lambda i: (found[i].topic != "seed", -found[i].weight, i))
    chosen: list[int] = []
    taken: dict[str, int] = {}
    for i in order:
        topic = found[i].topic
        if len(chosen) < leading and (topic == "seed" or taken.get(topic, 0) < per_topic):
            chosen.append(i)
            taken[topic] = taken.get(topic, 0) + 1
    for i in order:  # fill up when the topics ran short
        if len(chosen) < leading and i not in chosen:
            chosen.append(i)
    chosen.sort(key=order.index)
    first = set(chosen)
    return [found[i] for i in chosen], [f for i, f in enumerate(found) if i not in first]
