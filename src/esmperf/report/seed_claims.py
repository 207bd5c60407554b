"""A study's results held against the claims of the seed it names (seed_reference.py): for each
claim our figure, the seed's, their ratio and a verdict: reproduced within the claim's tolerance,
not reproduced (with what ours is, so the gap can be explained), not measured by this study
(naming the configuration that is missing), or not checkable by our simulation (a hardware
feature it does not model). Nothing is fitted: the claims only read the results.

Our figure for a claim is computed from the medians of the measured repetitions (and the
profile of the configuration, for shares), on the configurations whose settings match the
claim's (seed_evidence.py)."""

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from esmperf.mpi.smpi_knobs import SMPI_NOT_SIMULATED
from esmperf.report.seed_evidence import (
    Evidence,
    curve_key,
    describe,
    keys_of,
    matches,
    needs_profile,
    quantity,
    where,
)
from esmperf.report.seed_reference import Claim, SeedReference
from esmperf.store.results import RunResult

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
NOT_MEASURED = "not measured"
NOT_CHECKABLE = "not checkable"
VERDICTS = (REPRODUCED, NOT_REPRODUCED, NOT_MEASURED, NOT_CHECKABLE)
CROSSOVER_SHARE = 50.0  # % of the run's time in MPI: communication outweighs computation
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

    @property
    def ratio(self) -> float | None:
        """Ours over the seed's."""
        if self.ours is None or self.seed is None or self.seed == 0:
            return None
        return self.ours / self.seed


def evaluate(reference: SeedReference, evidence: Evidence) -> list[Evaluation]:
    """Every claim of the seed, in the reference's order (a claim matched by several of our
    configurations, e.g. on two stacks, gives one evaluation each)."""
    return [e for claim in reference.claims for e in evaluate_claim(claim, evidence)]


def evaluate_claim(claim: Claim, evidence: Evidence) -> list[Evaluation]:
    if claim.kind == "ratio" and not claim.baseline:  # a setting outside our vocabulary
        return [_missing(claim, claim.at, evidence)]
    if claim.kind == "ratio":
        return _ratio(claim, evidence)
    if claim.kind == "scalability":
        return _scalability(claim, evidence)
    if claim.kind in ("stops_scaling", "crossover", "trend"):
        return _curve(claim, evidence)
    return _value(claim, evidence)


# --- verdicts --------------------------------------------------------------------------------


def numeric_verdict(claim: Claim, ours: float) -> tuple[str, str]:
    """(verdict, reason) of our figure against the seed's: within the relative tolerance (and
    on the same side of 1 for a ratio), or beyond the bound the seed states."""
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
    same_side = claim.kind != "ratio" or (ours - 1) * (seed - 1) > 0 or ours == seed
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


def count(value: float, axis: str) -> str:
    """ "1 node", "2 nodes", "8 ranks"."""
    return f"{value:g} {axis if value != 1 else axis[:-1]}"


def _model_note(results: list[RunResult]) -> str:
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


def _explain(claim: Claim, verdict: str, reason: str, results: list[RunResult]) -> str:
    parts = [reason]
    if verdict == NOT_REPRODUCED:
        parts.append("ours is " + _model_note(results))
        if claim.analog:
            parts.append(claim.analog)
        if claim.not_modelled:
            parts.append(claim.not_modelled)
    elif claim.analog and verdict == REPRODUCED:
        parts.append(claim.analog)
    return "; ".join(parts) + "."


def _missing(
    claim: Claim, config: dict[str, Any], evidence: Evidence, what: str = ""
) -> Evaluation:
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


def _no_quantity(
    claim: Claim, config: dict[str, Any], results: list[RunResult], evidence: Evidence
) -> Evaluation:
    if needs_profile(claim.quantity):
        why = "the matching runs have no profile"
        if all(r.simulated for r in results):
            why += ": " + NO_PROFILE_UNDER_SMPI
        return Evaluation(claim, NOT_MEASURED, claim.value, None, describe(config), why + ".")
    return _missing(claim, config, evidence, f"the matching runs do not give {claim.quantity}.")


# --- kinds -----------------------------------------------------------------------------------


def _ratio(claim: Claim, evidence: Evidence) -> list[Evaluation]:
    side_b = {**claim.at, **claim.compare}
    side_a = {**claim.at, **claim.baseline}
    compared = [r for r in evidence.measured if matches(r, side_b)]
    baselines = [r for r in evidence.measured if matches(r, side_a)]
    if not compared:
        return [_missing(claim, side_b, evidence)]
    if not baselines:
        return [_missing(claim, side_a, evidence)]
    varied = keys_of(claim.baseline)
    by_context = {curve_key(a, varied): a for a in baselines}
    pairs = [
        (by_context[curve_key(b, varied)], b)
        for b in compared
        if curve_key(b, varied) in by_context
    ]
    values = [
        (a, b, qa, qb)
        for a, b in pairs
        if (qa := quantity(claim.quantity, a, evidence))
        and (qb := quantity(claim.quantity, b, evidence)) is not None
    ]
    if not pairs:
        return [
            _missing(
                claim,
                side_b,
                evidence,
                f"no run of {describe(side_b)} has a counterpart of "
                f"{describe(claim.baseline)} differing in that only.",
            )
        ]
    if not values:
        return [_no_quantity(claim, side_b, [b for _, b in pairs], evidence)]
    if claim.up_to:
        a, b, qa, qb = max(values, key=lambda v: v[3] / v[2])
        values = [(a, b, qa, qb)]
    found = []
    for a, b, qa, qb in values:
        ours = qb / qa
        verdict, reason = numeric_verdict(claim, ours)
        configuration = f"{where(b)} against {describe(claim.baseline)}" + (
            f" (the largest of {len(pairs)} points)" if claim.up_to else ""
        )
        found.append(
            Evaluation(
                claim,
                verdict,
                claim.value,
                ours,
                configuration,
                _explain(claim, verdict, reason, [a, b]),
            )
        )
    return found


def _largest_of_each_curve(claim: Claim, results: list[RunResult]) -> list[RunResult]:
    """With no rank or node count in the claim, the largest run of each curve."""
    if "ranks" in claim.at or "nodes" in claim.at:
        return results
    curves: dict[str, RunResult] = {}
    for result in results:
        key = curve_key(result, set(), drop_point=True)
        if key not in curves or result.ranks > curves[key].ranks:
            curves[key] = result
    return list(curves.values())


def _value(claim: Claim, evidence: Evidence) -> list[Evaluation]:
    candidates = [r for r in evidence.measured if matches(r, claim.at)]
    if not candidates:
        return [_missing(claim, claim.at, evidence)]
    found = []
    for result in _largest_of_each_curve(claim, candidates):
        ours = quantity(claim.quantity, result, evidence)
        if ours is None:
            continue
        verdict, reason = numeric_verdict(claim, ours)
        found.append(
            Evaluation(
                claim,
                verdict,
                claim.value,
                ours,
                where(result),
                _explain(claim, verdict, reason, [result]),
            )
        )
    return found or [_no_quantity(claim, claim.at, candidates, evidence)]


def _scalability(claim: Claim, evidence: Evidence) -> list[Evaluation]:
    """Performance per rank at the claim's rank count over performance per rank at the base
    (the JUROPA white paper's scalability)."""
    candidates = [r for r in evidence.measured if matches(r, claim.at)]
    if not candidates:
        return [_missing(claim, claim.at, evidence)]
    base_config = {key: value for key, value in claim.at.items() if key not in ("ranks", "nodes")}
    if claim.base_ranks is not None:
        base_config["ranks"] = claim.base_ranks
    bases: dict[str, RunResult] = {}
    for run in sorted(
        (r for r in evidence.measured if matches(r, base_config)), key=lambda r: -r.ranks
    ):  # the smallest rank count last: it stays
        bases[curve_key(run, set(), drop_point=True)] = run
    found = []
    for result in candidates:
        base = bases.get(curve_key(result, set(), drop_point=True))
        if base is None or base is result:
            continue
        q, q_base = (
            quantity("performance", result, evidence),
            quantity("performance", base, evidence),
        )
        if not q or not q_base:
            continue
        ours = (q / result.ranks) / (q_base / base.ranks)
        verdict, reason = numeric_verdict(claim, ours)
        found.append(
            Evaluation(
                claim,
                verdict,
                claim.value,
                ours,
                f"{where(result)} against {base.ranks} ranks",
                _explain(claim, verdict, reason, [base, result]),
            )
        )
    return found or [
        _missing(
            claim,
            base_config,
            evidence,
            f"no base run: this study has no measured run of "
            f"{describe(base_config)} to measure scalability against.",
        )
    ]


def _axis(result: RunResult, over: str) -> int:
    return result.nodes if over == "nodes" else result.ranks


def _curve(claim: Claim, evidence: Evidence) -> list[Evaluation]:
    """Claims about a curve over nodes or ranks: where performance stops growing, where the
    MPI share crosses half the run time, or which way a quantity goes."""
    candidates = [r for r in evidence.measured if matches(r, claim.at)]
    if not candidates:
        return [_missing(claim, claim.at, evidence)]
    curves: dict[str, list[tuple[int, float, RunResult]]] = defaultdict(list)
    for result in candidates:
        value = quantity(claim.quantity, result, evidence)
        if value is not None:
            curves[curve_key(result, set(), drop_point=True)].append(
                (_axis(result, claim.over), value, result)
            )
    curves = {
        key: sorted(points, key=lambda p: p[0])
        for key, points in curves.items()
        if len({p[0] for p in points}) > 1
    }
    if not curves:
        if not any(quantity(claim.quantity, r, evidence) is not None for r in candidates):
            return [_no_quantity(claim, claim.at, candidates, evidence)]
        return [
            _missing(
                claim,
                claim.at,
                evidence,
                f"this study has no curve of {describe(claim.at)} over two or more "
                f"{claim.over} counts.",
            )
        ]
    found = []
    for points in curves.values():
        results = [p[2] for p in points]
        label = (
            f"{results[0].workload} {results[0].size}".strip()
            + f", {results[0].series_label}, {claim.over} "
            + ", ".join(str(p[0]) for p in points)
        )
        if claim.kind == "trend":
            first, last = points[0][1], points[-1][1]
            ours = last / first if first else None
            grows = last > first
            ok = grows if claim.direction == "increases" else last < first
            reason = (
                f"from {points[0][0]} to {count(points[-1][0], claim.over)} it "
                f"{'grows' if grows else 'falls' if last < first else 'stays'} "
                f"(x{last / first:.3g})"
                if first
                else "its first value is 0"
            )
            verdict = REPRODUCED if ok else NOT_REPRODUCED
        elif claim.kind == "crossover":
            crossed = [p for p in points if p[1] >= CROSSOVER_SHARE]
            ours = crossed[0][0] if crossed else None
            if ours is None:
                verdict = NOT_REPRODUCED
                reason = (
                    f"MPI stays below {CROSSOVER_SHARE:.0f} % of the run time up to "
                    f"{count(points[-1][0], claim.over)} (at most "
                    f"{max(p[1] for p in points):.0f} %)"
                )
            else:
                verdict = REPRODUCED if ours == claim.value else NOT_REPRODUCED
                reason = (
                    f"MPI first takes {CROSSOVER_SHARE:.0f} % or more of the run time at "
                    f"{count(ours, claim.over)} ({crossed[0][1]:.0f} %), the seed at "
                    f"{claim.value:g}"
                )
        else:
            assert claim.value is not None
            if points[-1][0] <= claim.value:
                found.append(
                    Evaluation(
                        claim,
                        NOT_MEASURED,
                        claim.value,
                        None,
                        label,
                        f"the curve ends at {count(points[-1][0], claim.over)}: no point beyond the "
                        f"seed's {claim.value:g} to show it stops.",
                    )
                )
                continue
            peak = points[0]
            for point in points[1:]:
                if point[1] > peak[1] * (1 + claim.tolerance):
                    peak = point
            ours = peak[0]
            still = peak is points[-1]
            verdict = REPRODUCED if ours == claim.value else NOT_REPRODUCED
            reason = (
                f"it still gains more than {claim.tolerance:.0%} at {count(ours, claim.over)}"
                if still
                else f"it gains no more than {claim.tolerance:.0%} after {count(ours, claim.over)}"
            )
            reason += f", the seed stops after {claim.value:g}"
        found.append(
            Evaluation(
                claim, verdict, claim.value, ours, label, _explain(claim, verdict, reason, results)
            )
        )
    return found


def summary_counts(evaluations: list[Evaluation]) -> dict[str, int]:
    """How many claims (not evaluations) have each verdict: a claim counts as reproduced only
    when every evaluation of it is."""
    by_claim: dict[str, set[str]] = defaultdict(set)
    for evaluation in evaluations:
        by_claim[evaluation.claim.id].add(evaluation.verdict)
    counts = dict.fromkeys(VERDICTS, 0)
    for verdicts in by_claim.values():
        counts[
            next(v for v in reversed(VERDICTS[:2]) if v in verdicts)
            if verdicts & {REPRODUCED, NOT_REPRODUCED}
            else (NOT_CHECKABLE if NOT_CHECKABLE in verdicts else NOT_MEASURED)
        ] += 1
    return counts
