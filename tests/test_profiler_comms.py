"""Two programs in one run (MPMD) and communicators, on native/tests/prof_comms.c run as
`mpirun -n 2 prof_comms ocean : -n 2 prof_comms atmos` under each Debian stack: each rank's
command, the programs' rank sets, communicators told apart by their members, and the time of a
MPI_Waitall charged to the communicator of the requests it completes. Counts, members and sums
of the profile's own times, never a time against a clock."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from esmperf.mpi.build import build_dir
from esmperf.mpi.stacks import discover_stacks
from esmperf.profile.groups import rank_ranges
from esmperf.profile.pop_metrics import run_efficiency
from esmperf.profile.read import read_profile
from esmperf.profile.summary import summarise
from esmperf.report.efficiency_table import _program_row
from esmperf.report.profile_data import load_profile_data
from esmperf.store.database import Store

ESMPERF = Path(sys.executable).parent / "esmperf"
STACKS = [s for s in discover_stacks().stacks if not s.simulated and s.id in ("openmpi", "mpich")]
N = M = 10  # prof_comms.c's rounds


def mpmd_profile(stack, tmp_path: Path):
    binary = build_dir(stack) / "tests" / "prof_comms"
    if not binary.is_file():
        pytest.skip(f"{binary} not built: run `make build`")
    out = tmp_path / "mpmd.jsonl"
    mpirun = [str(stack.mpirun)] + (["--oversubscribe"] if stack.id == "openmpi" else [])
    command = [*mpirun, "-n", "2", str(binary), "ocean", ":", "-n", "2", str(binary), "atmos"]
    run = subprocess.run(
        [str(ESMPERF), "profile", "--out", str(out), "--", *command],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "COLUMNS": "200"},  # the console's tables unwrapped
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return read_profile(out), binary, run.stdout


def region_functions(rank: dict, name: str) -> dict[str, list]:
    (region,) = [r for r in rank["regions"] if r["name"] == name]
    return region["functions"]


@pytest.mark.parametrize("stack", STACKS, ids=lambda s: s.id)
def test_each_rank_names_its_program_and_programs_have_their_own_figures(stack, tmp_path):
    profile, binary, console = mpmd_profile(stack, tmp_path)
    assert [rank["command"] for rank in profile.ranks] == [[str(binary), "ocean"]] * 2 + [
        [str(binary), "atmos"]
    ] * 2
    assert [rank["appnum"] for rank in profile.ranks] == [0, 0, 1, 1]
    assert profile.header["command"] == [str(binary), "ocean"]  # rank 0's, for compatibility
    programs = summarise(profile)["programs"]
    assert [(p["program"], p["command"][1:], p["ranks"], p["appnum"]) for p in programs] == [
        ("prof_comms", ["ocean"], [0, 1], 0),
        ("prof_comms", ["atmos"], [2, 3], 1),
    ]
    for program in programs:  # each program's POP metrics are of its own ranks alone
        mine = [profile.ranks[r] for r in program["ranks"]]
        expected = run_efficiency([r["wall"] for r in mine], [r["mpi_time"] for r in mine])
        assert program["efficiency"]["load_balance"] == pytest.approx(expected.load_balance)
        assert program["wall_time"] == max(r["wall"] for r in mine)
    assert "Programs (MPMD" in console and "prof_comms atmos" in console

    store = Store(tmp_path / "store.duckdb")
    repetition = {"run_key": "k", "rep": 0, "kind": "profile", "status": "ok"}
    store.add_repetition(repetition, {}, profile)
    rows = store.rows("SELECT program, command, appnum, ranks, rank_count FROM profile_program")
    assert [
        (r["program"], json.loads(r["command"])[1:], r["appnum"], r["ranks"]) for r in rows
    ] == [
        ("prof_comms", ["ocean"], 0, "0-1"),
        ("prof_comms", ["atmos"], 1, "2-3"),
    ]
    ranks = store.rows("SELECT rank, appnum, command FROM profile_rank ORDER BY rank")
    assert [(r["appnum"], json.loads(r["command"])[1]) for r in ranks] == [
        (0, "ocean"),
        (0, "ocean"),
        (1, "atmos"),
        (1, "atmos"),
    ]
    members = store.rows(
        "SELECT members, count(*) AS n FROM profile_comm WHERE created_by = 'MPI_Cart_sub' "
        "GROUP BY members ORDER BY members"
    )
    assert [(r["members"], r["n"]) for r in members] == [
        ("0,2", 2),
        ("0-1", 2),
        ("1,3", 2),
        ("2-3", 2),
    ]
    # the report's efficiency table has a row per program, of its own ranks
    programs = load_profile_data(store, "k", 0).programs
    assert [(p["program"], p["ranks"], p["rank_count"]) for p in programs] == [
        ("prof_comms", "0-1", 2),
        ("prof_comms", "2-3", 2),
    ]
    assert "program prof_comms (ranks 2-3)" in _program_row(programs[1])
    store.close()


@pytest.mark.parametrize("stack", STACKS, ids=lambda s: s.id)
def test_communicators_are_told_apart_by_their_members(stack, tmp_path):
    profile, _, _ = mpmd_profile(stack, tmp_path)
    rows = {
        (row["communicator"], row["size"], row["members"]): (row["ranks"], row["calls"])
        for row in summarise(profile)["communicators"]
    }
    # local (split by MPI_APPNUM): Comm_rank, then N x (Irecv, Isend, Waitall) on each rank;
    # rows: N x (Ibcast, Iallreduce, Ialltoall, Waitall); columns: M x (Ibarrier, Waitall)
    assert rows == {
        ("MPI_Comm_split", 2, "0-1"): (2, 2 * (3 * N + 1)),
        ("MPI_Comm_split", 2, "2-3"): (2, 2 * (3 * N + 1)),
        ("MPI_Cart_sub", 2, "0-1"): (2, 2 * 4 * M),
        ("MPI_Cart_sub", 2, "2-3"): (2, 2 * 4 * M),
        ("MPI_Cart_sub", 2, "0,2"): (2, 2 * 2 * M),
        ("MPI_Cart_sub", 2, "1,3"): (2, 2 * 2 * M),
        ("MPI_Cart_create", 4, "0-3"): (4, 4 * 2),  # Cart_sub twice on it
        ("MPI_COMM_WORLD", 4, "0-3"): (4, 4 * 4),  # Comm_rank, Comm_size, Comm_split, Cart_create
        ("MPI_COMM_SELF", 1, "each rank alone"): (4, 0),
    }
    for rank in profile.ranks:
        r = rank["rank"]
        members = {(c["created_by"], c["members"]) for c in rank["comms"]}
        assert ("MPI_Comm_split", "0-1" if r < 2 else "2-3") in members
        assert ("MPI_Cart_sub", "0-1" if r < 2 else "2-3") in members  # its row
        assert ("MPI_Cart_sub", "0,2" if r % 2 == 0 else "1,3") in members  # its column
        assert ("MPI_COMM_SELF", str(r)) in members


@pytest.mark.parametrize("stack", STACKS, ids=lambda s: s.id)
def test_waitall_time_goes_to_the_communicator_of_its_requests(stack, tmp_path):
    profile, _, _ = mpmd_profile(stack, tmp_path)
    for rank in profile.ranks:
        r = rank["rank"]
        comm = {(c["created_by"], c["members"]): c for c in rank["comms"]}
        local = comm[("MPI_Comm_split", "0-1" if r < 2 else "2-3")]
        row = comm[("MPI_Cart_sub", "0-1" if r < 2 else "2-3")]
        column = comm[("MPI_Cart_sub", "0,2" if r % 2 == 0 else "1,3")]
        # region "local": every call is on local, so local's time is all of theirs, Waitall's too
        calls = region_functions(rank, "local")
        assert set(calls) == {"MPI_Comm_rank", "MPI_Irecv", "MPI_Isend", "MPI_Waitall"}
        assert local["calls"] == sum(c[0] for c in calls.values()) == 3 * N + 1
        assert local["time"] == pytest.approx(sum(c[1] for c in calls.values()), rel=1e-6)
        # region "mixed": each Waitall completes 1 column request and 3 row requests
        mixed = region_functions(rank, "mixed")
        waitall = mixed["MPI_Waitall"][1]
        row_calls = sum(mixed[f][1] for f in ("MPI_Ibcast", "MPI_Iallreduce", "MPI_Ialltoall"))
        assert (row["calls"], column["calls"]) == (4 * M, 2 * M)
        assert column["time"] == pytest.approx(mixed["MPI_Ibarrier"][1] + waitall / 4, abs=1e-7)
        assert row["time"] == pytest.approx(row_calls + 3 * waitall / 4, abs=1e-7)


def test_rank_ranges():
    assert rank_ranges([5, 0, 1, 2]) == "0-2,5"
    assert rank_ranges([0, 2]) == "0,2"
    assert rank_ranges([3]) == "3"
    assert rank_ranges([]) == ""
