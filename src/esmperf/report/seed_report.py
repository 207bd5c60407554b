"""The report's "The seed's claims" section: every claim of the seed the study names
(seed_reference.py), held against the study's results (seed_claims.py), as a table (claim, the
seed's figure, ours, their ratio, verdict, why), one finding per claim, a figure of ours over
the seed's for every numeric claim, and the seed's own points drawn beside our curves where the
seed gives numbers (scalability, Table 2 of the ESMF benchmark)."""

import html
import json
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from esmperf.report import figures as fig
from esmperf.report.analysis import Group
from esmperf.report.finding import Finding
from esmperf.report.seed_claims import (
    JUDGED,
    NOT_CHECKABLE,
    NOT_DECIDED,
    NOT_MEASURED,
    NOT_REPRODUCED,
    REPRODUCED,
    Evaluation,
    evaluate,
    fmt,
    summary_counts,
)
from esmperf.report.seed_evidence import Evidence, curve_key, load_evidence, matches, quantity
from esmperf.report.seed_reference import Claim, SeedReference, SeedReferenceError, load_references
from esmperf.report.seed_verdicts import fmt_bare
from esmperf.store.database import Store
from esmperf.store.results import RunResult

TOPIC = "seed"
VERDICT_CLASS = {
    REPRODUCED: "ok",
    NOT_REPRODUCED: "bad",
    NOT_DECIDED: "over",
    NOT_MEASURED: "small",
    NOT_CHECKABLE: "small",
}


@dataclass
class ClaimsSection:
    html: str = ""
    figures: list[fig.Figure] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    evaluations: list[Evaluation] = field(default_factory=list)
    reference: SeedReference | None = None


def claims_section(
    store: Store,
    info: dict[str, Any],
    results: list[RunResult],
    groups: list[Group],
    figure_html: Callable[[fig.Figure], str],
) -> ClaimsSection:
    """The section for the study in `store` (`figure_html`: the report's markup of a figure);
    none for a study that names no seed, a note for one whose seed has no reference data."""
    seed = str(info.get("seed") or "")
    if not seed:
        return ClaimsSection()
    try:
        references = load_references()
    except SeedReferenceError as error:  # the report is still written, saying what to fix
        return ClaimsSection(
            html="<section id='seed-claims'><h2>The seed's claims</h2>"
            f"<p class='bad'>{_e(error)}</p></section>"
        )
    reference = next((ref for ref in references if ref.names(seed)), None) if seed else None
    if reference is None:
        return ClaimsSection(html=_no_reference_html(seed, references))
    profiles = {key: profile for group in groups for key, profile in group.profiles.items()}
    evidence = load_evidence(store, results, profiles)
    evaluations = evaluate(reference, evidence)
    section = ClaimsSection(evaluations=evaluations, reference=reference)
    section.findings = [Finding(TOPIC, finding_text(e)) for e in evaluations]
    section.figures = claim_figures(reference, evaluations, evidence)
    section.html = section_html(reference, evaluations, section.figures, figure_html)
    return section


def finding_text(evaluation: Evaluation) -> str:
    claim = evaluation.claim
    chart = ", read from a chart" if claim.from_chart else ""
    quoted = f"“{claim.text}” ({claim.source}{chart})"
    if evaluation.verdict in JUDGED:
        ratio = f", ours/seed = {evaluation.ratio:.3g}" if evaluation.ratio is not None else ""
        verdict = (
            "not decided at this precision"
            if evaluation.verdict == NOT_DECIDED
            else evaluation.verdict
        )
        return (
            f"{quoted}: {verdict} on {evaluation.configuration}: ours "
            f"{fmt(claim, evaluation.ours)}{interval_text(evaluation)}, the seed's "
            f"{fmt(claim, evaluation.seed)}{ratio}. {evaluation.why}"
        )
    if evaluation.verdict == NOT_CHECKABLE:
        return f"{quoted}: not checkable by our simulation: {evaluation.why}"
    return f"{quoted}: not measured by this study: {evaluation.why}"


def interval_text(evaluation: Evaluation) -> str:
    """ " [x0.97 to x1.12, 95 %]": where our figure lies, when it has repetitions."""
    interval = evaluation.interval
    if interval is None:
        return ""
    claim = evaluation.claim
    return (
        f" [{fmt_bare(claim, interval.low)} to {fmt_bare(claim, interval.high)}, "
        f"{interval.confidence:.0%}]"
    )


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _no_reference_html(seed: str, references: list[SeedReference]) -> str:
    known = "; ".join(f"“{ref.title}” ({ref.id})" for ref in references)
    return (
        f"<section id='seed-claims'><h2>The seed's claims</h2><p class='small'>This study "
        f"names the seed “{_e(seed)}”, which has no reference data in "
        "studies/seeds/reference/. To hold a study against a "
        f"seed's numbers, set <code>seed</code> in its study file to one of: {_e(known)}."
        "</p></section>"
    )


def section_html(
    reference: SeedReference,
    evaluations: list[Evaluation],
    figures: list[fig.Figure],
    figure_html: Callable[[fig.Figure], str],
) -> str:
    counts = summary_counts(evaluations)
    rows = []
    for e in evaluations:
        claim = e.claim
        chart = " <span class='small'>(read from a chart)</span>" if claim.from_chart else ""
        reading = (
            f"<br><span class='small'>read as: {_e(claim.reading)}</span>" if claim.reading else ""
        )
        tolerance = (
            ""
            if claim.bound != "equal" or claim.kind in ("stops_scaling", "crossover", "trend")
            else f" ±{claim.tolerance:.0%}"
        )
        bound = {"at_least": "≥ ", "at_most": "≤ "}.get(claim.bound, "")
        seed = (
            f"{bound}{_e(fmt(claim, e.seed))}{tolerance}"
            if e.seed is not None
            else _e(claim.direction or "shape")
        )
        rows.append(
            "<tr>"
            + "".join(
                [
                    f"<td>“{_e(claim.text)}”{chart}<br><span class='small'>{_e(claim.source)} · "
                    f"{_e(claim.kind)} · {_e(claim.id)}</span>{reading}</td>",
                    f"<td class='num'>{seed}</td>",
                    f"<td class='num'>{_e(fmt(claim, e.ours)) if e.ours is not None else '—'}"
                    f"{_e(interval_text(e))}</td>",
                    f"<td class='num'>{f'{e.ratio:.3g}' if e.ratio is not None else '—'}</td>",
                    f"<td class='{VERDICT_CLASS[e.verdict]}'>{_e(e.verdict)}</td>",
                    f"<td class='small'>{_e(e.configuration)}: {_e(e.why)}</td>",
                ]
            )
            + "</tr>"
        )
    header = (
        "<tr><th>claim (quoted from the seed)</th><th>seed</th><th>ours</th>"
        "<th>ours / seed</th><th>verdict</th><th>configuration and why</th></tr>"
    )
    summary = ", ".join(f"{count} {verdict}" for verdict, count in counts.items())
    return (
        "<section id='seed-claims'><h2>The seed's claims</h2>"
        f"<p>{len(reference.claims)} claims of “{_e(reference.title)}” (seed file "
        f"{_e(reference.seed_file)}; reference data {_e(reference.path.name)} in "
        f"studies/seeds/reference/): {_e(summary)}. A claim is reproduced when our figure is "
        "within the claim's tolerance of the seed's (and, for a ratio the seed puts above or "
        "below 1, on that side; a claim of equality, x1, by its tolerance alone), or beyond "
        "the bound the seed states; a figure measured over repetitions carries its confidence "
        "interval [low to high, confidence], and the verdict is the whole interval's: not "
        "decided at this precision when it reaches both; not measured when this study has no run of the "
        "configuration it needs (named in the last column); not checkable when our simulation "
        "does not model what it is about. Our figures are medians of the measured repetitions; "
        "simulated ones are marked so. Nothing is fitted: the seed's numbers are never an "
        "input of a run (docs/seeds.md).</p>"
        f"<div class='figures'>{''.join(figure_html(f) for f in figures)}</div>"
        f"<table>{header}{''.join(rows)}</table></section>"
    )


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def claim_figures(
    reference: SeedReference, evaluations: list[Evaluation], evidence: Evidence
) -> list[fig.Figure]:
    made = []
    numeric = [e for e in evaluations if e.ratio is not None and e.ratio > 0]
    if numeric:
        made.append(
            fig.claims_figure(
                f"seed-{reference.id}-claims",
                f"{reference.id}: ours over the seed's figure",
                [e.claim.id for e in numeric],
                [e.ratio for e in numeric],
                [e.claim.tolerance if e.claim.bound == "equal" else None for e in numeric],
                [e.verdict == REPRODUCED for e in numeric],
                caption="Each numeric claim's figure of ours over the seed's (1 = the seed's "
                "figure; the band is the claim's tolerance, none for a bound); filled: "
                "reproduced, hollow: not reproduced or not decided.",
            )
        )
    gains = [
        e
        for e in evaluations
        if e.claim.kind == "ratio"
        and e.ours is not None
        and e.claim.quantity == "performance"
        and e.seed is not None
    ]
    if gains:
        bars = []
        for e in gains:
            bars.append(fig.Bar(e.claim.id, "the seed's (stated)", 100 * (e.seed - 1)))
            bars.append(
                fig.Bar(e.claim.id, "ours", 100 * (e.ours - 1), solid=e.verdict == REPRODUCED)
            )
        made.append(
            fig.bar_figure(
                f"seed-{reference.id}-gains",
                "seed_gains",
                f"{reference.id}: the seed's stated gains beside ours",
                bars,
                "performance gain (%)\n(higher is better)",
                percent_labels=True,
                zero_line=True,
                caption="Each performance ratio claim: the seed's stated gain and ours on the "
                "configuration named in the table (hatched: not reproduced or not decided).",
            )
        )
    made += _scalability_figures(reference, evidence)
    made += _table_figures(reference, evidence)
    return made


def _scalability_figures(reference: SeedReference, evidence: Evidence) -> list[fig.Figure]:
    """Our scalability curves (performance per rank against the claim's base) with the seed's
    stated scalability points, per workload."""
    claims = [c for c in reference.claims if c.kind == "scalability"]
    by_workload: dict[str, list[Claim]] = defaultdict(list)
    for claim in claims:
        by_workload[str(claim.at.get("workload", ""))].append(claim)
    made = []
    for workload, items in by_workload.items():
        ours: dict[str, list[tuple[float, float]]] = {}
        for claim in items:
            for label, points in scalability_curves(claim, evidence).items():
                ours.setdefault(label, points)
        if not ours:
            continue
        seed = [(float(c.at["ranks"]), 100 * float(c.value or 0)) for c in items]
        made.append(
            fig.seed_points_figure(
                f"seed-{reference.id}-{_slug(workload)}-scalability",
                f"{workload}: scalability, ours and the seed's",
                {label: [(x, 100 * y) for x, y in points] for label, points in ours.items()},
                seed,
                "scalability (%)\n(higher is better)",
                "MPI ranks",
                caption="Performance per rank over performance per rank at the base (the JUROPA "
                "definition); stars: the seed's stated figures (a bound is drawn at its "
                "value).",
            )
        )
    return made


def scalability_curves(claim: Claim, evidence: Evidence) -> dict[str, list[tuple[float, float]]]:
    """Per curve of runs matching the claim's configuration (its rank count left free): the
    scalability at each rank count against the claim's base."""
    config = {k: v for k, v in claim.at.items() if k not in ("ranks", "nodes")}
    curves: dict[str, list[RunResult]] = defaultdict(list)
    for result in evidence.measured:
        if matches(result, config):
            curves[curve_key(result, set(), drop_point=True)].append(result)
    found = {}
    for runs in curves.values():
        runs.sort(key=lambda r: r.ranks)
        base = (
            next((r for r in runs if r.ranks == claim.base_ranks), None)
            if claim.base_ranks is not None
            else runs[0]
        )
        q_base = quantity("performance", base, evidence) if base else None
        if not q_base or len(runs) < 2:
            continue
        points = [
            (float(r.ranks), (q / r.ranks) / (q_base / base.ranks))
            for r in runs
            if (q := quantity("performance", r, evidence))
        ]
        found[f"{runs[0].series_label} (base {base.ranks})"] = points
    return found


def _table_figures(reference: SeedReference, evidence: Evidence) -> list[fig.Figure]:
    """A ratio claim that carries the seed's table (points): our ratio over the baseline at
    every rank count beside the seed's."""
    made = []
    for claim in reference.claims:
        if claim.kind != "ratio" or not claim.points or "ranks" not in claim.baseline:
            continue
        config = {**claim.at}
        curves: dict[str, list[RunResult]] = defaultdict(list)
        for result in evidence.measured:
            if matches(result, config):
                curves[curve_key(result, set(), drop_point=True)].append(result)
        ours = {}
        for runs in curves.values():
            base = next((r for r in runs if r.ranks == claim.baseline["ranks"]), None)
            q_base = quantity(claim.quantity, base, evidence) if base else None
            if not q_base:
                continue
            ours[runs[0].series_label] = sorted(
                (float(r.ranks), q / q_base)
                for r in runs
                if (q := quantity(claim.quantity, r, evidence)) is not None
            )
        if not ours:
            continue
        made.append(
            fig.seed_points_figure(
                f"seed-{reference.id}-{claim.id}",
                f"{claim.at.get('workload', '')}: "
                f"{claim.quantity.split(':')[-1]} over {claim.baseline['ranks']} ranks",
                ours,
                list(claim.points),
                f"{claim.quantity.split(':')[-1]}\nover its value at "
                f"{claim.baseline['ranks']} ranks",
                "MPI ranks",
                log_y=True,
                caption=f"Ours beside the seed's own table ({claim.source}).",
            )
        )
    return made


def evaluations_json(evaluations: list[Evaluation]) -> str:
    """The evaluations as JSON (for tools and docs/seeds.md tables)."""
    return json.dumps(
        [
            {
                "claim": e.claim.id,
                "verdict": e.verdict,
                "seed": e.seed,
                "ours": e.ours,
                "ratio": e.ratio,
                "interval": None
                if e.interval is None
                else {
                    "low": e.interval.low,
                    "high": e.interval.high,
                    "confidence": e.interval.confidence,
                    "repetitions": list(e.interval.repetitions),
                },
                "configuration": e.configuration,
                "why": e.why,
            }
            for e in evaluations
        ],
        indent=1,
    )
