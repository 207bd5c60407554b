"""Regions of a profile (docs/profile-format.md, "regions"; docs/profiler.md, "Regions").

A program marks regions with MPI_Pcontrol(1, "name") ... MPI_Pcontrol(-1, "name") (IPM's
convention; esmprof_api.h, the workloads' esm_phase.h). Regions nest and are known by their path,
"timed/barotropic". Every esmperf workload wraps its timed loop in the region TIMED, and by default
the summary, the store's figures, the findings and the report show that region: the model's own
calls, not the harness around them (timing barriers, STREAM, set-up, verification). The whole run
stays one option away (WHOLE_RUN).

A region's figures are inclusive of the regions nested in it. A region view of a profile is the
profile with each rank's wall time, MPI time, calls (with their receive wait) and message sizes
those of the region; the rest
(peers, communicators, time bins) exists for the whole run only and is left out of the view.
The store keeps the regions in its tables profile_region, profile_region_function and
profile_region_histogram (store/profile_tables.py); report/profile_data.py reads them back.
"""

import copy
from typing import Any

from esmperf.errors import EsmperfError
from esmperf.profile.read import Profile

TIMED = "timed"  # the region every workload wraps its timed loop in (native/core/esm_phase.h)
WHOLE_RUN = "all"  # the view of the whole run, from MPI_Init to MPI_Finalize
FUNCTION_FIELDS = ("calls", "time", "sent", "recv")
WHOLE_RUN_ONLY = ("peers", "comms", "bins")


def path_of(region: dict[str, Any]) -> str:
    return "/".join(region.get("path") or [region.get("name", "")])


def region_paths(profile: Profile) -> list[str]:
    """Every region path of the profile, in first-seen order over ranks."""
    seen: dict[str, None] = {}
    for rank in profile.ranks:
        for region in rank.get("regions") or []:
            seen.setdefault(path_of(region), None)
    return list(seen)


def default_region(profile: Profile) -> str | None:
    """The region shown by default: TIMED when the profile has it, else None (the whole run)."""
    return TIMED if TIMED in region_paths(profile) else None


def chosen_region(profile: Profile, asked: str | None) -> str | None:
    """The region to show for `asked` (None: the default; WHOLE_RUN: None); an unknown path is
    an error that lists the known ones."""
    if asked is None:
        return default_region(profile)
    if asked == WHOLE_RUN:
        return None
    paths = region_paths(profile)
    if asked not in paths:
        known = ", ".join(paths) if paths else "none (the program marks no regions)"
        raise EsmperfError(
            f"{profile.path} has no region {asked!r}: choose one of {known}, "
            f"or {WHOLE_RUN!r} for the whole run"
        )
    return asked


def region_view(profile: Profile, path: str) -> Profile:
    """The profile as seen inside region `path`: ranks that never entered it show zeros."""
    ranks = []
    for rank in profile.ranks:
        region = next((r for r in rank.get("regions") or [] if path_of(r) == path), None)
        view = {
            key: value
            for key, value in rank.items()
            if key not in WHOLE_RUN_ONLY + ("regions", "region_problems")
        }
        view["wall"] = float((region or {}).get("wall", 0.0))
        view["mpi_time"] = float((region or {}).get("mpi_time", 0.0))
        waits = (region or {}).get("recv_wait") or {}
        view["calls"] = {
            name: dict(zip(FUNCTION_FIELDS, figures))
            | ({"recv_wait": list(waits[name])} if name in waits else {})
            for name, figures in (region or {}).get("functions", {}).items()
        }
        view["hist"] = copy.deepcopy((region or {}).get("hist", []))
        ranks.append(view)
    header = dict(profile.header, region=path)
    return Profile(profile.path, header, ranks, profile.partial)


def regions_table(profile: Profile) -> list[dict[str, Any]]:
    """One row per region path over all ranks: ranks that entered it, enters, the longest rank's
    wall time in it, MPI time (sum), % MPI (of the ranks' wall time in it), calls, bytes, and how
    many ranks had it still open at the end."""
    rows: dict[str, dict[str, Any]] = {}
    for rank in profile.ranks:
        for region in rank.get("regions") or []:
            path = path_of(region)
            row = rows.setdefault(
                path,
                {
                    "region": path,
                    "depth": len(region.get("path") or [1]),
                    "ranks": 0,
                    "enters": 0,
                    "wall": 0.0,
                    "wall_sum": 0.0,
                    "mpi_time": 0.0,
                    "calls": 0,
                    "sent": 0,
                    "recv": 0,
                    "open": 0,
                },
            )
            row["ranks"] += 1
            row["wall"] = max(row["wall"], region.get("wall", 0.0))
            row["wall_sum"] += region.get("wall", 0.0)
            row["open"] += 1 if region.get("open") else 0
            for field in ("enters", "mpi_time", "calls", "sent", "recv"):
                row[field] += region.get(field, 0)
    for row in rows.values():
        row["mpi_percent"] = (
            100.0 * row["mpi_time"] / row["wall_sum"] if row["wall_sum"] > 0 else 0.0
        )
    return list(rows.values())


def region_problems(profile: Profile) -> list[dict[str, Any]]:
    """Unbalanced or ignored region marks over all ranks: kind, name, count, ranks."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for rank in profile.ranks:
        for problem in rank.get("region_problems") or []:
            key = (problem.get("kind", ""), problem.get("name", ""))
            row = rows.setdefault(key, {"kind": key[0], "name": key[1], "count": 0, "ranks": 0})
            row["count"] += problem.get("count", 0)
            row["ranks"] += 1
    return sorted(rows.values(), key=lambda row: (row["kind"], row["name"]))


PROBLEM_TEXT = {
    "end_without_begin": "ended but never begun (ignored)",
    "end_not_innermost": "ended while regions inside it were open (they ended with it)",
    "open_at_end": "still open at the end of the profile (timed up to the end)",
    "pcontrol_ignored": "a level without a region name (counted, otherwise ignored)",
    "too_deep": "begun deeper than 32 nested regions (not recorded)",
    "too_many_regions": "past 256 region paths per rank (recorded as '(other regions)')",
    "more": "more kinds of problems than the profile lists",
}
