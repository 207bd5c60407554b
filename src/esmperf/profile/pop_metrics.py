"""The POP CoE efficiency metrics of one run, and its receive wait: one definition, used by the
profile summary (`esmperf show`), the store and the report.

POP CoE (Performance Optimisation and Productivity Centre of Excellence) defines, from each
process's *useful computation time* (time outside MPI):

- load balance efficiency   LB = mean(useful) / max(useful)
- communication efficiency  CommE = max(useful) / runtime
- parallel efficiency       PE = LB x CommE = mean(useful) / runtime

(co-design.pop-coe.eu/metrics: load_balance_efficiency, parallel_efficiency). Here a rank's
useful time is its `wall` minus its `mpi_time`, and the runtime is the longest rank's `wall`:
of the timed region (`MPI_Pcontrol(1, "timed")` ... `(-1, "timed")`, the workloads' timed loop)
when every rank has it, else of the whole run (end of MPI_Init to start of MPI_Finalize).
These are not the *scaling* efficiency of stats.scaling_efficiency (performance per rank
against a base rank count).

Receive wait: the time of blocking calls that completed at least one point-to-point receive
(MPI_Recv, MPI_Sendrecv, MPI_Mrecv, MPI_Wait*, ...; the profile's per-function `recv_wait`),
an upper bound of the late-sender time (docs/profiler.md says what it includes).
"""

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from esmperf.profile.regions import TIMED

NONBLOCKING_COMPLETION = "MPI_Test"  # MPI_Test, _all, _any, _some: they return at once


@dataclass(frozen=True)
class PopEfficiency:
    load_balance: float
    communication_efficiency: float
    parallel_efficiency: float
    useful_mean: float  # seconds
    useful_max: float
    runtime: float

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def pop_efficiency(useful: Sequence[float], runtime: float) -> PopEfficiency | None:
    """The POP metrics from each rank's useful computation time and the run's runtime; None
    when they are undefined (no ranks, no useful time, no runtime)."""
    if not useful or runtime <= 0:
        return None
    useful_max = max(useful)
    if useful_max <= 0:
        return None
    useful_mean = sum(useful) / len(useful)
    load_balance = useful_mean / useful_max
    communication = useful_max / runtime
    return PopEfficiency(
        load_balance, communication, load_balance * communication, useful_mean, useful_max, runtime
    )


def useful_times(walls: Sequence[float], mpi_times: Sequence[float]) -> list[float]:
    """Each rank's time outside MPI (never negative: threads in MPI at once can add up to more
    than the wall time)."""
    return [max(0.0, wall - mpi) for wall, mpi in zip(walls, mpi_times, strict=True)]


def run_efficiency(walls: Sequence[float], mpi_times: Sequence[float]) -> PopEfficiency | None:
    """The POP metrics of a run from its ranks' wall and MPI times."""
    return pop_efficiency(useful_times(walls, mpi_times), max(walls, default=0.0))


def region_times(
    ranks: Sequence[dict[str, Any]], region: str = TIMED
) -> tuple[list[float], list[float]] | None:
    """Each rank's wall and MPI time in the top-level region `region` (all its entries), or
    None when some rank has no such region."""
    walls, mpi_times = [], []
    for rank in ranks:
        entries = [
            entry
            for entry in rank.get("regions") or []
            if list(entry.get("path") or [entry.get("name")]) == [region]
        ]
        if not entries:
            return None
        walls.append(sum(float(entry["wall"]) for entry in entries))
        mpi_times.append(sum(float(entry["mpi_time"]) for entry in entries))
    return walls, mpi_times


def profile_efficiency(ranks: Sequence[dict[str, Any]]) -> tuple[str, PopEfficiency | None]:
    """The POP metrics of a profile's ranks and their scope: the timed region when every rank
    has one ("region timed"), else the whole run ("run")."""
    timed = region_times(ranks)
    if timed is not None:
        return f"region {TIMED}", run_efficiency(*timed)
    return "run", run_efficiency(
        [float(rank["wall"]) for rank in ranks], [float(rank["mpi_time"]) for rank in ranks]
    )


def is_blocking_completion(function: str) -> bool:
    return not function.startswith(NONBLOCKING_COMPLETION)


def receive_wait(ranks: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Receive wait over a profile's rank records (see receive_wait_of)."""
    rows = [
        (index, name, *call["recv_wait"])
        for index, rank in enumerate(ranks)
        for name, call in rank["calls"].items()
        if "recv_wait" in call
    ]
    return receive_wait_of(rows, len(ranks), sum(rank["mpi_time"] for rank in ranks))


def receive_wait_of(
    rows: Iterable[tuple[int, str, int, float]], ranks: int, mpi_time: float
) -> dict[str, Any]:
    """Receive wait from (rank, function, calls, seconds) of the calls that completed a
    receive (a profile's `recv_wait`, or the store's): total seconds and calls of the blocking
    ones, per function (most time first) and per rank, and the share of the ranks' MPI time."""
    functions: dict[str, list[float]] = {}
    per_rank = [0.0] * ranks
    for rank, name, calls, seconds in rows:
        if not calls or not is_blocking_completion(name):
            continue
        total = functions.setdefault(name, [0, 0.0])
        total[0] += calls
        total[1] += seconds
        if 0 <= rank < ranks:
            per_rank[rank] += seconds
    time = sum(seconds for _, seconds in functions.values())
    return {
        "time": time,
        "calls": int(sum(calls for calls, _ in functions.values())),
        "percent_of_mpi_time": 100.0 * time / mpi_time if mpi_time > 0 else 0.0,
        "by_function": [
            {"function": name, "calls": int(calls), "time": seconds}
            for name, (calls, seconds) in sorted(
                functions.items(), key=lambda item: (-item[1][1], item[0])
            )
        ],
        "per_rank": list(per_rank),
    }
