"""Issue 26, item 8: a seed's claim of equality (x1: "comparable", "minimal gain", "only a slight
improvement") is judged by its tolerance alone, not by which side of 1 ours falls; a figure
measured over repetitions carries its confidence interval, and a claim whose interval reaches
both verdicts is "not decided at this precision" instead of flipping between reruns."""

from pathlib import Path

import pytest

from esmperf.report.html import write_report
from esmperf.report.seed_claims import (
    NOT_DECIDED,
    NOT_REPRODUCED,
    REPRODUCED,
    Evaluation,
    evaluate,
    numeric_verdict,
)
from esmperf.report.seed_evidence import load_evidence
from esmperf.report.seed_reference import Claim, load_reference, load_references
from esmperf.report.seed_report import evaluations_json, finding_text
from esmperf.store.database import Store
from esmperf.store.results import load_results
from test_seed_claims import CLAIMS, Run, make_claims_store


def reference_claim(seed: str, claim_id: str) -> Claim:
    reference = next(r for r in load_references() if r.id == seed)
    return next(c for c in reference.claims if c.id == claim_id)


@pytest.mark.parametrize(
    "seed, claim_id, ours",
    [
        ("hycom", "libraries-comparable", 1.03),  # "MPI libraries showed comparable performance"
        ("cesm", "gige-minimal-gain-8-to-16", 1.02),  # "1GigE seen minimal gain"
        ("pflotran", "knem-slight", 1.06),  # "only a slight improvement with KNEM"
        ("pflotran", "knem-slight", 0.94),
    ],
)
def test_a_claim_of_equality_is_judged_by_its_tolerance_alone(
    seed: str, claim_id: str, ours: float
) -> None:
    claim = reference_claim(seed, claim_id)
    assert (claim.kind, claim.value, claim.bound, claim.tolerance) == ("ratio", 1.0, "equal", 0.1)
    verdict, reason = numeric_verdict(claim, ours)
    assert verdict == REPRODUCED, reason
    assert (
        reason
        == f"ours x{ours:.3g} ({(ours - 1) * 100:+.0f} %) is within 10% of the seed's x1 (+0 %)"
    )
    assert numeric_verdict(claim, 1.11)[0] == NOT_REPRODUCED  # beyond the tolerance still


def test_a_gain_the_seed_states_must_still_be_a_gain() -> None:
    claim = reference_claim("hycom", "knem-gain-504")  # "by up to 4 %": x1.04 +-10 %
    verdict, reason = numeric_verdict(claim, 0.99)
    assert verdict == NOT_REPRODUCED
    assert "on the other side of 1: the comparison goes the other way" in reason


LOCAL = """
id = "local"
title = "A local seed"
seed_file = "none.txt"
tolerance = 0.1

[[claim]]
id = "comparable"
kind = "ratio"
text = "MPI libraries showed comparable performance"
source = "summary"
value = 1.0
at = { workload = "pop" }
baseline = { stack = "openmpi" }
compare = { stack = "mpich" }

[[claim]]
id = "single-copy-better"
kind = "ratio"
text = "single copy enables better performance"
source = "slide"
bound = "at_least"
value = 1.0
at = { workload = "pop" }
baseline = { single_copy = "off" }
compare = { single_copy = "on" }

[[claim]]
id = "gain-4"
kind = "ratio"
text = "single copy up to 4 % better"
source = "slide"
value = 1.04
at = { workload = "pop" }
baseline = { single_copy = "off" }
compare = { single_copy = "on" }
"""


def local_evaluations(tmp_path: Path, runs: list[Run]) -> dict[str, Evaluation]:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "local.toml").write_text(LOCAL)
    reference = load_reference(tmp_path / "local.toml")
    path = make_claims_store(tmp_path / "local.duckdb", runs, "A local seed")
    with Store(path, read_only=True) as store:
        evaluations = evaluate(reference, load_evidence(store, load_results(store), {}))
    return {e.claim.id: e for e in evaluations if e.ours is not None}


def local(stack: str, repetitions: tuple[float, ...], **knobs: str) -> Run:
    return Run(2, 0.0, stack=stack, knobs=knobs, ranks_per_node=None, repetitions=repetitions)


def test_a_local_claim_carries_its_interval(tmp_path: Path) -> None:
    # 3 against 3 repetitions: the exact Hodges-Lehmann interval of the ratio is every pair's
    # range, min(b) / max(a) to max(b) / min(a), with 90 % confidence (no tighter one exists)
    found = local_evaluations(
        tmp_path,
        [local("openmpi", (9.9, 10.0, 10.1)), local("mpich", (10.2, 10.3, 10.4))],
    )
    comparable = found["comparable"]
    assert comparable.ours == pytest.approx(1.03, abs=1e-12)
    interval = comparable.interval
    assert interval is not None
    assert (interval.low, interval.high) == pytest.approx((10.2 / 10.1, 10.4 / 9.9), abs=1e-12)
    assert (interval.confidence, interval.repetitions) == (0.9, (3, 3))
    assert comparable.verdict == REPRODUCED  # within x0.9-x1.1 all of it, though above 1
    assert (
        "all of its 90% interval x1.01 to x1.05 (3 and 3 repetitions) reproduces the claim"
        in comparable.why
    )
    text = finding_text(comparable)
    assert "reproduced on " in text and "ours x1.03 (+3 %) [x1.01 to x1.05, 90%]" in text
    assert '"low": 1.0099' in evaluations_json([comparable])


def test_an_interval_reaching_both_verdicts_is_not_decided(tmp_path: Path) -> None:
    # the medians say x1.05 (single copy better, within 10 % of a 4 % gain), but the
    # repetitions scatter +-10 %: x0.864 to x1.28, which reaches both verdicts of both claims
    found = local_evaluations(
        tmp_path,
        [
            local("openmpi", (9.0, 10.0, 11.0), single_copy="off"),
            local("openmpi", (9.5, 10.5, 11.5), single_copy="on"),
        ],
    )
    for claim_id in ("single-copy-better", "gain-4"):
        evaluation = found[claim_id]
        assert evaluation.ours == pytest.approx(1.05, abs=1e-12)
        assert evaluation.verdict == NOT_DECIDED, evaluation.why
        assert "its 90% interval x0.864 to x1.28 (3 and 3 repetitions) reaches both" in (
            evaluation.why
        )
        assert "not decided at this precision" in finding_text(evaluation)
    # a tight sample is decided either way
    found = local_evaluations(
        tmp_path / "tight",
        [
            local("openmpi", (9.99, 10.0, 10.01), single_copy="off"),
            local("openmpi", (10.49, 10.5, 10.51), single_copy="on"),
        ],
    )
    assert found["single-copy-better"].verdict == REPRODUCED
    assert found["gain-4"].verdict == REPRODUCED


def test_the_report_says_not_decided(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import esmperf.report.seed_report as seed_report

    (tmp_path / "local.toml").write_text(LOCAL)
    monkeypatch.setattr(
        seed_report, "load_references", lambda: [load_reference(tmp_path / "local.toml")]
    )
    runs = [
        local("openmpi", (9.0, 10.0, 11.0), single_copy="off"),
        local("openmpi", (9.5, 10.5, 11.5), single_copy="on"),
    ]
    page = write_report(make_claims_store(tmp_path / "s.duckdb", runs, "local")).read_text()
    assert page.count("<td class='over'>not decided</td>") == 2
    assert "x1.05 (+5 %) [x0.864 to x1.28, 90%]" in page
    assert ": 0 reproduced, 0 not reproduced, 2 not decided, 1 not measured" in page


def test_simulated_figures_without_spread_carry_no_interval(tmp_path: Path) -> None:
    (tmp_path / "synthetic.toml").write_text(CLAIMS)
    path = make_claims_store(
        tmp_path / "s.duckdb",
        [Run(4, 10.0, knobs={"platform": "gige"}), Run(4, 20.0, knobs={"platform": "ib-qdr"})],
        "A synthetic seed",
    )
    with Store(path, read_only=True) as store:
        evaluations = evaluate(
            load_reference(tmp_path / "synthetic.toml"),
            load_evidence(store, load_results(store), {}),
        )
    [up_to] = [e for e in evaluations if e.claim.id == "ib-up-to"]
    assert (up_to.ours, up_to.interval) == (2.0, None)


SCALING = """
id = "scaling"
title = "A scaling seed"
seed_file = "none.txt"
tolerance = 0.1

[[claim]]
id = "rate"
kind = "value"
text = "at least 9.5 steps/s on one rank"
source = "table"
quantity = "performance"
bound = "at_least"
value = 9.5
at = { workload = "pop", ranks = 1 }

[[claim]]
id = "scalability-2"
kind = "scalability"
text = "90 % scalability at 2 ranks"
source = "figure"
value = 0.9
base_ranks = 1
at = { workload = "pop", ranks = 2 }

[[claim]]
id = "comparable"
kind = "ratio"
text = "two ranks comparable to one"
source = "figure"
value = 1.0
at = { workload = "pop" }
baseline = { ranks = 1 }
compare = { ranks = 2 }
"""


def test_one_run_s_value_and_a_scalability_carry_their_interval(tmp_path: Path) -> None:
    (tmp_path / "scaling.toml").write_text(SCALING)
    runs = [
        Run(1, 0.0, stack="openmpi", ranks_per_node=None, repetitions=(9.0, 10.0, 11.0)),
        Run(2, 0.0, stack="openmpi", ranks_per_node=None, repetitions=(18.8, 19.0, 19.2)),
    ]
    path = make_claims_store(tmp_path / "s.duckdb", runs, "A scaling seed")
    with Store(path, read_only=True) as store:
        found = {
            e.claim.id: e
            for e in evaluate(
                load_reference(tmp_path / "scaling.toml"),
                load_evidence(store, load_results(store), {}),
            )
        }
    rate = found["rate"]  # median 10 >= 9.5, but the median's interval is 9 to 11 (3 runs: 75 %)
    assert (rate.ours, rate.verdict) == (10.0, NOT_DECIDED)
    assert rate.interval is not None
    assert (rate.interval.low, rate.interval.high, rate.interval.confidence) == (9.0, 11.0, 0.75)
    scalability = found["scalability-2"]  # (19 / 2) / 10; the ratio's interval over 2 ranks
    assert scalability.ours == pytest.approx(0.95, abs=1e-12)
    assert scalability.interval is not None
    assert (scalability.interval.low, scalability.interval.high) == pytest.approx(
        (18.8 / 11.0 / 2, 19.2 / 9.0 / 2), abs=1e-12
    )
    assert scalability.verdict == NOT_DECIDED  # 0.855 to 1.07 reaches beyond 0.99
    comparable = found["comparable"]  # x1.9: none of x1.71 to x2.13 is within 10 % of x1
    assert comparable.verdict == NOT_REPRODUCED
    assert "none of its 90% interval x1.71 to x2.13 (3 and 3 repetitions) reproduces" in (
        comparable.why
    )
