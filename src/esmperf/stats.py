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
- Power: the smallest two-sided p a Mann-Whitney test can reach is 2 / C(m+n, m) (complete
  separation, no ties): with 3 repetitions per side that is 0.1, so such a comparison cannot
  show p < 0.05 whatever the data; it is inconclusive, not "no difference". The repetitions
  that detect a change: the exact critical U at alpha, and U's mean and variance when log
  values scatter normally by the measured spread and shift by the change (Lehmann's moments);
  the fewest n per side whose power reaches 80 %.
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
POWER = 0.8  # the probability of detecting a real change that "enough repetitions" means


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
    significant: bool  # p_value < alpha, and the interval excludes no change


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
    achieved = 1 - 2 * statistics.NormalDist().cdf(
        (k - 0.5 - m * n / 2) / math.sqrt(m * n * (m + n + 1) / 12)
    )
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
        estimate, low, high, achieved = shift_ci(
            [math.log(x) for x in a], [math.log(y) for y in b], confidence
        )
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
        n_a=len(a),
        n_b=len(b),
        change=change,
        ci_low=bounds[0],
        ci_high=bounds[1],
        confidence=achieved,
        p_value=p_value,
        # At a few repetitions the exact interval's confidence can only be reached above the
        # one asked for (99 % for 95 %); a change is called only when that interval agrees.
        significant=p_value < alpha and (bounds[0] > 0 or bounds[1] < 0),
    )


def speedup(base_value: float, value: float, higher_is_better: bool) -> float:
    """How many times faster than the base: P/P_base for a rate, T_base/T for a time."""
    if base_value == 0 or value == 0:
        return math.nan
    return value / base_value if higher_is_better else base_value / value


def scaling_efficiency(
    base_ranks: int, base_value: float, ranks: int, value: float, higher_is_better: bool
) -> float:
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


def smallest_p(m: int, n: int) -> float:
    """The smallest two-sided p-value a Mann-Whitney test of samples of sizes m and n can
    give: every value of one sample beyond every value of the other, no ties."""
    if m < 1 or n < 1:
        return 1.0
    return min(1.0, 2 / math.comb(m + n, m))


def can_reach(m: int, n: int, alpha: float = 0.05) -> bool:
    """Whether the test can show p < alpha at these sample sizes at all."""
    return smallest_p(m, n) < alpha


def fewest_repetitions(alpha: float = 0.05) -> int:
    """The fewest repetitions per side (equal sizes) that can show p < alpha: 4 at 0.05."""
    n = 1
    while not can_reach(n, n, alpha):
        n += 1
    return n


def log_spread(*samples: Sequence[float]) -> float:
    """The pooled standard deviation of log values within the samples (the run-to-run noise as
    a fraction: 0.1 = about 10 %); 0 when no sample has two positive values."""
    squares, degrees = 0.0, 0
    for sample in samples:
        logs = [math.log(x) for x in sample if x > 0]
        if len(logs) > 1:
            mean = statistics.fmean(logs)
            squares += sum((x - mean) ** 2 for x in logs)
            degrees += len(logs) - 1
    return math.sqrt(squares / degrees) if degrees else 0.0


def _critical_u(m: int, n: int, alpha: float) -> float:
    """The largest U whose two-sided p is below alpha (-1 when none is)."""
    if m + n <= EXACT_LIMIT:
        counts, total, cumulative = _u_counts(m, n), math.comb(m + n, m), 0
        for u, count in enumerate(counts):
            if 2 * (cumulative + count) / total >= alpha:
                return u - 1
            cumulative += count
        return m * n
    sd = math.sqrt(m * n * (m + n + 1) / 12)
    return math.floor(m * n / 2 - 0.5 - _normal_quantile(1 - alpha / 2) * sd)


def _both_below(effect: float) -> float:
    """P(X1 < Y and X2 < Y) for independent X1, X2 ~ N(0, 1), Y ~ N(effect, 1):
    the integral of phi(t) Phi(t + effect)^2 (Simpson's rule; smooth, 1e-9 accurate)."""
    normal, steps, width = statistics.NormalDist(), 400, 16.0
    h = width / steps
    total = 0.0
    for i in range(steps + 1):
        t = -width / 2 + i * h
        weight = 1 if i in (0, steps) else 4 if i % 2 else 2
        total += weight * normal.pdf(t) * normal.cdf(t + effect) ** 2
    return total * h / 3


def power(n: int, change: float, spread: float, alpha: float = 0.05) -> float:
    """The probability that a two-sided Mann-Whitney test of n against n repetitions shows
    p < alpha when the typical value changes by `change` and log values scatter normally by
    `spread`: the exact critical U, and U's mean and variance under the shift (Lehmann 1975:
    p1 = P(X < Y), p2 = P(X1 < Y, X2 < Y))."""
    critical = _critical_u(n, n, alpha)
    if critical < 0:
        return 0.0
    shift = abs(math.log1p(change))
    if spread <= 0:
        return 1.0 if shift > 0 else 0.0
    effect = shift / spread
    p1 = statistics.NormalDist().cdf(effect / math.sqrt(2))
    p2 = _both_below(effect)
    mean = n * n * (1 - p1)  # U counts pairs with the unchanged sample ahead
    variance = n * n * (p1 * (1 - p1) + 2 * (n - 1) * (p2 - p1 * p1))
    if variance <= 0:
        return 1.0
    return statistics.NormalDist().cdf((critical + 0.5 - mean) / math.sqrt(variance))


def repetitions_to_detect(
    change: float, spread: float, alpha: float = 0.05, wanted: float = POWER, limit: int = 1000
) -> int:
    """Repetitions per side for a two-sided Mann-Whitney test to detect a relative change of
    `change` (0.2 = 20 %) with probability `wanted`, when the log values scatter by `spread`
    (log_spread); `limit` + 1 when even `limit` does not."""
    if change <= -1 or math.log1p(change) == 0:
        raise ValueError("the change to detect must be a non-zero ratio above -100 %")
    n = fewest_repetitions(alpha)
    while n <= limit and power(n, change, spread, alpha) < wanted:
        n += 1
    return n


def detectable_change(n: int, spread: float, alpha: float = 0.05, wanted: float = POWER) -> float:
    """The smallest relative change (0.2 = 20 %) that n repetitions per side detect with
    probability `wanted` at this spread (to 0.1 %); inf when n cannot reach alpha at all."""
    if not can_reach(n, n, alpha):
        return math.inf
    low, high = 0.0, 1.0
    while power(n, high, spread, alpha) < wanted:
        low, high = high, 2 * high + 1
        if high > 1e6:
            return math.inf
    while high - low > 5e-4:
        middle = (low + high) / 2
        low, high = (middle, high) if power(n, middle, spread, alpha) < wanted else (low, middle)
    return high
