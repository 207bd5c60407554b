"""A stored profile as the report reads it (ProfileData): one profiled repetition aggregated
over ranks from the store's profile tables, as seen in the workload's timed loop when the
profile has that region (stored_region), with its POP metrics and receive wait; and the
functions that dominate a set of profiles (top_functions)."""

import dataclasses
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from esmperf.profile.pop_metrics import receive_wait_of, run_efficiency
from esmperf.profile.regions import FUNCTION_FIELDS, TIMED
from esmperf.store.database import Store
from esmperf.store.schema import REGION_TABLES

MPI_IO_PREFIX = "MPI_File_"


@dataclass
class ProfileData:
    """One profiled run, aggregated over ranks (sums unless said otherwise)."""

    ranks: int
    wall_sum: float
    mpi_sum: float
    functions: dict[str, dict[str, float]]  # name -> calls, time, sent, recv
    histogram: dict[int, int]  # bucket -> messages
    bytes_per_rank: list[float]  # MPI communication bytes (sent + received), by rank
    mpi_per_rank: list[float]
    wall_per_rank: list[float]  # seconds from MPI_Init to MPI_Finalize
    peers: list[list[float]]  # bytes sent, row = sender, column = receiver
    bins: list[dict[str, float]]  # start, width, mpi_time, io_write, io_read
    io_write_per_rank: list[float]
    io_read_per_rank: list[float]
    # The region the figures are of ("timed": the workload's timed loop; None: the whole run).
    # Peers, bins and I/O are the whole run's (regions.py).
    region: str | None = None
    run_wall_per_rank: list[float] | None = None  # the whole run's, when `region` is set
    # pop_metrics.receive_wait_of, of the region when `region` is set (else of the whole run)
    receive_wait: dict[str, Any] = field(default_factory=dict)
    efficiency: dict[str, Any] = field(default_factory=dict)  # POP metrics and scope, if any
    # The aggregated transfer, of the whole run even when `region` is set (the peers are the
    # whole run's): bytes the ranks sent to other ranks (run_transfer).
    transfer: float = 0.0
    # Per function, its message-size histogram (bucket -> messages), of the whole run: a
    # function whose messages are all on one side of a size there is so in any region too.
    function_sizes: dict[str, dict[int, int]] = field(default_factory=dict)
    # An MPMD run's programs (store table profile_program), each with its ranks ("0-1") and POP
    # metrics of its own ranks; [] for one program or stores written before programs.
    programs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def mpi_percent(self) -> float:
        """Share of the ranks' wall time inside MPI; at most 100 (calls made concurrently by
        several threads of a rank add up to more than its wall time)."""
        return min(100.0, 100 * self.mpi_sum / self.wall_sum) if self.wall_sum > 0 else 0.0

    def bin_mpi_percent(self) -> list[float]:
        """Per time bin, the share of the ranks' time in it spent inside MPI: a bin holds a
        rank's time only up to the rank's MPI_Finalize (the last bin is seldom full); at most
        100 (threads)."""
        shares = []
        for b in self.bins:
            rank_time = sum(
                max(0.0, min(b["width"], wall - b["start"]))
                for wall in self.run_wall_per_rank or self.wall_per_rank
            )
            shares.append(min(100.0, 100 * b["mpi_time"] / rank_time) if rank_time > 0 else 0.0)
        return shares

    @property
    def total_calls(self) -> float:
        return sum(f["calls"] for f in self.functions.values())

    @property
    def total_time(self) -> float:
        return sum(f["time"] for f in self.functions.values())

    def time_share(self, function: str) -> float:
        total = self.total_time
        return 100 * self.functions.get(function, {}).get("time", 0) / total if total else 0.0

    def call_share(self, function: str) -> float:
        total = self.total_calls
        return 100 * self.functions.get(function, {}).get("calls", 0) / total if total else 0.0

    @property
    def imbalance(self) -> float | None:
        mean = sum(self.mpi_per_rank) / len(self.mpi_per_rank) if self.mpi_per_rank else 0
        return max(self.mpi_per_rank) / mean if mean > 0 else None


def load_profile_data(
    store: Store, run_key: str, rep: int, region: str | None = TIMED
) -> ProfileData:
    """A stored profile, as seen in `region` when it has it (default: the timed loop), else
    the whole run."""
    where = "WHERE run_key = ? AND rep = ?"
    key = [run_key, rep]
    ranks = store.rows(
        f"SELECT rank, wall, mpi_time, io_write_bytes, io_read_bytes "
        f"FROM profile_rank {where} ORDER BY rank",
        key,
    )
    size = len(ranks)
    functions, histogram, per_rank = _aggregates(store, "profile", where, key)
    peers = [[0.0] * size for _ in range(size)]
    for row in store.rows(
        f"SELECT rank, peer, bytes FROM profile_peer {where} AND direction = 'sent'", key
    ):
        if 0 <= row["rank"] < size and 0 <= row["peer"] < size:
            peers[row["rank"]][row["peer"]] += float(row["bytes"])
    bins = store.rows(
        f"SELECT bin, min(start) AS start, max(width) AS width, "
        f"sum(mpi_time) AS mpi_time, sum(io_write) AS io_write, "
        f"sum(io_read) AS io_read FROM profile_bin {where} GROUP BY bin "
        "ORDER BY bin",
        key,
    )
    function_sizes: dict[str, dict[int, int]] = defaultdict(dict)
    for row in store.rows(
        f"SELECT function, bucket, sum(messages) AS messages FROM profile_histogram {where} "
        "GROUP BY function, bucket",
        key,
    ):
        function_sizes[row["function"]][int(row["bucket"])] = int(row["messages"])
    data = ProfileData(
        transfer=run_transfer(functions, peers),
        function_sizes=dict(function_sizes),
        receive_wait=_receive_wait(
            store, run_key, rep, size, sum(float(r["mpi_time"]) for r in ranks)
        ),
        efficiency=_efficiency(store, run_key, rep, ranks),
        programs=_programs(store, run_key, rep),
        ranks=size,
        wall_sum=sum(float(r["wall"]) for r in ranks),
        mpi_sum=sum(float(r["mpi_time"]) for r in ranks),
        functions=functions,
        histogram=histogram,
        bytes_per_rank=[per_rank.get(rank, 0.0) for rank in range(size)],
        mpi_per_rank=[float(r["mpi_time"]) for r in ranks],
        wall_per_rank=[float(r["wall"]) for r in ranks],
        peers=peers,
        bins=[{k: float(v) for k, v in row.items()} for row in bins],
        io_write_per_rank=[float(r["io_write_bytes"]) for r in ranks],
        io_read_per_rank=[float(r["io_read_bytes"]) for r in ranks],
    )
    inside = stored_region(store, run_key, rep, region) if region else None
    if inside is None:
        return data
    if not inside["receive_wait"]:  # a store from before the regions' receive wait
        del inside["receive_wait"]
    return dataclasses.replace(
        data,
        region=region,
        run_wall_per_rank=data.wall_per_rank,
        wall_sum=sum(inside["wall_per_rank"]),
        mpi_sum=sum(inside["mpi_per_rank"]),
        **inside,
    )


def _efficiency(
    store: Store, run_key: str, rep: int, ranks: list[dict[str, Any]]
) -> dict[str, Any]:
    """The POP metrics computed when the profile was stored (of the timed region when it had
    one); for stores written before, of the whole run, from the ranks' times."""
    if store.rows(
        "SELECT 1 FROM information_schema.tables WHERE table_name = 'profile_efficiency'"
    ):
        rows = store.rows(
            "SELECT * FROM profile_efficiency WHERE run_key = ? AND rep = ?", [run_key, rep]
        )
        if rows:
            return {k: v for k, v in rows[0].items() if k not in ("run_key", "rep")}
    metrics = run_efficiency(
        [float(r["wall"]) for r in ranks], [float(r["mpi_time"]) for r in ranks]
    )
    return metrics.as_dict() | {"scope": "run"} if metrics else {}


def _programs(store: Store, run_key: str, rep: int) -> list[dict[str, Any]]:
    """The programs of an MPMD run in order of their first rank; [] when it ran one."""
    if not store.rows(
        "SELECT 1 FROM information_schema.tables WHERE table_name = 'profile_program'"
    ):
        return []
    rows = store.rows(
        "SELECT * FROM profile_program WHERE run_key = ? AND rep = ? ORDER BY appnum, ranks",
        [run_key, rep],
    )
    return rows if len(rows) > 1 else []


def _receive_wait(
    store: Store, run_key: str, rep: int, size: int, mpi_time: float
) -> dict[str, Any]:
    """The receive wait of a stored profile (empty for stores written before it was recorded)."""
    if not store.rows(
        "SELECT 1 FROM information_schema.columns WHERE table_name = "
        "'profile_function' AND column_name = 'recv_wait_time'"
    ):
        return {}
    rows = store.rows(
        "SELECT rank, function, recv_wait_calls AS calls, recv_wait_time AS time "
        "FROM profile_function WHERE run_key = ? AND rep = ? AND "
        "recv_wait_calls > 0",
        [run_key, rep],
    )
    return receive_wait_of(
        ((row["rank"], row["function"], row["calls"], row["time"]) for row in rows), size, mpi_time
    )


def _region_wait_recorded(store: Store) -> bool:
    return bool(
        store.rows(
            "SELECT 1 FROM information_schema.columns WHERE table_name = "
            "'profile_region_function' AND column_name = 'recv_wait_time'"
        )
    )


def run_transfer(functions: dict[str, dict[str, float]], peers: list[list[float]]) -> float:
    """Bytes all ranks sent to other ranks: every MPI call's bytes sent (MPI-IO excluded) less
    a rank's point-to-point and RMA sends to itself (the peer matrix's diagonal). A collective
    counts each rank's whole send buffer: the profile does not split it by peer."""
    sent = sum(f["sent"] for name, f in functions.items() if not name.startswith(MPI_IO_PREFIX))
    return sent - sum(peers[rank][rank] for rank in range(len(peers)))


def _aggregates(
    store: Store, prefix: str, where: str, key: list[Any]
) -> tuple[dict[str, dict[str, float]], dict[int, int], dict[int, float]]:
    """Per function (summed over ranks), the message-size histogram and each rank's MPI bytes
    (MPI-IO excluded) of the stored profile rows `where` selects, from the whole run's tables
    (`prefix` "profile") or a region's ("profile_region")."""
    functions = {
        row["function"]: {field: float(row[field]) for field in FUNCTION_FIELDS}
        for row in store.rows(
            f"SELECT function, sum(calls) AS calls, sum(time) AS time, sum(sent) AS sent,"
            f" sum(recv) AS recv FROM {prefix}_function {where} GROUP BY function",
            key,
        )
    }
    histogram = {
        int(row["bucket"]): int(row["messages"])
        for row in store.rows(
            f"SELECT bucket, sum(messages) AS messages FROM {prefix}_histogram {where} "
            "GROUP BY bucket ORDER BY bucket",
            key,
        )
    }
    per_rank = {
        int(row["rank"]): float(row["bytes"])
        for row in store.rows(
            f"SELECT rank, sum(sent + recv) AS bytes FROM {prefix}_function {where} AND function "
            f"NOT LIKE '{MPI_IO_PREFIX}%' GROUP BY rank",
            key,
        )
    }
    return functions, histogram, per_rank


def top_functions(profiles: list[ProfileData], by: str, count: int = 7) -> list[str]:
    """The functions with the largest share of calls or time over these profiles."""
    share: dict[str, float] = defaultdict(float)
    for profile in profiles:
        for name in profile.functions:
            share[name] += profile.call_share(name) if by == "calls" else profile.time_share(name)
    return [
        name
        for name, _ in sorted(share.items(), key=lambda item: (-item[1], item[0]))
        if share[name] > 0
    ][:count]


def stored_region(store: Store, run_key: str, rep: int, path: str = TIMED) -> dict[str, Any] | None:
    """Region `path` of a stored profile, as the figures ProfileData takes from a whole
    run (wall and MPI time per rank, functions, histogram, bytes per rank, receive wait); None
    when the store or the profile has no such region (stores written before regions, programs
    that mark none)."""
    present = {
        row["table_name"] for row in store.rows("SELECT table_name FROM information_schema.tables")
    }
    if not set(REGION_TABLES) <= present:
        return None
    key = [run_key, rep, path]
    where = "WHERE run_key = ? AND rep = ? AND region = ?"
    entered = {
        int(row["rank"]): row
        for row in store.rows(f"SELECT rank, wall, mpi_time FROM profile_region {where}", key)
    }
    if not entered:
        return None
    size = int(
        store.rows("SELECT count(*) AS n FROM profile_rank WHERE run_key = ? AND rep = ?", key[:2])[
            0
        ]["n"]
    )
    functions, histogram, per_rank = _aggregates(store, "profile_region", where, key)
    mpi_per_rank = [float(entered[r]["mpi_time"]) if r in entered else 0.0 for r in range(size)]
    wait: dict[str, Any] = {}  # stores written before the regions' receive wait: none
    if _region_wait_recorded(store):
        rows = store.rows(
            "SELECT rank, function, recv_wait_calls AS calls, recv_wait_time AS time "
            f"FROM profile_region_function {where} AND recv_wait_calls > 0",
            key,
        )
        wait = receive_wait_of(
            ((row["rank"], row["function"], row["calls"], row["time"]) for row in rows),
            size,
            sum(mpi_per_rank),
        )
    return {
        "receive_wait": wait,  # of the calls made inside the region
        "wall_per_rank": [float(entered[r]["wall"]) if r in entered else 0.0 for r in range(size)],
        "mpi_per_rank": mpi_per_rank,
        "functions": functions,
        "histogram": histogram,
        "bytes_per_rank": [per_rank.get(rank, 0.0) for rank in range(size)],
    }
