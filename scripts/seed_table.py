"""Render docs/seeds.md's "Every claim, and ours beside it" from the seed studies' stores: for
each seed's reference data (studies/seeds/reference/), every claim with the seed's figure, ours,
their ratio, the verdict and why, as the study's report holds them (report/seed_claims.py).

    .venv/bin/python scripts/seed_table.py                 # print the section
    .venv/bin/python scripts/seed_table.py --write docs/seeds.md

A seed's store is the one in --results (default results/) whose study names the seed; a seed
with no store gets "not run" in every row. With --write, the section replaces everything in the
file from the line GENERATED_FROM to the line END_MARK (both kept)."""

import argparse
import datetime
import re
import sys
from collections import defaultdict
from pathlib import Path

from esmperf.report.analysis import build_groups
from esmperf.report.seed_claims import (
    JUDGED,
    NOT_DECIDED,
    NOT_REPRODUCED,
    VERDICTS,
    Evaluation,
    evaluate,
    fmt,
    summary_counts,
)
from esmperf.report.seed_evidence import Evidence, load_evidence
from esmperf.report.seed_reference import Claim, SeedReference, load_references
from esmperf.report.seed_report import interval_text
from esmperf.store.database import Store
from esmperf.store.results import load_results

GENERATED_FROM = "<!-- seed_table.py: from here -->"
END_MARK = "<!-- seed_table.py: to here -->"
SHOWN = 3  # evaluations listed per claim; the rest are counted
TEXT_CHARS = 110


def seed_figure(claim: Claim) -> str:
    """The seed's figure as the report's table gives it."""
    if claim.value is None:
        text = f"{claim.quantity} {claim.direction or 'shape'}"
    else:
        bound = {"at_least": "≥ ", "at_most": "≤ "}.get(claim.bound, "")
        tolerance = (
            f" ±{claim.tolerance:.0%}"
            if claim.bound == "equal" and claim.kind not in ("stops_scaling", "crossover", "trend")
            else ""
        )
        prefix = (
            f"{claim.quantity} "
            if claim.quantity not in ("performance", "") and claim.kind != "ratio"
            else f"{claim.quantity}: "
            if claim.quantity != "performance"
            else ""
        )
        text = f"{prefix}{bound}{fmt(claim, claim.value)}{tolerance}"
    return text + (" (chart)" if claim.from_chart else "")


def claim_verdict(evaluations: list[Evaluation]) -> str:
    counts = summary_counts(evaluations)
    return next(verdict for verdict, n in counts.items() if n)


def ours_cell(evaluations: list[Evaluation]) -> tuple[str, str]:
    """(ours, configuration and why) for one claim's evaluations."""
    numeric = [e for e in evaluations if e.verdict in JUDGED]
    if not numeric:
        first = evaluations[0]
        return "—", f"{first.configuration}: {first.why}"
    # the evaluations that decide the verdict first (a not reproduced one explains the gap)
    numeric.sort(key=lambda e: (e.verdict != NOT_REPRODUCED, e.verdict != NOT_DECIDED))
    figures = []
    labels = _distinct(numeric[:SHOWN])
    for e, label in zip(numeric[:SHOWN], labels, strict=True):
        ratio = f" (ours/seed {e.ratio:.3g})" if e.ratio is not None else ""
        on = f" on {label}" if label else ""
        figures.append(f"{fmt(e.claim, e.ours)}{interval_text(e)}{ratio}{on}: {e.verdict}")
    more = len(numeric) - SHOWN
    if more > 0:
        verdicts = defaultdict(int)
        for e in numeric[SHOWN:]:
            verdicts[e.verdict] += 1
        figures.append(f"and {more} more ({', '.join(f'{n} {v}' for v, n in verdicts.items())})")
    first = numeric[0]
    return "<br>".join(figures), f"{first.configuration}: {first.why}"


def _distinct(evaluations: list[Evaluation]) -> list[str]:
    """What tells the configurations of several evaluations apart ("platform=gige")."""
    parts = [re.split(r" · |, | against ", e.configuration) for e in evaluations]
    common = set.intersection(*(set(p) for p in parts)) if len(parts) > 1 else set(parts[0])
    return [", ".join(part for part in p if part not in common) for p in parts]


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _short(text: str) -> str:
    return text if len(text) <= TEXT_CHARS else text[: TEXT_CHARS - 1] + "…"


def stores_for(reference: SeedReference, results: Path) -> list[Path]:
    """The stores in `results` whose study names this seed (its id's store first): a seed's
    study and the studies that add to it on another SimGrid (pflotran-ns3.toml)."""
    found = []
    for path in sorted(results.glob("*.duckdb"), key=lambda p: (p.stem != reference.id, p.stem)):
        with Store(path, read_only=True) as store:
            if reference.names(str(store.study_info().get("seed") or "")):
                found.append(path)
    return found


def evidence_of(path: Path) -> Evidence:
    """As the report gathers it (report/seed_report.py claims_section)."""
    with Store(path, read_only=True) as store:
        info = store.study_info()
        results = load_results(store)
        groups = build_groups(results, info.get("base_ranks"), store)
        profiles = {key: profile for group in groups for key, profile in group.profiles.items()}
        return load_evidence(store, results, profiles)


def evaluations_of(reference: SeedReference, paths: list[Path]) -> list[Evaluation]:
    """The claims evaluated on the runs of all the seed's stores together (run keys are unique
    across them: a run's identity names its SimGrid)."""
    parts = [evidence_of(path) for path in paths]
    merged = Evidence(
        [result for part in parts for result in part.results],
        {key: profile for part in parts for key, profile in part.profiles.items()},
        {key: metrics for part in parts for key, metrics in part.metrics.items()},
    )
    return evaluate(reference, merged)


def seed_section(reference: SeedReference, results: Path) -> tuple[str, dict[str, int]]:
    paths = stores_for(reference, results)
    lines = [f"### {reference.id}: {reference.title}", ""]
    if not paths:
        lines += [
            f"Seed file {reference.seed_file}; {len(reference.claims)} claims; no store of a "
            f"study naming this seed in {results}/: not run.",
            "",
        ]
        evaluations: list[Evaluation] = []
    else:
        evaluations = evaluations_of(reference, paths)
    by_claim: dict[str, list[Evaluation]] = defaultdict(list)
    for e in evaluations:
        by_claim[e.claim.id].append(e)
    counts = dict.fromkeys(VERDICTS, 0)
    rows = []
    for claim in reference.claims:
        found = by_claim.get(claim.id, [])
        verdict = claim_verdict(found) if found else "not run"
        counts[verdict] = counts.get(verdict, 0) + 1
        ours, why = ours_cell(found) if found else ("—", "no store")
        rows.append(
            f"| `{claim.id}`: “{_cell(_short(claim.text))}” | {claim.kind} | "
            f"{_cell(seed_figure(claim))} | {_cell(ours)} | **{verdict}** | {_cell(why)} |"
        )
    if paths:
        summary = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
        lines += [
            f"Seed file {reference.seed_file}; {len(reference.claims)} claims, from "
            f"{' and '.join(path.as_posix() for path in paths)}: {summary}.",
            "",
        ]
    lines += [
        "| claim | kind | the seed's figure | ours | verdict | our configuration, and why |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
    ]
    return "\n".join(lines), counts


def render(results: Path) -> str:
    sections, totals = [], defaultdict(int)
    for reference in load_references():
        text, counts = seed_section(reference, results)
        sections.append(text)
        for verdict, n in counts.items():
            totals[verdict] += n
    total = ", ".join(f"{n} {v}" for v, n in totals.items() if n)
    head = (
        f"Generated by scripts/seed_table.py from the stores in {results}/ on "
        f"{datetime.date.today().isoformat()}: {sum(totals.values())} claims, {total}. A "
        "claim is reproduced only when every configuration of ours that matches it is (the "
        "two ends of a band count as one configuration, with the band's verdict: Bands, above)."
    )
    return "\n".join([GENERATED_FROM, "", head, "", *sections, END_MARK])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--write", type=Path, help="replace the section in this file")
    args = parser.parse_args(argv)
    section = render(args.results)
    if not args.write:
        print(section)
        return 0
    text = args.write.read_text()
    if GENERATED_FROM not in text or END_MARK not in text:
        print(
            f"{args.write}: no {GENERATED_FROM} ... {END_MARK} lines: add them where the "
            "section goes",
            file=sys.stderr,
        )
        return 2
    before, rest = text.split(GENERATED_FROM, 1)
    after = rest.split(END_MARK, 1)[1]
    args.write.write_text(before + section + after)
    return 0


if __name__ == "__main__":
    sys.exit(main())
