"""The DuckDB store: tidy tables with exact contents, repetitions all-or-nothing, profiles
imported row by row, export, and bad input that never loses stored results."""

from pathlib import Path

import duckdb
import pytest

from conftest import header, small_ranks, write_profile
from esmperf.profile.read import read_profile
from esmperf.store.database import Store, StoreError
from esmperf.store.profile_tables import profile_tables
from test_study_fixtures import ENVIRONMENT, FakeRun, configuration, make_store


def test_tables_hold_what_was_stored(tmp_path: Path) -> None:
    path = make_store(
        tmp_path / "s.duckdb",
        [FakeRun(1, [10.0, 11.0, 12.0], profile=True), FakeRun(2, [19.0, 20.0], failure="boom")],
    )
    with Store(path, read_only=True) as store:
        runs = store.runs()
        assert [(r["ranks"], r["status"], r["workload"], r["stack"]) for r in runs] == [
            (1, "complete", "pop", "openmpi"),
            (2, "complete", "pop", "openmpi"),
        ]
        reps = store.repetitions(runs[1]["run_key"])
        assert [(r["rep"], r["kind"], r["status"], r["fom"]) for r in reps] == [
            (1, "measure", "ok", 19.0),
            (2, "measure", "ok", 20.0),
            (3, "measure", "failed", None),
        ]
        assert reps[2]["stderr"] == "boom"
        assert store.rows("SELECT count(*) AS n FROM metric")[0]["n"] == 5
        assert store.rows("SELECT ranks FROM profile") == [{"ranks": 1}]
        assert store.study_name() == "fake"


def test_profile_import_is_exact(tmp_path: Path) -> None:
    profile = read_profile(write_profile(tmp_path / "p.jsonl", header(3), small_ranks()))
    tables = profile_tables(profile, "key", 4)
    functions = tables["profile_function"]
    assert list(
        zip(
            functions["rank"],
            functions["function"],
            functions["calls"],
            functions["sent"],
            functions["recv"],
        )
    ) == [
        (0, "MPI_Barrier", 1, 0, 0),
        (0, "MPI_Recv", 2, 0, 2048),
        (0, "MPI_Send", 4, 400, 0),
        (1, "MPI_Recv", 4, 0, 8),
        (1, "MPI_Send", 1, 1, 0),
        (2, "MPI_Allreduce", 2, 16, 16),
        (2, "MPI_File_write", 1, 1 << 19, 0),
    ]
    histogram = tables["profile_histogram"]
    assert list(zip(histogram["rank"], histogram["bucket"], histogram["messages"]))[:3] == [
        (0, 0, 1),
        (0, 11, 2),
        (0, 7, 4),
    ]
    assert tables["profile_peer"]["peer"] == [1, 2, 3]  # conftest: (rank + 1) % 4
    assert len(tables["profile_bin"]["bin"]) == 12  # 4 bins x 3 ranks
    assert tables["profile_comm"]["created_by"] == ["MPI_COMM_WORLD"] * 3 + ["MPI_Comm_split"]
    assert set(tables["profile_rank"]["rep"]) == {4}


def test_a_repetition_is_stored_once(tmp_path: Path) -> None:
    path = make_store(tmp_path / "s.duckdb", [FakeRun(1, [10.0])])
    with Store(path) as store:
        key = store.runs()[0]["run_key"]
        duplicate = {"run_key": key, "rep": 1, "kind": "measure", "status": "ok", "fom": 99.0}
        with pytest.raises(duckdb.ConstraintException):
            store.add_repetition(duplicate, {"fom.value": 99.0})
        assert [r["fom"] for r in store.repetitions(key)] == [10.0]
        assert store.rows("SELECT count(*) AS n FROM metric")[0]["n"] == 1  # rolled back
        assert store.next_rep(key) == 2


def test_export_parquet_and_csv(tmp_path: Path) -> None:
    path = make_store(tmp_path / "s.duckdb", [FakeRun(4, [1.0, 2.0], profile=True)])
    with Store(path, read_only=True) as store:
        parquet = store.export(tmp_path / "parquet", "parquet")
        csv = store.export(tmp_path / "csv", "csv")
    assert len(parquet) == len(csv) == 17  # 12 tables, efficiency, 3 of the regions, programs
    ranks = duckdb.sql(f"SELECT count(*) FROM '{tmp_path / 'parquet' / 'profile_rank.parquet'}'")
    assert ranks.fetchall() == [(4,)]
    assert (tmp_path / "csv" / "run.csv").read_text().startswith("run_key,series,")


def test_bad_input_never_loses_results(tmp_path: Path) -> None:
    path = make_store(tmp_path / "s.duckdb", [FakeRun(1, [10.0, 11.0])])
    with Store(path) as store, pytest.raises(StoreError, match="holds the study 'fake', not"):
        store.begin_session(ENVIRONMENT, {"name": "other"})
    not_a_store = tmp_path / "notes.duckdb"
    not_a_store.write_text("my notes")
    with pytest.raises(StoreError, match="not an esmperf study store"):
        Store(not_a_store)
    assert not_a_store.read_text() == "my notes"
    foreign = tmp_path / "foreign.duckdb"
    duckdb.connect(str(foreign)).execute("CREATE TABLE t (x INTEGER)").close()
    with pytest.raises(StoreError, match="not an esmperf study store"):
        Store(foreign)
    with pytest.raises(StoreError, match="no such study store"):
        Store(tmp_path / "none.duckdb", read_only=True)
    with Store(path, read_only=True) as store:
        assert [r["fom"] for r in store.repetitions(store.runs()[0]["run_key"])] == [10.0, 11.0]


def test_configuration_row_round_trip(tmp_path: Path) -> None:
    run = FakeRun(2, [5.0], knobs={"transport": "tcp"})
    path = make_store(tmp_path / "s.duckdb", [run])
    with Store(path, read_only=True) as store:
        row = store.runs()[0]
    assert row["run_key"] == configuration(run).key
    assert row["knobs"] == '{"transport": "tcp"}' and row["cores"] == 2


def test_a_store_older_than_a_column_opens_and_keeps_everything(tmp_path: Path) -> None:
    path = make_store(tmp_path / "s.duckdb", [FakeRun(1, [10.0, 11.0])])
    con = duckdb.connect(str(path))  # as esmperf wrote it before killed_after_result
    con.execute("ALTER TABLE repetition DROP COLUMN killed_after_result")
    con.close()
    with Store(path, read_only=True) as store:  # a report reads it as it is
        reps = store.repetitions(store.runs()[0]["run_key"])
    assert [r["fom"] for r in reps] == [10.0, 11.0] and "killed_after_result" not in reps[0]
    with Store(path) as store:  # a study opening it for writing adds the column
        key = store.runs()[0]["run_key"]
        store.add_repetition(
            {
                "run_key": key,
                "rep": 3,
                "kind": "measure",
                "status": "ok",
                "fom": 12.0,
                "killed_after_result": "hung after its result",
            },
            {},
        )
        reps = store.repetitions(key)
    assert [(r["fom"], r["killed_after_result"]) for r in reps] == [
        (10.0, None),
        (11.0, None),
        (12.0, "hung after its result"),
    ]
