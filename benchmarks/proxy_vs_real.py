"""A proxy held to the real code: profile both on the same deck and ranks, print them side by side.

    .venv/bin/python benchmarks/proxy_vs_real.py \\
        --real  "mpirun.openmpi -n 4 /path/to/pflotran -pflotranin calcite.in" --real-cwd DECK_DIR \\
        --proxy "mpirun.openmpi -n 4 build/openmpi/apps/pflotran/pflotran --steps 50 --petsc sf"

Each command is run once under `esmperf profile` (the project's PMPI profiler: counts, bytes and
sizes are exact, times are this machine's). Its own output gives its work: time steps, Newton
(nonlinear) iterations and linear (Krylov) iterations, each the sum of group 1 of every match of
a regex (no group: the number of matches). The defaults read PFLOTRAN's end-of-run summary for the
real code (`TRAN TS SNES steps = 50  newton = 303  linear = 4000  cuts = 0`, printed by
timestepper_SNES.F90's TimestepperSNESFinalizeRun: its counts include the iterations of cut
steps) and an esmperf workload's result line for the proxy (`"steps"`, `"newton": {"iterations",
"linear_iterations"}`); give `--real-steps/--real-newton/--real-linear` and
`--proxy-steps/...` for other codes. `--region NAME` restricts the profile of a code that marks
that region (the proxies mark their time steps `timed`) and uses the whole run of one that does
not; the table says which. Messages sent are the profile's per-peer counts for a whole run; in a
region, half its point-to-point histogram entries (each message is counted at its send and at
its receive, which summed over the ranks are equal) with one entry per collective call taken
off (persistent collectives, counted at MPI_Start, are not told apart).

Printed, per code (means per rank; "message" = point-to-point message sent):
  per linear iteration: MPI_Allreduce, messages, compute (wall time outside MPI) in ms;
  per Newton iteration: MPI_Allreduce, linear iterations, compute in ms;
  per time step: Newton iterations, MPI_Allreduce, messages, bytes sent;
  MPI time as a share of wall time; the MPI call shares (the most frequent calls of either);
  message sizes as the profiler's histograms count them (every point-to-point send and receive,
  every collective call at its larger side): the share under 4 KiB and the modal size buckets.
Nothing here knows PFLOTRAN beyond the default regexes: any real code and its proxy will do.
"""

import argparse
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from esmperf.errors import EsmperfError  # noqa: E402
from esmperf.profile.read import read_profile  # noqa: E402

ESMPERF = Path(sys.executable).parent / "esmperf"

# Work regexes: group 1 of every match summed (no group: matches counted).
PFLOTRAN_WORK = {
    "steps": r"TRAN TS SNES steps = (\d+)",
    "newton": r"TRAN TS SNES steps = \d+\s+newton = (\d+)",
    "linear": r"TRAN TS SNES steps = \d+\s+newton = \d+\s+linear = (\d+)",
}
ESMPERF_WORK = {
    "steps": r'^\{"workload".*?"steps": (\d+)',
    "newton": r'"newton": \{"iterations": (\d+)',
    "linear": r'"newton": \{[^}]*"linear_iterations": (\d+)',
}
UNDER_4_KIB = 12  # histogram bucket k holds [2^(k-1), 2^k) bytes: 4095 B is bucket 12
TOP_CALLS = 6


POINT_TO_POINT_SENDS = {
    "MPI_Send", "MPI_Isend", "MPI_Ssend", "MPI_Issend", "MPI_Bsend", "MPI_Ibsend", "MPI_Rsend",
    "MPI_Irsend", "MPI_Sendrecv", "MPI_Sendrecv_replace", "MPI_Start", "MPI_Startall",
}  # fmt: skip


COLLECTIVES = {
    "Barrier", "Bcast", "Reduce", "Allreduce", "Gather", "Gatherv", "Scatter", "Scatterv",
    "Allgather", "Allgatherv", "Alltoall", "Alltoallv", "Alltoallw", "Reduce_scatter",
    "Reduce_scatter_block", "Scan", "Exscan",
}  # fmt: skip


class ProxyVsRealError(EsmperfError):
    """A run failed or its output lacks what a regex asks for."""


@dataclass
class Side:
    """One code's run: its work from its output, its MPI from its profile (means per rank)."""

    name: str
    ranks: int
    scope: str  # "whole run" or "region NAME"
    steps: float
    newton: float
    linear: float
    wall: float  # s, mean per rank
    mpi_time: float
    calls: dict[str, float] = field(default_factory=dict)  # per rank
    messages: float = 0.0  # point-to-point sends per rank
    bytes_sent: float = 0.0
    sizes: dict[int, int] = field(default_factory=dict)  # bucket -> messages, all ranks


def work_from_output(text: str, regex: str, option: str) -> float:
    """The sum of group 1 over every match of `regex` (or the number of matches); `option`
    names the command-line option that sets the regex, for the error."""
    pattern = re.compile(regex, re.MULTILINE)
    matches = list(pattern.finditer(text))
    if not matches:
        raise ProxyVsRealError(
            f"no match for {option} {regex!r} in the output: give {option} a regex that "
            "matches the code's own count"
        )
    if pattern.groups == 0:
        return float(len(matches))
    return float(sum(float(m.group(1)) for m in matches))


def side_from_profile(
    who: str, name: str, profile, output: str, work: dict[str, str], region: str
) -> Side:
    """Means per rank of the profile (or of its region `region`, where the code marks it);
    `who` is "real" or "proxy", `work` the regexes of its steps, newton and linear."""
    ranks = len(profile.ranks)
    marked = region and all(
        any(r["path"] == [region] for r in rank["regions"]) for rank in profile.ranks
    )
    side = Side(
        name=name,
        ranks=ranks,
        scope=f"region {region}" if marked else "whole run",
        steps=work_from_output(output, work["steps"], f"--{who}-steps"),
        newton=work_from_output(output, work["newton"], f"--{who}-newton"),
        linear=work_from_output(output, work["linear"], f"--{who}-linear"),
        wall=0.0,
        mpi_time=0.0,
    )
    for rank in profile.ranks:
        scope = next(r for r in rank["regions"] if r["path"] == [region]) if marked else None
        side.wall += (scope or rank)["wall"] / ranks
        side.mpi_time += (scope or rank)["mpi_time"] / ranks
        if scope:
            functions = {n: (v[0], v[2]) for n, v in scope["functions"].items()}  # calls, sent
            histogram = scope["hist"]
        else:
            functions = {n: (v["calls"], v["sent"]) for n, v in rank["calls"].items()}
            histogram = [entry for v in rank["calls"].values() for entry in v.get("hist", [])]
        for function, (count, _bytes) in functions.items():
            side.calls[function] = side.calls.get(function, 0.0) + count / ranks
        for bucket, count in histogram:
            side.sizes[bucket] = side.sizes.get(bucket, 0) + count
        if scope:  # a region counts bytes per function and messages only in its histogram
            sent = sum(v[1] for n, v in functions.items() if n in POINT_TO_POINT_SENDS)
            collective_calls = sum(v[0] for n, v in functions.items() if is_collective(n))
            point_to_point = sum(count for _bucket, count in histogram) - collective_calls
            side.bytes_sent += sent / ranks
            side.messages += point_to_point / 2 / ranks  # each message: a send and a receive
        else:
            peers = rank["peers"].get("sent", {}).values()
            side.messages += sum(messages for _bytes, messages in peers) / ranks
            side.bytes_sent += sum(sent_bytes for sent_bytes, _messages in peers) / ranks
    return side


def is_collective(function: str) -> bool:
    """A blocking or non-blocking collective: one histogram entry per call (its larger side)."""
    name = function.removeprefix("MPI_").removesuffix("_c")
    return name in COLLECTIVES or (name.startswith("I") and name[1:] in COLLECTIVES)


def profile_command(command: list[str], cwd: Path | None) -> tuple[object, str]:
    """(profile, stdout + stderr) of `command` run under esmperf profile."""
    with tempfile.TemporaryDirectory() as directory:
        out = Path(directory) / "profile.jsonl"
        done = subprocess.run(
            [str(ESMPERF), "profile", "--out", str(out), "--", *command],
            capture_output=True,
            text=True,
            cwd=cwd or directory,
        )
        if done.returncode != 0:
            raise ProxyVsRealError(
                f"{shlex.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}"
            )
        return read_profile(out), done.stdout + done.stderr


def per(value: float, unit: float) -> float:
    return value / unit if unit else float("nan")


def size_label(bucket: int) -> str:
    """A histogram bucket as a byte range: [2^(k-1), 2^k)."""
    if bucket == 0:
        return "0 B"
    low = 1 << (bucket - 1)
    return f"{human(low)}-{human(2 * low)}"


def human(size: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size // scale} {unit}"
    return f"{size} B"


def rows(sides: list[Side]) -> list[tuple[str, list[str]]]:
    """The table's rows: a label and one cell per side."""

    def row(label: str, value, digits: int = 2) -> tuple[str, list[str]]:
        return label, [f"{value(s):.{digits}f}" for s in sides]

    table = [
        ("ranks", [str(s.ranks) for s in sides]),
        ("profiled", [s.scope for s in sides]),
        row("time steps", lambda s: s.steps, 0),
        row("Newton iterations", lambda s: s.newton, 0),
        row("linear iterations", lambda s: s.linear, 0),
        row("Newton iterations per step", lambda s: per(s.newton, s.steps)),
        row("linear iterations per Newton", lambda s: per(s.linear, s.newton)),
        row("MPI_Allreduce per linear iteration per rank",
            lambda s: per(s.calls.get("MPI_Allreduce", 0), s.linear)),
        row("messages per linear iteration per rank", lambda s: per(s.messages, s.linear)),
        row("MPI_Allreduce per Newton iteration per rank",
            lambda s: per(s.calls.get("MPI_Allreduce", 0), s.newton)),
        row("messages per step per rank", lambda s: per(s.messages, s.steps)),
        row("bytes sent per step per rank", lambda s: per(s.bytes_sent, s.steps), 0),
        row("MPI_Allreduce per step per rank",
            lambda s: per(s.calls.get("MPI_Allreduce", 0), s.steps)),
        row("compute per linear iteration, ms",
            lambda s: 1e3 * per(s.wall - s.mpi_time, s.linear), 3),
        row("compute per Newton iteration, ms",
            lambda s: 1e3 * per(s.wall - s.mpi_time, s.newton), 3),
        row("MPI time, % of wall", lambda s: 100 * per(s.mpi_time, s.wall), 1),
    ]  # fmt: skip
    top: list[str] = []
    for s in sides:
        for name in sorted(s.calls, key=s.calls.get, reverse=True)[:TOP_CALLS]:
            if name not in top:
                top.append(name)
    for name in top:
        table.append(row(f"{name}, % of calls",
                         lambda s, n=name: 100 * per(s.calls.get(n, 0), sum(s.calls.values())), 1))  # fmt: skip
    table.append(row("messages under 4 KiB, %",
                     lambda s: 100 * per(sum(c for b, c in s.sizes.items() if b <= UNDER_4_KIB),
                                         sum(s.sizes.values())), 1))  # fmt: skip
    table.append(("modal message sizes", [modal_sizes(s) for s in sides]))
    return table


def modal_sizes(side: Side, count: int = 3) -> str:
    total = sum(side.sizes.values())
    ranked = sorted(side.sizes, key=side.sizes.get, reverse=True)[:count]
    return ", ".join(f"{size_label(b)} {100 * side.sizes[b] / total:.0f} %" for b in ranked)


def markdown(sides: list[Side]) -> str:
    lines = ["| | " + " | ".join(s.name for s in sides) + " |"]
    lines.append("|---" * (len(sides) + 1) + "|")
    lines += [f"| {label} | " + " | ".join(cells) + " |" for label, cells in rows(sides)]
    return "\n".join(lines)


def work_arguments(parser: argparse.ArgumentParser, who: str, defaults: dict[str, str]) -> None:
    for what, regex in defaults.items():
        parser.add_argument(f"--{who}-{what}", default=regex,
                            help=f"regex for the {who} code's {what} (default {regex!r})")  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--real", required=True, help="the real code's command (with its launcher)")
    parser.add_argument("--proxy", required=True, help="the proxy's command, same deck and ranks")
    parser.add_argument("--real-name", default="real")
    parser.add_argument("--proxy-name", default="proxy")
    parser.add_argument("--real-cwd", type=Path, help="directory to run the real code in")
    parser.add_argument("--proxy-cwd", type=Path, help="directory to run the proxy in")
    parser.add_argument("--region", default="", help="profile region to restrict to (e.g. timed)")
    work_arguments(parser, "real", PFLOTRAN_WORK)
    work_arguments(parser, "proxy", ESMPERF_WORK)
    args = parser.parse_args(argv)
    sides = []
    for who in ("real", "proxy"):
        command = shlex.split(getattr(args, who))
        try:
            profile, output = profile_command(command, getattr(args, f"{who}_cwd"))
            work = {what: getattr(args, f"{who}_{what}") for what in PFLOTRAN_WORK}
            name = getattr(args, f"{who}_name")
            sides.append(side_from_profile(who, name, profile, output, work, args.region))
        except ProxyVsRealError as error:
            raise SystemExit(f"proxy_vs_real: {who}: {error}") from None
    if sides[0].ranks != sides[1].ranks:
        print(f"note: {sides[0].ranks} ranks against {sides[1].ranks}: per-rank figures differ")
    print(markdown(sides))


if __name__ == "__main__":
    main()
