"""A store's profiles as Caliper JSON ("json-split", the layout of `cali-query -q "format
json-split"`), one file per profiled repetition, with the run's metadata under Adiak's names:
what Hatchet's `GraphFrame.from_caliper` and Thicket's `Thicket.from_caliper` read.

The call tree of a file: the program at the root, the regions (`MPI_Pcontrol`) as nested nodes,
and under each node the MPI functions called there and not in a region nested inside it. Each
row is one node on one rank: exclusive and inclusive seconds, calls (region nodes: times
entered; the root: 1), bytes sent and received. docs/studies.md ("Export") says the columns."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from esmperf.store.database import Store, StoreError

# The columns of every row, in order. Hatchet's reader takes the node order from column 0 of
# the row whose index is the node's (so the first rows are rank 0's, one per node, in node
# order) and fails without it; `mpi.rank` must be a value, else it is looked up as a node.
COLUMNS = (
    ("Node order", False),
    ("path", False),
    ("mpi.rank", True),
    ("sum#time.duration", True),  # Hatchet: "time"
    ("inclusive#sum#time.duration", True),  # Hatchet: "time (inc)"
    ("calls", True),
    ("bytes.sent", True),
    ("bytes.recv", True),
)
Figures = dict[str, float]  # time, time_inc, calls, sent, recv


def export_caliper(store: Store, directory: Path) -> list[Path]:
    """One Caliper JSON file per profiled repetition of the store, in `directory`."""
    profiles = store.rows("SELECT * FROM profile ORDER BY run_key, rep")
    if not profiles:
        raise StoreError(
            f"{store.path} holds no profile: run the study with profiling on "
            "(`profile = true` in the study file, or `esmperf run ... --profile`)"
        )
    directory.mkdir(parents=True, exist_ok=True)
    runs = {row["run_key"]: row for row in store.runs()}
    written = []
    for profile in profiles:
        key, rep = profile["run_key"], profile["rep"]
        document = caliper_document(store, runs[key], profile)
        path = directory / f"{key}-rep{rep}.json"
        path.write_text(json.dumps(document, separators=(",", ":")))
        written.append(path)
    return written


def caliper_document(store: Store, run: dict[str, Any], profile: dict[str, Any]) -> dict[str, Any]:
    """The json-split document of one profiled repetition."""
    key, rep = profile["run_key"], profile["rep"]
    ranks = store.rows(
        "SELECT rank, host, wall FROM profile_rank WHERE run_key = ? AND rep = ? ORDER BY rank",
        [key, rep],
    )
    root = (str(run.get("workload") or "program"),)
    tables = ["profile_function"]
    if _has_regions(store):
        tables += ["profile_region", "profile_region_function"]
    by_rank: dict[str, dict[int, list[dict[str, Any]]]] = {}
    for table in tables:  # one query a table, not one a rank: stores have thousands of ranks
        by_rank[table] = defaultdict(list)
        for row in store.rows(f"SELECT * FROM {table} WHERE run_key = ? AND rep = ?", [key, rep]):
            by_rank[table][row["rank"]].append(row)
    per_rank = {
        row["rank"]: _rank_tree({t: by_rank[t][row["rank"]] for t in tables}, row, root)
        for row in ranks
    }
    paths = _node_order({path for tree in per_rank.values() for path in tree})
    index = {path: number for number, path in enumerate(paths)}
    nodes = []
    for path in paths:
        node: dict[str, Any] = {"label": path[-1], "column": "path"}
        if len(path) > 1:
            node["parent"] = index[path[:-1]]
        nodes.append(node)
    data = []
    for rank in sorted(per_rank):
        tree = per_rank[rank]
        for path in paths:
            figures = tree.get(path, {})
            data.append(
                [
                    index[path],
                    index[path],
                    rank,
                    figures.get("time", 0.0),
                    figures.get("time_inc", 0.0),
                    int(figures.get("calls", 0)),
                    int(figures.get("sent", 0)),
                    int(figures.get("recv", 0)),
                ]
            )
    return {
        "data": data,
        "columns": [name for name, _ in COLUMNS],
        "column_metadata": [{"is_value": is_value} for _, is_value in COLUMNS],
        "nodes": nodes,
        **run_metadata(run, profile, {row["host"] for row in ranks}),
    }


def run_metadata(run: dict[str, Any], profile: dict[str, Any], hosts: set[str]) -> dict[str, Any]:
    """The run's metadata: Adiak's names where Adiak has one, `esmperf.*` for the rest, one
    `knob.NAME` per knob the study set."""
    command = json.loads(profile.get("command") or "[]")
    library = str(profile.get("mpi_library") or run.get("mpi_library") or "")
    metadata: dict[str, Any] = {
        "mpi.world.size": int(profile["ranks"]),
        "jobsize": int(profile["ranks"]),
        "numhosts": len(hosts),
        "mpi_library": str(run.get("stack") or ""),
        "mpi_library_version": library.splitlines()[0] if library else "",
        "executable": Path(command[0]).name if command else "",
        "cmdline": " ".join(command),
        "launchdate": int(profile.get("start_epoch") or 0),
        "repetition": int(profile["rep"]),
        "esmperf.run_key": str(profile["run_key"]),
        "esmperf.label": str(run.get("label") or ""),
        "esmperf.workload": str(run.get("workload") or ""),
        "esmperf.size": str(run.get("size") or ""),
        "esmperf.nodes": int(run.get("nodes") or 1),
        "esmperf.oversubscribed": bool(run.get("oversubscribed")),
    }
    for name, value in sorted(json.loads(run.get("knobs") or "{}").items()):
        metadata[f"knob.{name}"] = str(value)
    return metadata


def _rank_tree(
    rows: dict[str, list[dict[str, Any]]], rank_row: dict[str, Any], root: tuple[str]
) -> dict[tuple[str, ...], Figures]:
    """One rank's figures per node path: (program,), (program, region, ...), (..., MPI_X), from
    its rows of profile_function, profile_region and profile_region_function."""
    tree: dict[tuple[str, ...], Figures] = {root: {"time_inc": float(rank_row["wall"]), "calls": 1}}
    functions: dict[tuple[str, ...], dict[str, Figures]] = defaultdict(dict)
    for row in rows["profile_function"]:
        functions[root][row["function"]] = _call_figures(row)
    for row in rows.get("profile_region", []):
        path = (*root, *row["region"].split("/"))
        tree[path] = {"time_inc": float(row["wall"]), "calls": int(row["enters"])}
    for row in rows.get("profile_region_function", []):
        path = (*root, *row["region"].split("/"))
        functions[path][row["function"]] = _call_figures(row)
    for path in sorted(tree, key=len):  # a region's parents, open around it, are nodes too
        for depth in range(2, len(path)):
            tree.setdefault(path[:depth], {"time_inc": 0.0, "calls": 0})
    called: dict[tuple[str, ...], Figures] = {}
    for path, figures in tree.items():
        children = [child for child in tree if len(child) == len(path) + 1 and child[:-1] == path]
        own = dict(functions.get(path, {}))
        for child in children:  # a region's functions include those of the regions inside
            for function, inner in functions.get(child, {}).items():
                mine = own.get(function, dict.fromkeys(inner, 0))
                own[function] = {name: mine[name] - inner[name] for name in mine}
        figures["time"] = (
            figures["time_inc"]
            - sum(tree[child]["time_inc"] for child in children)
            - sum(call["time_inc"] for call in own.values())
        )
        for function, call in own.items():
            if call["calls"]:
                called[(*path, function)] = {**call, "time": call["time_inc"]}
    return tree | called


def _call_figures(row: dict[str, Any]) -> Figures:
    return {
        "time_inc": float(row["time"]),
        "calls": int(row["calls"]),
        "sent": int(row["sent"] or 0),
        "recv": int(row["recv"] or 0),
    }


def _has_regions(store: Store) -> bool:
    tables = store.rows("SELECT table_name FROM information_schema.tables")
    return "profile_region" in {row["table_name"] for row in tables}


def _node_order(paths: set[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """Depth first, siblings by name: Hatchet merges the trees of several files walking the
    siblings in this order, so every file must number its nodes alike."""
    return sorted(paths)
