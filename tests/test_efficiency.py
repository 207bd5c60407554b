"""Efficiency: the POP CoE metrics and the receive wait (pop_metrics.py) on a crafted profile
with known per-rank times (exact values in the summary, `esmperf show`, the store and the
report's table), and the profiler's receive wait on a C program whose sender is late
(native/tests/prof_late_sender.c: counts and attribution, never durations)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import call, header, rank_record, write_profile
from esmperf.mpi.build import build_dir
from esmperf.mpi.stacks import discover_stacks
from esmperf.profile.pop_metrics import (
    pop_efficiency,
    profile_efficiency,
    receive_wait,
    run_efficiency,
)
from esmperf.profile.read import read_profile
from esmperf.profile.summary import summarise
from esmperf.store.database import Store
from esmperf.store.profile_tables import profile_tables

ESMPERF = Path(sys.executable).parent / "esmperf"
DEBIAN_STACKS = [s for s in discover_stacks().stacks if s.id in ("openmpi", "mpich")]


def waited(calls: int, time: float, wait_calls: int, wait_time: float) -> dict:
    return call(calls, time) | {"recv_wait": [wait_calls, wait_time]}


def crafted_ranks() -> list[dict]:
    """Useful times 8, 6, 4, 6 s (wall - MPI), runtime 16 s (the longest wall):
    load balance 6/8 = 0.75, communication efficiency 8/16 = 0.5, parallel efficiency 0.375.
    Receive wait: 0.25 + 0.5 + 1.0 = 1.75 s in 6 blocking calls (MPI_Test's is not blocking)."""
    return [
        rank_record(
            0,
            wall=16.0,
            mpi_time=8.0,
            calls={
                "MPI_Recv": waited(2, 0.5, 2, 0.25),
                "MPI_Wait": waited(4, 0.75, 3, 0.5),
                "MPI_Test": waited(9, 0.125, 5, 0.125),
                "MPI_Send": call(2, 6.625),
            },
        ),
        rank_record(
            1,
            wall=16.0,
            mpi_time=10.0,
            calls={"MPI_Waitall": waited(1, 1.0, 1, 1.0), "MPI_Barrier": call(1, 9.0)},
        ),
        rank_record(2, wall=16.0, mpi_time=12.0, calls={"MPI_Barrier": call(1, 12.0)}),
        rank_record(3, wall=12.0, mpi_time=6.0, calls={"MPI_Barrier": call(1, 6.0)}),
    ]


@pytest.fixture
def crafted(tmp_path: Path) -> Path:
    return write_profile(tmp_path / "crafted.jsonl", header(4), crafted_ranks())


def test_pop_metrics_exact() -> None:
    metrics = pop_efficiency([8.0, 6.0, 4.0, 6.0], 16.0)
    assert (
        metrics.load_balance,
        metrics.communication_efficiency,
        metrics.parallel_efficiency,
    ) == (0.75, 0.5, 0.375)
    assert (metrics.useful_mean, metrics.useful_max, metrics.runtime) == (6.0, 8.0, 16.0)
    assert run_efficiency([16.0, 16.0, 16.0, 12.0], [8.0, 10.0, 12.0, 6.0]) == metrics
    assert pop_efficiency([5.0], 5.0).parallel_efficiency == 1.0  # one rank, no MPI
    assert pop_efficiency([], 1.0) is None
    assert pop_efficiency([0.0, 0.0], 1.0) is None  # all MPI: undefined
    assert run_efficiency([1.0], [1.5]) is None  # threads: MPI > wall


def test_receive_wait_exact() -> None:
    wait = receive_wait(crafted_ranks())
    assert (wait["time"], wait["calls"]) == (1.75, 6)
    assert [(row["function"], row["calls"], row["time"]) for row in wait["by_function"]] == [
        ("MPI_Waitall", 1, 1.0),
        ("MPI_Wait", 3, 0.5),
        ("MPI_Recv", 2, 0.25),
    ]
    assert wait["per_rank"] == [0.75, 1.0, 0.0, 0.0]
    assert wait["percent_of_mpi_time"] == 100 * 1.75 / 36.0


def test_summary_show_and_store(crafted: Path, tmp_path: Path) -> None:
    summary = summarise(read_profile(crafted))
    assert summary["efficiency"] == {
        "load_balance": 0.75,
        "communication_efficiency": 0.5,
        "parallel_efficiency": 0.375,
        "useful_mean": 6.0,
        "useful_max": 8.0,
        "runtime": 16.0,
        "scope": "run",
    }
    assert summary["receive_wait"]["time"] == 1.75
    shown = subprocess.run(
        [str(ESMPERF), "show", str(crafted)],
        capture_output=True,
        text=True,
        env=os.environ | {"COLUMNS": "200"},
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    assert "0.375 = load balance 0.750 x communication efficiency 0.500 (POP, run;" in shown.stdout
    assert "1.750 s in 6 calls that completed a receive" in shown.stdout

    tables = profile_tables(read_profile(crafted), "run-a", 1)
    row = {name: values[0] for name, values in tables["profile_efficiency"].items()}
    assert row == {
        "run_key": "run-a",
        "rep": 1,
        "scope": "run",
        "load_balance": 0.75,
        "communication_efficiency": 0.5,
        "parallel_efficiency": 0.375,
        "useful_mean": 6.0,
        "useful_max": 8.0,
        "runtime": 16.0,
        "receive_wait": 1.75,
        "receive_wait_calls": 6,
        "late_sender": None,  # exact only from a trace (tests/test_late_sender.py)
        "late_sender_calls": None,
        "late_receives": None,
    }
    functions = tables["profile_function"]
    waits = {
        (r, f): (c, t)
        for r, f, c, t in zip(
            functions["rank"],
            functions["function"],
            functions["recv_wait_calls"],
            functions["recv_wait_time"],
            strict=True,
        )
    }
    assert waits[(0, "MPI_Wait")] == (3, 0.5) and waits[(2, "MPI_Barrier")] == (0, 0.0)
    with Store(tmp_path / "s.duckdb") as store:
        for table, columns in tables.items():
            store._insert_columns(table, columns)
        stored = store.rows("SELECT parallel_efficiency, receive_wait FROM profile_efficiency")
    assert stored == [{"parallel_efficiency": 0.375, "receive_wait": 1.75}]


def test_stored_receive_wait_reads_back(crafted: Path, tmp_path: Path) -> None:
    """The report reads the receive wait from the store through the same definition."""
    from esmperf.report.profile_data import load_profile_data

    with Store(tmp_path / "s.duckdb") as store:
        for table, columns in profile_tables(read_profile(crafted), "run-a", 1).items():
            store._insert_columns(table, columns)
        data = load_profile_data(store, "run-a", 1)
    assert data.receive_wait == receive_wait(crafted_ranks())
    assert data.efficiency["parallel_efficiency"] == 0.375 and data.efficiency["scope"] == "run"


def region(name: str, wall: float, mpi_time: float, path: list[str] | None = None) -> dict:
    return {
        "name": name,
        "path": path or [name],
        "enters": 1,
        "open": 0,
        "wall": wall,
        "mpi_time": mpi_time,
        "calls": 1,
        "sent": 0,
        "recv": 0,
        "functions": {},
    }


def test_timed_region_is_the_scope_when_every_rank_has_it() -> None:
    """The harness (set-up, timing barriers) stays out: useful time in the region "timed"
    is 4, 4, 2, 2 s (two entries on rank 3 add up), runtime 5 s: LB 0.75, CommE 0.8."""
    ranks = crafted_ranks()
    timed = [
        [region("timed", 5.0, 1.0)],
        [region("timed", 5.0, 1.0)],
        [region("timed", 4.0, 2.0), region("timestep", 1.0, 0.5, ["timed", "timestep"])],
        [region("timed", 2.0, 1.0), region("timed", 1.5, 0.5)],
    ]
    for rank, regions in zip(ranks, timed, strict=True):
        rank["regions"] = regions
    scope, metrics = profile_efficiency(ranks)
    assert scope == "region timed"
    assert (metrics.useful_mean, metrics.useful_max, metrics.runtime) == (3.0, 4.0, 5.0)
    assert (metrics.load_balance, metrics.communication_efficiency) == (0.75, 0.8)
    del ranks[3]["regions"]  # one rank without it: the whole run
    assert profile_efficiency(ranks)[0] == "run"


@pytest.mark.parametrize("stack", DEBIAN_STACKS, ids=lambda s: s.id)
def test_late_sender_receive_wait(stack, tmp_path: Path) -> None:
    binary = build_dir(stack) / "tests" / "prof_late_sender"
    if not binary.is_file():
        pytest.skip(f"{binary} not built: run `make build`")
    out = tmp_path / "late.jsonl"
    run = subprocess.run(
        [
            str(ESMPERF),
            "profile",
            "--out",
            str(out),
            "--",
            str(stack.mpirun),
            "-n",
            "2",
            str(binary),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    ranks = read_profile(out).ranks
    waits = [
        {name: c["recv_wait"] for name, c in rank["calls"].items() if "recv_wait" in c}
        for rank in ranks
    ]
    assert sorted(waits[0]) == ["MPI_Recv", "MPI_Wait"]  # not MPI_Send, MPI_Barrier
    assert waits[0]["MPI_Recv"][0] == 1 and waits[0]["MPI_Wait"][0] == 1  # 1 of 2 Waits
    assert ranks[0]["calls"]["MPI_Wait"]["calls"] == 2
    assert waits[0]["MPI_Recv"][1] > 0 and waits[0]["MPI_Wait"][1] > 0
    assert sorted(waits[1]) == ["MPI_Recv"] and waits[1]["MPI_Recv"][0] == 1
    summary = summarise(read_profile(out))
    assert summary["receive_wait"]["calls"] == 3


def test_report_has_the_efficiency_table(tmp_path: Path) -> None:
    """The fixture's profiles: every rank 10 s wall, 1 s x ranks in MPI: load balance 1,
    communication (and parallel) efficiency 0.9, 0.8, 0.6 at 1, 2, 4 ranks."""
    from esmperf.report.html import write_report
    from test_study_fixtures import FakeRun, make_store

    store = make_store(
        tmp_path / "fake.duckdb",
        [FakeRun(ranks, [1.0, 1.0, 1.0], profile=True) for ranks in (1, 2, 4)],
    )
    page = write_report(store, tmp_path / "report").read_text()
    table = page[page.index("Parallel efficiency (POP CoE metrics") :]
    table = table[: table.index("</table>")]
    rows = [re.sub(r"<[^>]+>", "|", row) for row in table.split("<tr>")[2:]]
    cells = [[cell for cell in row.split("|") if cell] for row in rows]
    assert [(c[1][:1], c[2], c[3], c[4], c[5], c[6]) for c in cells] == [
        ("1", "run", "1.000", "0.900", "0.900", "0"),
        ("2", "run", "1.000", "0.800", "0.800", "0"),
        ("4", "run", "1.000", "0.600", "0.600", "0"),
    ]
    assert (
        "POP parallel efficiency of the whole run 0.80 at 2 ranks (load balance 1.00, "
        "communication efficiency 0.80); 0.60 at 4 ranks"
    ) in page
    assert "below 0.8 (POP&#x27;s threshold) from 4 ranks, mostly through communication" in page
