"""How a study's repetitions are recorded: the Recorder commits each repetition to the store as
it ends, as classify.py classifies it, counts the study's outcome and prints a configuration's
line. Runs here and Slurm jobs (slurm/campaign.py) are recorded the same way."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from esmperf import stats
from esmperf.profile.read import ProfileError, read_profile
from esmperf.store.database import Store, results_dir
from esmperf.store.results import (
    killed_after_result_text,
    simulator_cost_text,
)
from esmperf.study import world
from esmperf.study.classify import classify, fom_value, run_time
from esmperf.study.configuration import Configuration
from esmperf.study.execute import Execution, RunInterrupted
from esmperf.study.simulator_cost import cost_columns
from esmperf.workloads import numeric_metrics

if TYPE_CHECKING:
    from esmperf.study.plan import PlannedRun

# A profiled repetition's time bins: about this many over the run (the profiler's default 1 s
# leaves a sub-second run one bin, no timeline), none narrower than MIN_BIN_SECONDS.
TIMELINE_BINS = 100
MIN_BIN_SECONDS = 0.001


@dataclass
class Outcome:
    """What a study invocation did, for the summary line and the exit code."""

    store: Path
    complete: int = 0
    failed: int = 0
    timeout: int = 0
    skipped: int = 0
    repetitions: int = 0
    killed_after_result: int = 0  # repetitions that count although killed after their result
    failures: list[str] = field(default_factory=list)


def enough_repetitions(values: list[float], config: Configuration) -> bool:
    policy = config.repeats
    if len(values) < policy.min:
        return False
    if len(values) >= policy.max:
        return True
    return stats.ci_reached(values, policy.confidence, policy.ci_width)


def timeline_bin_seconds(repetitions: list[dict[str, Any]]) -> float | None:
    """The time-bin width that gives a profile about TIMELINE_BINS bins: the median wall time
    of the configuration's repetitions so far (the workload's timed part, not mpirun's start;
    the whole run for a command) over TIMELINE_BINS; None before any ran (the profiler's
    default then)."""
    walls = [r["wall"] for r in repetitions if r["status"] == "ok" and r["wall"]]
    if not walls:
        return None
    return max(MIN_BIN_SECONDS, statistics.median(walls) / TIMELINE_BINS)


def has_profile(reps: list[dict[str, Any]]) -> bool:
    return any(r["kind"] == "profile" and r["status"] == "ok" for r in reps)


class Recorder:
    """Commits the repetitions of one session of a study to its store and counts them."""

    def __init__(self, store: Store, console: Console, session_id: int = 0) -> None:
        self.store = store
        self.console = console
        self.session_id = session_id
        self.outcome = Outcome(store.path)

    def finish(self, planned: PlannedRun, values: list[float]) -> None:
        """Mark a configuration with enough repetitions complete and print its line."""
        config = planned.config
        summary = stats.summarise(values, config.repeats.confidence)
        note = None
        if (
            summary.confidence < config.repeats.confidence
            or summary.ci_relative_width > config.repeats.ci_width
        ):
            note = (
                f"stopped at {summary.n} repetitions (max): the CI is "
                f"{summary.ci_relative_width:.1%} of the median at "
                f"{summary.confidence:.0%} confidence (target {config.repeats.ci_width:.1%}"
                f" at {config.repeats.confidence:.0%})"
            )
        self.store.set_run_status(config.key, "complete", note)
        self.outcome.complete += 1
        self._report_line(planned, summary)

    def profile_file(self, planned: PlannedRun, kind: str, rep: int) -> Path | None:
        """Where repetition `rep` writes its profile, None when it is not profiled."""
        config = planned.config
        if kind == "profile" or (kind == "measure" and config.profile == "every"):
            profile_dir = results_dir(self.store.path) / "profiles"
            profile_dir.mkdir(parents=True, exist_ok=True)
            return profile_dir / f"{config.key}-{rep}.jsonl"
        return None

    def record_repetition(
        self,
        planned: PlannedRun,
        kind: str,
        rep: int,
        execution: Execution,
        measured: dict[str, Any],
        profile_file: Path | None,
        census: Path | None = None,
    ) -> dict[str, Any] | None:
        """Classify and commit one repetition that ran (here or in a Slurm job); None (after
        recording the configuration as failed) if it failed. `measured`: started, load_before,
        busy_cores_before, load_after; `census`: where its processes wrote their world
        (study/world.py; default: its scratch directory's)."""
        config = planned.config
        if planned.simulated:
            execution.simulated_time = planned.launcher.simulated_time(execution.stderr)
        row = {**self._row(planned, kind, rep, execution), **measured}
        if planned.simulated:
            row |= cost_columns(execution)
        status, reason, result = classify(execution, config)
        if config.launcher:  # as the launcher explains a failure (srun's MPI plug-in)
            status, reason = planned.launcher.failure(
                planned, status, reason, execution.stdout + execution.stderr, result
            )
        metrics: dict[str, float] = {"elapsed": execution.elapsed}
        if execution.peak_rss is not None:  # for a simulated run: the simulator's cost
            metrics["peak_rss_bytes"] = execution.peak_rss
        if result is not None:
            row["result"] = result
            metrics.update(numeric_metrics(result))
            verification = result.get("verification")
            if isinstance(verification, dict) and "passed" in verification:
                passed = verification["passed"]  # null: nothing to verify (a folded run)
                row["verification"] = (
                    "unverified" if passed is None else "passed" if passed else "failed"
                )
            fom = result.get("fom")
            if isinstance(fom, dict) and fom.get("unit"):
                row["fom_unit"] = str(fom["unit"])
            if isinstance(fom, dict) and config.kind == "command" and config.fom.source == "json":
                self.store.set_run_fom(
                    config.key, row["fom_unit"], bool(fom.get("higher_is_better", True))
                )
        profile = None
        if profile_file is not None and status == "ok":
            row["profile_file"] = str(profile_file)
            try:
                profile = read_profile(profile_file)
            except ProfileError as error:
                row["profile_error"] = str(error)
        wrong = world.wrong_world(planned, result, profile, census) if status == "ok" else None
        if wrong:  # not the run asked for: its figure and profile do not count
            status, reason, profile = "failed", wrong, None
        row["status"] = status
        row["fom"] = fom_value(execution, config, result) if status == "ok" else None
        row["killed_after_result"] = reason if status == "ok" else None
        wall = result.get("wall") if result else None
        row["wall"] = float(wall) if isinstance(wall, (int, float)) else run_time(execution)
        self.store.add_repetition(row, metrics, profile)
        self.outcome.repetitions += 1
        if row["killed_after_result"]:
            self.outcome.killed_after_result += 1
        if status != "ok":
            final = "timeout" if status == "timeout" else "failed"
            self.store.set_run_status(config.key, final, reason)
            self.count_final(final, planned, reason)
            return None
        return row

    def _row(self, planned: PlannedRun, kind: str, rep: int, execution: Execution) -> dict:
        """The repetition row's columns every repetition has."""
        return {
            "run_key": planned.config.key,
            "rep": rep,
            "kind": kind,
            "session_id": self.session_id,
            "elapsed": execution.elapsed,
            "oversubscribed": planned.oversubscribed,
            "stdout": execution.stdout,
            "stderr": execution.stderr,
            "exit_code": execution.returncode,
            "fom_unit": planned.config.fom.unit,
        }

    def record_interrupted(
        self,
        planned: PlannedRun,
        kind: str,
        rep: int,
        stopped: RunInterrupted,
        profile_file: Path | None,
    ) -> None:
        """Commit a repetition ended by an interrupt as `interrupted`, with the partial profile
        its ranks wrote (no figure: it did not finish). The configuration stays pending, so a
        resumed study measures it again under the next repetition number."""
        execution, reason = stopped.execution, f"interrupted by {stopped.signum.name}"
        row = self._row(planned, kind, rep, execution)
        row |= {"status": "interrupted", "killed_after_result": None, "wall": execution.elapsed}
        profile, kept = None, ""
        if profile_file is not None:
            row["profile_file"] = str(profile_file)
            try:
                profile = read_profile(profile_file)
                kept = (
                    f"; its profile kept ({len(profile.ranks)} of {profile.header['ranks']} ranks)"
                )
            except ProfileError as error:
                row["profile_error"] = str(error)
                kept = f"; no profile kept: {error}"
        self.store.add_repetition(row, {"elapsed": execution.elapsed}, profile)
        self.console.print(
            f"[bold red]interrupted[/] {escape(planned.config.label)} repetition {rep}: "
            f"{reason}{escape(kept)}",
            soft_wrap=True,
        )

    def count_final(
        self, status: str, planned: PlannedRun, reason: str | None, resumed: bool = False
    ) -> None:
        if status == "timeout":
            self.outcome.timeout += 1
        else:
            self.outcome.failed += 1
        label = planned.config.label
        self.outcome.failures.append(f"{label}: {reason}")
        prefix = "previously " if resumed else ""
        hint = " (--retry-failed runs it again)" if resumed else ""
        self.console.print(
            f"[bold red]{prefix}{status}[/] {escape(label)}: {escape(reason or '')}{hint}",
            soft_wrap=True,
        )

    def _report_line(self, planned: PlannedRun, summary: stats.Summary) -> None:
        config = planned.config
        unit = config.fom.unit if config.fom.source != "json" else ""
        unit = self.store.measured_unit(config.key) or unit
        flag = " [yellow](oversubscribed)[/]" if planned.oversubscribed else ""
        repetitions = self.store.repetitions(config.key)
        if planned.simulated:
            flag = f" [cyan](simulated, {planned.nodes} node{'s' if planned.nodes > 1 else ''})[/]"
            cost = simulator_cost_text(repetitions)
            flag += f"; simulator: {escape(cost)}" if cost else ""
        spread = (
            f"{summary.confidence:.0%} CI {summary.ci_low:.4g}-{summary.ci_high:.4g}, n={summary.n}"
            if summary.n > 1
            else "one run: no CI"
        )
        killed = killed_after_result_text(repetitions)
        killed = f"; [yellow]{escape(killed)}: their figures count[/]" if killed else ""
        self.console.print(
            f"[green]done[/] {escape(config.label)}: median {summary.median:.4g} {escape(unit)} "
            f"({spread}){flag}{killed}",
            soft_wrap=True,
            highlight=False,
        )
