"""The IPM-style summary of a profile, as plain numbers (rendering is in render.py).

Definitions (sums are over all ranks):
- wall time: the longest rank's wall time; % MPI: sum of MPI time / sum of wall time;
- % of MPI time of a function: its time / the time of all profiled calls;
- bytes per rank and transfer: bytes sent + received by MPI communication (MPI-IO excluded:
  it is reported with the I/O);
- message sizes: every function's log2 histogram added up, bucket 0 = 0 B,
  bucket k = [2^(k-1), 2^k) bytes;
- imbalance: max / mean of the ranks' MPI time;
- programs: an MPMD run's programs (groups.py), each with its own ranks, % MPI, imbalance and
  efficiency (the whole run's, the efficiency in its own scope);
- efficiency: the POP CoE load balance, communication and parallel efficiency, and the receive
  wait (pop_metrics.py); with a trace (esmperf profile --trace), the exact late-sender time
  beside it (late_sender.py).

By default the figures are those of the region "timed" when the profile has it (the workload's
timed loop, regions.py), else of the whole run; `region` chooses another region or "all". I/O,
files, communicators, call sites, receive wait, late sender and the profiler's overhead are always the whole
run's; the efficiency has its own scope (pop_metrics.py: the region timed when every rank has it).
"""

import statistics
from collections import defaultdict
from typing import Any

from esmperf.mpi.stacks import first_line
from esmperf.profile.callsites import callsites
from esmperf.profile.groups import communicators, programs
from esmperf.profile.late_sender import profile_late_sender
from esmperf.profile.pop_metrics import profile_efficiency, receive_wait
from esmperf.profile.read import Profile
from esmperf.profile.regions import chosen_region, region_problems, region_view, regions_table

MPI_IO_PREFIX = "MPI_File_"
FUNCTION_TOTALS = ("calls", "time", "sent", "recv")
UNITS = ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"))


def bucket_label(bucket: int) -> str:
    """Label of a histogram bucket, no two overlapping: 0 -> "0 B", 1 -> "1 B", 2 -> "2-3 B"
    (both ends included), 11 -> "[1, 2) KiB" (from 1 KiB up to, not including, 2 KiB), 20 ->
    "[512 KiB, 1 MiB)"."""
    if bucket <= 1:
        return f"{bucket} B"
    low, high = 1 << (bucket - 1), 1 << bucket
    if high <= 1024:
        return f"{low}-{high - 1} B"
    (low_value, low_unit), (high_value, high_unit) = _exact_unit(low), _exact_unit(high)
    if low_unit == high_unit:
        return f"[{low_value}, {high_value}) {high_unit}"
    return f"[{low_value} {low_unit}, {high_value} {high_unit})"


def _exact_unit(size: int) -> tuple[int, str]:
    """A power of two as (value, unit) in the largest binary unit it is a whole multiple of."""
    for unit_size, unit in UNITS:
        if size >= unit_size:
            return size // unit_size, unit
    return size, "B"


def summarise(profile: Profile, region: str | None = None) -> dict[str, Any]:
    """Every figure of the summary, in a JSON-ready dict: of the region `region` ("all": the
    whole run; None: "timed" when the profile has it, else the whole run)."""
    shown = chosen_region(profile, region)
    whole = profile.ranks
    header, ranks = profile.header, (region_view(profile, shown) if shown else profile).ranks
    wall_sum = sum(rank["wall"] for rank in ranks)
    mpi_times = [rank["mpi_time"] for rank in ranks]
    mean_mpi_time = statistics.fmean(mpi_times)
    functions = _functions(ranks)
    io = _io(ranks, functions)
    return {
        "file": str(profile.path),
        "command": " ".join(header.get("command", [])),
        "ranks": len(ranks),
        "hosts": len({rank.get("host") for rank in ranks}),
        "mpi_library": first_line(header.get("mpi_library") or ""),
        "abi": header.get("abi"),
        "wall_time": max(rank["wall"] for rank in ranks),
        "mpi_time": sum(mpi_times),
        "mpi_percent": _percent(sum(mpi_times), wall_sum),
        "mpi_time_imbalance": max(mpi_times) / mean_mpi_time if mean_mpi_time > 0 else None,
        "efficiency": _efficiency(whole),  # its own scope: the region timed if any
        "receive_wait": receive_wait(whole),
        "late_sender": profile_late_sender(profile.path),  # exact, from the trace if any
        "calls_by_time": _calls_by_time(functions),
        "calls_by_count": _calls_by_count(functions),
        "message_sizes": _message_sizes(ranks),
        "bytes_per_rank": _bytes_per_rank(ranks),
        "transfer": {
            "sent": sum(f["sent"] for name, f in functions.items() if not _is_io(name)),
            "recv": sum(f["recv"] for name, f in functions.items() if not _is_io(name)),
        },
        "communicators": communicators(whole),
        "programs": programs(whole, header),  # MPMD: each program's ranks and figures
        "io": io,
        "profiler_overhead": _overhead(whole, sum(rank["wall"] for rank in whole)),
        "fortran_warning": (header.get("fortran") or {}).get("warning"),
        "files": _files(ranks),
        "partial": _partial(profile),
        "unwrapped_communicating": (header.get("mpi_binding") or {}).get(
            "unwrapped_communicating", []
        ),
        "spawn": header.get("spawn"),
        "region": shown,
        "regions": _regions_with_wait(profile),
        "region_problems": region_problems(profile),
        "callsites": callsites(whole)[:100],  # most MPI time first (esmperf profile --callsites)
    }


def _regions_with_wait(profile: Profile) -> list[dict[str, Any]]:
    """The regions table, each row with the receive wait of the calls made inside the region
    (`receive_wait`: pop_metrics.receive_wait of the region's view)."""
    rows = regions_table(profile)
    for row in rows:
        row["receive_wait"] = receive_wait(region_view(profile, row["region"]).ranks)
    return rows


def _efficiency(ranks: list[dict[str, Any]]) -> dict[str, Any] | None:
    scope, metrics = profile_efficiency(ranks)
    return metrics.as_dict() | {"scope": scope} if metrics else None


FILE_FIELDS = ("write", "read", "stdio_write", "stdio_read")


def _files(ranks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """I/O per file over all ranks (POSIX and stdio), most bytes first."""
    files: dict[str, dict[str, Any]] = {}
    for rank in ranks:
        for entry in rank.get("files", []):
            total = files.setdefault(
                entry["name"],
                {
                    "name": entry["name"],
                    "write_bytes": 0,
                    "read_bytes": 0,
                    "stdio_bytes": 0,
                    "calls": 0,
                    "time": 0.0,
                    "ranks": 0,
                },
            )
            total["ranks"] += 1
            for field in FILE_FIELDS:
                calls, nbytes, seconds = entry.get(field, (0, 0, 0.0))
                total["write_bytes" if field.endswith("write") else "read_bytes"] += nbytes
                total["stdio_bytes"] += nbytes if field.startswith("stdio") else 0
                total["calls"] += calls
                total["time"] += seconds
    return sorted(files.values(), key=lambda f: (-(f["write_bytes"] + f["read_bytes"]), f["name"]))


def _partial(profile: Profile) -> dict[str, Any] | None:
    """A run that did not finalise: the ranks by why they wrote (SIGTERM, snapshot, ...), and
    the MPI calls they were in when they wrote, longest first (a rank that hangs: the call and
    for how long; its time so far is in the rank's MPI time)."""
    if profile.partial is None:
        return None
    reasons: dict[str, list[int]] = {}
    for rank, reason in sorted(profile.partial["reasons"].items()):
        reasons.setdefault(reason, []).append(rank)
    in_calls = [
        {"rank": rank["rank"], "function": call["function"], "seconds": call["seconds"]}
        for rank in profile.ranks
        for call in rank.get("in_call", [])
    ]
    in_calls.sort(key=lambda call: (-call["seconds"], call["rank"]))
    return {"reasons": reasons, "missing": list(profile.partial["missing"]), "in_call": in_calls}


def _percent(part: float, whole: float) -> float:
    return 100.0 * part / whole if whole > 0 else 0.0


def _is_io(function: str) -> bool:
    return function.startswith(MPI_IO_PREFIX)


def _functions(ranks: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    totals: dict[str, dict[str, float]] = defaultdict(lambda: dict.fromkeys(FUNCTION_TOTALS, 0))
    for rank in ranks:
        for name, call in rank["calls"].items():
            total = totals[name]
            for key in total:
                total[key] += call.get(key, 0)
    return dict(totals)


def _calls_by_time(functions: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
    all_time = sum(f["time"] for f in functions.values())
    return [
        {
            "function": name,
            "time": f["time"],
            "percent_of_mpi_time": _percent(f["time"], all_time),
            "calls": f["calls"],
            "avg_time": f["time"] / f["calls"] if f["calls"] else 0.0,
        }
        for name, f in sorted(functions.items(), key=lambda item: (-item[1]["time"], item[0]))
    ]


def _calls_by_count(functions: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
    all_calls = sum(f["calls"] for f in functions.values())
    return [
        {"function": name, "calls": f["calls"], "percent_of_calls": _percent(f["calls"], all_calls)}
        for name, f in sorted(functions.items(), key=lambda item: (-item[1]["calls"], item[0]))
    ]


def _message_sizes(ranks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    messages: dict[int, int] = defaultdict(int)
    for rank in ranks:
        histograms = (
            [rank["hist"]]
            if "hist" in rank
            else [c.get("hist", []) for c in rank["calls"].values()]
        )
        for histogram in histograms:
            for bucket, count in histogram:
                messages[bucket] += count
    all_messages = sum(messages.values())
    return [
        {
            "bucket": bucket,
            "label": bucket_label(bucket),
            "messages": messages[bucket],
            "percent": _percent(messages[bucket], all_messages),
        }
        for bucket in sorted(messages)
    ]


def _bytes_per_rank(ranks: list[dict[str, Any]]) -> dict[str, Any]:
    totals = [
        (
            sum(
                c.get("sent", 0) + c.get("recv", 0)
                for name, c in rank["calls"].items()
                if not _is_io(name)
            ),
            rank["rank"],
        )
        for rank in ranks
    ]
    low = min(totals)
    high = max(totals, key=lambda total: (total[0], -total[1]))
    return {
        "min": low[0],
        "min_rank": low[1],
        "median": statistics.median(total for total, _ in totals),
        "max": high[0],
        "max_rank": high[1],
    }


def _io(ranks: list[dict[str, Any]], functions: dict[str, dict[str, float]]) -> dict[str, Any]:
    posix = {kind: {"calls": 0, "bytes": 0, "time": 0.0} for kind in ("write", "read")}
    for rank in ranks:
        for kind, total in posix.items():
            for field in total:
                total[field] += rank.get("io", {}).get(kind, {}).get(field, 0)
    return {
        "posix_write": posix["write"],
        "posix_read": posix["read"],
        "mpiio_write_bytes": sum(f["sent"] for n, f in functions.items() if _is_io(n)),
        "mpiio_read_bytes": sum(f["recv"] for n, f in functions.items() if _is_io(n)),
    }


def _overhead(ranks: list[dict[str, Any]], wall_sum: float) -> dict[str, Any]:
    overheads = [rank.get("overhead", {}) for rank in ranks]
    seconds = sum(o.get("seconds", 0.0) for o in overheads)
    return {
        "seconds": seconds,
        "calls": sum(o.get("calls", 0) for o in overheads),
        "ns_per_call": statistics.fmean(o.get("ns_per_call", 0.0) for o in overheads),
        "percent_of_wall": _percent(seconds, wall_sum),
    }
