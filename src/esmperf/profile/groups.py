"""Groups of ranks in a profile: the programs of an MPMD run and the communicators.

- Programs: `mpirun -np 2 ./ocean : -np 2 ./atmos` runs two programs in one world. Each rank line
  has its own `command` (argv) and `appnum` (MPI_APPNUM: the program's place on the command
  line); ranks with the same both are one program. Each program gets its own wall time, % MPI,
  MPI time imbalance and POP efficiency (load balance across two models that do different work
  says nothing about either). Profiles written before rank lines had a command are one program,
  the header's.
- Communicators: one row per communicator, told apart by their members (world ranks), not by the
  call that created them: OASIS's per-model MPI_Comm_split or ecTrans's MPI_Cart_sub make
  several communicators with one call. Every rank's MPI_COMM_SELF is one row. A rank's line
  names the members as ranges of world ranks, "0-3,8" (docs/profile-format.md).
"""

from pathlib import PurePath
from typing import Any

from esmperf.profile.pop_metrics import profile_efficiency

SELF = "MPI_COMM_SELF"


def rank_ranges(ranks: list[int]) -> str:
    """World ranks as ranges: [0, 1, 2, 5] -> "0-2,5"."""
    parts: list[str] = []
    ordered = sorted(ranks)
    start = 0
    for i, rank in enumerate(ordered):
        if i + 1 < len(ordered) and ordered[i + 1] == rank + 1:
            continue
        first = ordered[start]
        parts.append(str(first) if first == rank else f"{first}-{rank}")
        start = i + 1
    return ",".join(parts)


def program_key(rank: dict[str, Any], header: dict[str, Any]) -> tuple[int, tuple[str, ...]]:
    """(appnum, argv) of a rank line: which program of the command line it ran."""
    command = rank.get("command")
    if command is None:  # a profile from before MPMD support: the header's command
        command = header.get("command") or []
    appnum = rank.get("appnum")
    return (appnum if isinstance(appnum, int) and appnum >= 0 else 0, tuple(command))


def programs(ranks: list[dict[str, Any]], header: dict[str, Any]) -> list[dict[str, Any]]:
    """Each program of the run (one for SPMD), in order of its first rank: its command, world
    ranks and its own time figures and POP efficiency (pop_metrics.profile_efficiency of its
    ranks alone)."""
    members: dict[tuple[int, tuple[str, ...]], list[dict[str, Any]]] = {}
    for rank in ranks:
        members.setdefault(program_key(rank, header), []).append(rank)
    out = []
    for (appnum, command), mine in members.items():
        walls = [float(rank["wall"]) for rank in mine]
        mpi_times = [float(rank["mpi_time"]) for rank in mine]
        mean_mpi = sum(mpi_times) / len(mpi_times)
        scope, efficiency = profile_efficiency(mine)
        out.append(
            {
                "program": PurePath(command[0]).name if command else "?",
                "command": list(command),
                "appnum": appnum,
                "ranks": [int(rank["rank"]) for rank in mine],
                "wall_time": max(walls),
                "mpi_time": sum(mpi_times),
                "mpi_percent": 100.0 * sum(mpi_times) / sum(walls) if sum(walls) > 0 else 0.0,
                "mpi_time_imbalance": max(mpi_times) / mean_mpi if mean_mpi > 0 else None,
                "efficiency": efficiency.as_dict() | {"scope": scope} if efficiency else None,
            }
        )
    return out


def comm_members(comm: dict[str, Any]) -> str | None:
    """A communicator's members as the profile names them ("0-1"; an intercommunicator's
    "0-1 <-> 2-3": local and remote group), None in profiles from before members."""
    members = comm.get("members")
    if members is None:
        return None
    remote = comm.get("remote_members")
    return f"{members} <-> {remote}" if remote is not None else str(members)


def communicators(ranks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Communicators added up over ranks, one row per communicator (name or creating call, size
    and members); `ranks`: how many ranks used it. Most time first."""
    rows: dict[tuple[str, int, str | None], dict[str, Any]] = {}
    users: dict[tuple[str, int, str | None], set[int]] = {}
    for rank in ranks:
        for comm in rank.get("comms", []):
            label = comm.get("name") or comm.get("created_by") or f"comm {comm.get('id')}"
            members = comm_members(comm)
            if comm.get("created_by") == SELF:
                members = "each rank alone"
            key = (label, int(comm.get("size", 0)), members)
            row = rows.setdefault(
                key,
                {
                    "communicator": label,
                    "size": key[1],
                    "members": members,
                    "ranks": 0,
                    "calls": 0,
                    "time": 0.0,
                    "bytes": 0,
                },
            )
            users.setdefault(key, set()).add(int(rank["rank"]))
            row["ranks"] = len(users[key])
            for field in ("calls", "time", "bytes"):
                row[field] += comm.get(field, 0)
    return sorted(
        rows.values(), key=lambda row: (-row["time"], row["communicator"], row["members"] or "")
    )
