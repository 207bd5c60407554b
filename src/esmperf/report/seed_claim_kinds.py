"""One evaluator per kind of seed claim (seed_reference.py's KINDS): a ratio between two
configurations, a value of one run, scalability against a base, and the claims over a curve
(trend, stops_scaling, crossover). Each reads the study's evidence (seed_evidence.py) and
gives its verdicts in seed_verdicts.py's words."""

from collections import defaultdict

from esmperf.report.seed_evidence import (
    Evidence,
    band_of,
    curve_key,
    describe,
    keys_of,
    matches,
    quantity,
    ratio_interval,
    value_interval,
    where,
)
from esmperf.report.seed_reference import Claim
from esmperf.report.seed_verdicts import (
    NOT_MEASURED,
    NOT_REPRODUCED,
    REPRODUCED,
    Evaluation,
    count,
    explain,
    judged,
    missing,
    no_quantity,
)
from esmperf.store.results import RunResult

CROSSOVER_SHARE = 50.0  # % of the run's time in MPI: communication outweighs computation


def ratio(claim: Claim, evidence: Evidence) -> list[Evaluation]:
    side_b = {**claim.at, **claim.compare}
    side_a = {**claim.at, **claim.baseline}
    compared = [r for r in evidence.measured if matches(r, side_b)]
    baselines = [r for r in evidence.measured if matches(r, side_a)]
    if not compared:
        return [missing(claim, side_b, evidence)]
    if not baselines:
        return [missing(claim, side_a, evidence)]
    varied = keys_of(claim.baseline)
    by_context: dict[str, list[RunResult]] = defaultdict(list)
    for a in baselines:  # several where a side is simulated at both ends of a band
        by_context[curve_key(a, varied)].append(a)
    pairs = [(a, b) for b in compared for a in by_context.get(curve_key(b, varied), [])]
    values = [
        (a, b, qa, qb)
        for a, b in pairs
        if (qa := quantity(claim.quantity, a, evidence))
        and (qb := quantity(claim.quantity, b, evidence)) is not None
    ]
    if not pairs:
        return [
            missing(
                claim,
                side_b,
                evidence,
                f"no run of {describe(side_b)} has a counterpart of "
                f"{describe(claim.baseline)} differing in that only.",
            )
        ]
    if not values:
        return [no_quantity(claim, side_b, [b for _, b in pairs], evidence)]
    if claim.up_to:
        a, b, qa, qb = max(values, key=lambda v: v[3] / v[2])
        values = [(a, b, qa, qb)]
    found = []
    for a, b, qa, qb in values:
        ours = qb / qa
        interval = ratio_interval(claim.quantity, a, b, evidence)
        verdict, reason = judged(claim, ours, interval)
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
                explain(claim, verdict, reason, [a, b]),
                interval,
                band_of(a, b),
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


def value(claim: Claim, evidence: Evidence) -> list[Evaluation]:
    candidates = [r for r in evidence.measured if matches(r, claim.at)]
    if not candidates:
        return [missing(claim, claim.at, evidence)]
    found = []
    for result in _largest_of_each_curve(claim, candidates):
        ours = quantity(claim.quantity, result, evidence)
        if ours is None:
            continue
        interval = value_interval(claim.quantity, result, evidence)
        verdict, reason = judged(claim, ours, interval)
        found.append(
            Evaluation(
                claim,
                verdict,
                claim.value,
                ours,
                where(result),
                explain(claim, verdict, reason, [result]),
                interval,
                band_of(result),
            )
        )
    return found or [no_quantity(claim, claim.at, candidates, evidence)]


def scalability(claim: Claim, evidence: Evidence) -> list[Evaluation]:
    """Performance per rank at the claim's rank count over performance per rank at the base
    (the JUROPA white paper's scalability)."""
    candidates = [r for r in evidence.measured if matches(r, claim.at)]
    if not candidates:
        return [missing(claim, claim.at, evidence)]
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
        interval = ratio_interval("performance", base, result, evidence, base.ranks / result.ranks)
        verdict, reason = judged(claim, ours, interval)
        found.append(
            Evaluation(
                claim,
                verdict,
                claim.value,
                ours,
                f"{where(result)} against {base.ranks} ranks",
                explain(claim, verdict, reason, [base, result]),
                interval,
                band_of(base, result),
            )
        )
    return found or [
        missing(
            claim,
            base_config,
            evidence,
            f"no base run: this study has no measured run of "
            f"{describe(base_config)} to measure scalability against.",
        )
    ]


def _axis(result: RunResult, over: str) -> int:
    return result.nodes if over == "nodes" else result.ranks


def curve(claim: Claim, evidence: Evidence) -> list[Evaluation]:
    """Claims about a curve over nodes or ranks: where performance stops growing, where the
    MPI share crosses half the run time, or which way a quantity goes."""
    candidates = [r for r in evidence.measured if matches(r, claim.at)]
    if not candidates:
        return [missing(claim, claim.at, evidence)]
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
            return [no_quantity(claim, claim.at, candidates, evidence)]
        return [
            missing(
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
                claim,
                verdict,
                claim.value,
                ours,
                label,
                explain(claim, verdict, reason, results),
                band=band_of(results[0], drop_point=True),
            )
        )
    return found
