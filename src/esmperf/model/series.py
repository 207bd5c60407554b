"""What a scaling model is fitted to: per series of a study store (one configuration without its
rank count), the values over ranks of each quantity the store holds: the figure of merit (every
measured repetition), and from the profiles the MPI share of the ranks' time, the MPI time of
each dominant function and of each region (seconds per rank: the mean over ranks), and the MPI
calls and bytes sent per rank: counts, exact even where the times are not (an oversubscribed
or loaded machine), so their models hold on any machine the program's decomposition holds."""

from collections import defaultdict
from dataclasses import dataclass, field

from esmperf.errors import EsmperfError
from esmperf.store.database import Store
from esmperf.store.results import RunResult, load_results

FOM = "figure of merit"
MPI_SHARE = "MPI share"
CALLS = "MPI calls per rank"
BYTES = "bytes sent per rank"
MIN_RANK_COUNTS = 3  # a model needs this many rank counts
RECOMMENDED_RANK_COUNTS = 5  # Extra-P's recommendation
MOST_MODELLED = 6  # of the functions, and of the regions: those with the most MPI time at the
SHARE_MODELLED = 0.01  # largest rank count, each holding at least this share of the most
TABLES_QUERY = "SELECT table_name FROM information_schema.tables"


@dataclass
class Quantity:
    """One thing modelled over ranks: its name, unit, and values (repetitions) by rank count."""

    name: str
    unit: str
    values: dict[int, list[float]] = field(default_factory=dict)

    @property
    def ranks(self) -> list[int]:
        return sorted(r for r, v in self.values.items() if v)


@dataclass
class Series:
    """One configuration over ranks: workload, size and the rest of its settings."""

    label: str  # workload size · stack · knobs
    quantities: list[Quantity]

    @property
    def ranks(self) -> list[int]:
        return self.quantities[0].ranks if self.quantities else []


def load_series(store: Store, from_ranks: int = 1) -> list[Series]:
    """Every series of the store with at least MIN_RANK_COUNTS measured rank counts from
    `from_ranks` on (a serial run, which exchanges nothing, can be left out); an EsmperfError
    naming the fix when the store has none."""
    curves: dict[str, list[RunResult]] = defaultdict(list)
    for result in load_results(store):
        if result.values and result.ranks >= from_ranks:
            title = f"{result.workload} {result.size}".strip()
            curves[f"{title} · {result.series_label}"].append(result)
    if not curves:
        raise EsmperfError(
            "the store has no measured run: run the study (esmperf study FILE) before predicting"
        )
    found = []
    for label, results in curves.items():
        if len({r.ranks for r in results}) >= MIN_RANK_COUNTS:
            found.append(Series(label, _quantities(store, results)))
    if not found:
        counts = ", ".join(
            f"{label}: {sorted({r.ranks for r in rs})}" for label, rs in curves.items()
        )
        raise EsmperfError(
            f"no series of the store has {MIN_RANK_COUNTS} or more rank counts ({counts}): "
            "a scaling model needs a rank axis; run the study over rank counts, e.g. "
            f"--ranks 4,8,16,32,64 (Extra-P recommends {RECOMMENDED_RANK_COUNTS})"
        )
    return found


def _quantities(store: Store, results: list[RunResult]) -> list[Quantity]:
    unit = results[0].unit
    fom = Quantity(FOM, unit, {r.ranks: list(r.values) for r in results})
    share = Quantity(MPI_SHARE, "%")
    counts = [Quantity(CALLS, "calls"), Quantity(BYTES, "B")]
    functions: dict[str, Quantity] = {}
    regions: dict[str, Quantity] = {}
    profiles: dict[int, int] = defaultdict(int)  # rank count -> profiled repetitions
    for result in results:
        for rep in _profiled_reps(store, result.key):
            _add_profile(store, result, rep, share, counts, functions, regions)
            profiles[result.ranks] += 1
    for quantity in (*functions.values(), *regions.values()):
        for ranks, reps in profiles.items():  # not called there (MPI_Sendrecv on 1 rank): 0 s
            quantity.values.setdefault(ranks, [0.0] * reps)
    largest = max(results, key=lambda r: r.ranks).ranks
    chosen = _dominant(functions, largest) + _dominant(regions, largest)
    found = [fom]
    found += [q for q in (share, *chosen, *counts) if len(q.ranks) >= MIN_RANK_COUNTS]
    return found


def _profiled_reps(store: Store, run_key: str) -> list[int]:
    rows = store.rows("SELECT rep FROM profile WHERE run_key = ? ORDER BY rep", [run_key])
    return [int(row["rep"]) for row in rows]


def _add_profile(
    store: Store,
    result: RunResult,
    rep: int,
    share: Quantity,
    counts: list[Quantity],
    functions: dict[str, Quantity],
    regions: dict[str, Quantity],
) -> None:
    """One profile's MPI share, MPI time per function and region, and calls and bytes sent
    (each per rank: the mean over its ranks)."""
    key = [result.key, rep]
    ranks = store.rows(
        "SELECT count(*) AS n, sum(wall) AS wall, sum(mpi_time) AS mpi FROM profile_rank "
        "WHERE run_key = ? AND rep = ?",
        key,
    )[0]
    count = int(ranks["n"] or 0)
    if not count:
        return
    if ranks["wall"]:
        share.values.setdefault(result.ranks, []).append(
            min(100.0, 100 * float(ranks["mpi"] or 0) / float(ranks["wall"]))
        )
    calls = sent = 0
    for row in store.rows(
        "SELECT function, sum(time) AS time, sum(calls) AS calls, sum(sent) AS sent "
        "FROM profile_function WHERE run_key = ? AND rep = ? GROUP BY function ORDER BY function",
        key,
    ):
        name = f"MPI time in {row['function']}"
        quantity = functions.setdefault(name, Quantity(name, "s"))
        quantity.values.setdefault(result.ranks, []).append(float(row["time"]) / count)
        calls, sent = calls + int(row["calls"] or 0), sent + int(row["sent"] or 0)
    for quantity, total in zip(counts, (calls, sent), strict=True):
        quantity.values.setdefault(result.ranks, []).append(total / count)
    tables = {row["table_name"] for row in store.rows(TABLES_QUERY)}
    if "profile_region" in tables:
        for row in store.rows(
            "SELECT region, sum(mpi_time) AS mpi FROM profile_region "
            "WHERE run_key = ? AND rep = ? GROUP BY region ORDER BY region",
            key,
        ):
            name = f"region {row['region']}"
            quantity = regions.setdefault(name, Quantity(f"MPI time in {name}", "s"))
            quantity.values.setdefault(result.ranks, []).append(float(row["mpi"]) / count)


def _dominant(quantities: dict[str, Quantity], largest: int) -> list[Quantity]:
    """The MOST_MODELLED quantities with the most MPI time at the largest rank count, each at
    least SHARE_MODELLED of the most (regions nest: their times overlap)."""

    def at_largest(quantity: Quantity) -> float:
        values = quantity.values.get(largest, [])
        return sum(values) / len(values) if values else 0.0

    ranked = sorted(quantities.values(), key=lambda q: (-at_largest(q), q.name))
    most = at_largest(ranked[0]) if ranked else 0.0
    return [q for q in ranked if most > 0 and at_largest(q) >= SHARE_MODELLED * most][
        :MOST_MODELLED
    ]
