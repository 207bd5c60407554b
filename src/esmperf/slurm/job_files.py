"""A Slurm job's files (--launcher slurm, docs/slurm.md): its directory and what it runs (the
JobSpec of a round of repetitions, with the environment it exports), and what its script wrote
back: key=value files and each repetition's output and status, read as the runner sees a local
repetition. The campaign that submits and watches the jobs is campaign.py."""

from __future__ import annotations

import datetime
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from esmperf.slurm.batch_script import JobRep, JobSpec
from esmperf.study import execute as execute_module
from esmperf.study.classify import result_watch
from esmperf.study.execute import Execution, tail
from esmperf.study.outcome import MIN_BIN_SECONDS, TIMELINE_BINS

if TYPE_CHECKING:
    from esmperf.study.plan import PlannedRun

# Variables that describe the submitting shell, not the run: never exported into a job.
NOT_EXPORTED = (
    "SLURM_",
    "SBATCH_",
    "SALLOC_",
    "SRUN_",
    "PWD",
    "OLDPWD",
    "SHLVL",
    "_",
    "HOSTNAME",
    "TMPDIR",
)


def job_directory(results: Path, run_key: str) -> Path:
    return results / "slurm" / run_key


def job_spec(
    planned: PlannedRun,
    reps: list[JobRep],
    results: Path,
    base: dict[str, str] | None = None,
    walls: list[float] | None = None,
) -> JobSpec:
    """The job running `reps` of `planned`: the run's environment is what the runner adds to
    or removes from `base` (default: this environment; sbatch passes the rest on); `walls`:
    the wall times of its stored repetitions that count, for the profile's time bins."""
    config = planned.config
    base = dict(os.environ) if base is None else base
    exports = {
        name: value
        for name, value in planned.env.items()
        if base.get(name) != value and not name.startswith(NOT_EXPORTED)
    }
    unsets = [
        name for name in base if name not in planned.env and not name.startswith(NOT_EXPORTED)
    ]
    assert planned.scratch is not None
    return JobSpec(
        name=f"{planned.position + 1}-{config.key}",
        label=config.label,
        directory=job_directory(results, config.key),
        scratch=planned.scratch,
        nodes=config.nodes,
        ranks=config.ranks,
        ranks_per_node=config.ranks_per_node,
        timeout=config.timeout,
        argv=list(planned.argv),
        reps=reps,
        exports=exports,
        unsets=unsets,
        profiler=planned.profiler,
        bin_walls=(
            None
            if "ESMPROF_BIN_SECONDS" in planned.env  # the study's wins
            else list(walls or [])
        ),
        timeline_bins=TIMELINE_BINS,
        min_bin_seconds=MIN_BIN_SECONDS,
        finalize_grace=execute_module.FINALIZE_GRACE if result_watch(config) else None,
    )


def read_key_values(path: Path) -> dict[str, str]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def repetition_execution(
    rep_dir: Path, status: dict[str, str], timeout: float
) -> tuple[Execution, dict[str, Any]]:
    """A repetition run by a batch script (run_rep) as the runner sees a local one."""
    code = int_or_none(status.get("exit_code"))
    start, end = _float(status.get("start")), _float(status.get("end"))
    elapsed = end - start if start is not None and end is not None else 0.0
    ended = status.get("ended_after_result") == "1"  # by the finalize grace (finalize_watch)
    timed_out = not ended and (code == 124 or (code == 137 and elapsed >= timeout))  # timeout(1)
    execution = Execution(
        code,
        elapsed,
        read_tail(rep_dir / "stdout"),
        read_tail(rep_dir / "stderr"),
        timed_out,
        ended_after_result=ended,
    )
    started = (
        datetime.datetime.fromtimestamp(start).replace(microsecond=0) if start is not None else None
    )
    measured = {
        "started": started,
        "load_before": _float(status.get("load_before")),
        "busy_cores_before": None,
        "load_after": _float(status.get("load_after")),
    }
    return execution, measured


def read_tail(path: Path) -> str:
    try:
        with open(path, "rb") as file:
            return tail(file)
    except OSError:
        return ""


def int_or_none(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _float(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None
