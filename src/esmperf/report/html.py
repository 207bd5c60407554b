"""`esmperf report`: one self-contained HTML page (works offline: CSS, script and figures are
inside it) plus every figure as SVG and PNG files, mirroring the seeds' slides: performance vs
ranks per configuration, scaling efficiency, knob gains, MPI library comparison, then the profile
figures (MPI/user time, % calls and % time by function, message sizes, data per rank,
aggregated transfer, MPI and I/O over time, peer-to-peer matrix), written findings, the results
table with every CI, failures with their output, and the environment."""

import base64
import datetime
import html
import json
import re
from pathlib import Path
from typing import Any

from esmperf import stats
from esmperf.environment import usable_cores
from esmperf.errors import EsmperfError
from esmperf.profile.regions import TIMED
from esmperf.profile.summary import bucket_label
from esmperf.report import figures as fig
from esmperf.report.analysis import Group, build_groups, comparisons, top_functions
from esmperf.report.efficiency_table import efficiency_html
from esmperf.report.findings import Finding, all_findings
from esmperf.report.seed_report import claims_section
from esmperf.report.significance import ranked
from esmperf.store.database import Store, results_dir
from esmperf.store.results import (
    RunResult,
    killed_after_result,
    killed_after_result_text,
    load_results,
)

TOPICS = (
    ("seed", "The seed's claims"),
    ("scaling", "Scaling"),
    ("knob", "Knobs"),
    ("library", "MPI libraries"),
    ("profile", "Communication profile"),
    ("quality", "Measurement quality"),
)


def default_report_dir(store_path: Path) -> Path:
    return results_dir(Path(store_path)) / "report"


def write_report(store_path: Path, out_dir: Path | None = None) -> Path:
    """Write index.html and figures/ for the study in `store_path`; returns the page's path."""
    store_path = Path(store_path)
    out_dir = Path(out_dir) if out_dir else default_report_dir(store_path)
    with Store(store_path, read_only=True) as store:
        info = store.study_info()
        results = load_results(store)
        groups = build_groups(results, info.get("base_ranks"), store)
        sessions = store.sessions()
        claims = claims_section(store, info, results, groups, _figure_html)
    cores = _cores(results, sessions)
    figures: list[fig.Figure] = []
    for group in groups:
        figures += group_figures(group, cores)
    found = claims.findings + all_findings(groups, results, cores)
    page = render_page(
        info, results, groups, figures, found, sessions, cores, store_path, claims.html
    )
    figures += claims.figures
    try:
        (out_dir / "figures").mkdir(parents=True, exist_ok=True)
        for figure in figures:
            (out_dir / "figures" / f"{figure.id}.svg").write_bytes(figure.svg)
            (out_dir / "figures" / f"{figure.id}.png").write_bytes(figure.png)
        index = out_dir / "index.html"
        index.write_text(page, encoding="utf-8")
    except OSError as error:
        raise EsmperfError(
            f"cannot write the report to {out_dir}: {error.strerror}; choose another --out"
        ) from None
    return index


def _cores(results: list[RunResult], sessions: list[dict[str, Any]]) -> int:
    counts = [int(r.run["cores"]) for r in results if r.run.get("cores")]
    counts += [int(s["usable_cores"]) for s in sessions if s.get("usable_cores")]
    return min(counts) if counts else usable_cores()


def _slug(text: str) -> str:
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
    prefix = _slug(group.title)
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
        fig.scaling_figure(
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
            fig.efficiency_figure(
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
                f"{prefix}-gain-{_slug(what)}",
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
        fig.stacked_share_figure(
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
            fig.per_rank_figure(
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
            fig.line_figure(
                f"{prefix}-aggregated-transfer",
                "aggregated_transfer",
                f"{where}: aggregated transfer",
                [transfer],
                "MiB sent by all ranks",
                cores,
                caption="Total data put on the network by all ranks together.",
            )
        )
    result, last = profiled[-1]
    if last.bins:
        width = last.bins[0]["width"] or 1.0
        made.append(
            fig.timeline_figure(
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
            fig.matrix_figure(
                f"{prefix}-peers",
                f"{where}: peer-to-peer traffic "
                f"({_ranks_label(result.ranks, result.oversubscribed)})",
                profile.peers,
                caption="Point-to-point and RMA bytes from each rank (row) to each rank (column), "
                "the whole run.",
            )
        )
    return made


# --- HTML ------------------------------------------------------------------------------------

STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d2530;
background:#f7f8fa;line-height:1.45}
header{background:#1f3b5a;color:#fff;padding:1.2em 2em}header h1{margin:0 0 .2em;font-size:1.6em}
header p{margin:.2em 0;opacity:.9}main{padding:1em 2em;max-width:1300px}
section{background:#fff;border:1px solid #dde2e8;border-radius:6px;padding:1em 1.4em;
margin:1em 0}h2{margin-top:.2em;color:#1f3b5a}h3{color:#1f3b5a}
.figures{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:1em}
figure{margin:0;border:1px solid #e6e9ee;border-radius:4px;padding:.5em;background:#fff}
figure img{width:100%;height:auto}figcaption{font-size:.85em;color:#555}
table{border-collapse:collapse;font-size:.85em;width:100%;margin:.5em 0}
th,td{border-bottom:1px solid #e3e6ea;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f0f3f6}td.num{text-align:right;font-variant-numeric:tabular-nums}
.over{color:#9a5b00;font-weight:600}.sim{color:#1f5fa8;font-weight:600}.bad{color:#b00020;font-weight:600}
.ok{color:#1b7a3a}ul.findings li{margin:.3em 0}.topic{font-weight:600;color:#1f3b5a}
pre{background:#f3f5f7;padding .6em;overflow:auto;font-size:.8em;max-height:24em}
.small{font-size:.85em;color:#555}nav a{margin-right:1em;color:#fff}
"""

SCRIPT = """
(function(){var errors=[];var root=document.documentElement;
function note(){root.setAttribute('data-js-errors',String(errors.length));}
window.addEventListener('error',function(e){errors.push(String(e.message||e));note();},true);
note();
window.addEventListener('load',function(){
 var imgs=document.querySelectorAll('img.figure-image');var loaded=0;
 for(var i=0;i<imgs.length;i++){if(imgs[i].complete&&imgs[i].naturalWidth>0){loaded++;}}
 root.setAttribute('data-figures',String(imgs.length));
 root.setAttribute('data-figures-loaded',String(loaded));
 var kinds={};for(var j=0;j<imgs.length;j++){kinds[imgs[j].getAttribute('data-kind')]=1;}
 root.setAttribute('data-figure-kinds',Object.keys(kinds).sort().join(' '));
 root.setAttribute('data-ready','yes');note();});})();
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _number(value: float | None, digits: int = 4) -> str:
    return "" if value is None else f"{value:.{digits}g}"


def render_page(
    info: dict[str, Any],
    results: list[RunResult],
    groups: list[Group],
    figures: list[fig.Figure],
    found: list[Finding],
    sessions: list[dict[str, Any]],
    cores: int,
    store_path: Path,
    claims_html: str = "",
) -> str:
    title = info.get("title") or info.get("name")
    counts = {
        status: sum(1 for r in results if r.status == status)
        for status in ("complete", "failed", "timeout", "skipped", "pending")
    }
    generated = datetime.datetime.now().replace(microsecond=0).isoformat(sep=" ")
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{_e(title)} — esmperf report</title>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<style>{STYLE}</style><script>{SCRIPT}</script></head><body>",
        f"<header><h1>{_e(title)}</h1>",
        f"<p>{_e(info.get('description'))}</p>" if info.get("description") else "",
        f"<p class='small'>Reproduces: {_e(info.get('seed'))}</p>" if info.get("seed") else "",
        f"<p class='small'>Study <b>{_e(info.get('name'))}</b> · store {_e(store_path)} · "
        f"report generated {generated}</p>",
        "<nav><a href='#findings'>Findings</a>"
        + ("<a href='#seed-claims'>The seed's claims</a>" if claims_html else ""),
        *(f"<a href='#{_slug(g.title)}'>{_e(g.title)}</a>" for g in groups),
        "<a href='#failures'>Failures</a><a href='#environment'>Environment</a>"
        "<a href='#method'>Method</a></nav></header><main>",
        "<section id='overview'><h2>Overview</h2><p>",
        f"{len(results)} configurations: {counts['complete']} complete, "
        f"{counts['failed']} failed, {counts['timeout']} timed out, {counts['skipped']} skipped"
        + (f", {counts['pending']} not finished" if counts["pending"] else "")
        + ". "
        f"Every time is the median of the measured repetitions with its confidence interval; "
        f"runs with more ranks than the {cores} cores are marked "
        "<span class='over'>oversubscribed</span> in every table and figure."
        + (
            " Runs on a simulated cluster (SimGrid SMPI, stack smpi) are marked "
            "<span class='sim'>simulated</span>: their times are simulated (never "
            "oversubscribed), see docs/simulate.md."
            if any(r.simulated for r in results)
            else ""
        )
        + (
            " Runs marked <span class='sim'>folded</span> shared their fields between "
            "simulated ranks and charged their kernels from samples: their communication is "
            "exact, their numbers are not verified (docs/simulate.md, Folding)."
            if any(r.folded for r in results)
            else ""
        )
        + "</p></section>",
        _findings_html(found),
        claims_html,
    ]
    for group in groups:
        prefix = _slug(group.title)
        mine = [f for f in figures if f.id.startswith(prefix + "-")]
        parts.append(_group_html(group, mine))
    parts += [
        _failures_html(results),
        _skipped_html(results),
        _environment_html(sessions, results),
        _method_html(info),
        "</main></body></html>",
    ]
    return "\n".join(part for part in parts if part)


def _findings_html(found: list[Finding]) -> str:
    """The heaviest findings first (significance.ranked), the others folded below by topic."""
    if not found:
        return (
            "<section id='findings'><h2>Findings</h2><p>No findings: nothing was measured "
            "yet.</p></section>"
        )
    leading, rest = ranked(found)
    items = [
        "<ol class='findings leading'>"
        + "".join(
            f"<li><span class='topic'>{_e(_topic_heading(f.topic))}:</span> {_e(f.text)}</li>"
            for f in leading
        )
        + "</ol>"
    ]
    if rest:
        folded = []
        for topic, heading in TOPICS:
            texts = [f.text for f in rest if f.topic == topic]
            if texts:
                folded.append(
                    f"<h3>{heading}</h3><ul class='findings'>"
                    + "".join(f"<li>{_e(text)}</li>" for text in texts)
                    + "</ul>"
                )
        items.append(
            f"<details class='more-findings'><summary>{len(rest)} more finding"
            f"{'s' if len(rest) > 1 else ''}</summary>" + "".join(folded) + "</details>"
        )
    return "<section id='findings'><h2>Findings</h2>" + "".join(items) + "</section>"


def _topic_heading(topic: str) -> str:
    return dict(TOPICS).get(topic, topic)


def _figure_html(figure: fig.Figure) -> str:
    data = base64.b64encode(figure.svg).decode("ascii")
    return (
        f"<figure id='fig-{_e(figure.id)}'><img class='figure-image' "
        f"data-kind='{_e(figure.kind)}' alt='{_e(figure.title)}' "
        f"src='data:image/svg+xml;base64,{data}'>"
        f"<figcaption><b>{_e(figure.title)}.</b> {_e(figure.caption)} "
        f"<a href='figures/{_e(figure.id)}.svg'>SVG</a> · "
        f"<a href='figures/{_e(figure.id)}.png'>PNG</a></figcaption></figure>"
    )


def _group_html(group: Group, figures: list[fig.Figure]) -> str:
    rows = []
    for result in sorted(group.results, key=lambda r: (r.series_label, r.ranks)):
        s = result.summary
        over = "<span class='over'>oversubscribed</span>" if result.oversubscribed else ""
        if result.simulated:
            over = (
                f"<span class='sim'>simulated{', folded' if result.folded else ''}, "
                f"{result.nodes} node{'s' if result.nodes > 1 else ''}</span>"
                + _simulator_cost(result)
            )
        status_class = "ok" if result.status == "complete" else "bad"
        rows.append(
            "<tr>"
            + "".join(
                [
                    f"<td>{_e(result.series_label)}</td>",
                    f"<td class='num'>{result.ranks}</td>",
                    f"<td class='num'>{s.n if s else 0}</td>",
                    f"<td class='num'>{_number(s.median) if s else ''}</td>",
                    f"<td class='num'>{_number(s.ci_low)}–{_number(s.ci_high)} "
                    f"({s.confidence:.0%})</td>"
                    if s
                    else "<td></td>",
                    f"<td class='num'>{_number(s.minimum) if s else ''}</td>",
                    f"<td class='num'>{s.spread:.1%}</td>" if s else "<td></td>",
                    f"<td class='num'>{_number(result.jobs_per_day, 5)}</td>",
                    f"<td class='num'>{_number(result.max_load, 3)} / "
                    f"{_number(result.max_busy, 2)}</td>",
                    f"<td>{over}</td>",
                    f"<td class='{status_class}'>{_e(result.status)}</td>",
                    f"<td class='small'>{_e(_note(result))}</td>",
                ]
            )
            + "</tr>"
        )
    unit = _e(group.unit)
    header = (
        "<tr><th>configuration</th><th>ranks</th><th>n</th>"
        f"<th>median ({unit})</th><th>CI of the median</th><th>min</th><th>spread</th>"
        "<th>jobs/day</th><th>max load / busy cores before</th><th>oversubscribed / simulated</th><th>status</th>"
        "<th>note</th></tr>"
    )
    direction = "higher is better" if group.higher_is_better else "lower is better"
    return (
        f"<section id='{_slug(group.title)}'><h2>{_e(group.title)}</h2>"
        f"<p class='small'>Figure of merit: {unit} ({direction}).</p>"
        f"<div class='figures'>{''.join(_figure_html(f) for f in figures)}</div>"
        f"<h3>Results</h3><table>{header}{''.join(rows)}</table>"
        f"{efficiency_html(group)}</section>"
    )


def _simulator_cost(result: RunResult) -> str:
    """ " (simulation: 41 s, 1.2 GB)": what simulating the run cost here."""
    cost = result.simulator_cost
    if cost is None:
        return ""
    seconds, rss = cost
    memory = f", {rss / 1e9:.3g} GB" if rss else ""
    return f"<br><span class='small'>simulation: {seconds:.3g} s{memory}</span>"


def _note(result: RunResult) -> str:
    """The results table's note: why the configuration stopped, and any repetitions killed
    after their result."""
    notes = (result.run["reason"], killed_after_result_text(result.repetitions))
    return "; ".join(note for note in notes if note)


def _failures_html(results: list[RunResult]) -> str:
    failed = [r for r in results if r.status in ("failed", "timeout")]
    bad_reps = [(r, rep) for r in results for rep in r.repetitions if rep["status"] != "ok"]
    killed = _killed_after_result_html(results)
    if not failed and not bad_reps:
        return f"<section id='failures'><h2>Failures</h2><p>No run failed.</p>{killed}</section>"
    items = []
    for result, rep in bad_reps:
        items.append(
            f"<details><summary><span class='bad'>{_e(rep['status'])}</span> "
            f"{_e(result.label)}, repetition {rep['rep']} ({_e(rep['kind'])}), exit code "
            f"{_e(rep['exit_code'])}, after {rep['elapsed']:.1f} s</summary>"
            f"<p class='small'>command: <code>{_e(' '.join(json.loads(result.run['argv'] or '[]')))}"
            f"</code></p><h4>stderr</h4><pre>{_e(rep['stderr'])}</pre>"
            f"<h4>stdout</h4><pre>{_e(rep['stdout'])}</pre></details>"
        )
    summary = "".join(
        f"<li>{_e(r.label)}: <span class='bad'>{_e(r.status)}</span> — {_e(r.run['reason'])}</li>"
        for r in failed
    )
    return (
        f"<section id='failures'><h2>Failures</h2><ul>{summary}</ul>{''.join(items)}"
        f"{killed}</section>"
    )


def _killed_after_result_html(results: list[RunResult]) -> str:
    """The configurations some of whose repetitions printed their verified result and then
    had to be killed: counted, but said."""
    items = []
    for result in results:
        killed = killed_after_result(result.repetitions)
        if killed:
            reps = ", ".join(str(rep["rep"]) for rep in killed)
            notes = "; ".join(dict.fromkeys(str(rep["killed_after_result"]) for rep in killed))
            text = killed_after_result_text(result.repetitions)
            items.append(
                f"<li>{_e(result.label)}: {_e(text)} (repetitions {reps}: {_e(notes)})</li>"
            )
    if not items:
        return ""
    return (
        "<h3>Killed after their result (counted)</h3><p class='small'>These repetitions "
        "printed their complete result line, verified, and then did not exit (MPICH 4 over "
        "TCP sometimes hangs in MPI_Finalize): the runner killed them and kept their "
        f"figures.</p><ul>{''.join(items)}</ul>"
    )


def _skipped_html(results: list[RunResult]) -> str:
    skipped = [r for r in results if r.status == "skipped"]
    if not skipped:
        return ""
    rows = "".join(
        f"<tr><td>{_e(r.label)}</td><td>{_e(r.run['reason'])}</td></tr>" for r in skipped
    )
    return (
        "<section id='skipped'><h2>Skipped configurations</h2><p>Not run, and why "
        f"(never run with a setting silently ignored).</p><table><tr><th>configuration</th>"
        f"<th>reason</th></tr>{rows}</table></section>"
    )


def _environment_html(sessions: list[dict[str, Any]], results: list[RunResult]) -> str:
    session_rows = "".join(
        "<tr>"
        + "".join(
            f"<td>{_e(s.get(key))}</td>"
            for key in (
                "session_id",
                "started",
                "finished",
                "hostname",
                "cpu_model",
                "usable_cores",
                "memory_gib",
                "kernel",
                "git_commit",
                "git_dirty",
                "load_at_start",
                "esmperf_version",
            )
        )
        + "</tr>"
        for s in sessions
    )
    libraries = sorted({(r.stack, r.run["mpi_library"]) for r in results if r.run["mpi_library"]})
    library_rows = "".join(
        f"<tr><td>{_e(stack)}</td><td>{_e(lib)}</td></tr>" for stack, lib in libraries
    )
    run_rows = "".join(
        f"<tr><td>{_e(r.label)}</td><td><code>{_e(_env_text(r.run['knob_env']))}</code></td>"
        f"<td><code>{_e(' '.join(json.loads(r.run['launcher_args'] or '[]')))}</code></td></tr>"
        for r in results
        if r.status != "skipped"
    )
    return (
        "<section id='environment'><h2>Environment</h2><h3>Sessions</h3><table><tr>"
        "<th>session</th><th>started</th><th>finished</th><th>host</th><th>CPU</th>"
        "<th>cores</th><th>memory (GiB)</th><th>kernel</th><th>git commit</th><th>dirty</th>"
        f"<th>load at start</th><th>esmperf</th></tr>{session_rows}</table>"
        f"<h3>MPI libraries</h3><table><tr><th>stack</th><th>library</th></tr>{library_rows}"
        "</table><details><summary>MPI variables and launcher options of every run</summary>"
        "<table><tr><th>configuration</th><th>variables</th><th>launcher options</th></tr>"
        f"{run_rows}</table></details></section>"
    )


def _env_text(knob_env: str | None) -> str:
    values = json.loads(knob_env or "{}")
    return " ".join(f"{key}={value}" for key, value in values.items())


def _method_html(info: dict[str, Any]) -> str:
    return (
        "<section id='method'><h2>Method</h2><ul>"
        "<li>Each configuration: warm-up runs (not counted), then repetitions until the "
        "confidence interval of the median is narrower than the target, or the maximum count "
        "(Hoefler &amp; Belli, SC15).</li>"
        "<li>Median and its CI from order statistics (no normality assumed); the table gives "
        "the confidence each interval really has (below the target with few repetitions).</li>"
        "<li>Gains: Hodges-Lehmann estimate of the ratio between two configurations that differ "
        "in one setting, with its distribution-free CI; significant when the two-sided "
        "Mann-Whitney test gives p &lt; 0.05.</li>"
        "<li>Efficiency: performance per rank relative to the base rank count (JUROPA "
        "definition); jobs/day = 86400 s / the run's timed wall time.</li>"
        "<li>Profiles come from a separate profiled run per configuration (the profiler's "
        "overhead stays out of the timings). Their figures and findings are those of the "
        "workload's timed loop (the region 'timed', docs/profiler.md) when the profile has it: "
        "the model's own calls, not the timing barriers, STREAM or set-up around them; the "
        "timeline and the peer matrix are of the whole run.</li></ul>"
        f"<details><summary>The study file ({_e(info.get('source'))})</summary>"
        f"<pre>{_e(info.get('text'))}</pre></details></section>"
    )
