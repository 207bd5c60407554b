"""Honest findings: a comparison that cannot reach significance with its repetitions is called
inconclusive with its effect, interval and the repetitions it needs (computed); the report
leads with the heaviest findings and folds the rest."""

import math
import re
from pathlib import Path

import pytest

from esmperf import stats
from esmperf.report.finding import Finding
from esmperf.report.html import write_report
from esmperf.report.significance import ranked
from test_study_fixtures import FakeRun, make_store

SHM = {"transport": "shm"}
TCP = {"transport": "tcp"}


def test_what_a_mann_whitney_test_can_reach() -> None:
    assert stats.smallest_p(3, 3) == pytest.approx(0.1)  # 2 / C(6, 3)
    assert stats.smallest_p(4, 4) == pytest.approx(2 / 70)
    assert not stats.can_reach(3, 3) and stats.can_reach(4, 4) and not stats.can_reach(2, 5)
    assert stats.fewest_repetitions(0.05) == 4 and stats.fewest_repetitions(0.01) == 5
    assert stats.log_spread([1.0, math.e, math.e**2]) == pytest.approx(1.0)
    assert stats.log_spread([2.0], [5.0, 5.0]) == 0.0


def test_repetitions_to_detect_a_change() -> None:
    # the demo's pooled spread (benchmarks/demo_repetitions.py): 7 per side for 20 %
    assert stats.repetitions_to_detect(0.2, 0.096) == 7
    assert stats.power(6, 0.2, 0.096) < stats.POWER <= stats.power(7, 0.2, 0.096)
    assert stats.repetitions_to_detect(0.2, 0.0) == 4  # no noise: the fewest that can reach
    assert stats.repetitions_to_detect(-0.2, 0.05) == stats.repetitions_to_detect(0.25, 0.05)
    assert stats.power(3, 5.0, 0.01) == 0.0  # 3 against 3 never shows p < 0.05
    powers = [stats.power(n, 0.2, 0.1) for n in range(4, 30)]
    assert powers == sorted(powers) and powers[-1] > 0.99
    detectable = stats.detectable_change(7, 0.096)
    assert 0.15 < detectable <= 0.2
    assert stats.power(7, detectable, 0.096) >= stats.POWER
    assert stats.detectable_change(3, 0.096) == math.inf
    with pytest.raises(ValueError, match="non-zero"):
        stats.repetitions_to_detect(0.0, 0.1)


SHM_VALUES = [10.0, 10.4, 9.7]
TCP_VALUES = [7.7, 7.9, 7.5]  # about 23 % worse, every value below every shm value


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> str:
    runs = [
        FakeRun(2, SHM_VALUES, knobs=SHM),
        FakeRun(2, TCP_VALUES, knobs=TCP),
        FakeRun(1, [5.0, 5.1, 4.9], knobs=SHM),
    ]
    for number, workload in enumerate(("cesm", "homme", "hycom", "redist")):  # smaller effects
        tcp = [v * (0.9 + 0.01 * number) for v in SHM_VALUES]
        runs += [
            FakeRun(2, SHM_VALUES, knobs=SHM, workload=workload),
            FakeRun(2, tcp, knobs=TCP, workload=workload),
            FakeRun(1, [6.0, 6.1, 5.9], knobs=SHM, workload=workload),
        ]
    store = make_store(tmp_path_factory.mktemp("honest") / "study.duckdb", runs)
    return write_report(store).read_text()


def findings(page: str) -> list[str]:
    return [re.sub(r"\s+", " ", item) for item in re.findall(r"<li>(.*?)</li>", page, re.S)]


def test_an_underpowered_comparison_is_inconclusive_with_its_effect(page: str) -> None:
    text = next(f for f in findings(page) if "transport=tcp against transport=shm" in f)
    needed = stats.repetitions_to_detect(
        math.expm1(abs(math.log(statistics_median_ratio()))),
        stats.log_spread(SHM_VALUES, TCP_VALUES),
    )
    assert needed == 4  # a 23 % change at a 2 % spread: the fewest that can show p < 0.05
    assert (
        "23.0% worse (Hodges-Lehmann estimate, 90% CI -27.9% to -18.6%) at 2 ranks on "
        "openmpi: inconclusive: n = 3 cannot show p &lt; 0.05; run with at least 4 "
        "repetitions"
    ) in text
    assert "no significant difference" not in page


def statistics_median_ratio() -> float:
    ratios = sorted(b / a for a in SHM_VALUES for b in TCP_VALUES)
    return ratios[len(ratios) // 2]


def test_a_noisy_underpowered_comparison_asks_for_more() -> None:
    from esmperf.report.analysis import Comparison
    from esmperf.report.findings import comparison_findings
    from esmperf.store.results import RunResult

    def result(values: list[float], transport: str) -> RunResult:
        run = {
            "run_key": transport,
            "label": transport,
            "workload": "pop",
            "ranks": 2,
            "stack": "openmpi",
            "knobs": f'{{"transport": "{transport}"}}',
            "oversubscribed": False,
        }
        return RunResult(run, values, values, "steps/s", True, stats.summarise(values))

    a, b = [10.0, 12.0, 8.5], [9.0, 11.5, 7.0]  # about 10 % worse, 17 % spread
    difference = stats.relative_change(a, b, higher_is_better=True)
    comparison = Comparison(
        "transport", "shm", "tcp", result(a, "shm"), result(b, "tcp"), difference
    )

    class OneGroup:
        title = "pop S"

    [finding] = comparison_findings(OneGroup(), [comparison])  # type: ignore[arg-type]
    needed = stats.repetitions_to_detect(0.2, stats.log_spread(a, b))
    assert needed == 25
    assert finding.text.endswith(
        "inconclusive: n = 3 cannot show p < 0.05; run with at least "
        "25 repetitions (80% power for the change seen, or 20% if "
        "smaller, at the measured spread) (measured in blocks, not interleaved: a change in the "
        "machine's load during the study reads as an effect (load not recorded))."
    )


def test_findings_are_ranked_heaviest_first_and_topics_mixed() -> None:
    found = [
        Finding("quality", "q", weight=0.05),
        Finding("scaling", "s1", weight=0.9),
        Finding("scaling", "s2", weight=0.8),
        Finding("scaling", "s3", weight=0.7),
        Finding("scaling", "s4", weight=0.6),
        Finding("knob", "k", weight=0.5),
        Finding("profile", "p", weight=0.3),
        Finding("seed", "claim", weight=0.0),
    ]
    leading, rest = ranked(found, leading=6, per_topic=3)
    assert [f.text for f in leading] == ["claim", "s1", "s2", "s3", "k", "p"]
    assert [f.text for f in rest] == ["q", "s4"]  # in their given order
    leading, rest = ranked(found[:5], leading=4, per_topic=2)  # topics run short: fill up
    assert [f.text for f in leading] == ["s1", "s2", "s3", "q"]


def test_the_report_leads_with_ranked_findings_and_folds_the_rest(page: str) -> None:
    section = page[page.index("<section id='findings'>") :]
    section = section[: section.index("</section>")]
    leading = section[: section.index("<details")]
    assert leading.count("<li>") == 8 and "<ol class='findings leading'>" in leading
    first = leading.split("<li>")[1]  # the largest effect leads
    assert "pop S: transport=tcp" in first and "inconclusive: n = 3" in first
    folded = section[section.index("<details") :]
    assert re.search(r"<summary>(\d+) more findings</summary>", folded)
    more = int(re.search(r"<summary>(\d+) more findings</summary>", folded).group(1))
    assert folded.count("<li>") == more


def test_compare_calls_an_underpowered_change_inconclusive(tmp_path: Path) -> None:
    from esmperf.report.compare import compare_stores

    before = make_store(tmp_path / "a.duckdb", [FakeRun(2, SHM_VALUES)], name="a")
    after = make_store(tmp_path / "b.duckdb", [FakeRun(2, TCP_VALUES)], name="b")
    [change] = compare_stores(before, after).changes
    assert not change.significant and not change.can_show
    assert change.verdict == "inconclusive: n = 3 too few to show a change"
