"""Statistics for repeated measurements, after Hoefler & Belli (SC15): nonparametric throughout,
because run times on a shared machine are skewed and have outliers.

- The median with a confidence interval from order statistics (no distribution assumed): with
  n sorted values x(1) <= ... <= x(n), [x(l), x(n+1-l)] covers the true median with probability
  P(l <= B <= n-l), B ~ Binomial(n, 1/2). The widest l that reaches the confidence is used; when
  even [min, max] cannot reach it (n < 6 at 95 %), [min, max] is returned with the confidence it
  does reach, and that is reported, never hidden.
- Differences between two samples: the Mann-Whitney U test (exact distribution for small
  samples without ties, normal approximation with tie correction otherwise) and the
  Hodges-Lehmann estimate of the shift with its distribution-free confidence interval, taken on
  log values so that a shift is a ratio: "B is 12 % faster than A (95 % CI 8-15 %)".
- Speed-up and scaling efficiency against a stated base rank count (the JUROPA white paper's
  definition: performance per rank at n ranks over performance per rank at the base).
"""

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

SECONDS_PER_DAY = 86400.0
EXACT_LIMIT = 40  # m + n up to which the exact U distribution is used (no ties)


@dataclass(frozen=True)
class Summary:
    """What is reported for one configuration's repetitions."""

    n: int
    median: float
    ci_low: float
    ci_high: float
    confidence: float  # the confidence the interval really has (may be below the target)
    minimum: float
    maximum: float

    @property
    def ci_relative_width(self) -> float:
        """(CI high - CI low) / median: the stopping criterion of the runner."""
        if self.median == 0:
            return math.inf
        return (self.ci_high - self.ci_low) / abs(self.median)

    @property
    def spread(self) -> float:
        """(max - min) / median."""
        if self.median == 0:
            return math.inf
        return (self.maximum - self.minimum) / abs(self.median)


@dataclass(frozen=True)
class Difference:
    """B against A: a relative change with its confidence interval and a test."""

    n_a: int
    n_b: int
    change: float  # relative change, +0.12 = 12 % better (in the metric's own direction)
    ci_low: float
    ci_high: float
    confidence: float  # the confidence the interval really has
    p_value: float  # Mann-Whitney U, two-sided
    significant: bool  # p_value < alpha


def median(values: Sequence[float]) -> float:
    if not values:
        raise ValueError("median of no values")
    return statistics.median(values)


def binomial_cdf(k: int, n: int) -> float:
    """P(B <= k) for B ~ Binomial(n, 1/2)."""
    if k < 0:
        return 0.0
    return sum(math.comb(n, i) for i in range(min(k, n) + 1)) / 2**n


def median_ci_ranks(n: int, confidence: float = 0.95) -> tuple[int, int, float]:
    """1-based ranks (l, u) of the order statistics bounding the median, and the confidence
    that [x(l), x(u)] really has. For n = 10 at 95 %: (2, 9, 0.979)."""
    if n < 1:
        raise ValueError("no values")
    if n == 1:
        return 1, 1, 0.0
    best = 1
    for low in range(1, n // 2 + 1):
        if 1 - 2 * binomial_cdf(low - 1, n) >= confidence:
            best = low
        else:
            break
    return best, n + 1 - best, 1 - 2 * binomial_cdf(best - 1, n)


def summarise(values: Sequence[float], confidence: float = 0.95) -> Summary:
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values to summarise")
    low, high, achieved = median_ci_ranks(len(ordered), confidence)
    return Summary(
        n=len(ordered),
        median=median(ordered),
        ci_low=ordered[low - 1],
        ci_high=ordered[high - 1],
        confidence=achieved,
        minimum=ordered[0],
        maximum=ordered[-1],
    )


def ci_reached(values: Sequence[float], confidence: float, relative_width: float) -> bool:
    """True when the CI of the median has the confidence asked for and is at most
    `relative_width` of the median wide (the runner's stopping rule)."""
    if len(values) < 2:
        return False
    summary = summarise(values, confidence)
    return summary.confidence >= confidence and summary.ci_relative_width <= relative_width


@lru_cache(maxsize=256)
def _u_counts(m: int, n: int) -> tuple[int, ...]:
    """Number of arrangements giving each U = 0 .. m*n for samples of sizes m and n (no ties):
    the coefficients of the Gaussian binomial coefficient [m+n choose m]."""
    if m == 0 or n == 0:
        return (1,)
    without_last_a = _u_counts(m - 1, n)  # the largest value is in b: U unchanged
    without_last_b = _u_counts(m, n - 1)  # the largest value is in a: it beats all n of b
    counts = [0] * (m * n + 1)
    for u, count in enumerate(without_last_b):
        counts[u] += count
    for u, count in enumerate(without_last_a):
        counts[u + n] += count
    return tuple(counts)


def _u_cdf_exact(u: float, m: int, n: int) -> float:
    counts = _u_counts(m, n)
    return sum(counts[: math.floor(u) + 1]) / sum(counts)


def mann_whitney(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """(U of a, two-sided p-value). U counts pairs with a_i > b_j, ties as one half."""
    m, n = len(a), len(b)
    if m == 0 or n == 0:
        raise ValueError("Mann-Whitney needs two non-empty samples")
    u = sum((x > y) + 0.5 * (x == y) for x in a for y in b)
    pooled = sorted([*a, *b])
    ties = [pooled.count(value) for value in set(pooled)]
    has_ties = any(count > 1 for count in ties)
    if not has_ties and m + n <= EXACT_LIMIT:
        low_tail = _u_cdf_exact(min(u, m * n - u), m, n)  # the distribution is symmetric
        return u, min(1.0, 2 * low_tail)
    mean = m * n / 2
    tie_term = sum(t**3 - t for t in ties) / ((m + n) * (m + n - 1))
    variance = m * n / 12 * ((m + n + 1) - tie_term)
    if variance <= 0:  # every value equal
        return u, 1.0
    z = (abs(u - mean) - 0.5) / math.sqrt(variance)  # continuity correction
    return u, min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2)))


def _normal_quantile(p: float) -> float:
    return statistics.NormalDist().inv_cdf(p)


def _trim_count(m: int, n: int, confidence: float) -> tuple[int, float]:
    """k such that [d(k), d(mn+1-k)] of the mn sorted pairwise differences is the
    Hodges-Lehmann interval, and the confidence it has."""
    alpha = 1 - confidence
    if m + n <= EXACT_LIMIT:
        counts = _u_counts(m, n)
        total = sum(counts)
        k, cumulative = 1, counts[0]
        while k < len(counts) and cumulative + counts[k] <= alpha / 2 * total:
            cumulative += counts[k]
            k += 1
        # P(U <= k-1) = cumulative/total
        return k, 1 - 2 * cumulative / total
    z = _normal_quantile(1 - alpha / 2)
    k = max(1, math.floor(m * n / 2 - z * math.sqrt(m * n * (m + n + 1) / 12)))
    achieved = 1 - 2 * statistics.NormalDist().cdf((k - 0.5 - m * n / 2)
                                                  / math.sqrt(m * n * (m + n + 1) / 12))
    return k, achieved


def shift_ci(
    a: Sequence[float], b: Sequence[float], confidence: float = 0.95
) -> tuple[float, float, float, float]:
    """Hodges-Lehmann estimate of the shift b - a, its CI, and the CI's real confidence."""
    differences = sorted(y - x for x in a for y in b)
    k, achieved = _trim_count(len(a), len(b), confidence)
    k = min(k, (len(differences) + 1) // 2)
    return median(differences), differences[k - 1], differences[-k], achieved


def relative_change(
    a: Sequence[float],
    b: Sequence[float],
    higher_is_better: bool,
    confidence: float = 0.95,
    alpha: float = 0.05,
) -> Difference:
    """How much better B is than A, as a fraction (+0.10: 10 % better; for a time, B takes
    1/1.10 of A's time). Estimated on log values: the Hodges-Lehmann shift of log(b) - log(a)
    is a ratio of typical values, with a distribution-free CI."""
    if not a or not b:
        raise ValueError("relative change needs two non-empty samples")
    _, p_value = mann_whitney(a, b)
    if min(*a, *b) > 0:
        estimate, low, high, achieved = shift_ci([math.log(x) for x in a],
                                                 [math.log(y) for y in b], confidence)
        sign = 1 if higher_is_better else -1
        bounds = sorted((math.exp(sign * low) - 1, math.exp(sign * high) - 1))
        change = math.exp(sign * estimate) - 1
    else:  # a figure of merit that can be zero or negative: shift relative to A's median
        estimate, low, high, achieved = shift_ci(a, b, confidence)
        scale = abs(median(a)) or 1.0
        sign = 1 if higher_is_better else -1
        bounds = sorted((sign * low / scale, sign * high / scale))
        change = sign * estimate / scale
    return Difference(
        n_a=len(a), n_b=len(b), change=change, ci_low=bounds[0], ci_high=bounds[1],
        confidence=achieved, p_value=p_value, significant=p_value < alpha,
    )


def speedup(base_value: float, value: float, higher_is_better: bool) -> float:
    """How many times faster than the base: P/P_base for a rate, T_base/T for a time."""
    if base_value == 0 or value == 0:
        return math.nan
    return value / base_value if higher_is_better else base_value / value


def scaling_efficiency(base_ranks: int, base_value: float, ranks: int, value: float,
                       higher_is_better: bool) -> float:
    """Scaling efficiency against the base (the JUROPA white paper's parallel efficiency:
    performance per rank at `ranks` over performance per rank at `base_ranks`); 1.0 is ideal
    scaling; NaN when a figure is zero. Not POP's parallel efficiency of one profiled run
    (profile/pop_metrics.py)."""
    return speedup(base_value, value, higher_is_better) * base_ranks / ranks


def jobs_per_day(seconds: float) -> float:
    """How many runs of this length fit in a day (the HPC Advisory Council decks' unit)."""
    return SECONDS_PER_DAY / seconds if seconds > 0 else math.nan


def format_change(change: float) -> str:
    """A relative change in words: +0.12 -> "12.0 % better", -0.2 -> "20.0 % worse",
    -0.9 -> "10.0x worse" (a factor reads better than "90 % worse")."""
    if change >= 0:
        return f"{change:.1%} better" if change < 1 else f"{1 + change:.2g}x better"
    if change <= -0.5:
        return f"{1 / (1 + change):.3g}x worse" if change > -1 else "infinitely worse"
    return f"{-change:.1%} worse"


def format_change_ci(low: float, high: float) -> str:
    """A CI of a relative change, as factors when it spans large ratios."""
    if low <= -0.5 or high >= 1:
        return f"{1 + low:.3g}x to {1 + high:.3g}x the baseline's performance"
    return f"{low:+.1%} to {high:+.1%}"


def intervals_overlap(first: Summary, second: Summary) -> bool:
    return first.ci_low <= second.ci_high and second.ci_low <= first.ci_high
