"""`esmperf compare A B`: what changed between two study stores, configuration by
configuration, with statistics: the relative change of B against A (Hodges-Lehmann ratio with
its CI) and a Mann-Whitney test. A regression is a significant change for the worse by more
than the threshold; the CLI exits non-zero when there is one, for use in CI."""

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from esmperf import stats
from esmperf.errors import EsmperfError
from esmperf.store.database import Store
from esmperf.store.results import RunResult, load_results


@dataclass
class Change:
    label: str
    unit: str
    higher_is_better: bool
    median_a: float
    median_b: float
    n_a: int
    n_b: int
    change: float  # +: B better than A, in the metric's direction
    ci_low: float
    ci_high: float
    confidence: float
    p_value: float
    significant: bool
    regression: bool
    improvement: bool
    oversubscribed: bool
    can_show: bool = True  # whether n_a against n_b can reach p < alpha at all

    @property
    def verdict(self) -> str:
        if self.regression:
            return "REGRESSION"
        if self.improvement:
            return "improvement"
        if self.significant:
            return "changed (within threshold)"
        if not self.can_show:
            return f"inconclusive: n = {min(self.n_a, self.n_b)} too few to show a change"
        return "no significant change"


@dataclass
class Comparison:
    before: str
    after: str
    threshold: float
    alpha: float
    changes: list[Change] = field(default_factory=list)
    only_before: list[str] = field(default_factory=list)
    only_after: list[str] = field(default_factory=list)
    unmeasured: list[str] = field(default_factory=list)  # in both, but not measured in one

    @property
    def regressions(self) -> list[Change]:
        return [change for change in self.changes if change.regression]

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for change, item in zip(self.changes, data["changes"]):
            item["verdict"] = change.verdict
        data["regressions"] = len(self.regressions)
        return data


def _load(path: Path) -> list[RunResult]:
    with Store(path, read_only=True) as store:
        return load_results(store)


def compare_stores(
    before: Path, after: Path, threshold: float = 0.05, alpha: float = 0.05
) -> Comparison:
    """Match configurations by what they run (workload, size, ranks, stack, knobs, options,
    command): the study names and repetition policies may differ."""
    a_results, b_results = _load(before), _load(after)
    a_by = {r.identity: r for r in a_results}
    b_by = {r.identity: r for r in b_results}
    comparison = Comparison(str(before), str(after), threshold, alpha)
    comparison.only_before = [r.label for r in a_results if r.identity not in b_by]
    comparison.only_after = [r.label for r in b_results if r.identity not in a_by]
    for identity, a in a_by.items():
        b = b_by.get(identity)
        if b is None:
            continue
        if not a.values or not b.values:
            comparison.unmeasured.append(a.label)
            continue
        if a.higher_is_better != b.higher_is_better or a.unit != b.unit:
            raise EsmperfError(
                f"{a.label}: the figure of merit differs between the stores "
                f"({a.unit!r} vs {b.unit!r}): they cannot be compared"
            )
        d = stats.relative_change(a.values, b.values, a.higher_is_better, 0.95, alpha)
        assert a.summary and b.summary
        worse = d.significant and d.change < -threshold
        better = d.significant and d.change > threshold
        comparison.changes.append(
            Change(
                label=a.label,
                unit=a.unit,
                higher_is_better=a.higher_is_better,
                median_a=a.summary.median,
                median_b=b.summary.median,
                n_a=d.n_a,
                n_b=d.n_b,
                change=d.change,
                ci_low=d.ci_low,
                ci_high=d.ci_high,
                confidence=d.confidence,
                p_value=d.p_value,
                significant=d.significant,
                regression=worse,
                improvement=better,
                oversubscribed=a.oversubscribed or b.oversubscribed,
                can_show=stats.can_reach(d.n_a, d.n_b, alpha),
            )
        )
    if not comparison.changes and not comparison.unmeasured:
        raise EsmperfError(
            f"{before} and {after} have no configuration in common: nothing "
            "to compare (they must run the same workloads, ranks, stacks, knobs)"
        )
    return comparison


def render_comparison(comparison: Comparison, console: Console) -> None:
    table = Table(title=f"{comparison.after} against {comparison.before}", title_justify="left")
    for column in ("configuration", "A median", "B median", "change", "95% CI", "p", "verdict"):
        table.add_column(column, overflow="fold")
    for change in comparison.changes:
        style = "bold red" if change.regression else "green" if change.improvement else ""
        over = " (oversubscribed)" if change.oversubscribed else ""
        table.add_row(
            escape(change.label + over),
            f"{change.median_a:.4g} {escape(change.unit)}",
            f"{change.median_b:.4g}",
            stats.format_change(change.change),
            stats.format_change_ci(change.ci_low, change.ci_high),
            f"{change.p_value:.2g}",
            f"[{style}]{change.verdict}[/]" if style else change.verdict,
        )
    console.print(table)
    for title, labels in (
        ("only in A", comparison.only_before),
        ("only in B", comparison.only_after),
        ("not measured in one of them", comparison.unmeasured),
    ):
        if labels:
            console.print(
                f"{title}: " + "; ".join(escape(label) for label in labels), soft_wrap=True
            )
    regressions = comparison.regressions
    threshold = f"{comparison.threshold:.0%}"
    blind = [change for change in comparison.changes if not change.can_show]
    if blind:
        console.print(
            f"[yellow]{len(blind)} of {len(comparison.changes)} configurations have "
            f"too few repetitions to show p < {comparison.alpha:g}[/] (at least "
            f"{stats.fewest_repetitions(comparison.alpha)} per store): inconclusive, "
            "not unchanged"
        )
    if regressions:
        console.print(
            f"[bold red]{len(regressions)} significant regression"
            f"{'s' if len(regressions) > 1 else ''} beyond {threshold}[/] "
            f"(alpha {comparison.alpha:g})"
        )
    else:
        console.print(
            f"[green]no significant regression beyond {threshold}[/] (alpha {comparison.alpha:g})"
        )
