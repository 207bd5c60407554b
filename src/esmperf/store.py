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
- profile_region, profile_region_function, profile_region_histogram: their regions (regions.py)

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
from esmperf.profile import Profile
from esmperf.regions import SCHEMA as REGION_SCHEMA
from esmperf.regions import TABLES as REGION_TABLES
from esmperf.regions import region_tables

SCHEMA_VERSION = "1"
# Columns added to schema 1 since it was first written: a store opened for writing gains the
# ones it lacks (NULL in its old rows), so an older store keeps every result; readers of a
# store opened read-only use row.get() for them. Adding a column keeps the schema version (an
# older esmperf reads and writes the store as before); changing or dropping one would not.
ADDED_COLUMNS = (("repetition", "killed_after_result", "VARCHAR"),
                 ("run", "launched_by", "VARCHAR"))
TAIL_CHARS = 20000  # how much of a run's stdout and stderr is kept

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS study_file (
    session_id INTEGER, name VARCHAR, title VARCHAR, description VARCHAR, seed VARCHAR,
    base_ranks INTEGER, metric VARCHAR, source VARCHAR, text VARCHAR);
CREATE TABLE IF NOT EXISTS session (
    session_id INTEGER PRIMARY KEY, started TIMESTAMP, finished TIMESTAMP, command VARCHAR,
    hostname VARCHAR, cpu_model VARCHAR, cores INTEGER, usable_cores INTEGER,
    memory_gib DOUBLE, kernel VARCHAR, os VARCHAR, python VARCHAR, esmperf_version VARCHAR,
    git_commit VARCHAR, git_dirty BOOLEAN, load_at_start DOUBLE);
CREATE TABLE IF NOT EXISTS run (
    run_key VARCHAR PRIMARY KEY, series VARCHAR, position INTEGER, matrix INTEGER,
    label VARCHAR, kind VARCHAR, workload VARCHAR, size VARCHAR, steps INTEGER,
    ranks INTEGER, ranks_per_node INTEGER, nodes INTEGER, stack VARCHAR, mpi_library VARCHAR,
    knobs VARCHAR, options VARCHAR, env VARCHAR, knob_env VARCHAR, launcher_args VARCHAR,
    argv VARCHAR, fom_source VARCHAR, fom_unit VARCHAR, higher_is_better BOOLEAN,
    profile VARCHAR, timeout DOUBLE, repeats VARCHAR, cores INTEGER, oversubscribed BOOLEAN,
    status VARCHAR, reason VARCHAR, identity VARCHAR, session_id INTEGER, launched_by VARCHAR);
CREATE TABLE IF NOT EXISTS repetition (
    run_key VARCHAR, rep INTEGER, kind VARCHAR, session_id INTEGER, started TIMESTAMP,
    elapsed DOUBLE, wall DOUBLE, fom DOUBLE, fom_unit VARCHAR, status VARCHAR,
    exit_code INTEGER, verification VARCHAR, load_before DOUBLE, load_after DOUBLE,
    busy_cores_before DOUBLE,
    oversubscribed BOOLEAN, result VARCHAR, stdout VARCHAR, stderr VARCHAR,
    profile_file VARCHAR, profile_error VARCHAR, killed_after_result VARCHAR,
    PRIMARY KEY (run_key, rep));
CREATE TABLE IF NOT EXISTS metric (
    run_key VARCHAR, rep INTEGER, name VARCHAR, value DOUBLE, PRIMARY KEY (run_key, rep, name));
CREATE TABLE IF NOT EXISTS profile (
    run_key VARCHAR, rep INTEGER, ranks INTEGER, mpi_library VARCHAR, abi VARCHAR,
    start_epoch DOUBLE, bin_width DOUBLE, command VARCHAR, knobs VARCHAR,
    fortran_warning VARCHAR, PRIMARY KEY (run_key, rep));
CREATE TABLE IF NOT EXISTS profile_rank (
    run_key VARCHAR, rep INTEGER, rank INTEGER, host VARCHAR, wall DOUBLE, mpi_time DOUBLE,
    io_write_calls BIGINT, io_write_bytes BIGINT, io_write_time DOUBLE,
    io_read_calls BIGINT, io_read_bytes BIGINT, io_read_time DOUBLE,
    overhead_calls BIGINT, overhead_seconds DOUBLE);
CREATE TABLE IF NOT EXISTS profile_function (
    run_key VARCHAR, rep INTEGER, rank INTEGER, function VARCHAR, calls BIGINT, time DOUBLE,
    time_min DOUBLE, time_max DOUBLE, sent BIGINT, recv BIGINT, calls_c BIGINT,
    calls_fortran BIGINT);
CREATE TABLE IF NOT EXISTS profile_histogram (
    run_key VARCHAR, rep INTEGER, rank INTEGER, function VARCHAR, bucket INTEGER,
    messages BIGINT);
CREATE TABLE IF NOT EXISTS profile_peer (
    run_key VARCHAR, rep INTEGER, rank INTEGER, peer INTEGER, direction VARCHAR,
    bytes BIGINT, messages BIGINT);
CREATE TABLE IF NOT EXISTS profile_comm (
    run_key VARCHAR, rep INTEGER, rank INTEGER, comm_id BIGINT, size INTEGER, name VARCHAR,
    created_by VARCHAR, calls BIGINT, time DOUBLE, bytes BIGINT);
CREATE TABLE IF NOT EXISTS profile_bin (
    run_key VARCHAR, rep INTEGER, rank INTEGER, bin INTEGER, start DOUBLE, width DOUBLE,
    mpi_time DOUBLE, calls BIGINT, sent BIGINT, recv BIGINT, io_write BIGINT, io_read BIGINT,
    io_time DOUBLE);
"""
TABLES = ("study_file", "session", "run", "repetition", "metric", "profile", "profile_rank",
          "profile_function", "profile_histogram", "profile_peer", "profile_comm", "profile_bin")
# Tables only some stores have: the Slurm jobs of a study run with --launcher slurm.
# The regions' tables (stores written before regions lack them).
OPTIONAL_TABLES = ("slurm_job", "slurm_repetition", *REGION_TABLES)
RUN_COLUMNS = ("run_key", "series", "position", "matrix", "label", "kind", "workload", "size",
               "steps", "ranks", "ranks_per_node", "nodes", "stack", "mpi_library", "knobs",
               "options", "env", "knob_env", "launcher_args", "argv", "fom_source", "fom_unit",
               "higher_is_better", "profile", "timeout", "repeats", "cores", "oversubscribed",
               "status", "reason", "identity", "session_id", "launched_by")
REPETITION_COLUMNS = ("run_key", "rep", "kind", "session_id", "started", "elapsed", "wall",
                      "fom", "fom_unit", "status", "exit_code", "verification", "load_before",
                      "load_after", "busy_cores_before", "oversubscribed", "result", "stdout", "stderr",
                      "profile_file", "profile_error", "killed_after_result")
SESSION_COLUMNS = ("session_id", "started", "finished", "command", "hostname", "cpu_model",
                   "cores", "usable_cores", "memory_gib", "kernel", "os", "python",
                   "esmperf_version", "git_commit", "git_dirty", "load_at_start")


class StoreError(EsmperfError):
    """A store that cannot be opened or used; the message says what to do."""


class Store:
    """An open study store. Use as a context manager; `read_only` for reports."""

    def __init__(self, path: Path, read_only: bool = False) -> None:
        self.path = Path(path)
        self.read_only = read_only
        if read_only and not self.path.is_file():
            raise StoreError(f"no such study store: {self.path} (run the study first: "
                             "esmperf study FILE)")
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
        tables = {row[0] for row in self.con.execute(
            "SELECT table_name FROM information_schema.tables").fetchall()}
        if tables and "meta" not in tables:
            raise StoreError(f"{self.path} is a DuckDB file but not an esmperf study store: "
                             "choose another --out (it was left untouched)")
        if "meta" in tables:
            row = self.con.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if row and row[0] != SCHEMA_VERSION:
                raise StoreError(f"{self.path} has store schema {row[0]}; this esmperf reads "
                                 f"schema {SCHEMA_VERSION}: use the esmperf that wrote it")
        if self.read_only:
            if "meta" not in tables:
                raise StoreError(f"{self.path} is an empty store: it holds no study yet")
            return
        self.con.execute("BEGIN")
        self.con.execute(SCHEMA + REGION_SCHEMA)
        for table, column, sql_type in ADDED_COLUMNS:
            self.con.execute(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {column} {sql_type}")
        self.con.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", [SCHEMA_VERSION])
        self.con.execute("COMMIT")

    # --- the study and sessions ------------------------------------------------------------

    def study_name(self) -> str | None:
        row = self.con.execute(
            "SELECT name FROM study_file ORDER BY session_id DESC LIMIT 1").fetchone()
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
            raise StoreError(f"{self.path} holds the study {name!r}, not {study['name']!r}: "
                             "give another --out (nothing was changed)")
        row = self.con.execute("SELECT coalesce(max(session_id), 0) + 1 FROM session").fetchone()
        session_id = int(row[0]) if row else 1
        values = {**environment, "session_id": session_id, "finished": None}
        self.con.execute("BEGIN")
        self._insert("session", SESSION_COLUMNS, [values])
        self._insert("study_file", ("session_id", "name", "title", "description", "seed",
                                    "base_ranks", "metric", "source", "text"),
                     [{**study, "session_id": session_id}])
        self.con.execute("COMMIT")
        return session_id

    def end_session(self, session_id: int, finished: str) -> None:
        self.con.execute("UPDATE session SET finished = ? WHERE session_id = ?",
                         [finished, session_id])

    # --- runs and repetitions --------------------------------------------------------------

    def save_run(self, run: dict[str, Any]) -> None:
        """Insert or update a configuration's row (its repetitions are never touched)."""
        values = [_column_value(run.get(column)) for column in RUN_COLUMNS]
        placeholders = ", ".join("?" for _ in RUN_COLUMNS)
        self.con.execute(f"INSERT OR REPLACE INTO run ({', '.join(RUN_COLUMNS)}) "
                         f"VALUES ({placeholders})", values)

    def set_run_status(self, run_key: str, status: str, reason: str | None = None) -> None:
        self.con.execute("UPDATE run SET status = ?, reason = ? WHERE run_key = ?",
                         [status, reason, run_key])

    def set_run_fom(self, run_key: str, unit: str, higher_is_better: bool) -> None:
        """For a command whose JSON result line says its unit and direction."""
        self.con.execute("UPDATE run SET fom_unit = ?, higher_is_better = ? WHERE run_key = ?",
                         [unit, higher_is_better, run_key])

    def run_row(self, run_key: str) -> dict[str, Any] | None:
        rows = self.rows("SELECT * FROM run WHERE run_key = ?", [run_key])
        return rows[0] if rows else None

    def repetitions(self, run_key: str) -> list[dict[str, Any]]:
        return self.rows("SELECT * FROM repetition WHERE run_key = ? ORDER BY rep", [run_key])

    def next_rep(self, run_key: str) -> int:
        row = self.con.execute("SELECT coalesce(max(rep), 0) + 1 FROM repetition "
                               "WHERE run_key = ?", [run_key]).fetchone()
        return int(row[0]) if row else 1

    def add_repetition(self, repetition: dict[str, Any], metrics: dict[str, float],
                       profile: Profile | None = None) -> None:
        """Commit one repetition with its metrics and imported profile, all or nothing."""
        key, rep = repetition["run_key"], repetition["rep"]
        self.con.execute("BEGIN")
        try:
            self._insert("repetition", REPETITION_COLUMNS, [repetition])
            if metrics:
                self._insert("metric", ("run_key", "rep", "name", "value"),
                             [{"run_key": key, "rep": rep, "name": name, "value": value}
                              for name, value in sorted(metrics.items())])
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

    def export(self, directory: Path, fmt: str) -> list[Path]:
        """Every table as one Parquet or CSV file in `directory`."""
        if fmt not in ("parquet", "csv"):
            raise StoreError(f"unknown export format {fmt!r}: use parquet or csv")
        directory.mkdir(parents=True, exist_ok=True)
        written = []
        present = {row[0] for row in self.con.execute(
            "SELECT table_name FROM information_schema.tables").fetchall()}
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
            self.con.execute(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({placeholders})",
                             [_column_value(row.get(column)) for column in columns])

    def _insert_columns(self, table: str, columns: dict[str, list[Any]]) -> None:
        """Bulk insert (profiles have thousands of rows): columns as NumPy arrays."""
        if not columns or not next(iter(columns.values())):
            return
        frame = {name: _array(values) for name, values in columns.items()}
        view = f"esmperf_rows_{table}"
        self.con.register(view, frame)
        try:
            self.con.execute(f"INSERT INTO {table} ({', '.join(frame)}) "
                             f"SELECT {', '.join(frame)} FROM {view}")
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


def _open_failure(path: Path, error: duckdb.Error) -> str:
    message = str(error)
    if "lock" in message.lower():
        return (f"{path} is in use by another process (another `esmperf study` running on it?): "
                "wait for it to finish, or give another --out")
    if "not a valid DuckDB database" in message:
        return f"{path} is not an esmperf study store (not a DuckDB file): choose another --out"
    if "newer" in message.lower() or "version" in message.lower():
        return f"{path} was written by another DuckDB version: {message.splitlines()[0]}"
    return f"cannot open the study store {path}: {message.splitlines()[0]}"


def profile_tables(profile: Profile, run_key: str, rep: int) -> dict[str, dict[str, list[Any]]]:
    """A profile as columns of the profile tables (tidy: one row per rank and item)."""
    header = profile.header
    tables: dict[str, dict[str, list[Any]]] = {}

    def add(table: str, **row: Any) -> None:
        columns = tables.setdefault(table, {})
        for name, value in {"run_key": run_key, "rep": rep, **row}.items():
            columns.setdefault(name, []).append(value)

    fortran = header.get("fortran") or {}
    add("profile", ranks=int(header["ranks"]), mpi_library=str(header.get("mpi_library", "")),
        abi=str(header.get("abi", "")), start_epoch=float(header.get("start_epoch", 0.0)),
        bin_width=float((header.get("profiler") or {}).get("bin_width", 1.0)),
        command=json.dumps(header.get("command", [])),
        knobs=json.dumps(header.get("knobs", {}), sort_keys=True),
        fortran_warning=str(fortran.get("warning") or ""))
    for record in profile.ranks:
        rank = int(record["rank"])
        io = record.get("io") or {}
        write, read = io.get("write") or {}, io.get("read") or {}
        overhead = record.get("overhead") or {}
        add("profile_rank", rank=rank, host=str(record.get("host", "")),
            wall=float(record["wall"]), mpi_time=float(record["mpi_time"]),
            io_write_calls=int(write.get("calls", 0)), io_write_bytes=int(write.get("bytes", 0)),
            io_write_time=float(write.get("time", 0.0)),
            io_read_calls=int(read.get("calls", 0)), io_read_bytes=int(read.get("bytes", 0)),
            io_read_time=float(read.get("time", 0.0)),
            overhead_calls=int(overhead.get("calls", 0)),
            overhead_seconds=float(overhead.get("seconds", 0.0)))
        for function, call in sorted(record["calls"].items()):
            lang = call.get("lang") or {}
            add("profile_function", rank=rank, function=function, calls=int(call.get("calls", 0)),
                time=float(call.get("time", 0.0)), time_min=float(call.get("time_min", 0.0)),
                time_max=float(call.get("time_max", 0.0)), sent=int(call.get("sent", 0)),
                recv=int(call.get("recv", 0)), calls_c=int(lang.get("c", 0)),
                calls_fortran=int(lang.get("fortran", 0)))
            for bucket, messages in call.get("hist", []):
                add("profile_histogram", rank=rank, function=function, bucket=int(bucket),
                    messages=int(messages))
        peers = record.get("peers") or {}
        for direction in ("sent", "recv"):
            for peer, (nbytes, messages) in sorted((peers.get(direction) or {}).items(),
                                                   key=lambda item: int(item[0])):
                add("profile_peer", rank=rank, peer=int(peer), direction=direction,
                    bytes=int(nbytes), messages=int(messages))
        for comm in record.get("comms") or []:
            add("profile_comm", rank=rank, comm_id=int(comm.get("id", 0)),
                size=int(comm.get("size", 0)), name=str(comm.get("name") or ""),
                created_by=str(comm.get("created_by") or ""), calls=int(comm.get("calls", 0)),
                time=float(comm.get("time", 0.0)), bytes=int(comm.get("bytes", 0)))
        bins = record.get("bins") or {}
        width = float(bins.get("width", 1.0))
        series = {name: bins.get(name) or [] for name in
                  ("mpi_time", "calls", "sent", "recv", "io_write", "io_read", "io_time")}
        for index in range(max((len(values) for values in series.values()), default=0)):
            def at(name: str, cast: type) -> Any:
                values = series[name]
                return cast(values[index]) if index < len(values) else cast(0)
            add("profile_bin", rank=rank, bin=index, start=index * width, width=width,
                mpi_time=at("mpi_time", float), calls=at("calls", int), sent=at("sent", int),
                recv=at("recv", int), io_write=at("io_write", int), io_read=at("io_read", int),
                io_time=at("io_time", float))
    tables.update(region_tables(profile, run_key, rep))
    return tables
