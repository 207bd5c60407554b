"""A study's results held against the claims of the seed it names (seed_reference.py): for each
claim our figure, the seed's, their ratio and a verdict: reproduced within the claim's tolerance,
not reproduced (with what ours is, so the gap can be explained), not decided at this precision
(the interval of a figure measured over repetitions reaches both), not measured by this study
(naming the configuration that is missing), or not checkable by our simulation (a hardware
feature it does not model). Nothing is fitted: the claims only read the results.

Our figure for a claim is computed from the medians of the measured repetitions, with their
confidence interval (and the profile of the configuration, for shares), on the configurations
whose settings match the claim's (seed_evidence.py). The verdicts and their wording are seed_verdicts.py's, one
evaluator per kind of claim seed_claim_kinds.py's; this module dispatches and re-exports the
verdicts' names for its readers (seed_report.py, scripts/seed_table.py)."""

from esmperf.report import seed_claim_kinds as kinds
from esmperf.report.seed_evidence import Evidence
from esmperf.report.seed_reference import Claim, SeedReference
from esmperf.report.seed_verdicts import (  # noqa: F401 (the verdicts' words, for readers)
    JUDGED,
    NOT_CHECKABLE,
    NOT_DECIDED,
    NOT_MEASURED,
    NOT_REPRODUCED,
    REPRODUCED,
    VERDICTS,
    Evaluation,
    claim_verdict,
    count,
    fmt,
    missing,
    numeric_verdict,
    summary_counts,
)


def evaluate(reference: SeedReference, evidence: Evidence) -> list[Evaluation]:
    """Every claim of the seed, in the reference's order (a claim matched by several of our
    configurations, e.g. on two stacks, gives one evaluation each)."""
    return [e for claim in reference.claims for e in evaluate_claim(claim, evidence)]


def evaluate_claim(claim: Claim, evidence: Evidence) -> list[Evaluation]:
    if claim.kind == "ratio" and not claim.baseline:  # a setting outside our vocabulary
        return [missing(claim, claim.at, evidence)]
    if claim.kind == "ratio":
        return kinds.ratio(claim, evidence)
    if claim.kind == "scalability":
        return kinds.scalability(claim, evidence)
    if claim.kind in ("stops_scaling", "crossover", "trend"):
        return kinds.curve(claim, evidence)
    return kinds.value(claim, evidence)
