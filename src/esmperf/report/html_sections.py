"""The report page's sections as HTML: the ranked findings, one section per workload and size
(its figures and results table), failures with their output, skipped configurations, the
environment and the method. The page around them is html.py."""

import base64
import html
import json
from typing import Any

from esmperf.report import figures as fig
from esmperf.report.analysis import Group
from esmperf.report.efficiency_table import efficiency_html
from esmperf.report.findings import Finding
from esmperf.report.group_figures import slug
from esmperf.report.significance import ranked
from esmperf.store.results import (
    RunResult,
    killed_after_result,
    killed_after_result_text,
    simulator_cost_text,
)


def esc(value: Any) -> str:
    """The value as HTML text (None as nothing)."""
    return html.escape("" if value is None else str(value))


def _number(value: float | None, digits: int = 4) -> str:
    return "" if value is None else f"{value:.{digits}g}"


TOPICS = (
    ("seed", "The seed's claims"),
    ("scaling", "Scaling"),
    ("knob", "Knobs"),
    ("library", "MPI libraries"),
    ("profile", "Communication profile"),
    ("quality", "Measurement quality"),
)


def findings_html(found: list[Finding]) -> str:
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
            f"<li><span class='topic'>{esc(_topic_heading(f.topic))}:</span> {esc(f.text)}</li>"
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
                    + "".join(f"<li>{esc(text)}</li>" for text in texts)
                    + "</ul>"
                )
        items.append(
            f"<details class='more-findings'><summary>{len(rest)} more finding"
            f"{'s' if len(rest) > 1 else ''}</summary>" + "".join(folded) + "</details>"
        )
    return "<section id='findings'><h2>Findings</h2>" + "".join(items) + "</section>"


def _topic_heading(topic: str) -> str:
    return dict(TOPICS).get(topic, topic)


def figure_html(figure: fig.Figure) -> str:
    data = base64.b64encode(figure.svg).decode("ascii")
    return (
        f"<figure id='fig-{esc(figure.id)}'><img class='figure-image' "
        f"data-kind='{esc(figure.kind)}' alt='{esc(figure.title)}' "
        f"src='data:image/svg+xml;base64,{data}'>"
        f"<figcaption><b>{esc(figure.title)}.</b> {esc(figure.caption)} "
        f"<a href='figures/{esc(figure.id)}.svg'>SVG</a> · "
        f"<a href='figures/{esc(figure.id)}.png'>PNG</a></figcaption></figure>"
    )


def group_html(group: Group, figures: list[fig.Figure]) -> str:
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
                    f"<td>{esc(result.series_label)}</td>",
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
                    f"<td class='{status_class}'>{esc(result.status)}</td>",
                    f"<td class='small'>{esc(_note(result))}</td>",
                ]
            )
            + "</tr>"
        )
    unit = esc(group.unit)
    header = (
        "<tr><th>configuration</th><th>ranks</th><th>n</th>"
        f"<th>median ({unit})</th><th>CI of the median</th><th>min</th><th>spread</th>"
        "<th>jobs/day</th><th>max load / busy cores before</th><th>oversubscribed / simulated</th><th>status</th>"
        "<th>note</th></tr>"
    )
    direction = "higher is better" if group.higher_is_better else "lower is better"
    return (
        f"<section id='{slug(group.title)}'><h2>{esc(group.title)}</h2>"
        f"<p class='small'>Figure of merit: {unit} ({direction}).</p>"
        f"<div class='figures'>{''.join(figure_html(f) for f in figures)}</div>"
        f"<h3>Results</h3><table>{header}{''.join(rows)}</table>"
        f"{efficiency_html(group)}</section>"
    )


def _simulator_cost(result: RunResult) -> str:
    """ "simulation: 41 s, 1.2 GB; 1,234 messages, 0.0123 s simulated, 4.5 s CPU, 36.5 us CPU
    per message": what simulating the run cost here, per message of the simulated program."""
    cost = result.simulator_cost
    if cost is None:
        return ""
    seconds, rss = cost
    memory = f", {rss / 1e9:.3g} GB" if rss else ""
    per_message = simulator_cost_text(result.repetitions)
    per_message = f"; {esc(per_message)}" if per_message else ""
    return f"<br><span class='small'>simulation: {seconds:.3g} s{memory}{per_message}</span>"


def _note(result: RunResult) -> str:
    """The results table's note: why the configuration stopped, and any repetitions killed
    after their result."""
    notes = (result.run["reason"], killed_after_result_text(result.repetitions))
    return "; ".join(note for note in notes if note)


def failures_html(results: list[RunResult]) -> str:
    failed = [r for r in results if r.status in ("failed", "timeout")]
    bad_reps = [(r, rep) for r in results for rep in r.repetitions if rep["status"] != "ok"]
    killed = _killed_after_result_html(results)
    if not failed and not bad_reps:
        return f"<section id='failures'><h2>Failures</h2><p>No run failed.</p>{killed}</section>"
    items = []
    for result, rep in bad_reps:
        items.append(
            f"<details><summary><span class='bad'>{esc(rep['status'])}</span> "
            f"{esc(result.label)}, repetition {rep['rep']} ({esc(rep['kind'])}), exit code "
            f"{esc(rep['exit_code'])}, after {rep['elapsed']:.1f} s</summary>"
            f"<p class='small'>command: <code>{esc(' '.join(json.loads(result.run['argv'] or '[]')))}"
            f"</code></p><h4>stderr</h4><pre>{esc(rep['stderr'])}</pre>"
            f"<h4>stdout</h4><pre>{esc(rep['stdout'])}</pre></details>"
        )
    summary = "".join(
        f"<li>{esc(r.label)}: <span class='bad'>{esc(r.status)}</span> — {esc(r.run['reason'])}</li>"
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
                f"<li>{esc(result.label)}: {esc(text)} (repetitions {reps}: {esc(notes)})</li>"
            )
    if not items:
        return ""
    return (
        "<h3>Killed after their result (counted)</h3><p class='small'>These repetitions "
        "printed their complete result line, verified, and then did not exit (MPICH 4 over "
        "TCP sometimes hangs in MPI_Finalize): the runner killed them and kept their "
        f"figures.</p><ul>{''.join(items)}</ul>"
    )


def skipped_html(results: list[RunResult]) -> str:
    skipped = [r for r in results if r.status == "skipped"]
    if not skipped:
        return ""
    rows = "".join(
        f"<tr><td>{esc(r.label)}</td><td>{esc(r.run['reason'])}</td></tr>" for r in skipped
    )
    return (
        "<section id='skipped'><h2>Skipped configurations</h2><p>Not run, and why "
        f"(never run with a setting silently ignored).</p><table><tr><th>configuration</th>"
        f"<th>reason</th></tr>{rows}</table></section>"
    )


def environment_html(sessions: list[dict[str, Any]], results: list[RunResult]) -> str:
    session_rows = "".join(
        "<tr>"
        + "".join(
            f"<td>{esc(s.get(key))}</td>"
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
        f"<tr><td>{esc(stack)}</td><td>{esc(lib)}</td></tr>" for stack, lib in libraries
    )
    run_rows = "".join(
        f"<tr><td>{esc(r.label)}</td><td><code>{esc(_env_text(r.run['knob_env']))}</code></td>"
        f"<td><code>{esc(' '.join(json.loads(r.run['launcher_args'] or '[]')))}</code></td></tr>"
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


def method_html(info: dict[str, Any]) -> str:
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
        f"<details><summary>The study file ({esc(info.get('source'))})</summary>"
        f"<pre>{esc(info.get('text'))}</pre></details></section>"
    )
