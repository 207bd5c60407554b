"""Written findings, generated from the data as the seeds' slides state them ("MPI_Allreduce
takes 58 % of MPI time at 8 ranks; its share grows with ranks"). Each sentence names its
numbers and their uncertainty; a difference is called a difference only when the test says so,
and a comparison too small to show one is called inconclusive (significance.py). Each finding
has a weight; the report leads with the heaviest. Here: scaling, comparisons, the runs'
quality and connection memory; the profiles' findings are profile_findings.py's."""

import math
from collections import defaultdict

from esmperf import stats
from esmperf.mpi import machines
from esmperf.mpi.knobs import KNOBS
from esmperf.report import significance
from esmperf.report.analysis import Comparison, Group, comparisons
from esmperf.report.conditions import conditions
from esmperf.report.finding import GOOD_EFFICIENCY, Finding, bytes_text, ranks_text
from esmperf.report.profile_findings import profile_findings
from esmperf.store.results import RunResult, killed_after_result, killed_after_result_text

BUSY_CORES = 0.5  # other processes' CPU use before a repetition that makes its time suspect


def all_findings(
    groups: list[Group], results: list[RunResult], cores: int, alpha: float = 0.05
) -> list[Finding]:
    found: list[Finding] = []
    for group in groups:
        found += scaling_findings(group, cores)
        found += comparison_findings(group, comparisons(group, alpha), alpha)
        found += profile_findings(group)
    found += quality_findings(results, cores)
    found += connection_findings(results)
    return found


def connection_findings(results: list[RunResult]) -> list[Finding]:
    """Where pre-connecting every rank (ParaStation's default, PSP_ONDEMAND=0) stops fitting
    the simulated node's memory (machines.py), said for each machine and ranks per node."""
    found = []
    seen: set[tuple[str, int]] = set()
    for result in results:
        name = result.knobs.get("machine", "none")
        per_node = int(result.run.get("ranks_per_node") or 1)
        if not result.simulated or name == "none" or (name, per_node) in seen:
            continue
        seen.add((name, per_node))
        node = machines.machine(name)
        limit = node.preconnect_limit(per_node)
        largest = max(
            r.ranks
            for r in results
            if r.simulated
            and r.knobs.get("machine") == name
            and int(r.run.get("ranks_per_node") or 1) == per_node
        )
        verdict = (
            f"this study's largest run ({largest} ranks) needs on-demand connections "
            f"(PSP_ONDEMAND=1): pre-connected it would hold "
            f"{bytes_text(machines.connection_memory(largest, 0, True) * per_node)} of "
            "connections on each node"
            if largest > limit
            else f"this study's largest run ({largest} ranks) fits pre-connected"
        )
        found.append(
            Finding(
                "scaling",
                f"On {name} nodes ({per_node} ranks each, {bytes_text(node.memory)}), "
                f"pre-connecting every rank at {machines.CONNECTION_BYTES / 1e6:.2f} MB per "
                f"connection (seed 002's ParaStation figure) stops fitting the node's memory above "
                f"{limit} ranks; {verdict}. In time, at {machines.CONNECTION_SECONDS * 1e3:g} ms per "
                f"connection (a guess, docs/simulate.md), pre-connecting {largest} ranks costs each "
                f"{machines.connection_time(largest, 0, True):.3g} s in MPI_Init; on demand a rank "
                f"pays {machines.CONNECTION_SECONDS * 1e3:g} ms per peer at its first message.",
                weight=0.3 if largest > limit else 0.05,
            )
        )
    return found


def scaling_findings(group: Group, cores: int) -> list[Finding]:
    found = []
    reference = group.reference()
    for label, points in group.series().items():
        base = group.base_for(points)
        if base is None or base.summary is None or len(points) < 2:
            continue
        parts, first_poor, efficiencies = [], None, []
        for point in points:
            if point is base or point.summary is None:
                continue
            speedup = stats.speedup(
                base.summary.median, point.summary.median, group.higher_is_better
            )
            if math.isnan(speedup):  # a zero figure (e.g. no bytes between 1 rank)
                continue
            efficiency = stats.scaling_efficiency(
                base.ranks,
                base.summary.median,
                point.ranks,
                point.summary.median,
                group.higher_is_better,
            )
            if not point.oversubscribed:
                efficiencies.append(efficiency)
            flag = " (oversubscribed)" if point.oversubscribed else ""
            parts.append(
                f"{ranks_text(point.ranks)}: speed-up {speedup:.2f}x, scaling efficiency "
                f"{efficiency:.0%}{flag}"
            )
            if efficiency < GOOD_EFFICIENCY and not point.oversubscribed and first_poor is None:
                first_poor = point.ranks
        if not parts:
            continue
        tag = " (the baseline curve)" if label == reference and len(group.series()) > 1 else ""
        verdict = (
            f" Efficiency falls below {GOOD_EFFICIENCY:.0%} at {ranks_text(first_poor)}."
            if first_poor
            else ""
        )
        over = [p.ranks for p in points if p.oversubscribed]
        if over:
            verdict += (
                f" With more ranks than the {cores} cores ({', '.join(map(str, over))}"
                " ranks) the ranks share cores: those times are not a scaling result."
            )
        found.append(
            Finding(
                "scaling",
                f"{group.title}, {label}{tag}: against "
                f"{ranks_text(base.ranks)}, " + "; ".join(parts) + "." + verdict,
                group.title,
                significance.scaling_weight(efficiencies, first_poor is not None),
            )
        )
    return found


def comparison_findings(
    group: Group, found_comparisons: list[Comparison], alpha: float = 0.05
) -> list[Finding]:
    by_setting: dict[tuple[str, str, str], list[Comparison]] = defaultdict(list)
    found = [control_finding(group, c, alpha) for c in found_comparisons if c.inert]
    for comparison in found_comparisons:
        if not comparison.inert:  # a control is not a comparison of the knob
            by_setting[(comparison.what, comparison.baseline, comparison.value)].append(comparison)
    for (what, baseline, value), items in by_setting.items():
        subject, topic = _subject(what, baseline, value)
        text = _comparison_text(what, sorted(items, key=lambda c: (c.ranks, c.b.stack)), alpha)
        weight = max(
            significance.comparison_weight(c.difference, c.oversubscribed, alpha) for c in items
        )
        found.append(Finding(topic, f"{group.title}: {subject}: {text}.", group.title, weight))
    return found


def _subject(what: str, baseline: str, value: str) -> tuple[str, str]:
    """(what is compared, the finding's topic)."""
    if what == "stack":
        return f"{value} against {baseline}", "library"
    analog = KNOBS[what].analog if what in KNOBS else ""
    subject = f"{what}={value} against {what}={baseline}" + (
        f" (the {analog} analog)" if analog else ""
    )
    return subject, "knob"


def control_finding(group: Group, c: Comparison, alpha: float) -> Finding:
    """A knob compared where it cannot act: it must show no effect; one that does makes every
    measurement of the study suspect (an alarm, at the top of the report)."""
    subject, _ = _subject(c.what, c.baseline, c.value)
    d = c.difference
    where = f"{group.title}: {subject} at {_where(c, c.what, [c])}, where it cannot act ({c.inert})"
    measured = conditions(c.a, c.b).text()
    if d.significant:
        return Finding(
            "quality",
            f"Measurements unreliable: {where}, measured {stats.format_change(d.change)} "
            f"({d.confidence:.0%} CI {stats.format_change_ci(d.ci_low, d.ci_high)}, "
            f"p = {d.p_value:.2g}; {measured}). Something other than the knob changed between "
            "these configurations' repetitions: every comparison of this study is suspect "
            "until it is measured again on a quiet machine.",
            group.title,
            weight=1.0,
            alarm=True,
        )
    return Finding(
        "quality",
        f"Control: {where}: no significant difference ({stats.format_change(d.change)}, "
        f"p = {d.p_value:.2g}; {measured}), as it must.",
        group.title,
        weight=0.02,
    )


def _comparison_text(what: str, items: list[Comparison], alpha: float) -> str:
    """Significant changes with their CI and p; inconclusive ones (too few repetitions to show
    p < alpha) with their effect, its interval and the repetitions that would settle them;
    the rest, adequately repeated, as no significant difference."""
    significant = [c for c in items if c.difference.significant]
    inconclusive = [
        c
        for c in items
        if not c.difference.significant and significance.underpowered(c.difference, alpha)
    ]
    quiet = [c for c in items if c not in significant and c not in inconclusive]
    parts = []
    for c in significant:
        d = c.difference
        parts.append(
            f"{stats.format_change(d.change)} at {_where(c, what, items)} "
            f"({d.confidence:.0%} CI {stats.format_change_ci(d.ci_low, d.ci_high)}, "
            f"p = {d.p_value:.2g}{_flag(c)}; {conditions(c.a, c.b).text()})"
        )
    if inconclusive:
        listed = ", ".join(
            f"{significance.estimate_text(c.difference)[:-1]}{_flag(c)}) at "
            f"{_where(c, what, items)}"
            for c in inconclusive
        )
        needed = max(
            significance.repetitions_needed(c.difference, c.a.values, c.b.values, alpha)
            for c in inconclusive
        )
        parts.append(
            f"{listed}: "
            + significance.inconclusive_text([c.difference for c in inconclusive], needed, alpha)
            + f" ({_conditions(inconclusive)})"
        )
    if quiet:
        changes = [c.difference.change for c in quiet]
        spread = stats.log_spread(*[v for c in quiet for v in (c.a.values, c.b.values)])
        smallest = min(min(c.difference.n_a, c.difference.n_b) for c in quiet)
        where = (
            f"the other {len(quiet)}"
            if parts
            else f"{len(quiet)} comparison{'s' if len(quiet) > 1 else ''}"
        )
        parts.append(
            f"no significant difference in {where} (changes from {min(changes):+.1%} "
            f"to {max(changes):+.1%}, Mann-Whitney p >= "
            f"{min(c.difference.p_value for c in quiet):.2g}; n = {smallest} detects "
            f"changes of {stats.detectable_change(smallest, spread, alpha):.0%} or more "
            f"at this spread with 80% power; {_conditions(quiet)})"
        )
    return "; ".join(parts)


def _conditions(items: list[Comparison]) -> str:
    """The measurement conditions of several comparisons together (conditions.py)."""
    return conditions(*{r.key: r for c in items for r in (c.a, c.b)}.values()).text()


def _where(comparison: Comparison, what: str, items: list[Comparison]) -> str:
    """ "2 ranks on mpich" for a knob; for a stack "2 ranks", and the knobs when several
    comparisons share the rank count."""
    if what != "stack":
        return f"{ranks_text(comparison.ranks)} on {comparison.b.stack}"
    if sum(c.ranks == comparison.ranks for c in items) < 2:
        return ranks_text(comparison.ranks)
    knobs = ", ".join(f"{k}={v}" for k, v in sorted(comparison.b.knobs.items()))
    return f"{ranks_text(comparison.ranks)} ({knobs})" if knobs else ranks_text(comparison.ranks)


def _flag(comparison: Comparison) -> str:
    return ", oversubscribed" if comparison.oversubscribed else ""


def quality_findings(results: list[RunResult], cores: int) -> list[Finding]:
    found = []
    failed = [r for r in results if r.status in ("failed", "timeout")]
    if failed:
        listed = "; ".join(f"{r.label} ({r.status}: {r.run['reason']})" for r in failed[:5])
        more = f"; and {len(failed) - 5} more" if len(failed) > 5 else ""
        found.append(
            Finding(
                "quality",
                f"{len(failed)} configuration"
                f"{'s' if len(failed) > 1 else ''} did not complete: {listed}{more}. "
                "Their output is under Failures.",
                weight=0.8,
            )
        )
    killed = [r for r in results if killed_after_result(r.repetitions)]
    if killed:
        listed = "; ".join(
            f"{r.label}: {killed_after_result_text(r.repetitions)}" for r in killed[:5]
        )
        more = f"; and {len(killed) - 5} more" if len(killed) > 5 else ""
        found.append(
            Finding(
                "quality",
                f"{len(killed)} configuration"
                f"{'s' if len(killed) > 1 else ''} had repetitions that printed "
                f"their verified result and then had to be killed: {listed}{more}. "
                "Their figures count; they are listed under Failures.",
                weight=0.3,
            )
        )
    skipped = [r for r in results if r.status == "skipped"]
    if skipped:
        reasons: dict[str, int] = defaultdict(int)
        for result in skipped:
            reasons[str(result.run["reason"])] += 1
        listed = "; ".join(f"{count} x {reason}" for reason, count in reasons.items())
        found.append(
            Finding("quality", f"{len(skipped)} configurations were skipped, not run: {listed}.")
        )
    measured = [
        rep
        for r in results
        for rep in r.repetitions
        if rep["kind"] == "measure" and rep["status"] == "ok"
    ]
    busy = [rep for rep in measured if (rep.get("busy_cores_before") or 0) > BUSY_CORES]
    if busy:
        found.append(
            Finding(
                "quality",
                f"{len(busy)} of {len(measured)} measured repetitions "
                f"started while other processes kept more than {BUSY_CORES:g} of "
                f"the {cores} cores busy: those timings are noisier (the busy "
                "cores of each repetition are in the store).",
                weight=0.2,
            )
        )
    wide = [r for r in results if r.status == "complete" and r.run["reason"]]
    if wide:
        found.append(
            Finding(
                "quality",
                f"{len(wide)} configurations reached their maximum "
                "repetitions before the CI target (see the results table): more "
                "repetitions or a quieter machine would narrow them.",
            )
        )
    over = [r for r in results if r.oversubscribed and r.summary is not None]
    if over:
        found.append(
            Finding(
                "quality",
                f"{len(over)} configurations ran more ranks than the "
                f"{cores} cores (marked oversubscribed everywhere): their counts and "
                "bytes are exact, their times are not.",
            )
        )
    return found
