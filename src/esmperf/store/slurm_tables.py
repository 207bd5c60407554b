"""The store's writes for a study run as Slurm jobs (--launcher slurm, slurm/campaign.py): the
slurm_job and slurm_repetition tables (job ids committed at submission, so a stopped runner
resumes by watching its jobs) and the machine of a session that ran on a job's node. A part of
Store (database.py), which inherits it: the store stays the one owner of these statements."""

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from esmperf.store.schema import SLURM_SCHEMA


class SlurmTables:
    """Store's Slurm writes and readers (Store provides the connection, rows and next_rep)."""

    con: duckdb.DuckDBPyConnection

    if TYPE_CHECKING:

        def rows(self, query: str, parameters: Any = ()) -> list[dict[str, Any]]: ...

        def next_rep(self, run_key: str) -> int: ...

    def add_slurm_tables(self) -> None:
        self.con.execute(SLURM_SCHEMA)

    def next_slurm_rep(self, run_key: str) -> int:
        """The next repetition number, counting those submitted in jobs not yet collected."""
        row = self.con.execute(
            "SELECT coalesce(max(rep), 0) + 1 FROM slurm_repetition WHERE run_key = ?", [run_key]
        ).fetchone()
        return max(self.next_rep(run_key), int(row[0]) if row else 1)

    def add_slurm_job(
        self,
        job_id: str,
        run_key: str,
        session_id: int,
        reps: list[tuple[int, str]],
        script: Path,
        submitted: Any,
    ) -> None:
        """A submitted job and the repetitions it runs, committed together."""
        con = self.con
        con.execute("BEGIN")
        con.execute(
            "INSERT INTO slurm_job (job_id, run_key, session_id, reps, script, "
            "submitted, state, ingested) VALUES (?, ?, ?, ?, ?, ?, 'SUBMITTED', false)",
            [
                job_id,
                run_key,
                session_id,
                json.dumps([[rep, kind] for rep, kind in reps]),
                str(script),
                submitted,
            ],
        )
        for rep, _ in reps:
            con.execute(
                "INSERT OR REPLACE INTO slurm_repetition VALUES (?, ?, ?)", [run_key, rep, job_id]
            )
        con.execute("COMMIT")

    def uncollected_slurm_jobs(self) -> list[dict[str, Any]]:
        """Jobs submitted whose repetitions are not stored yet, oldest first."""
        return self.rows(
            "SELECT job_id, run_key, reps FROM slurm_job WHERE NOT ingested "
            "ORDER BY submitted, job_id"
        )

    def end_slurm_job(
        self,
        job_id: str,
        ended: Any,
        state: str,
        exit_code: str,
        elapsed: str,
        node_list: str,
        reason: str,
        node: dict[str, str],
    ) -> None:
        """How a job ended; its repetitions are collected."""
        self.con.execute(
            "UPDATE slurm_job SET ended = ?, state = ?, exit_code = ?, elapsed = ?, "
            "node_list = ?, reason = ?, node = ?, ingested = true WHERE job_id = ?",
            [ended, state, exit_code, elapsed, node_list, reason, json.dumps(node), job_id],
        )

    def set_session_machine(self, session_id: int, machine: dict[str, Any]) -> None:
        """The machine a session ran on, when it is not this one (a job's node)."""
        self.con.execute(
            "UPDATE session SET hostname = ?, cpu_model = ?, cores = ?, usable_cores = ?, "
            "memory_gib = ?, kernel = ? WHERE session_id = ?",
            [
                machine["hostname"],
                machine["cpu_model"],
                machine["cores"],
                machine["usable_cores"],
                machine["memory_gib"],
                machine["kernel"],
                session_id,
            ],
        )
