"""Which figures each workload and size (an analysis Group) gets in the report: performance
against ranks or nodes with the ideal line, scaling efficiency, the gains of each knob and MPI
library, the libraries side by side, and the profile's figures of the baseline configuration
(MPI/user time, % calls and % time by function, message sizes, data per rank, aggregated
transfer, MPI and I/O over time, peer-to-peer matrix). The drawing itself is figures.py, scaling_figures.py and
profile_charts.py."""

import re

from esmperf import stats
from esmperf.profile.regions import TIMED
from esmperf.profile.summary import bucket_label
from esmperf.report import figures as fig
from esmperf.report import profile_charts, scaling_figures
from esmperf.report.analysis import Group, comparisons
from esmperf.report.profile_data import top_functions


def slug(text: str) -> str:
    """A name for ids and file names: lower case, runs of other characters as one dash."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def _ranks_label(ranks: int, oversubscribed: bool) -> str:
    return f"{ranks} rank{'s' if ranks > 1 else ''}" + (" (over)" if oversubscribed else "")


def _ranks_per_node(group: Group) -> int | None:
    """The ranks per node when a group's scaling is over nodes: every run on a cluster's nodes
    (a simulated one, or a real one through Slurm), the same ranks per node throughout and more
    than one node somewhere. Otherwise None: the figures plot against ranks."""
    runs = group.measured
    if not runs or not all(r.on_cluster_nodes for r in runs) or max(r.nodes for r in runs) < 2:
        return None
    per_node = {(r.ranks // r.nodes, r.ranks % r.nodes) for r in runs}
    if len(per_node) != 1:
        return None
    ranks, remainder = per_node.pop()
    return ranks if remainder == 0 else None


def group_figures(group: Group, cores: int) -> list[fig.Figure]:
    """Every figure of one workload and size: against nodes when the group ran on a cluster
    (simulated or through Slurm) at a fixed number of ranks per node (the seeds' node axis),
    else against ranks."""
    curves = group.series()
    if not curves:
        return []
    prefix = slug(group.title)
    made: list[fig.Figure] = []
    per_node = _ranks_per_node(group)
    x_of = (lambda r: r.nodes) if per_node else (lambda r: r.ranks)
    x_label = (
        f"nodes ({per_node} rank{'s' if per_node > 1 else ''} per node)"
        if per_node
        else "MPI ranks"
    )
    series = [
        fig.Series(
            label,
            [
                fig.Point(
                    x_of(r),
                    r.summary.median,
                    r.summary.ci_low,
                    r.summary.ci_high,
                    r.oversubscribed,
                    r.summary.n,
                )
                for r in points
                if r.summary
            ],
        )
        for label, points in curves.items()
    ]
    reference = group.reference()
    ideal = None
    if reference:
        points = curves[reference]
        base = group.base_for(points)
        if base and base.summary and len(points) > 1:
            xs = sorted({x_of(r) for pts in curves.values() for r in pts})
            value, base_x = base.summary.median, x_of(base)
            ideal = fig.Series(
                "ideal",
                [
                    fig.Point(
                        x,
                        value * x / base_x if group.higher_is_better else value * base_x / x,
                        0,
                        0,
                        False,
                    )
                    for x in xs
                ],
            )
    made.append(
        scaling_figures.scaling_figure(
            f"{prefix}-performance",
            f"{group.title}: performance vs {'nodes' if per_node else 'ranks'}",
            series,
            group.unit,
            group.higher_is_better,
            cores,
            ideal,
            x_label=x_label,
            caption="Median of the measured repetitions; error bars: the CI of the median "
            "(order statistics); dashed: ideal scaling from the baseline curve's base point; "
            "hollow points ran more ranks than cores.",
        )
    )

    efficiency = []
    bases = set()
    for label, points in curves.items():
        base = group.base_for(points)
        if base is None or base.summary is None or len(points) < 2 or not base.summary.median:
            continue  # no base, or a zero figure: no efficiency to speak of
        bases.add(base.ranks)
        efficiency.append(
            fig.Series(
                label,
                [
                    fig.Point(
                        x_of(r),
                        100
                        * stats.scaling_efficiency(
                            base.ranks,
                            base.summary.median,
                            r.ranks,
                            r.summary.median,
                            group.higher_is_better,
                        ),
                        0,
                        0,
                        r.oversubscribed,
                    )
                    for r in points
                    if r.summary and r.summary.median
                ],
            )
        )
    if efficiency:
        base_ranks = min(bases)
        made.append(
            scaling_figures.efficiency_figure(
                f"{prefix}-efficiency",
                f"{group.title}: scaling efficiency",
                efficiency,
                base_ranks,
                cores,
                x_label=x_label,
                caption=f"Performance per rank relative to the base ({base_ranks} rank"
                f"{'s' if base_ranks > 1 else ''}), as in the JUROPA white paper; "
                "100 % is ideal.",
            )
        )

    found = comparisons(group)
    by_knob: dict[str, list[fig.Bar]] = {}
    for comparison in found:
        d = comparison.difference
        bar = fig.Bar(
            group=_ranks_label(comparison.ranks, comparison.oversubscribed),
            name=comparison.b.series_label
            if comparison.what != "stack"
            else f"{comparison.value} vs {comparison.baseline}"
            + "".join(f" · {k}={v}" for k, v in comparison.b.knobs.items()),
            value=100 * d.change,
            low=100 * d.ci_low,
            high=100 * d.ci_high,
            solid=d.significant,
        )
        by_knob.setdefault(comparison.what, []).append(bar)
    for what, bars in by_knob.items():
        baseline = next(c.baseline for c in found if c.what == what)
        noun = "MPI library" if what == "stack" else what
        made.append(
            fig.bar_figure(
                f"{prefix}-gain-{slug(what)}",
                "gains",
                f"{group.title}: gain of each {noun} over {baseline}",
                bars,
                f"gain over {what}={baseline} (%)\n(higher is better)",
                caption="Hodges-Lehmann estimate of the ratio of typical values with its CI; "
                "solid bars are significant (Mann-Whitney), hatched ones are not.",
                percent_labels=True,
                zero_line=True,
            )
        )

    stacks = list(dict.fromkeys(r.stack for r in group.measured))
    if len(stacks) > 1 and reference:
        reference_knobs = curves[reference][0].knobs
        bars = [
            fig.Bar(
                _ranks_label(r.ranks, r.oversubscribed),
                r.stack,
                r.summary.median,
                r.summary.ci_low,
                r.summary.ci_high,
                not r.oversubscribed,
            )
            for r in sorted(group.measured, key=lambda r: (r.ranks, stacks.index(r.stack)))
            if r.summary and r.knobs == reference_knobs
        ]
        if bars:
            made.append(
                fig.bar_figure(
                    f"{prefix}-libraries",
                    "stacks",
                    f"{group.title}: MPI libraries",
                    bars,
                    f"{group.unit}\n({fig.direction(group.higher_is_better)})",
                    caption="Each stack at the baseline knobs; error bars: CI of the median; "
                    "hatched: oversubscribed.",
                )
            )
    if reference:
        made += profile_figures(group, reference, prefix, cores)
    return made


def profile_figures(group: Group, reference: str, prefix: str, cores: int) -> list[fig.Figure]:
    profiled = group.profiled(reference)
    if not profiled:
        return []
    made = []
    timed = all(p.region == TIMED for _, p in profiled)  # the timed loop, not the harness
    where = f"{group.title}, {reference}" + (", timed loop" if timed else "")
    labels = [_ranks_label(r.ranks, r.oversubscribed) for r, _ in profiled]
    mpi = [p.mpi_percent for _, p in profiled]
    made.append(
        profile_charts.stacked_share_figure(
            f"{prefix}-mpi-user",
            f"{where}: MPI vs user time",
            labels,
            {"MPI": mpi, "user (compute)": [100 - share for share in mpi]},
            "% of wall time\n(MPI share: lower is better)",
            caption="Sum over ranks of the time inside MPI calls, against the rest of the "
            + ("timed loop." if timed else "run."),
        )
    )
    profiles = [p for _, p in profiled]
    for kind, by, title, y_label in (
        ("mpi_calls", "calls", "% of MPI calls by function", "% of MPI calls"),
        ("mpi_time", "time", "% of MPI time by function", "% of MPI time"),
    ):
        top = top_functions(profiles, by)
        bars = []
        for (_, profile), label in zip(profiled, labels):
            share = profile.call_share if by == "calls" else profile.time_share
            values = {name: share(name) for name in top}
            rest = (
                100 - sum(values.values())
                if (profile.total_calls if by == "calls" else profile.total_time)
                else 0
            )
            for name, value in values.items():
                bars.append(fig.Bar(name, label, value))
            if rest > 0.5:
                bars.append(fig.Bar(fig.OTHER, label, rest))
        if bars:
            made.append(
                fig.bar_figure(
                    f"{prefix}-{kind.replace('_', '-')}",
                    kind,
                    f"{where}: {title}",
                    bars,
                    y_label,
                    percent_labels=True,
                    caption="Summed over ranks; the top functions, the rest as 'other'.",
                )
            )
    buckets = sorted({b for p in profiles for b in p.histogram})
    if buckets:
        bars = [
            fig.Bar(bucket_label(b), label, float(p.histogram.get(b, 0)))
            for b in buckets
            for (_, p), label in zip(profiled, labels)
        ]
        made.append(
            fig.bar_figure(
                f"{prefix}-message-sizes",
                "message_sizes",
                f"{where}: MPI message sizes",
                bars,
                "messages",
                log_y=max(b.value for b in bars)
                > 50 * max(min(b.value for b in bars if b.value > 0), 1),
                caption="Point-to-point messages and collective calls (their larger side) in "
                "log2 size buckets, all ranks.",
            )
        )
    panels = {
        label: [value / 2**20 for value in p.bytes_per_rank]
        for (_, p), label in zip(profiled, labels)
    }
    if any(any(values) for values in panels.values()):
        made.append(
            profile_charts.per_rank_figure(
                f"{prefix}-data-per-rank",
                f"{where}: data transferred by each rank",
                panels,
                "MiB sent + received",
                caption="MPI communication (MPI-IO excluded) per rank.",
            )
        )
    if len(profiled) > 1:
        transfer = fig.Series(
            reference,
            [fig.Point(r.ranks, p.transfer / 2**20, 0, 0, r.oversubscribed) for r, p in profiled],
        )
        made.append(
            scaling_figures.line_figure(
                f"{prefix}-aggregated-transfer",
                "aggregated_transfer",
                f"{where}: aggregated transfer",
                [transfer],
                "MiB sent to other ranks",
                cores,
                caption="Bytes all ranks together sent to other ranks over the whole run "
                "(MPI-IO excluded; point-to-point and RMA sends to the sending rank itself "
                "excluded; a collective counts each rank's whole send buffer).",
            )
        )
    result, last = profiled[-1]
    if last.bins:
        width = last.bins[0]["width"] or 1.0
        made.append(
            profile_charts.timeline_figure(
                f"{prefix}-timeline",
                f"{where}: MPI and I/O over time "
                f"({_ranks_label(result.ranks, result.oversubscribed)})",
                [b["start"] for b in last.bins],
                last.bin_mpi_percent(),
                [b["io_write"] for b in last.bins],
                [b["io_read"] for b in last.bins],
                width,
                max(last.run_wall_per_rank or last.wall_per_rank, default=width),
                caption=f"Time bins of {width:g} s: share of rank time inside MPI, and POSIX I/O "
                "(the whole run).",
            )
        )
    multi = [(r, p) for r, p in profiled if p.ranks > 1]
    if multi:
        result, profile = multi[-1]
        made.append(
            profile_charts.matrix_figure(
                f"{prefix}-peers",
                f"{where}: peer-to-peer traffic "
                f"({_ranks_label(result.ranks, result.oversubscribed)})",
                profile.peers,
                caption="Point-to-point and RMA bytes from each rank (row) to each rank (column), "
                "the whole run; the colour scale starts at 0, and the diagonal is what a rank "
                "sent to itself (no network).",
            )
        )
    return made
