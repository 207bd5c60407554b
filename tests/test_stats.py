"""Statistics against values known from tables and from first principles."""

import math

import pytest

from esmperf import stats


@pytest.mark.parametrize(
    ("n", "low", "high", "confidence"),
    [
        (6, 1, 6, 1 - 2 / 64),  # the smallest sample whose [min, max] reaches 95 %
        (10, 2, 9, 1 - 2 * 11 / 1024),  # Le Boudec's table: ranks 2 and 9
        (20, 6, 15, 1 - 2 * 21700 / 2**20),
        (5, 1, 5, 1 - 2 / 32),  # 95 % is out of reach: [min, max] at 93.75 %
        (1, 1, 1, 0.0),
    ],
)
def test_median_ci_ranks(n: int, low: int, high: int, confidence: float) -> None:
    assert stats.median_ci_ranks(n, 0.95) == (low, high, pytest.approx(confidence))


def test_summary_of_known_values() -> None:
    summary = stats.summarise([5.0, 1.0, 4.0, 2.0, 3.0, 9.0, 8.0, 7.0, 6.0, 10.0])
    assert (summary.n, summary.median, summary.ci_low, summary.ci_high) == (10, 5.5, 2.0, 9.0)
    assert (summary.minimum, summary.maximum) == (1.0, 10.0)
    assert summary.ci_relative_width == pytest.approx(7 / 5.5)
    assert summary.spread == pytest.approx(9 / 5.5)


def test_ci_reached_is_the_stopping_rule() -> None:
    tight = [100.0, 100.5, 99.8, 100.2, 100.1, 99.9]
    assert stats.ci_reached(tight, 0.95, 0.05)
    assert not stats.ci_reached(tight[:5], 0.95, 0.05)  # 5 values never reach 95 %
    assert not stats.ci_reached([100.0, 150.0, 80.0, 120.0, 90.0, 130.0], 0.95, 0.05)


def test_mann_whitney_exact() -> None:
    assert stats.mann_whitney([1, 2, 3], [4, 5, 6]) == (0, pytest.approx(2 / 20))
    assert stats.mann_whitney([6, 7, 8, 9, 10], [1, 2, 3, 4, 5]) == (25, pytest.approx(2 / 252))
    u, p = stats.mann_whitney([1, 4, 5], [2, 3, 6])  # U = 1 + 2 + 2 = 5 = the middle
    assert u == 4 and p == pytest.approx(1.0)


def test_mann_whitney_with_ties_uses_the_normal_approximation() -> None:
    u, p = stats.mann_whitney([1, 1, 1], [1, 1, 1])
    assert (u, p) == (4.5, 1.0)
    # a = [1, 2, 2], b = [2, 3, 4]: U = 0 + 0.5 + 0.5 = 1; tie-corrected variance 9/12*(7-0.8)
    u, p = stats.mann_whitney([1, 2, 2], [2, 3, 4])
    z = (abs(1 - 4.5) - 0.5) / math.sqrt(9 / 12 * (7 - 24 / 30))
    assert u == 1 and p == pytest.approx(math.erfc(z / math.sqrt(2)))


def test_hodges_lehmann_shift_and_its_interval() -> None:
    a = [1.0, 2.0, 3.0, 4.0, 5.0]
    estimate, low, high, confidence = stats.shift_ci(a, [x + 10 for x in a])
    # 25 differences 6..14 (1, 2, 3, 4, 5, 4, 3, 2, 1 times); k = 3 for m = n = 5 at 95 %
    assert (estimate, low, high) == (10.0, 7.0, 13.0)
    assert confidence == pytest.approx(1 - 2 * 4 / 252)


def test_relative_change_is_a_ratio_in_the_metrics_direction() -> None:
    a = [10.0, 11.0, 12.0, 13.0, 14.0]
    faster = stats.relative_change(a, [2 * x for x in a], higher_is_better=True)
    assert faster.change == pytest.approx(1.0)
    assert 0 < faster.ci_low < 1.0 < faster.ci_high  # pairwise ratios 20/14 .. 28/10
    assert faster.significant and faster.p_value == pytest.approx(2 / 252)
    slower = stats.relative_change(a, [2 * x for x in a], higher_is_better=False)
    assert slower.change == pytest.approx(-0.5)  # twice the time: half the performance
    same = stats.relative_change(a, list(reversed(a)), higher_is_better=True)
    assert same.change == pytest.approx(0.0) and not same.significant


def test_a_change_is_called_only_when_its_interval_agrees_with_the_test() -> None:
    """p < 0.05, but the exact interval (96 % here: a few repetitions cannot give exactly 95 %)
    still holds no change: not significant, so the findings call it inconclusive."""
    a = [1.9, 1.06, 1.55, 1.39, 1.41, 1.82, 1.0]
    b = [1.89, 1.9, 1.82, 2.01]
    d = stats.relative_change(a, b, higher_is_better=True)
    assert d.p_value < 0.05 and d.ci_low <= 0 < d.ci_high
    assert not d.significant


def test_speedup_efficiency_jobs_per_day() -> None:
    assert stats.speedup(10.0, 30.0, higher_is_better=True) == 3.0
    assert stats.scaling_efficiency(1, 10.0, 4, 30.0, higher_is_better=True) == 0.75
    assert stats.scaling_efficiency(2, 8.0, 8, 2.5, higher_is_better=False) == pytest.approx(0.8)
    assert stats.jobs_per_day(86.4) == pytest.approx(1000.0)


@pytest.mark.parametrize(
    ("change", "text"),
    [(0.12, "12.0% better"), (-0.2, "20.0% worse"), (-0.9, "10x worse"), (1.5, "2.5x better")],
)
def test_format_change(change: float, text: str) -> None:
    assert stats.format_change(change) == text
