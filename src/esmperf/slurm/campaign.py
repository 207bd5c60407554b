"""A study as Slurm jobs (--launcher slurm, docs/slurm.md): one batch job per round of
repetitions of a configuration, all configurations submitted at once, then the queue is
watched (squeue -t all, and sacct where the site keeps accounting, for how a job ended:
slurm/jobs.py) with a growing pause; each ended job's repetitions are read from the files its
script wrote and stored exactly as local ones (Recorder.record_repetition, study/outcome.py),
then the next round is submitted while the statistics ask for more. Job ids are committed to
the store at submission: a runner stopped at any moment resumes by watching the jobs it had
submitted, never submitting them again.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape

from esmperf.environment import now
from esmperf.slurm.batch import SlurmOptions, submit
from esmperf.slurm.batch_script import JobRep, JobSpec, batch_script
from esmperf.slurm.job_files import (
    int_or_none,
    job_directory,
    job_spec,
    read_key_values,
    read_tail,
    repetition_execution,
)
from esmperf.slurm.jobs import JobRecord, SlurmError, accounting, ended_record, queue_records
from esmperf.store.database import results_dir
from esmperf.study.outcome import Recorder, enough_repetitions, has_profile

if TYPE_CHECKING:
    from esmperf.study.plan import PlannedRun

SQUEUE_FAILURES = 10  # consecutive failed looks at the queue before giving up (jobs go on)
SACCT_GRACE = 3  # looks at a job neither squeue nor sacct knows before it is given up


def pause_between_looks(seconds: float) -> None:
    """Wait before the next look at the queue (tests replace this)."""
    time.sleep(seconds)


@dataclass
class Job:
    job_id: str
    run_key: str
    reps: list[tuple[int, str]]
    missing_records: int = 0


class SlurmCampaign:
    """Runs the configurations a study has to measure as Slurm jobs, recording their
    repetitions with `recorder` as the runner records local ones."""

    def __init__(self, recorder: Recorder, options: SlurmOptions) -> None:
        self.recorder = recorder
        self.store = recorder.store
        self.options = options
        self.console = recorder.console
        self.active: dict[str, Job] = {}
        self.planned: dict[str, PlannedRun] = {}
        self.node_recorded = False
        self.has_accounting = True  # until sacct says the cluster keeps none
        self.store.add_slurm_tables()

    def run(self, todo: list[PlannedRun]) -> None:
        self.planned = {planned.config.key: planned for planned in todo}
        for job in self._submitted_before():
            self.active[job.job_id] = job
            self.console.print(
                f"[cyan]watching[/] job {job.job_id} (submitted before) of "
                f"{escape(self.planned[job.run_key].config.label)}",
                soft_wrap=True,
            )
        waiting = {job.run_key for job in self.active.values()}
        try:
            for planned in todo:
                if planned.config.key not in waiting:
                    self._next_round(planned)
            self._watch()
        except BaseException:
            if self.active:
                ids = ",".join(sorted(self.active, key=int))
                self.console.print(
                    f"[yellow]Slurm jobs {ids} are still queued or running:[/] "
                    "the same esmperf command collects them (scancel "
                    f"{ids.replace(',', ' ')} cancels them)",
                    soft_wrap=True,
                )
            raise

    # --- submission --------------------------------------------------------------------------

    def _next_round(self, planned: PlannedRun) -> None:
        """Submit the repetitions the configuration still needs, or mark it complete."""
        config = planned.config
        reps = self.store.repetitions(config.key)
        values = [r["fom"] for r in reps if r["kind"] == "measure" and r["status"] == "ok"]
        kinds: list[str] = []
        if not enough_repetitions(values, config):
            policy = config.repeats
            count = (
                policy.min - len(values)
                if len(values) < policy.min
                else min(policy.min, policy.max - len(values))
            )
            kinds += ["warmup"] * policy.warmup + ["measure"] * max(1, count)
        if config.profile == "once" and not has_profile(reps):
            kinds.append("profile")
        if not kinds:
            self.recorder.finish(planned, values)
            return
        first = self.store.next_slurm_rep(config.key)
        job_reps = []
        for rep, kind in enumerate(kinds, start=first):
            profile_file = self.recorder.profile_file(planned, kind, rep)
            if profile_file is not None:
                for stale in (profile_file, profile_file.with_name(profile_file.name + ".part")):
                    stale.unlink(missing_ok=True)
            job_reps.append(JobRep(rep, kind, profile_file))
        walls = [r["wall"] for r in reps if r["status"] == "ok" and r["wall"]]
        spec = job_spec(planned, job_reps, results_dir(self.store.path), walls=walls)
        spec.directory.mkdir(parents=True, exist_ok=True)
        spec.script_path.write_text(batch_script(spec, self.options))
        job_id = submit(spec.script_path)
        self._record_submission(job_id, planned, spec)
        self.active[job_id] = Job(job_id, config.key, [(r.rep, r.kind) for r in job_reps])
        self.console.print(
            f"[cyan]submitted[/] job {job_id}: {escape(config.label)} "
            f"(repetitions {first}-{job_reps[-1].rep})",
            soft_wrap=True,
        )

    def _record_submission(self, job_id: str, planned: PlannedRun, spec: JobSpec) -> None:
        self.store.add_slurm_job(
            job_id,
            planned.config.key,
            self.recorder.session_id,
            [(r.rep, r.kind) for r in spec.reps],
            spec.script_path,
            now(),
        )

    def _submitted_before(self) -> list[Job]:
        rows = self.store.uncollected_slurm_jobs()
        return [
            Job(row["job_id"], row["run_key"], [tuple(r) for r in json.loads(row["reps"])])
            for row in rows
            if row["run_key"] in self.planned
        ]

    # --- waiting -----------------------------------------------------------------------------

    def _watch(self) -> None:
        pause = self.options.poll
        failures = 0
        while self.active:
            pause_between_looks(pause)
            pause = min(pause * 1.5, max(self.options.poll, 60.0))
            queued = queue_records(list(self.active))
            if queued is None:
                failures += 1
                if failures >= SQUEUE_FAILURES:
                    raise SlurmError(
                        f"squeue failed {failures} times in a row: Slurm does not "
                        "answer; the jobs go on and the same esmperf command "
                        "collects them later"
                    )
                continue
            failures = 0
            left = [
                job_id
                for job_id in self.active
                if job_id not in queued or queued[job_id].outcome != "active"
            ]
            if not left:
                continue
            records: dict[str, JobRecord] = {}
            if self.has_accounting:
                records, self.has_accounting = accounting(left)
            for job_id in sorted(left, key=int):
                job = self.active[job_id]
                record = ended_record(queued.get(job_id), records.get(job_id))
                if record is None:  # purged from squeue, and sacct has (not yet) a record
                    job.missing_records += 1
                    if job.missing_records < SACCT_GRACE:
                        continue
                    record = JobRecord(
                        job_id, "UNKNOWN", "UNKNOWN (neither squeue nor sacct knows it)"
                    )
                del self.active[job_id]
                self._collect(job, record)

    # --- collecting --------------------------------------------------------------------------

    def _collect(self, job: Job, record: JobRecord) -> None:
        """Store the repetitions of an ended job, then submit the next round if needed."""
        planned = self.planned[job.run_key]
        directory = job_directory(results_dir(self.store.path), job.run_key)
        node = read_key_values(directory / f"job-{job.job_id}.node")
        done = {r["rep"]: r["status"] for r in self.store.repetitions(job.run_key)}
        failed = False
        for rep, kind in job.reps:
            if rep in done:  # stored before the runner was stopped
                if done[rep] != "ok":
                    failed = True  # the job stopped there
                    break
                continue
            status = read_key_values(directory / f"rep-{rep}" / "status")
            if status:
                execution, measured = repetition_execution(
                    directory / f"rep-{rep}", status, planned.config.timeout
                )
                profile_file = self.recorder.profile_file(planned, kind, rep)
                if (
                    self.recorder.record_repetition(
                        planned,
                        kind,
                        rep,
                        execution,
                        measured,
                        profile_file,
                        census=directory / f"rep-{rep}" / "world",
                    )
                    is None
                ):
                    failed = True
                    break
            else:
                self._record_lost(planned, kind, rep, job, record, directory)
                failed = True
                break
        self._record_end(job, record, node)
        state = record.state_text or record.state
        nodes = record.node_list or node.get("node_list", "")
        where = f" on {nodes}" if nodes else ""
        self.console.print(
            f"[cyan]job {job.job_id}[/] {escape(state)}{escape(where)}: "
            f"{escape(planned.config.label)}",
            soft_wrap=True,
        )
        if not failed:
            self._next_round(planned)

    def _record_lost(
        self, planned: PlannedRun, kind: str, rep: int, job: Job, record: JobRecord, directory: Path
    ) -> None:
        """A repetition the job never finished: a failure, with Slurm's reason."""
        config = planned.config
        outcome = record.outcome
        status = "timeout" if outcome == "timeout" else "failed"
        detail = ", ".join(
            part
            for part in (
                f"exit code {record.exit_code}" if record.exit_code not in ("", "0:0") else "",
                f"reason {record.reason}" if record.reason else "",
            )
            if part
        )
        state = record.state_text or record.state
        output = directory / f"job-{job.job_id}.out"
        if output.exists():
            where = f"its output: {output}"
        elif not record.node_list and not (directory / f"job-{job.job_id}.node").exists():
            where = "it never started on a node (no job output)"
        else:
            where = f"its output {output} is missing"
        reason = (
            f"Slurm job {job.job_id} ended {state}"
            + (f" ({detail})" if detail else "")
            + f" before repetition {rep} finished; {where}"
        )
        if outcome == "ok":
            reason = f"Slurm job {job.job_id} COMPLETED without running repetition {rep} ({where})"
        rep_dir = directory / f"rep-{rep}"
        stdout = read_tail(rep_dir / "stdout")
        stderr = read_tail(rep_dir / "stderr") or read_tail(directory / f"job-{job.job_id}.out")
        self.store.add_repetition(
            {
                "run_key": config.key,
                "rep": rep,
                "kind": kind,
                "session_id": self.recorder.session_id,
                "status": status,
                "stdout": stdout,
                "stderr": stderr,
                "fom_unit": config.fom.unit,
                "oversubscribed": planned.oversubscribed,
            },
            {},
        )
        self.recorder.outcome.repetitions += 1
        self.store.set_run_status(config.key, status, reason)
        self.recorder.count_final(status, planned, reason)

    def _record_end(self, job: Job, record: JobRecord, node: dict[str, str]) -> None:
        self.store.end_slurm_job(
            job.job_id,
            now(),
            record.state_text or record.state,
            record.exit_code,
            record.elapsed,
            record.node_list or node.get("node_list", ""),
            record.reason,
            node,
        )
        if node and not self.node_recorded:  # the session ran on the cluster's nodes
            self.node_recorded = True
            memory = node.get("memory_kib", "")
            self.store.set_session_machine(
                self.recorder.session_id,
                {
                    "hostname": node.get("node_list") or node.get("hostname", ""),
                    "cpu_model": node.get("cpu_model", ""),
                    "cores": int_or_none(node.get("cores")),
                    "usable_cores": int_or_none(node.get("usable_cores")),
                    "memory_gib": round(int(memory) / 2**20, 1) if memory.isdigit() else None,
                    "kernel": node.get("kernel", ""),
                },
            )
