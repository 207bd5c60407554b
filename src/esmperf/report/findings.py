"""Written findings, generated from the data as the seeds' slides state them ("MPI_Allreduce
takes 58 % of MPI time at 8 ranks; its share grows with ranks"). Each sentence names its
numbers and their uncertainty; a difference is called a difference only when the test says so,
and a comparison too small to show one is called inconclusive (significance.py). Each finding
has a weight; the report leads with the heaviest."""

import math
from collections import defaultdict
from dataclasses import dataclass

from esmperf import stats
from esmperf.mpi import machines
from esmperf.mpi.knobs import KNOBS
from esmperf.profile.regions import TIMED
from esmperf.profile.summary import bucket_label
from esmperf.report import significance
from esmperf.report.analysis import Comparison, Group, comparisons
from esmperf.report.profile_data import ProfileData, top_functions
from esmperf.store.results import RunResult, killed_after_result, killed_after_result_text

SMALL_MESSAGE_BUCKET = 12  # buckets 0..12 hold messages below 4 KiB
GOOD_EFFICIENCY = 0.8
BUSY_CORES = 0.5  # other processes' CPU use before a repetition that makes its time suspect


@dataclass
class Finding:
    topic: str  # scaling, knob, library, profile, quality
    text: str
    group: str = ""  # the workload and size it is about ("" for the whole study)
    weight: float = 0.05  # how much it matters (significance.py); the heaviest lead the report


def all_findings(
    groups: list[Group], results: list[RunResult], cores: int, alpha: float = 0.05
) -> list[Finding]:
    found: list[Finding] = []
    for group in groups:
        found += scaling_findings(group, cores)
        found += comparison_findings(group, comparisons(group, alpha), alpha)
        found += profile_findings(group)
    found += quality_findings(results, cores)
    found += connection_findings(results)
    return found


def connection_findings(results: list[RunResult]) -> list[Finding]:
    """Where pre-connecting every rank (ParaStation's default, PSP_ONDEMAND=0) stops fitting
    the simulated node's memory (machines.py), said for each machine and ranks per node."""
    found = []
    seen: set[tuple[str, int]] = set()
    for result in results:
        name = result.knobs.get("machine", "none")
        per_node = int(result.run.get("ranks_per_node") or 1)
        if not result.simulated or name == "none" or (name, per_node) in seen:
            continue
        seen.add((name, per_node))
        node = machines.machine(name)
        limit = node.preconnect_limit(per_node)
        largest = max(
            r.ranks
            for r in results
            if r.simulated
            and r.knobs.get("machine") == name
            and int(r.run.get("ranks_per_node") or 1) == per_node
        )
        verdict = (
            f"this study's largest run ({largest} ranks) needs on-demand connections "
            f"(PSP_ONDEMAND=1): pre-connected it would hold "
            f"{_bytes(machines.connection_memory(largest, 0, True) * per_node)} of "
            "connections on each node"
            if largest > limit
            else f"this study's largest run ({largest} ranks) fits pre-connected"
        )
        found.append(
            Finding(
                "scaling",
                f"On {name} nodes ({per_node} ranks each, {_bytes(node.memory)}), "
                f"pre-connecting every rank at {machines.CONNECTION_BYTES / 1e6:.2f} MB per "
                f"connection (seed 002's ParaStation figure) stops fitting the node's memory above "
                f"{limit} ranks; {verdict}. In time, at {machines.CONNECTION_SECONDS * 1e3:g} ms per "
                f"connection (a guess, docs/simulate.md), pre-connecting {largest} ranks costs each "
                f"{machines.connection_time(largest, 0, True):.3g} s in MPI_Init; on demand a rank "
                f"pays {machines.CONNECTION_SECONDS * 1e3:g} ms per peer at its first message.",
                weight=0.3 if largest > limit else 0.05,
            )
        )
    return found


def _ranks(n: int) -> str:
    return f"{n} rank{'s' if n != 1 else ''}"


def _bytes(value: float) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= size:
            return f"{value / size:.3g} {unit}"
    return f"{value:.0f} B"


def scaling_findings(group: Group, cores: int) -> list[Finding]:
    found = []
    reference = group.reference()
    for label, points in group.series().items():
        base = group.base_for(points)
        if base is None or base.summary is None or len(points) < 2:
            continue
        parts, first_poor, efficiencies = [], None, []
        for point in points:
            if point is base or point.summary is None:
                continue
            speedup = stats.speedup(
                base.summary.median, point.summary.median, group.higher_is_better
            )
            if math.isnan(speedup):  # a zero figure (e.g. no bytes between 1 rank)
                continue
            efficiency = stats.scaling_efficiency(
                base.ranks,
                base.summary.median,
                point.ranks,
                point.summary.median,
                group.higher_is_better,
            )
            if not point.oversubscribed:
                efficiencies.append(efficiency)
            flag = " (oversubscribed)" if point.oversubscribed else ""
            parts.append(
                f"{_ranks(point.ranks)}: speed-up {speedup:.2f}x, scaling efficiency "
                f"{efficiency:.0%}{flag}"
            )
            if efficiency < GOOD_EFFICIENCY and not point.oversubscribed and first_poor is None:
                first_poor = point.ranks
        if not parts:
            continue
        tag = " (the baseline curve)" if label == reference and len(group.series()) > 1 else ""
        verdict = (
            f" Efficiency falls below {GOOD_EFFICIENCY:.0%} at {_ranks(first_poor)}."
            if first_poor
            else ""
        )
        over = [p.ranks for p in points if p.oversubscribed]
        if over:
            verdict += (
                f" With more ranks than the {cores} cores ({', '.join(map(str, over))}"
                " ranks) the ranks share cores: those times are not a scaling result."
            )
        found.append(
            Finding(
                "scaling",
                f"{group.title}, {label}{tag}: against "
                f"{_ranks(base.ranks)}, " + "; ".join(parts) + "." + verdict,
                group.title,
                significance.scaling_weight(efficiencies, first_poor is not None),
            )
        )
    return found


def comparison_findings(
    group: Group, found_comparisons: list[Comparison], alpha: float = 0.05
) -> list[Finding]:
    by_setting: dict[tuple[str, str, str], list[Comparison]] = defaultdict(list)
    for comparison in found_comparisons:
        by_setting[(comparison.what, comparison.baseline, comparison.value)].append(comparison)
    found = []
    for (what, baseline, value), items in by_setting.items():
        if what == "stack":
            subject = f"{value} against {baseline}"
            topic = "library"
        else:
            analog = KNOBS[what].analog if what in KNOBS else ""
            subject = f"{what}={value} against {what}={baseline}" + (
                f" (the {analog} analog)" if analog else ""
            )
            topic = "knob"
        text = _comparison_text(what, sorted(items, key=lambda c: (c.ranks, c.b.stack)), alpha)
        weight = max(
            significance.comparison_weight(c.difference, c.oversubscribed, alpha) for c in items
        )
        found.append(Finding(topic, f"{group.title}: {subject}: {text}.", group.title, weight))
    return found


def _comparison_text(what: str, items: list[Comparison], alpha: float) -> str:
    """Significant changes with their CI and p; inconclusive ones (too few repetitions to show
    p < alpha) with their effect, its interval and the repetitions that would settle them;
    the rest, adequately repeated, as no significant difference."""
    significant = [c for c in items if c.difference.significant]
    inconclusive = [
        c
        for c in items
        if not c.difference.significant and significance.underpowered(c.difference, alpha)
    ]
    quiet = [c for c in items if c not in significant and c not in inconclusive]
    parts = []
    for c in significant:
        d = c.difference
        parts.append(
            f"{stats.format_change(d.change)} at {_where(c, what, items)} "
            f"({d.confidence:.0%} CI {stats.format_change_ci(d.ci_low, d.ci_high)}, "
            f"p = {d.p_value:.2g}{_flag(c)})"
        )
    if inconclusive:
        listed = ", ".join(
            f"{significance.estimate_text(c.difference)[:-1]}{_flag(c)}) at "
            f"{_where(c, what, items)}"
            for c in inconclusive
        )
        needed = max(
            significance.repetitions_needed(c.difference, c.a.values, c.b.values, alpha)
            for c in inconclusive
        )
        parts.append(
            f"{listed}: "
            + significance.inconclusive_text([c.difference for c in inconclusive], needed, alpha)
        )
    if quiet:
        changes = [c.difference.change for c in quiet]
        spread = stats.log_spread(*[v for c in quiet for v in (c.a.values, c.b.values)])
        smallest = min(min(c.difference.n_a, c.difference.n_b) for c in quiet)
        where = (
            f"the other {len(quiet)}"
            if parts
            else f"{len(quiet)} comparison{'s' if len(quiet) > 1 else ''}"
        )
        parts.append(
            f"no significant difference in {where} (changes from {min(changes):+.1%} "
            f"to {max(changes):+.1%}, Mann-Whitney p >= "
            f"{min(c.difference.p_value for c in quiet):.2g}; n = {smallest} detects "
            f"changes of {stats.detectable_change(smallest, spread, alpha):.0%} or more "
            "at this spread with 80% power)"
        )
    return "; ".join(parts)


def _where(comparison: Comparison, what: str, items: list[Comparison]) -> str:
    """ "2 ranks on mpich" for a knob; for a stack "2 ranks", and the knobs when several
    comparisons share the rank count."""
    if what != "stack":
        return f"{_ranks(comparison.ranks)} on {comparison.b.stack}"
    if sum(c.ranks == comparison.ranks for c in items) < 2:
        return _ranks(comparison.ranks)
    knobs = ", ".join(f"{k}={v}" for k, v in sorted(comparison.b.knobs.items()))
    return f"{_ranks(comparison.ranks)} ({knobs})" if knobs else _ranks(comparison.ranks)


def _flag(comparison: Comparison) -> str:
    return ", oversubscribed" if comparison.oversubscribed else ""


def profile_findings(group: Group) -> list[Finding]:
    reference = group.reference()
    if reference is None:
        return []
    profiled = group.profiled(reference)
    if not profiled:
        return []
    found = []
    timed = all(p.region == TIMED for _, p in profiled)  # the timed loop, not the harness
    title = f"{group.title}, {reference}" + (", timed loop" if timed else "")
    shares = [(r.ranks, p.mpi_percent) for r, p in profiled]
    scope = "the time" if timed else "the run time"
    text = "MPI takes " + ", ".join(
        f"{share:.0f} % of {scope} at {_ranks(ranks)}" for ranks, share in shares
    )
    if len(shares) > 1:
        trend = shares[-1][1] - shares[0][1]
        text += (
            "; communication grows with ranks"
            if trend > 5
            else "; it shrinks as ranks grow"
            if trend < -5
            else "; about constant"
        )
    found.append(
        Finding(
            "profile",
            f"{title}: {text}.",
            group.title,
            0.5 * max(share for _, share in shares) / 100,
        )
    )

    parallel = [(r, p) for r, p in profiled if r.ranks > 1 and p.total_time > 0]
    if parallel:
        ranks, largest = parallel[-1][0].ranks, parallel[-1][1]
        top = top_functions([largest], "time", 2)
        if top:
            name = top[0]
            text = f"{name} takes {largest.time_share(name):.0f} % of MPI time at {_ranks(ranks)}"
            if len(parallel) > 1:
                first_ranks, first = parallel[0][0].ranks, parallel[0][1]
                change = largest.time_share(name) - first.time_share(name)
                if abs(change) >= 3:
                    text += (
                        f"; its share {'grows' if change > 0 else 'falls'} with ranks "
                        f"({first.time_share(name):.0f} % at {_ranks(first_ranks)})"
                    )
            if len(top) > 1:
                text += f"; next is {top[1]} ({largest.time_share(top[1]):.0f} %)"
            found.append(
                Finding(
                    "profile",
                    f"{title}: {text}.",
                    group.title,
                    significance.call_weight(largest.mpi_percent, largest.time_share(name)),
                )
            )
        calls = top_functions([largest], "calls", 3)
        if calls:
            listed = ", ".join(f"{name} ({largest.call_share(name):.0f} %)" for name in calls)
            found.append(
                Finding(
                    "profile",
                    f"{title}: the most frequent MPI calls at {_ranks(ranks)} are {listed}.",
                    group.title,
                )
            )
        found += _message_findings(title, group.title, ranks, largest)
        imbalance = largest.imbalance
        if imbalance is not None and imbalance >= 1.5:
            worst = max(range(largest.ranks), key=lambda r: largest.mpi_per_rank[r])
            found.append(
                Finding(
                    "profile",
                    f"{title}: MPI time is unbalanced at {_ranks(ranks)}:"
                    f" max/mean over ranks = {imbalance:.2f} (rank {worst} waits "
                    "longest, for slower ranks).",
                    group.title,
                    min(1.0, (imbalance - 1) / 2),
                )
            )
    if len(profiled) > 1:
        data = [
            (r.ranks, max(p.bytes_per_rank, default=0), p.transfer)
            for r, p in profiled
            if p.transfer > 0
        ]
        if len(data) > 1:
            (r0, b0, t0), (r1, b1, t1) = data[0], data[-1]
            found.append(
                Finding(
                    "profile",
                    f"{title}: the busiest rank moves {_bytes(b0)} at {_ranks(r0)} and "
                    f"{_bytes(b1)} at {_ranks(r1)}; the aggregated transfer (all ranks) "
                    f"{'grows' if t1 > t0 else 'falls' if t1 < t0 else 'stays'} from {_bytes(t0)} "
                    f"to {_bytes(t1)}.",
                    group.title,
                )
            )
    found += _io_findings(title, group.title, profiled)
    found += pop_findings(title, group.title, parallel)
    return found


def pop_findings(
    title: str, group: str, parallel: list[tuple[RunResult, ProfileData]]
) -> list[Finding]:
    """The POP parallel efficiency of each profiled parallel run (pop_metrics.py), the factor
    that limits it, and the receive wait at the largest run."""
    rated = [(r, p.efficiency) for r, p in parallel if p.efficiency]
    if not rated:
        return []
    parts = [
        f"{e['parallel_efficiency']:.2f} at {_ranks(r.ranks)}"
        f"{' (oversubscribed)' if r.oversubscribed else ''} (load balance "
        f"{e['load_balance']:.2f}, communication efficiency "
        f"{e['communication_efficiency']:.2f})"
        for r, e in rated
    ]
    scope = {e["scope"] for _, e in rated}
    of = "the timed region" if scope == {f"region {TIMED}"} else "the whole run"
    text = f"{title}: POP parallel efficiency of {of} " + "; ".join(parts) + "."
    poor = [(r, e) for r, e in rated if e["parallel_efficiency"] < GOOD_EFFICIENCY]
    if poor:
        r, e = poor[0]
        factor = (
            "load imbalance"
            if e["load_balance"] < e["communication_efficiency"]
            else "communication"
        )
        text += (
            f" It is below {GOOD_EFFICIENCY:.1f} (POP's threshold) from {_ranks(r.ranks)}, "
            f"mostly through {factor}."
        )
    found = [Finding("profile", text, group)]
    result, profile = parallel[-1]
    wait = profile.receive_wait
    if wait and wait["calls"]:
        top = wait["by_function"][0]
        found.append(
            Finding(
                "profile",
                f"{title}: at {_ranks(result.ranks)} receivers spend {wait['time']:.3g} s "
                f"({wait['percent_of_mpi_time']:.0f} % of MPI time) blocked in calls that completed "
                f"a receive, most in {top['function']}: an upper bound of the time they waited for "
                "late senders.",
                group,
            )
        )
    return found


def _message_findings(title: str, group: str, ranks: int, profile: ProfileData) -> list[Finding]:
    messages = sum(profile.histogram.values())
    if not messages:
        return []
    small = sum(
        count for bucket, count in profile.histogram.items() if bucket <= SMALL_MESSAGE_BUCKET
    )
    common = max(profile.histogram.items(), key=lambda item: (item[1], -item[0]))[0]
    share = small / messages
    verdict = (
        "latency matters more than bandwidth"
        if share >= 0.5
        else "bandwidth matters more than latency"
    )
    return [
        Finding(
            "profile",
            f"{title}: {share:.0%} of the {messages} messages at "
            f"{_ranks(ranks)} are smaller than 4 KiB (most common size "
            f"{bucket_label(common)}): {verdict}.",
            group,
        )
    ]


def _io_findings(
    title: str, group: str, profiled: list[tuple[RunResult, ProfileData]]
) -> list[Finding]:
    if not profiled:
        return []
    result, profile = profiled[-1]
    written, read = sum(profile.io_write_per_rank), sum(profile.io_read_per_rank)
    if written + read <= 0:
        return []
    text = (
        f"{title}: at {_ranks(result.ranks)} the run writes {_bytes(written)} and reads "
        f"{_bytes(read)}"
    )
    if written > 0 and profile.ranks > 1:
        top = max(range(profile.ranks), key=lambda r: profile.io_write_per_rank[r])
        text += f"; rank {top} writes {profile.io_write_per_rank[top] / written:.0%} of it"
    return [Finding("profile", text + ".", group)]


def quality_findings(results: list[RunResult], cores: int) -> list[Finding]:
    found = []
    failed = [r for r in results if r.status in ("failed", "timeout")]
    if failed:
        listed = "; ".join(f"{r.label} ({r.status}: {r.run['reason']})" for r in failed[:5])
        more = f"; and {len(failed) - 5} more" if len(failed) > 5 else ""
        found.append(
            Finding(
                "quality",
                f"{len(failed)} configuration"
                f"{'s' if len(failed) > 1 else ''} did not complete: {listed}{more}. "
                "Their output is under Failures.",
                weight=0.8,
            )
        )
    killed = [r for r in results if killed_after_result(r.repetitions)]
    if killed:
        listed = "; ".join(
            f"{r.label}: {killed_after_result_text(r.repetitions)}" for r in killed[:5]
        )
        more = f"; and {len(killed) - 5} more" if len(killed) > 5 else ""
        found.append(
            Finding(
                "quality",
                f"{len(killed)} configuration"
                f"{'s' if len(killed) > 1 else ''} had repetitions that printed "
                f"their verified result and then had to be killed: {listed}{more}. "
                "Their figures count; they are listed under Failures.",
                weight=0.3,
            )
        )
    skipped = [r for r in results if r.status == "skipped"]
    if skipped:
        reasons: dict[str, int] = defaultdict(int)
        for result in skipped:
            reasons[str(result.run["reason"])] += 1
        listed = "; ".join(f"{count} x {reason}" for reason, count in reasons.items())
        found.append(
            Finding("quality", f"{len(skipped)} configurations were skipped, not run: {listed}.")
        )
    measured = [
        rep
        for r in results
        for rep in r.repetitions
        if rep["kind"] == "measure" and rep["status"] == "ok"
    ]
    busy = [rep for rep in measured if (rep.get("busy_cores_before") or 0) > BUSY_CORES]
    if busy:
        found.append(
            Finding(
                "quality",
                f"{len(busy)} of {len(measured)} measured repetitions "
                f"started while other processes kept more than {BUSY_CORES:g} of "
                f"the {cores} cores busy: those timings are noisier (the busy "
                "cores of each repetition are in the store).",
                weight=0.2,
            )
        )
    wide = [r for r in results if r.status == "complete" and r.run["reason"]]
    if wide:
        found.append(
            Finding(
                "quality",
                f"{len(wide)} configurations reached their maximum "
                "repetitions before the CI target (see the results table): more "
                "repetitions or a quieter machine would narrow them.",
            )
        )
    over = [r for r in results if r.oversubscribed and r.summary is not None]
    if over:
        found.append(
            Finding(
                "quality",
                f"{len(over)} configurations ran more ranks than the "
                f"{cores} cores (marked oversubscribed everywhere): their counts and "
                "bytes are exact, their times are not.",
            )
        )
    return found
