"""Where esmperf's Slurm jobs are, and how they ended: squeue and sacct asked and parsed, and
one record per ended job made from both (docs/slurm.md, "How it waits").

squeue -t all knows every job of the last MinJobAge seconds (300 by default), final states and
their reason included; sacct knows ended jobs for longer, with exit code and elapsed time, but
only where the site runs accounting (many small ones do not: `Slurm accounting storage is
disabled`). A job's record is sacct's when it has one, with squeue's reason when sacct gives
none (sacct says `None` for a TIMEOUT that squeue calls `TimeLimit`), else squeue's own.
"""

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, replace

from esmperf.errors import EsmperfError

COMMAND_TIMEOUT = 60.0  # seconds for one sbatch/squeue/sacct call

# Job states (squeue %T, sacct State) and what they mean here.
ACTIVE_STATES = frozenset(
    {
        "PENDING",
        "CONFIGURING",
        "RUNNING",
        "COMPLETING",
        "SUSPENDED",
        "REQUEUED",
        "REQUEUE_HOLD",
        "REQUEUE_FED",
        "RESIZING",
        "SIGNALING",
        "STAGE_OUT",
        "STOPPED",
        "RESV_DEL_HOLD",
    }
)
TIMEOUT_STATES = frozenset({"TIMEOUT", "DEADLINE"})
SQUEUE_FORMAT = "%i|%T|%r"
SACCT_FIELDS = ("JobIDRaw", "State", "ExitCode", "Elapsed", "NodeList", "Reason")
NO_NODE = "None assigned"  # sacct's NodeList of a job that never started
ACCOUNTING_DISABLED = "accounting storage is disabled"  # sacct's words, exit code 1


class SlurmError(EsmperfError):
    """Slurm cannot do what was asked; the message names the fix."""


def run_slurm_command(argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """Run one Slurm client command; one that does not answer in time fails like any other."""
    try:
        return subprocess.run(
            list(argv),
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise SlurmError(
            f"{argv[0]} is not on PATH: run esmperf on the cluster's login "
            "node (module load slurm?)"
        ) from None
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(
            list(argv), 1, "", f"{argv[0]} did not answer in {COMMAND_TIMEOUT:g} s"
        )


@dataclass(frozen=True)
class JobRecord:
    """A job as sacct or squeue reports it."""

    job_id: str
    state: str  # the first word: CANCELLED for "CANCELLED by 1000"
    state_text: str = ""
    exit_code: str = ""  # sacct only (squeue has no exit code)
    elapsed: str = ""
    node_list: str = ""  # empty when the job never started (sacct: "None assigned")
    reason: str = ""  # empty for Slurm's "None"
    source: str = "sacct"  # or squeue

    @property
    def outcome(self) -> str:
        return job_outcome(self.state)


def job_outcome(state: str) -> str:
    """active (queued or running), ok, timeout or failed."""
    state = state.split()[0].rstrip("+") if state.strip() else ""
    if state in ACTIVE_STATES:
        return "active"
    if state == "COMPLETED":
        return "ok"
    if state in TIMEOUT_STATES:
        return "timeout"
    return "failed"


def _reason(text: str) -> str:
    text = text.strip()
    return "" if text == "None" else text


def parse_squeue(text: str) -> dict[str, JobRecord]:
    """`squeue -h -t all -o '%i|%T|%r'` lines -> job id: record."""
    records = {}
    for line in text.splitlines():
        parts = line.strip().split("|")
        if len(parts) >= 2 and parts[0]:
            state = parts[1].strip()
            records[parts[0]] = JobRecord(
                parts[0],
                state.split()[0] if state else "UNKNOWN",
                state,
                reason=_reason(parts[2]) if len(parts) > 2 else "",
                source="squeue",
            )
    return records


def parse_sacct(text: str, fields: Sequence[str] = SACCT_FIELDS) -> dict[str, JobRecord]:
    """`sacct -n -P -X --format=...` lines -> job id: record (job steps are left out)."""
    records = {}
    for line in text.splitlines():
        values = dict(zip(fields, line.rstrip("\n").split("|")))
        job_id = values.get("JobIDRaw", "").strip()
        if not job_id or "." in job_id:  # 123.batch, 123.0: steps
            continue
        state_text = values.get("State", "").strip()
        node_list = values.get("NodeList", "").strip()
        records[job_id] = JobRecord(
            job_id,
            state_text.split()[0] if state_text else "UNKNOWN",
            state_text,
            values.get("ExitCode", "").strip(),
            values.get("Elapsed", "").strip(),
            "" if node_list == NO_NODE else node_list,
            _reason(values.get("Reason", "")),
        )
    return records


def queue_records(job_ids: Sequence[str]) -> dict[str, JobRecord] | None:
    """squeue's records of those of `job_ids` it still knows (queued, running, or ended in
    the last MinJobAge seconds); None when squeue fails."""
    if not job_ids:
        return {}
    result = run_slurm_command(
        ["squeue", "-h", "-t", "all", "-j", ",".join(job_ids), "-o", SQUEUE_FORMAT]
    )
    if result.returncode != 0:
        # every id purged already: squeue refuses the list ("Invalid job id specified")
        return {} if "invalid job id" in result.stderr.lower() else None
    records = parse_squeue(result.stdout)
    return {job_id: records[job_id] for job_id in job_ids if job_id in records}


def accounting(job_ids: Sequence[str]) -> tuple[dict[str, JobRecord], bool]:
    """sacct's records of `job_ids`, and False when sacct says the cluster keeps no
    accounting (then asking again is no use); no records when sacct fails otherwise."""
    if not job_ids:
        return {}, True
    fields: Sequence[str] = SACCT_FIELDS
    for _ in range(2):
        result = run_slurm_command(
            ["sacct", "-n", "-P", "-X", "-j", ",".join(job_ids), f"--format={','.join(fields)}"]
        )
        if result.returncode == 0:
            return parse_sacct(result.stdout, fields), True
        if ACCOUNTING_DISABLED in (result.stderr + result.stdout).lower():
            return {}, False
        if "invalid field" in result.stderr.lower() and "Reason" in fields:
            fields = SACCT_FIELDS[:-1]  # an old sacct without Reason
            continue
        break
    return {}, True


def ended_record(queued: JobRecord | None, recorded: JobRecord | None) -> JobRecord | None:
    """How a job ended, from squeue's and sacct's records of it; None while neither says it
    ended (sacct may lag a moment behind squeue)."""
    if recorded is not None and recorded.outcome != "active":
        if not recorded.reason and queued is not None and queued.reason:
            recorded = replace(recorded, reason=queued.reason)
        return recorded
    if queued is not None and queued.outcome != "active":
        return queued
    return None
