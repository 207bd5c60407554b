"""The report's figures, drawn with matplotlib from plain numbers, in the style of the HPC
Advisory Council decks: every performance axis says "higher is better" or "lower is better",
scaling plots draw the ideal line, repeats show as error bars (the CI of the median), and points
with more ranks than cores are drawn hollow in a shaded "oversubscribed" region.

This module is what every figure shares (the style, the data a figure is drawn from, finishing
it as SVG and PNG, the rank axis and the oversubscribed region) and the bar charts, including
the seeds' claims; curves against ranks are scaling_figures.py, the profile's charts
profile_charts.py."""

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure as MplFigure  # noqa: E402

COLORS = (
    "#1f5fa8",
    "#d1495b",
    "#2a9d8f",
    "#edae49",
    "#6a4c93",
    "#00798c",
    "#8d6a9f",
    "#3d405b",
    "#f28482",
    "#84a59d",
)
OTHER = "other"
plt.rcParams.update(
    {
        "font.size": 9,
        "axes.titlesize": 10,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "svg.fonttype": "none",
        "figure.dpi": 100,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "legend.fontsize": 8,
        "legend.frameon": False,
    }
)


@dataclass
class Figure:
    """A finished figure: SVG and PNG bytes, with its title and what it shows."""

    id: str
    kind: str  # performance, efficiency, gains, stacks, mpi_user, mpi_calls, ...
    title: str
    caption: str
    svg: bytes
    png: bytes


@dataclass
class Point:
    x: int
    median: float
    low: float
    high: float
    oversubscribed: bool
    n: int = 0


@dataclass
class Series:
    label: str
    points: list[Point] = field(default_factory=list)


@dataclass
class Bar:
    """One bar of a grouped bar chart: group on the x axis, name in the legend."""

    group: str
    name: str
    value: float
    low: float | None = None
    high: float | None = None
    solid: bool = True  # False: drawn hatched (not significant / oversubscribed)


def direction(higher_is_better: bool) -> str:
    return "higher is better" if higher_is_better else "lower is better"


def finish(figure: MplFigure, figure_id: str, kind: str, title: str, caption: str) -> Figure:
    figure.tight_layout()
    svg, png = io.BytesIO(), io.BytesIO()
    plt.rcParams["svg.hashsalt"] = figure_id  # distinct ids in every SVG
    figure.savefig(svg, format="svg")
    figure.savefig(png, format="png", dpi=110)
    plt.close(figure)
    return Figure(figure_id, kind, title, caption, svg.getvalue(), png.getvalue())


def rank_axis(axes: Axes, xs: Sequence[int], label: str) -> None:
    ticks = sorted(set(xs))
    if len(ticks) > 1 and ticks[0] > 0 and ticks[-1] / ticks[0] >= 4:
        axes.set_xscale("log", base=2)
    axes.set_xticks(ticks)
    axes.set_xticklabels([str(t) for t in ticks])
    axes.minorticks_off()
    axes.set_xlabel(label)


def shade_oversubscribed(axes: Axes, xs: Sequence[int], cores: int) -> None:
    """Shade the oversubscribed region; `xs` are the x of the oversubscribed points (a
    simulated run with more ranks than cores here is not oversubscribed)."""
    over = [x for x in xs if x > cores]
    if not over:
        return
    low = cores * 1.25 if axes.get_xscale() == "log" else cores + 0.5
    axes.axvspan(low, max(over) * 1.5, color="#999999", alpha=0.12, lw=0)
    axes.text(
        0.99,
        0.02,
        f"oversubscribed: ranks > {cores} cores\n(hollow points)",
        transform=axes.transAxes,
        ha="right",
        va="bottom",
        fontsize=7,
        color="#555555",
    )


def bar_figure(
    figure_id: str,
    kind: str,
    title: str,
    bars: Sequence[Bar],
    y_label: str,
    caption: str = "",
    percent_labels: bool = False,
    zero_line: bool = False,
    log_y: bool = False,
) -> Figure:
    """Grouped bars (groups on x, names in the legend), with CI error bars where given;
    hatched bars are not significant (or oversubscribed)."""
    groups = list(dict.fromkeys(bar.group for bar in bars))
    names = list(dict.fromkeys(bar.name for bar in bars))
    width = 0.8 / max(1, len(names))
    figure, axes = plt.subplots(
        figsize=(max(6.4, 0.5 * len(groups) * max(1, len(names)) * 0.35 + 3), 3.8)
    )
    for index, name in enumerate(names):
        color = COLORS[index % len(COLORS)]
        for bar in (b for b in bars if b.name == name):
            x = groups.index(bar.group) - 0.4 + width * (index + 0.5)
            axes.bar(
                [x],
                [bar.value],
                width=width * 0.92,
                color=color if bar.solid else "white",
                edgecolor=color,
                hatch=None if bar.solid else "///",
                lw=1,
                label=name if bar is next(b for b in bars if b.name == name) else None,
            )
            if bar.low is not None and bar.high is not None:
                axes.errorbar(
                    [x],
                    [bar.value],
                    yerr=[[max(0.0, bar.value - bar.low)], [max(0.0, bar.high - bar.value)]],
                    fmt="none",
                    ecolor="#333333",
                    capsize=2,
                    lw=0.8,
                )
            if percent_labels and math.isfinite(bar.value):
                axes.annotate(
                    f"{bar.value:+.0f}%" if zero_line else f"{bar.value:.0f}%",
                    (x, bar.value),
                    ha="center",
                    va="bottom" if bar.value >= 0 else "top",
                    fontsize=7,
                    xytext=(0, 2 if bar.value >= 0 else -2),
                    textcoords="offset points",
                )
    axes.set_xticks(range(len(groups)))
    axes.set_xticklabels(
        groups,
        rotation=0 if max(map(len, groups), default=0) < 12 else 30,
        ha="center" if max(map(len, groups), default=0) < 12 else "right",
    )
    if zero_line:
        axes.axhline(0, color="#333333", lw=0.8)
    if log_y:
        axes.set_yscale("log")
    axes.set_ylabel(y_label)
    axes.set_title(title)
    if len(names) > 1 or names[:1] != [""]:
        # beside the axes: bars reach any corner, and error bars cross the middle
        axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), ncol=1 if len(names) < 6 else 2)
    return finish(figure, figure_id, kind, title, caption)


def claims_figure(
    figure_id: str,
    title: str,
    labels: Sequence[str],
    ratios: Sequence[float],
    tolerances: Sequence[float | None],
    reproduced: Sequence[bool],
    caption: str = "",
) -> Figure:
    """A seed's numeric claims: our figure over the seed's, one marker per claim on a log axis,
    1 (the seed's figure) marked and each claim's tolerance as a band."""
    figure, axes = plt.subplots(figsize=(6.4, max(2.4, 0.28 * len(labels) + 1.2)))
    positions = list(range(len(labels)))[::-1]
    for y, ratio, tolerance, ok in zip(positions, ratios, tolerances, reproduced):
        if tolerance:
            axes.plot(
                [1 / (1 + tolerance), 1 + tolerance],
                [y, y],
                color="#bbbbbb",
                lw=6,
                solid_capstyle="butt",
                zorder=1,
            )
        axes.plot(
            [ratio],
            [y],
            "o",
            color=COLORS[2] if ok else COLORS[1],
            ms=6,
            zorder=2,
            mfc=COLORS[2] if ok else "white",
        )
    axes.axvline(1, color="#333333", lw=0.8)
    axes.set_xscale("log")
    axes.set_yticks(positions)
    axes.set_yticklabels(labels, fontsize=7)
    axes.set_xlabel("ours / the seed's figure (1 = the seed's)")
    axes.set_title(title)
    axes.grid(axis="y", alpha=0)
    return finish(figure, figure_id, "seed_claims", title, caption)


def seed_points_figure(
    figure_id: str,
    title: str,
    ours: dict[str, Sequence[tuple[float, float]]],
    seed: Sequence[tuple[float, float]],
    y_label: str,
    x_label: str,
    caption: str = "",
    log_y: bool = False,
) -> Figure:
    """Our curves with the seed's own numbers beside them (black stars, labelled "seed")."""
    figure, axes = plt.subplots(figsize=(6.4, 3.6))
    xs = [x for points in ours.values() for x, _ in points] + [x for x, _ in seed]
    rank_axis(axes, [int(x) for x in xs], x_label)
    for index, (label, points) in enumerate(ours.items()):
        points = sorted(points)
        axes.plot(
            [x for x, _ in points],
            [y for _, y in points],
            "o-",
            color=COLORS[index % len(COLORS)],
            ms=4,
            lw=1.5,
            label=f"ours: {label}",
        )
    seed = sorted(seed)
    axes.plot(
        [x for x, _ in seed],
        [y for _, y in seed],
        "*",
        color="#111111",
        ms=10,
        label="seed (stated)",
    )
    if log_y:
        axes.set_yscale("log")
    else:
        axes.set_ylim(bottom=0)
    axes.set_ylabel(y_label)
    axes.set_title(title)
    axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return finish(figure, figure_id, "seed_points", title, caption)
