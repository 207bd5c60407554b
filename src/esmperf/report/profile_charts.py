"""The profile's charts (figures.py's style): MPI against user time as stacked shares, a value
per rank, MPI and I/O over time, and the peer-to-peer traffic matrix."""

from collections.abc import Sequence

import matplotlib.pyplot as plt

from esmperf.report import figures as fig


def stacked_share_figure(
    figure_id: str,
    title: str,
    groups: Sequence[str],
    shares: dict[str, Sequence[float]],
    y_label: str,
    caption: str = "",
) -> fig.Figure:
    """Stacked 100 % bars, e.g. MPI vs user (compute) time per rank count."""
    figure, axes = plt.subplots(figsize=(6.4, 3.4))
    bottom = [0.0] * len(groups)
    for index, (name, values) in enumerate(shares.items()):
        axes.bar(
            range(len(groups)),
            values,
            bottom=bottom,
            color=fig.COLORS[index % len(fig.COLORS)],
            label=name,
            width=0.6,
        )
        for position, (value, start) in enumerate(zip(values, bottom)):
            if value >= 6:
                axes.text(
                    position,
                    start + value / 2,
                    f"{value:.0f}%",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white",
                )
        bottom = [b + v for b, v in zip(bottom, values)]
    axes.set_xticks(range(len(groups)))
    axes.set_xticklabels(groups)
    axes.set_ylim(0, 100)
    axes.set_ylabel(y_label)
    axes.set_title(title)
    axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig.finish(figure, figure_id, "mpi_user", title, caption)


def per_rank_figure(
    figure_id: str, title: str, panels: dict[str, Sequence[float]], y_label: str, caption: str = ""
) -> fig.Figure:
    """Small multiples: one bar per rank, one panel per rank count (data per rank)."""
    count = max(1, len(panels))
    figure, axes_list = plt.subplots(
        1, count, figsize=(min(max(6.4, 3.2 * count), 12.8), 3.4), squeeze=False, sharey=True
    )
    for axes, (name, values) in zip(axes_list[0], panels.items()):
        axes.bar(range(len(values)), values, color=fig.COLORS[0])
        axes.set_title(name, fontsize=9)
        axes.set_xlabel("rank")
        if len(values) <= 16:
            axes.set_xticks(range(len(values)))
    axes_list[0][0].set_ylabel(y_label)
    figure.suptitle(title, fontsize=10)
    return fig.finish(figure, figure_id, "data_per_rank", title, caption)


def timeline_figure(
    figure_id: str,
    title: str,
    starts: Sequence[float],
    mpi_percent: Sequence[float],
    io_write: Sequence[float],
    io_read: Sequence[float],
    width: float,
    end: float,
    caption: str = "",
) -> fig.Figure:
    """MPI time share and I/O volume over the run's time bins of `width` seconds; the run
    ended at `end` (the last rank's MPI_Finalize)."""
    figure, axes = plt.subplots(figsize=(6.4, 3.4))
    # each bin's share held to the bin's end, the last to the run's (a step needs its last
    # edge: one bin is a line)
    last_edge = max(starts[-1], min(starts[-1] + width, end))
    axes.step(
        [*starts, last_edge],
        [*mpi_percent, mpi_percent[-1]],
        where="post",
        color=fig.COLORS[0],
        label="time in MPI (%)",
    )
    axes.set_ylabel("time in MPI (% of rank time)")
    axes.set_xlabel("seconds since MPI_Init")
    axes.set_ylim(0, 100)
    axes.set_xlim(0, last_edge * 1.02)
    twin = axes.twinx()
    spans = [max(min(width, end - s), width / 100) for s in starts]  # the run's part of a bin
    twin.bar(
        [s + 0.3 * w for s, w in zip(starts, spans)],
        [w / 2**20 for w in io_write],
        width=[0.4 * w for w in spans],
        color=fig.COLORS[1],
        alpha=0.7,
        label="written (MiB)",
    )
    twin.bar(
        [s + 0.7 * w for s, w in zip(starts, spans)],
        [r / 2**20 for r in io_read],
        width=[0.4 * w for w in spans],
        color=fig.COLORS[2],
        alpha=0.7,
        label="read (MiB)",
    )
    twin.set_ylabel("I/O per bin (MiB)")
    twin.set_ylim(0, 1.15 * max([*io_write, *io_read, 0.0]) / 2**20 or 1.0)  # no negative MiB
    twin.grid(False)
    lines, labels = axes.get_legend_handles_labels()
    more_lines, more_labels = twin.get_legend_handles_labels()
    axes.legend(lines + more_lines, labels + more_labels, loc="upper right")
    axes.set_title(title)
    return fig.finish(figure, figure_id, "timeline", title, caption)


def matrix_figure(
    figure_id: str, title: str, matrix: Sequence[Sequence[float]], caption: str = ""
) -> fig.Figure:
    """Peer-to-peer bytes: row = sender, column = receiver. The colour scale starts at zero,
    so a pair that exchanged nothing reads 0, never the smallest traffic of the others."""
    size = len(matrix)
    figure, axes = plt.subplots(figsize=(4.8, 4.0))
    mebibytes = [[value / 2**20 for value in row] for row in matrix]
    image = axes.imshow(
        mebibytes,
        cmap="Blues",
        origin="upper",
        interpolation="nearest",
        vmin=0.0,
        vmax=max((max(row, default=0.0) for row in mebibytes), default=0.0) or 1.0,
    )
    axes.set_xlabel("receiving rank")
    axes.set_ylabel("sending rank")
    axes.grid(False)
    if size <= 16:
        axes.set_xticks(range(size))
        axes.set_yticks(range(size))
    colorbar = figure.colorbar(image, ax=axes)
    colorbar.set_label("MiB sent")
    axes.set_title(title)
    return fig.finish(figure, figure_id, "peers", title, caption)
