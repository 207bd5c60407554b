"""A study's results organised the way the seeds present them: per workload and size, one
scaling curve per configuration; the gain of each knob over its baseline and the difference
between MPI libraries, each with its CI and test; and the profile of each point, aggregated
from the store's profile tables (profile_data.py). The report draws these; the findings put
them in words."""

import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from esmperf import stats
from esmperf.report.conditions import inert_reason
from esmperf.report.profile_data import ProfileData, load_profile_data
from esmperf.store.database import Store
from esmperf.store.results import RunResult
from esmperf.study.file import baseline_value


@dataclass
class Comparison:
    """B (one setting changed) against A (the baseline), at one point of the matrix."""

    what: str  # knob name, or "stack"
    baseline: str
    value: str
    a: RunResult
    b: RunResult
    difference: stats.Difference

    @property
    def ranks(self) -> int:
        return self.b.ranks

    @property
    def oversubscribed(self) -> bool:
        return self.a.oversubscribed or self.b.oversubscribed

    @property
    def inert(self) -> str:
        """Why the knob cannot act here ('' when it can): then this comparison is a control,
        which must show no effect (conditions.py)."""
        return inert_reason(self.what, self.ranks, self.b.simulated)


@dataclass
class Group:
    """One workload at one size: the runs a scaling figure compares."""

    workload: str
    size: str
    results: list[RunResult]
    unit: str
    higher_is_better: bool
    base_ranks: int | None
    profiles: dict[str, ProfileData] = field(default_factory=dict)  # by run key

    @property
    def title(self) -> str:
        return f"{self.workload} {self.size}".strip()

    @property
    def measured(self) -> list[RunResult]:
        return [r for r in self.results if r.summary is not None]

    def series(self) -> dict[str, list[RunResult]]:
        curves: dict[str, list[RunResult]] = {}
        for result in self.measured:
            curves.setdefault(result.series_label, []).append(result)
        return {label: sorted(points, key=lambda r: r.ranks) for label, points in curves.items()}

    def reference(self) -> str | None:
        """The baseline curve: every knob at its baseline, the first stack of the study."""
        curves = self.series()
        if not curves:
            return None
        knob_values: dict[str, set[str]] = defaultdict(set)
        for result in self.measured:
            for knob, value in result.knobs.items():
                knob_values[knob].add(value)
        for label, points in curves.items():
            knobs = points[0].knobs
            if all(
                value == baseline_value(knob, sorted(knob_values[knob]))
                for knob, value in knobs.items()
            ):
                return label
        return next(iter(curves))

    def base_for(self, points: list[RunResult]) -> RunResult | None:
        """The point speed-up and efficiency are measured against: the study's base rank
        count when the curve has it, else its smallest rank count."""
        if not points:
            return None
        wanted = [p for p in points if p.ranks == self.base_ranks]
        return wanted[0] if wanted else min(points, key=lambda p: p.ranks)

    def profiled(self, label: str) -> list[tuple[RunResult, ProfileData]]:
        return [
            (r, self.profiles[r.key])
            for r in self.series().get(label, [])
            if r.key in self.profiles
        ]


def build_groups(
    results: list[RunResult], base_ranks: int | None, store: Store | None = None
) -> list[Group]:
    grouped: dict[tuple[str, str], list[RunResult]] = {}
    for result in results:
        grouped.setdefault(result.group, []).append(result)
    groups = []
    for (workload, size), members in grouped.items():
        measured = [r for r in members if r.summary is not None]
        sample = measured[0] if measured else members[0]
        group = Group(workload, size, members, sample.unit, sample.higher_is_better, base_ranks)
        if store is not None:
            for result in measured:
                if result.profile_rep is not None:
                    group.profiles[result.key] = load_profile_data(
                        store, result.key, result.profile_rep
                    )
        groups.append(group)
    return groups


def comparisons(group: Group, alpha: float = 0.05) -> list[Comparison]:
    """Every knob value against its baseline, and every stack against the first, at points
    that differ in that one setting only."""
    by_identity = {_identity_key(json.loads(r.identity)): r for r in group.measured}
    knob_values: dict[str, list[str]] = defaultdict(list)
    stacks: list[str] = []
    for result in group.measured:
        for knob, value in result.knobs.items():
            if value not in knob_values[knob]:
                knob_values[knob].append(value)
        if result.stack not in stacks:
            stacks.append(result.stack)
    found = []
    for result in group.measured:
        identity = json.loads(result.identity)
        for knob, value in result.knobs.items():
            baseline = baseline_value(knob, knob_values[knob])
            if value == baseline:
                continue
            other = dict(identity, knobs={**identity["knobs"], knob: baseline})
            base = by_identity.get(_identity_key(other))
            if base is not None:
                found.append(_compare(knob, baseline, value, base, result, group, alpha))
        if len(stacks) > 1 and result.stack != stacks[0]:
            base = by_identity.get(_identity_key(dict(identity, stack=stacks[0])))
            if base is not None:
                found.append(_compare("stack", stacks[0], result.stack, base, result, group, alpha))
    return found


def _compare(
    what: str, baseline: str, value: str, a: RunResult, b: RunResult, group: Group, alpha: float
) -> Comparison:
    confidence = a.summary.confidence if a.summary else 0.95
    difference = stats.relative_change(
        a.values, b.values, group.higher_is_better, max(0.95, confidence), alpha
    )
    return Comparison(what, baseline, value, a, b, difference)


def _identity_key(identity: dict[str, Any]) -> str:
    return json.dumps(identity, sort_keys=True)
