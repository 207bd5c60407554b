"""`esmperf report`: one self-contained HTML page (works offline: CSS, script and figures are
inside it) plus every figure as SVG and PNG files, mirroring the seeds' slides: performance vs
ranks per configuration, scaling efficiency, knob gains, MPI library comparison, then the profile
figures (MPI/user time, % calls and % time by function, message sizes, data per rank,
aggregated transfer, MPI and I/O over time, peer-to-peer matrix), written findings, the results
table with every CI, failures with their output, and the environment.

This module is the page: writing it and its figures, its skeleton, style and script. Which
figures a workload gets is group_figures.py; the sections' HTML is html_sections.py."""

import datetime
from pathlib import Path
from typing import Any

from esmperf.environment import usable_cores
from esmperf.errors import EsmperfError
from esmperf.report import figures as fig
from esmperf.report.analysis import Group, build_groups
from esmperf.report.findings import Finding, all_findings
from esmperf.report.group_figures import group_figures, slug
from esmperf.report.html_sections import (
    environment_html,
    esc,
    failures_html,
    figure_html,
    findings_html,
    group_html,
    method_html,
    skipped_html,
)
from esmperf.report.scaling_models import scaling_models_html
from esmperf.report.seed_report import claims_section
from esmperf.store.database import Store, results_dir
from esmperf.store.results import RunResult, load_results


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
        claims = claims_section(store, info, results, groups, figure_html)
        models = scaling_models_html(store)
    cores = _cores(results, sessions)
    figures: list[fig.Figure] = []
    for group in groups:
        figures += group_figures(group, cores)
    found = claims.findings + all_findings(groups, results, cores)
    page = render_page(
        info, results, groups, figures, found, sessions, cores, store_path, claims.html, models
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
.alarm{margin:1em 0;padding:.6em .9em;border:2px solid #b00020;background:#fff0f0;color:#6b0012;font-weight:600}
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
    models_html: str = "",
) -> str:
    title = info.get("title") or info.get("name")
    counts = {
        status: sum(1 for r in results if r.status == status)
        for status in ("complete", "failed", "timeout", "skipped", "pending")
    }
    generated = datetime.datetime.now().replace(microsecond=0).isoformat(sep=" ")
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{esc(title)} — esmperf report</title>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<style>{STYLE}</style><script>{SCRIPT}</script></head><body>",
        f"<header><h1>{esc(title)}</h1>",
        f"<p>{esc(info.get('description'))}</p>" if info.get("description") else "",
        f"<p class='small'>Reproduces: {esc(info.get('seed'))}</p>" if info.get("seed") else "",
        f"<p class='small'>Study <b>{esc(info.get('name'))}</b> · store {esc(store_path)} · "
        f"report generated {generated}</p>",
        "<nav><a href='#findings'>Findings</a>"
        + ("<a href='#seed-claims'>The seed's claims</a>" if claims_html else "")
        + ("<a href='#scaling-models'>Scaling models</a>" if models_html else ""),
        *(f"<a href='#{slug(g.title)}'>{esc(g.title)}</a>" for g in groups),
        "<a href='#failures'>Failures</a><a href='#environment'>Environment</a>"
        "<a href='#method'>Method</a></nav></header><main>",
        *(f"<p class='alarm'>{esc(f.text)}</p>" for f in found if f.alarm),
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
        findings_html(found),
        claims_html,
        models_html,
    ]
    for group in groups:
        prefix = slug(group.title)
        mine = [f for f in figures if f.id.startswith(prefix + "-")]
        parts.append(group_html(group, mine))
    parts += [
        failures_html(results),
        skipped_html(results),
        environment_html(sessions, results),
        method_html(info),
        "</main></body></html>",
    ]
    return "\n".join(part for part in parts if part)
