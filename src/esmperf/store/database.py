"""The study store: one DuckDB file per study, tidy tables, one transaction per repetition.

Tables (columns in docs/studies.md):
- study_file   the study file as given to each session (text and where it came from)
- session      one row per `esmperf study` invocation: the machine and software it ran on
- run          one row per configuration: what runs, the knobs and the variables that
               implement them, the MPI library, oversubscription, status (pending, complete,
               failed, timeout, skipped) and why, launched_by (local, srun or slurm)
- repetition   one row per run of the program: warm-up, measured or profiled; elapsed, wall,
               figure of merit, status (ok, failed, timeout, verification_failed), exit code,
               load average, output tails; killed_after_result says why an ok repetition
               had to be killed after its verified result (e.g. a hang in MPI_Finalize)
- metric       every number of a workload's JSON result, per repetition (tidy: name, value)
- profile, profile_rank, profile_function, profile_histogram, profile_peer, profile_comm,
  profile_bin: the profile files of profiled repetitions, imported (docs/profile-format.md)
- profile_efficiency  per profiled repetition, the POP CoE metrics and the receive wait
  (profile/pop_metrics.py)

The Slurm jobs of a study run as batch jobs (slurm_job, slurm_repetition) are written by the
part of Store in slurm_tables.py.

A repetition and everything belonging to it are committed together as soon as it ends, so a
study killed at any moment (even kill -9) keeps every finished repetition and none twice.
"""

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from esmperf.errors import EsmperfError
from esmperf.profile.read import Profile
from esmperf.store.profile_tables import profile_tables
from esmperf.store.schema import (
    ADDED_COLUMNS,
    OPTIONAL_TABLES,
    REPETITION_COLUMNS,
    RUN_COLUMNS,
    SCHEMA,
    SCHEMA_VERSION,
    SESSION_COLUMNS,
    TABLES,
    TAIL_CHARS,
)
from esmperf.store.slurm_tables import SlurmTables

__all__ = ["Store", "StoreError", "TAIL_CHARS", "results_dir"]


def results_dir(store_path: Path) -> Path:
    """Where a study's profiles, scratch directories and report go: beside its store."""
    return store_path.with_suffix("")


class StoreError(EsmperfError):
    """A store that cannot be opened or used; the message says what to do."""


class Store(SlurmTables):
    """An open study store. Use as a context manager; `read_only` for reports."""

    def __init__(self, path: Path, read_only: bool = False) -> None:
        self.path = Path(path)
        self.read_only = read_only
        if read_only and not self.path.is_file():
            raise StoreError(
                f"no such study store: {self.path} (run the study first: esmperf study FILE)"
            )
        if read_only and (wrong := _not_a_store(self.path)):
            raise StoreError(wrong)
        if not read_only:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise StoreError(f"cannot create {self.path.parent}: {error.strerror}") from None
        try:
            self.con = duckdb.connect(str(self.path), read_only=read_only)
        except duckdb.Error as error:
            raise StoreError(_open_failure(self.path, error)) from None
        try:
            self._check_schema()
        except StoreError:
            self.con.close()
            raise

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.con.close()

    def _check_schema(self) -> None:
        tables = {
            row[0]
            for row in self.con.execute(
                "SELECT table_name FROM information_schema.tables"
            ).fetchall()
        }
        if tables and "meta" not in tables:
            raise StoreError(
                f"{self.path} is a DuckDB file but not an esmperf study store: "
                "choose another --out (it was left untouched)"
            )
        if "meta" in tables:
            row = self.con.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if row and row[0] != SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path} has store schema {row[0]}; this esmperf reads "
                    f"schema {SCHEMA_VERSION}: use the esmperf that wrote it"
                )
        if self.read_only:
            if "meta" not in tables:
                raise StoreError(f"{self.path} is an empty store: it holds no study yet")
            return
        self.con.execute("BEGIN")
        self.con.execute(SCHEMA)
        for table, column, sql_type in ADDED_COLUMNS:
            self.con.execute(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {column} {sql_type}")
        self.con.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", [SCHEMA_VERSION])
        self.con.execute("COMMIT")

    # --- the study and sessions ------------------------------------------------------------

    def study_name(self) -> str | None:
        row = self.con.execute(
            "SELECT name FROM study_file ORDER BY session_id DESC LIMIT 1"
        ).fetchone()
        return row[0] if row else None

    def study_info(self) -> dict[str, Any]:
        rows = self.rows("SELECT * FROM study_file ORDER BY session_id DESC LIMIT 1")
        if not rows:
            raise StoreError(f"{self.path} holds no study yet")
        return rows[0]

    def begin_session(self, environment: dict[str, Any], study: dict[str, Any]) -> int:
        """Record a new session and the study file it runs; returns its id."""
        name = self.study_name()
        if name is not None and name != study["name"]:
            raise StoreError(
                f"{self.path} holds the study {name!r}, not {study['name']!r}: "
                "give another --out (nothing was changed)"
            )
        row = self.con.execute("SELECT coalesce(max(session_id), 0) + 1 FROM session").fetchone()
        session_id = int(row[0]) if row else 1
        values = {**environment, "session_id": session_id, "finished": None}
        self.con.execute("BEGIN")
        self._insert("session", SESSION_COLUMNS, [values])
        self._insert(
            "study_file",
            (
                "session_id",
                "name",
                "title",
                "description",
                "seed",
                "base_ranks",
                "metric",
                "source",
                "text",
            ),
            [{**study, "session_id": session_id}],
        )
        self.con.execute("COMMIT")
        return session_id

    def end_session(self, session_id: int, finished: str) -> None:
        self.con.execute(
            "UPDATE session SET finished = ? WHERE session_id = ?", [finished, session_id]
        )

    # --- runs and repetitions --------------------------------------------------------------

    def save_run(self, run: dict[str, Any]) -> None:
        """Insert or update a configuration's row (its repetitions are never touched)."""
        values = [_column_value(run.get(column)) for column in RUN_COLUMNS]
        placeholders = ", ".join("?" for _ in RUN_COLUMNS)
        self.con.execute(
            f"INSERT OR REPLACE INTO run ({', '.join(RUN_COLUMNS)}) VALUES ({placeholders})", values
        )

    def set_run_status(self, run_key: str, status: str, reason: str | None = None) -> None:
        self.con.execute(
            "UPDATE run SET status = ?, reason = ? WHERE run_key = ?", [status, reason, run_key]
        )

    def set_run_fom(self, run_key: str, unit: str, higher_is_better: bool) -> None:
        """For a command whose JSON result line says its unit and direction."""
        self.con.execute(
            "UPDATE run SET fom_unit = ?, higher_is_better = ? WHERE run_key = ?",
            [unit, higher_is_better, run_key],
        )

    def remove_runs(self, run_keys: Sequence[str]) -> list[Path]:
        """Delete configurations and everything stored of them (repetitions, metrics, profile
        tables, Slurm jobs), all or nothing; returns their profile files kept beside the store
        (results_dir), for the caller to delete (`esmperf study --prune`)."""
        keys = list(run_keys)
        if not keys:
            return []
        marks = ", ".join("?" for _ in keys)
        beside = results_dir(self.path).absolute()
        files = [
            Path(row["profile_file"])
            for row in self.rows(
                f"SELECT profile_file FROM repetition WHERE run_key IN ({marks})"
                " AND profile_file IS NOT NULL",
                keys,
            )
            if beside in Path(row["profile_file"]).absolute().parents
        ]
        present = {row[0] for row in self.con.execute("SHOW TABLES").fetchall()}
        per_session = ("study_file", "session")
        tables = [t for t in (*TABLES, *OPTIONAL_TABLES) if t in present and t not in per_session]
        self.con.execute("BEGIN")
        try:
            for table in tables:
                self.con.execute(f"DELETE FROM {table} WHERE run_key IN ({marks})", keys)
            self.con.execute("COMMIT")
        except Exception:
            self.con.execute("ROLLBACK")
            raise
        return files

    def run_row(self, run_key: str) -> dict[str, Any] | None:
        rows = self.rows("SELECT * FROM run WHERE run_key = ?", [run_key])
        return rows[0] if rows else None

    def repetitions(self, run_key: str) -> list[dict[str, Any]]:
        return self.rows("SELECT * FROM repetition WHERE run_key = ? ORDER BY rep", [run_key])

    def next_rep(self, run_key: str) -> int:
        row = self.con.execute(
            "SELECT coalesce(max(rep), 0) + 1 FROM repetition WHERE run_key = ?", [run_key]
        ).fetchone()
        return int(row[0]) if row else 1

    def add_repetition(
        self, repetition: dict[str, Any], metrics: dict[str, float], profile: Profile | None = None
    ) -> None:
        """Commit one repetition with its metrics and imported profile, all or nothing."""
        key, rep = repetition["run_key"], repetition["rep"]
        self.con.execute("BEGIN")
        try:
            self._insert("repetition", REPETITION_COLUMNS, [repetition])
            if metrics:
                self._insert(
                    "metric",
                    ("run_key", "rep", "name", "value"),
                    [
                        {"run_key": key, "rep": rep, "name": name, "value": value}
                        for name, value in sorted(metrics.items())
                    ],
                )
            if profile is not None:
                for table, columns in profile_tables(profile, key, rep).items():
                    self._insert_columns(table, columns)
            self.con.execute("COMMIT")
        except Exception:
            self.con.execute("ROLLBACK")
            raise

    # --- reading ---------------------------------------------------------------------------

    def rows(self, query: str, parameters: Sequence[Any] = ()) -> list[dict[str, Any]]:
        cursor = self.con.execute(query, list(parameters))
        names = [column[0] for column in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]

    def runs(self) -> list[dict[str, Any]]:
        return self.rows("SELECT * FROM run ORDER BY position, run_key")

    def sessions(self) -> list[dict[str, Any]]:
        return self.rows("SELECT * FROM session ORDER BY session_id")

    def measured_unit(self, run_key: str) -> str | None:
        """The unit of a configuration's measured figure of merit (its JSON result's own)."""
        rows = self.rows(
            "SELECT fom_unit FROM repetition WHERE run_key = ? AND "
            "kind = 'measure' AND status = 'ok' LIMIT 1",
            [run_key],
        )
        return rows[0]["fom_unit"] if rows else None

    def export(self, directory: Path, fmt: str) -> list[Path]:
        """Every table as one Parquet or CSV file in `directory`."""
        if fmt not in ("parquet", "csv"):
            raise StoreError(f"unknown export format {fmt!r}: use parquet or csv")
        directory.mkdir(parents=True, exist_ok=True)
        written = []
        present = {
            row[0]
            for row in self.con.execute(
                "SELECT table_name FROM information_schema.tables"
            ).fetchall()
        }
        optional = [table for table in OPTIONAL_TABLES if table in present]
        for table in (*TABLES, *optional):
            target = directory / f"{table}.{fmt}"
            options = "(FORMAT parquet)" if fmt == "parquet" else "(FORMAT csv, HEADER true)"
            self.con.execute(f"COPY {table} TO '{_sql_text(str(target))}' {options}")
            written.append(target)
        return written

    # --- writing helpers -------------------------------------------------------------------

    def _insert(self, table: str, columns: Sequence[str], rows: Iterable[dict[str, Any]]) -> None:
        placeholders = ", ".join("?" for _ in columns)
        for row in rows:
            self.con.execute(
                f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({placeholders})",
                [_column_value(row.get(column)) for column in columns],
            )

    def _insert_columns(self, table: str, columns: dict[str, list[Any]]) -> None:
        """Bulk insert (profiles have thousands of rows): columns as NumPy arrays."""
        if not columns or not next(iter(columns.values())):
            return
        frame = {name: _array(values) for name, values in columns.items()}
        view = f"esmperf_rows_{table}"
        self.con.register(view, frame)
        try:
            self.con.execute(
                f"INSERT INTO {table} ({', '.join(frame)}) SELECT {', '.join(frame)} FROM {view}"
            )
        finally:
            self.con.unregister(view)


def _array(values: list[Any]) -> np.ndarray:
    if all(isinstance(value, bool) for value in values):
        return np.array(values, dtype=bool)
    if all(isinstance(value, int) and not isinstance(value, bool) for value in values):
        return np.array(values, dtype=np.int64)
    if all(isinstance(value, (int, float)) and not isinstance(value, bool) for value in values):
        return np.array(values, dtype=np.float64)
    return np.array([None if value is None else str(value) for value in values], dtype=object)


def _column_value(value: Any) -> Any:
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, sort_keys=True)
    return value


def _sql_text(text: str) -> str:
    return text.replace("'", "''")


DUCKDB_MAGIC = b"DUCK"  # bytes 8-11 of a DuckDB file


def _not_a_store(path: Path) -> str | None:
    """Why a file given as a store to read is not one (a profile, or not a DuckDB file), or
    None: DuckDB's own error for it reads "Catalog Error: Cannot launch in-memory database"."""
    try:
        with path.open("rb") as file:
            head = file.read(16)
            first_line = head + file.readline(4096)
    except OSError:
        return None  # DuckDB says why it cannot read it
    if not head or head[8:12] == DUCKDB_MAGIC:
        return None
    try:
        is_profile = json.loads(first_line).get("format") == "esmperf-profile"
    except (ValueError, AttributeError):
        is_profile = False
    if is_profile:
        return (
            f"{path} is a profile, not a study store: print it with `esmperf show {path}` "
            "(reports, compare and export read the store a study wrote, e.g. "
            "results/NAME.duckdb)"
        )
    return (
        f"{path} is not an esmperf study store (not a DuckDB file): give the store a study "
        "wrote, e.g. results/NAME.duckdb"
    )


def _open_failure(path: Path, error: duckdb.Error) -> str:
    message = str(error)
    if "lock" in message.lower():
        return (
            f"{path} is in use by another process (another `esmperf study` running on it?): "
            "wait for it to finish, or give another --out"
        )
    if "not a valid DuckDB database" in message:
        return f"{path} is not an esmperf study store (not a DuckDB file): choose another --out"
    if "newer" in message.lower() or "version" in message.lower():
        return f"{path} was written by another DuckDB version: {message.splitlines()[0]}"
    return f"cannot open the study store {path}: {message.splitlines()[0]}"
