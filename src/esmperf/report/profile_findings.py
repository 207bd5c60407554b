"""Findings from the profiles, worded as the seeds' slides give them: which MPI calls take the
time and how their share moves with ranks, the receive wait, message sizes, I/O, and the POP
CoE efficiencies (pop_metrics.py). Part of findings.py's all_findings."""

from esmperf.profile.regions import TIMED
from esmperf.profile.summary import bucket_label
from esmperf.report import significance
from esmperf.report.analysis import Group
from esmperf.report.finding import GOOD_EFFICIENCY, Finding, bytes_text, ranks_text
from esmperf.report.profile_data import ProfileData, top_functions
from esmperf.store.results import RunResult

SMALL_MESSAGE_BUCKET = 12  # buckets 0..12 hold messages below 4 KiB


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
        f"{share:.0f} % of {scope} at {ranks_text(ranks)}" for ranks, share in shares
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
            text = (
                f"{name} takes {largest.time_share(name):.0f} % of MPI time at {ranks_text(ranks)}"
            )
            if len(parallel) > 1:
                first_ranks, first = parallel[0][0].ranks, parallel[0][1]
                change = largest.time_share(name) - first.time_share(name)
                if abs(change) >= 3:
                    text += (
                        f"; its share {'grows' if change > 0 else 'falls'} with ranks "
                        f"({first.time_share(name):.0f} % at {ranks_text(first_ranks)})"
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
                    f"{title}: the most frequent MPI calls at {ranks_text(ranks)} are {listed}.",
                    group.title,
                )
            )
        found += message_findings(title, group.title, ranks, largest)
        imbalance = largest.imbalance
        if imbalance is not None and imbalance >= 1.5:
            worst = max(range(largest.ranks), key=lambda r: largest.mpi_per_rank[r])
            found.append(
                Finding(
                    "profile",
                    f"{title}: MPI time is unbalanced at {ranks_text(ranks)}:"
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
                    f"{title}: the busiest rank moves {bytes_text(b0)} at {ranks_text(r0)} and "
                    f"{bytes_text(b1)} at {ranks_text(r1)}; the aggregated transfer (all ranks to "
                    "other ranks, the whole run) "
                    f"{'grows' if t1 > t0 else 'falls' if t1 < t0 else 'stays'} from {bytes_text(t0)} "
                    f"to {bytes_text(t1)}.",
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
        f"{e['parallel_efficiency']:.2f} at {ranks_text(r.ranks)}"
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
            f" It is below {GOOD_EFFICIENCY:.1f} (POP's threshold) from {ranks_text(r.ranks)}, "
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
                f"{title}: at {ranks_text(result.ranks)} receivers spend {wait['time']:.3g} s "
                f"({wait['percent_of_mpi_time']:.0f} % of MPI time) blocked in calls that completed "
                f"a receive, most in {top['function']}: an upper bound of the time they waited for "
                "late senders.",
                group,
            )
        )
    return found


def message_findings(title: str, group: str, ranks: int, profile: ProfileData) -> list[Finding]:
    """Whether latency or bandwidth matters more: by MPI time when more than half of it is in
    calls whose messages are all below 4 KiB, or all 4 KiB and above (each call's size from
    its function's histogram); else by the messages counted, said so."""
    messages = sum(profile.histogram.values())
    if not messages:
        return []
    small = sum(
        count for bucket, count in profile.histogram.items() if bucket <= SMALL_MESSAGE_BUCKET
    )
    common = max(profile.histogram.items(), key=lambda item: (item[1], -item[0]))[0]
    share = small / messages
    counted = (
        f"{share:.0%} of the {messages} messages at {ranks_text(ranks)} are smaller than "
        f"4 KiB (most common size {bucket_label(common)})"
    )
    by_size = time_by_size(profile)
    total = profile.total_time
    for side, verdict, words in (
        ("large", "bandwidth matters more than latency", "all 4 KiB or larger"),
        ("small", "latency matters more than bandwidth", "all smaller than 4 KiB"),
    ):
        seconds, functions = by_size[side]
        if total > 0 and seconds > total / 2:
            top = ", ".join(
                f"{name} {100 * profile.functions[name]['time'] / total:.0f} %"
                for name in functions[:2]
            )
            text = (
                f"{100 * seconds / total:.0f} % of MPI time is in calls whose messages are "
                f"{words} ({top}); {counted}: by time, {verdict}"
            )
            return [Finding("profile", f"{title}: {text}.", group)]
    sized = by_size["small"][0] + by_size["large"][0]
    verdict = (
        "latency matters more than bandwidth"
        if share >= 0.5
        else "bandwidth matters more than latency"
    )
    return [
        Finding(
            "profile",
            f"{title}: {counted}: counted by messages, not time, {verdict} (only "
            f"{100 * sized / total if total else 0:.0f} % of MPI time is in calls whose "
            "messages are all on one side of 4 KiB: the rest, in calls of both sizes or of "
            "none such as MPI_Waitall, is not split by size).",
            group,
        )
    ]


def time_by_size(profile: ProfileData) -> dict[str, tuple[float, list[str]]]:
    """MPI time in the functions whose messages are all below 4 KiB ("small") or all 4 KiB
    and above ("large"), with those functions, most time first."""
    found: dict[str, list[str]] = {"small": [], "large": []}
    for name, sizes in profile.function_sizes.items():
        used = [bucket for bucket, n in sizes.items() if n]
        if name not in profile.functions or not used:
            continue
        if max(used) <= SMALL_MESSAGE_BUCKET:
            found["small"].append(name)
        elif min(used) > SMALL_MESSAGE_BUCKET:
            found["large"].append(name)
    result = {}
    for side, names in found.items():
        names.sort(key=lambda n: (-profile.functions[n]["time"], n))
        result[side] = (sum(profile.functions[n]["time"] for n in names), names)
    return result


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
        f"{title}: at {ranks_text(result.ranks)} the run writes {bytes_text(written)} and reads "
        f"{bytes_text(read)}"
    )
    if written > 0 and profile.ranks > 1:
        top = max(range(profile.ranks), key=lambda r: profile.io_write_per_rank[r])
        text += f"; rank {top} writes {profile.io_write_per_rank[top] / written:.0%} of it"
    return [Finding("profile", text + ".", group)]
