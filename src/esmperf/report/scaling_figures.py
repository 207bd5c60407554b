"""Curves against ranks or nodes (figures.py's style): performance with the ideal line and the
CI of the median as error bars, scaling efficiency against 100 %, and any other quantity over
rank counts (the aggregated transfer)."""

from collections.abc import Sequence

import matplotlib.pyplot as plt

from esmperf.report import figures as fig


def scaling_figure(
    figure_id: str,
    title: str,
    series: Sequence[fig.Series],
    unit: str,
    higher_is_better: bool,
    cores: int,
    ideal: fig.Series | None,
    x_label: str = "MPI ranks",
    caption: str = "",
) -> fig.Figure:
    """Performance vs ranks: medians with CI error bars, the ideal line, oversubscription."""
    figure, axes = plt.subplots(figsize=(6.4, 3.8))
    xs = [p.x for s in series for p in s.points]
    fig.rank_axis(axes, xs, x_label)
    for index, line in enumerate(series):
        color = fig.COLORS[index % len(fig.COLORS)]
        points = sorted(line.points, key=lambda p: p.x)
        axes.plot(
            [p.x for p in points], [p.median for p in points], color=color, lw=1.5, label=line.label
        )
        for p in points:
            axes.errorbar(
                [p.x],
                [p.median],
                yerr=[[p.median - p.low], [p.high - p.median]],
                fmt="o",
                color=color,
                ms=5,
                capsize=3,
                lw=1,
                mfc="white" if p.oversubscribed else color,
            )
    if ideal and ideal.points:
        points = sorted(ideal.points, key=lambda p: p.x)
        axes.plot(
            [p.x for p in points],
            [p.median for p in points],
            ls="--",
            color="#777777",
            lw=1,
            label="ideal (linear) scaling",
        )
    fig.shade_oversubscribed(
        axes, [p.x for s in series for p in s.points if p.oversubscribed], cores
    )
    axes.set_ylabel(f"{unit}\n({fig.direction(higher_is_better)})")
    axes.set_title(title)
    axes.legend(loc="best")
    axes.set_ylim(bottom=0)
    return fig.finish(figure, figure_id, "performance", title, caption)


def efficiency_figure(
    figure_id: str,
    title: str,
    series: Sequence[fig.Series],
    base: int,
    cores: int,
    caption: str = "",
    x_label: str = "MPI ranks",
) -> fig.Figure:
    """Scaling efficiency (%) against the base rank count (stats.scaling_efficiency); 100 % is
    ideal."""
    figure, axes = plt.subplots(figsize=(6.4, 3.4))
    xs = [p.x for s in series for p in s.points]
    fig.rank_axis(axes, xs, x_label)
    axes.axhline(100, ls="--", color="#777777", lw=1, label="ideal (100 %)")
    for index, line in enumerate(series):
        color = fig.COLORS[index % len(fig.COLORS)]
        points = sorted(line.points, key=lambda p: p.x)
        axes.plot(
            [p.x for p in points], [p.median for p in points], color=color, lw=1.5, label=line.label
        )
        for p in points:
            axes.plot(
                [p.x],
                [p.median],
                "o",
                color=color,
                ms=5,
                mfc="white" if p.oversubscribed else color,
            )
    fig.shade_oversubscribed(
        axes, [p.x for s in series for p in s.points if p.oversubscribed], cores
    )
    axes.set_ylabel(
        f"scaling efficiency vs {base} rank{'s' if base > 1 else ''} (%)\n(higher is better)"
    )
    axes.set_title(title)
    axes.set_ylim(bottom=0)
    axes.legend(loc="best")
    return fig.finish(figure, figure_id, "efficiency", title, caption)


def line_figure(
    figure_id: str,
    kind: str,
    title: str,
    series: Sequence[fig.Series],
    y_label: str,
    cores: int,
    caption: str = "",
    x_label: str = "MPI ranks",
) -> fig.Figure:
    """Plain lines vs ranks (e.g. aggregated transfer), oversubscribed points hollow."""
    figure, axes = plt.subplots(figsize=(6.4, 3.4))
    xs = [p.x for s in series for p in s.points]
    fig.rank_axis(axes, xs, x_label)
    for index, line in enumerate(series):
        color = fig.COLORS[index % len(fig.COLORS)]
        points = sorted(line.points, key=lambda p: p.x)
        axes.plot(
            [p.x for p in points], [p.median for p in points], "-", color=color, label=line.label
        )
        for p in points:
            axes.plot(
                [p.x], [p.median], "o", color=color, mfc="white" if p.oversubscribed else color
            )
    fig.shade_oversubscribed(
        axes, [p.x for s in series for p in s.points if p.oversubscribed], cores
    )
    axes.set_ylabel(y_label)
    axes.set_title(title)
    axes.set_ylim(bottom=0)
    axes.legend(loc="best")
    return fig.finish(figure, figure_id, kind, title, caption)
