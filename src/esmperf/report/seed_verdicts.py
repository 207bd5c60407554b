"""The verdicts of the seeds' claims and how they are worded (seed_claims.py evaluates them):
reproduced within the claim's tolerance, not reproduced (with what ours is, so the gap can be
explained), not decided at this precision (our figure's confidence interval reaches both
verdicts), not measured by this study (naming the configuration that is missing), or not
checkable by our simulation (a hardware feature it does not model).

A claim of equality (a ratio of x1: "comparable", "minimal gain") is judged by its tolerance
alone; a ratio the seed puts above or below 1 must also be on that side. A figure measured over
repetitions carries its confidence interval (stats.py): the verdict is the one every value in
the interval gets, and "not decided" when the interval reaches both, so that a rerun whose
median moves within the noise does not flip the verdict."""

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from esmperf.mpi.smpi_knobs import SMPI_NOT_SIMULATED
from esmperf.report.seed_evidence import Evidence, Interval, describe, needs_profile
from esmperf.report.seed_reference import Claim
from esmperf.store.results import RunResult

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
NOT_DECIDED = "not decided"
NOT_MEASURED = "not measured"
NOT_CHECKABLE = "not checkable"
VERDICTS = (REPRODUCED, NOT_REPRODUCED, NOT_DECIDED, NOT_MEASURED, NOT_CHECKABLE)
JUDGED = (REPRODUCED, NOT_REPRODUCED, NOT_DECIDED)  # the verdicts of a figure of ours
NO_PROFILE_UNDER_SMPI = (
    'the simulated runs were not profiled: set profile = "every" in the '
    "study's simulated block (the profiler is linked into the smpi stack's "
    "programs and leaves their simulated time unchanged)"
)


@dataclass
class Evaluation:
    claim: Claim
    verdict: str
    seed: float | None  # the seed's figure
    ours: float | None
    configuration: str  # which of our runs the figure comes from, or what is missing
    why: str  # why the verdict: the numbers, and what our figure is (model, analog)
    interval: Interval | None = None  # ours' confidence interval, when it has repetitions
    # one end of a band (seed_evidence.band_of): (the configuration without the band's knobs,
    # this end's settings); ("", "") for a configuration with no band
    band: tuple[str, str] = ("", "")

    @property
    def ratio(self) -> float | None:
        """Ours over the seed's."""
        if self.ours is None or self.seed is None or self.seed == 0:
            return None
        return self.ours / self.seed


def reproduced_range(claim: Claim) -> tuple[float, float]:
    """The figures of ours that reproduce the claim (a closed range; infinite for a bound)."""
    seed = claim.value
    assert seed is not None
    if claim.bound == "at_least":
        return seed, math.inf
    if claim.bound == "at_most":
        return -math.inf, seed
    if seed == 0:
        return -claim.tolerance, claim.tolerance
    ends = sorted((seed * (1 - claim.tolerance), seed * (1 + claim.tolerance)))
    low, high = ends[0] - 1e-12 * abs(seed), ends[1] + 1e-12 * abs(seed)
    if claim.kind == "ratio" and seed > 1:  # the seed's side of 1: a gain stays a gain
        low = max(low, math.nextafter(1.0, math.inf))
    elif claim.kind == "ratio" and seed < 1:
        high = min(high, math.nextafter(1.0, -math.inf))
    return low, high


def judged(claim: Claim, ours: float, interval: Interval | None) -> tuple[str, str]:
    """(verdict, reason) of our figure, and of its interval when it has one: reproduced or
    not when the whole interval gets that verdict, not decided when it reaches both."""
    verdict, reason = numeric_verdict(claim, ours)
    if interval is None:
        return verdict, reason
    low, high = reproduced_range(claim)
    spread = (
        f"its {interval.confidence:.0%} interval {fmt_bare(claim, interval.low)} to "
        f"{fmt_bare(claim, interval.high)} ({' and '.join(map(str, interval.repetitions))} "
        "repetitions)"
    )
    if low <= interval.low and interval.high <= high:
        return REPRODUCED, f"{reason}; all of {spread} reproduces the claim"
    if interval.high < low or interval.low > high:
        return NOT_REPRODUCED, f"{reason}; none of {spread} reproduces the claim"
    return NOT_DECIDED, (
        f"{reason}, but {spread} reaches both verdicts: not decided at this precision "
        "(more repetitions, or a quieter machine, narrow it)"
    )


def numeric_verdict(claim: Claim, ours: float) -> tuple[str, str]:
    """(verdict, reason) of our figure against the seed's: within the relative tolerance (and,
    for a ratio the seed puts above or below 1, on that side: a claim of equality, x1, is
    judged by its tolerance alone), or beyond the bound the seed states."""
    seed = claim.value
    assert seed is not None
    if claim.bound == "at_least":
        ok = ours >= seed
        return (
            REPRODUCED if ok else NOT_REPRODUCED,
            f"ours {fmt(claim, ours)} is {'at least' if ok else 'below'} the seed's "
            f"{fmt(claim, seed)}",
        )
    if claim.bound == "at_most":
        ok = ours <= seed
        return (
            REPRODUCED if ok else NOT_REPRODUCED,
            f"ours {fmt(claim, ours)} is {'at most' if ok else 'above'} the seed's "
            f"{fmt(claim, seed)}",
        )
    if seed == 0:
        ok = abs(ours) <= claim.tolerance
    else:
        ok = abs(ours / seed - 1) <= claim.tolerance + 1e-12
    same_side = claim.kind != "ratio" or seed == 1 or (ours - 1) * (seed - 1) > 0 or ours == seed
    if ok and same_side:
        return REPRODUCED, (
            f"ours {fmt(claim, ours)} is within {claim.tolerance:.0%} of the "
            f"seed's {fmt(claim, seed)}"
        )
    if ok:
        return NOT_REPRODUCED, (
            f"ours {fmt(claim, ours)} is within {claim.tolerance:.0%} of "
            f"the seed's {fmt(claim, seed)} but on the other side of 1: "
            "the comparison goes the other way"
        )
    return NOT_REPRODUCED, (
        f"ours {fmt(claim, ours)} against the seed's {fmt(claim, seed)} "
        f"(x{ours / seed:.3g}), beyond the {claim.tolerance:.0%} tolerance"
        if seed
        else f"ours {fmt(claim, ours)} against the seed's 0"
    )


def fmt(claim: Claim, value: float | None) -> str:
    """A figure in the claim's terms: x1.35 (+35 %), 51 %, 82 % scalability, 2 nodes."""
    if value is None:
        return "—"
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    if claim.kind == "ratio":
        return f"x{value:.3g} ({(value - 1) * 100:+.0f} %)"
    if claim.kind == "scalability":
        return f"{100 * value:.0f} %"
    if claim.kind in ("stops_scaling", "crossover"):
        return count(value, claim.over)
    if claim.kind == "trend":
        return f"x{value:.3g} first to last"
    if claim.kind == "share" or claim.quantity == "mpi_share":
        return f"{value:.0f} %"
    if value.is_integer() and abs(value) < 1e15:
        return f"{value:.0f}"  # exact counts (bytes moved) print whole
    return f"{value:.6g}"


def fmt_bare(claim: Claim, value: float) -> str:
    """A figure without its gloss: x1.05, 51 %."""
    return fmt(claim, value).split(" (")[0]


def count(value: float, axis: str) -> str:
    """ "1 node", "2 nodes", "8 ranks"."""
    return f"{value:g} {axis if value != 1 else axis[:-1]}"


def model_note(results: list[RunResult]) -> str:
    """What our figure is: simulated (and how) or measured here."""
    if any(r.simulated for r in results):
        parts = ["SimGrid SMPI"]
        if any(r.folded for r in results):
            parts.append("folded")
        for knob in ("platform", "machine", "computation", "topology"):
            values = list(dict.fromkeys(r.knobs[knob] for r in results if knob in r.knobs))
            if values:
                parts.append(f"{knob}={' and '.join(values)}")
        note = "simulated (" + ", ".join(parts) + ")"
        if any(r.knobs.get("computation") == "off" for r in results):
            note += (
                ": network only, no computation charged, so compute-bound shares and "
                "ratios are not the seed's"
            )
        return note
    note = "measured on this machine's cores, not the seed's cluster"
    if any("transport" in r.knobs for r in results):
        note += " (the interconnect is an analog: shared memory vs TCP loopback)"
    if any(r.oversubscribed for r in results):
        note += "; oversubscribed: more ranks than cores, so times are not a scaling result"
    return note


def explain(claim: Claim, verdict: str, reason: str, results: list[RunResult]) -> str:
    parts = [reason]
    if verdict in (NOT_REPRODUCED, NOT_DECIDED):
        parts.append("ours is " + model_note(results))
        if claim.analog:
            parts.append(claim.analog)
        if claim.not_modelled:
            parts.append(claim.not_modelled)
    elif claim.analog and verdict == REPRODUCED:
        parts.append(claim.analog)
    return "; ".join(parts) + "."


def missing(claim: Claim, config: dict[str, Any], evidence: Evidence, what: str = "") -> Evaluation:
    """No run of the claim's configuration: not checkable when the simulation cannot model
    it (the claim says so, or a knob it needs is not simulated on the runs the study has),
    else not measured, naming the configuration to add."""
    if claim.not_modelled:
        return Evaluation(
            claim, NOT_CHECKABLE, claim.value, None, describe(config), claim.not_modelled + "."
        )
    workload = config.get("workload")
    simulated = [
        r for r in evidence.results if r.simulated and (workload is None or r.workload == workload)
    ]
    unsimulated = [k for k in config if k in SMPI_NOT_SIMULATED]
    if (
        unsimulated
        and simulated
        and all(r.simulated for r in evidence.results if workload is None or r.workload == workload)
    ):
        return Evaluation(
            claim,
            NOT_CHECKABLE,
            claim.value,
            None,
            describe(config),
            "; ".join(SMPI_NOT_SIMULATED[k] for k in unsimulated) + ".",
        )
    return Evaluation(
        claim,
        NOT_MEASURED,
        claim.value,
        None,
        describe(config),
        what
        or "this study has no measured run of this configuration: add it to "
        "the study file to check the claim.",
    )


def no_quantity(
    claim: Claim, config: dict[str, Any], results: list[RunResult], evidence: Evidence
) -> Evaluation:
    if needs_profile(claim.quantity):
        why = "the matching runs have no profile"
        if all(r.simulated for r in results):
            why += ": " + NO_PROFILE_UNDER_SMPI
        return Evaluation(claim, NOT_MEASURED, claim.value, None, describe(config), why + ".")
    return missing(claim, config, evidence, f"the matching runs do not give {claim.quantity}.")


def claim_verdict(verdicts: set[str]) -> str:
    """One claim's verdict from its evaluations': reproduced only when every evaluation with a
    figure is; not reproduced when one is; else not decided."""
    for verdict in (NOT_REPRODUCED, NOT_DECIDED, REPRODUCED, NOT_CHECKABLE):
        if verdict in verdicts:
            return verdict
    return NOT_MEASURED


def band_verdict(ends: list[Evaluation]) -> str:
    """The verdict of one configuration simulated at both ends of a band (a model parameter's
    sourced range): reproduced at every end; not reproduced where every end misses on the
    same side of the seed's figure; else not decided: the band reaches both verdicts (one end
    reproduces, or the seed's figure lies between the ends), so the parameter decides."""
    verdicts = {e.verdict for e in ends}
    if len(verdicts) > 1 and verdicts & {REPRODUCED, NOT_DECIDED}:
        return NOT_DECIDED
    if verdicts != {NOT_REPRODUCED}:
        return claim_verdict(verdicts)
    claim = ends[0].claim
    if claim.value is None or any(e.ours is None for e in ends):
        return NOT_REPRODUCED
    low, _ = reproduced_range(claim)
    sides = {e.ours < low for e in ends if e.ours is not None}
    return NOT_DECIDED if len(sides) > 1 else NOT_REPRODUCED


def summary_counts(evaluations: list[Evaluation]) -> dict[str, int]:
    """How many claims (not evaluations) have each verdict (claim_verdict; the ends of a band
    count as one configuration, band_verdict)."""
    by_claim: dict[str, dict[str, list[Evaluation]]] = defaultdict(lambda: defaultdict(list))
    for number, evaluation in enumerate(evaluations):
        group = evaluation.band[0] or f"#{number}"
        by_claim[evaluation.claim.id][group].append(evaluation)
    counts = dict.fromkeys(VERDICTS, 0)
    for groups in by_claim.values():
        counts[claim_verdict({band_verdict(ends) for ends in groups.values()})] += 1
    return counts
