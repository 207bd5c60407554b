"""The study runner: plan every configuration (or say why it is skipped), then measure each one
as Hoefler & Belli ask: warm-up, repetitions until the CI of the median is narrow enough or a
maximum count is reached, the profile in a run of its own. Every repetition is committed to the
store as it ends, so a study stopped at any moment resumes where it was, without running a
finished repetition again; failures and timeouts are recorded with their output, never
stopping the study.
"""

import os
import random
import shutil
import signal
from collections.abc import Callable, Generator
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from esmperf.environment import machine_environment, now
from esmperf.errors import EsmperfError
from esmperf.launch import launcher_for
from esmperf.mpi.stacks import Stack
from esmperf.slurm.batch import SlurmOptions
from esmperf.slurm.campaign import SlurmCampaign
from esmperf.store.database import Store
from esmperf.study.classify import result_watch
from esmperf.study.configuration import Study
from esmperf.study.execute import Interrupt, RunInterrupted, execute
from esmperf.study.outcome import (
    Outcome,
    Recorder,
    enough_repetitions,
    has_profile,
    timeline_bin_seconds,
)
from esmperf.study.plan import PlannedRun, plan_study
from esmperf.study.rounds import run_in_rounds
from esmperf.study.side_by_side import Ran, Request, Steps, independent, run_side_by_side
from esmperf.workloads import Workload


class StudyRunner:
    """Runs a planned study into a store."""

    def __init__(
        self,
        study: Study,
        store: Store,
        plan: list[PlannedRun],
        console: Console,
        retry_failed: bool = False,
        command: str = "esmperf study",
        jobs: int = 1,
        order_seed: int | None = None,
        prune: bool = False,
    ) -> None:
        self.study = study
        self.prune = prune  # remove the store's configurations the study file no longer has
        self.jobs = jobs  # simulations that may run side by side (side_by_side.py)
        # shuffles the interleaved rounds (rounds.py); stored with the session
        self.order_seed = order_seed if order_seed is not None else new_order_seed()
        self.store = store
        self.plan = plan
        self.console = console
        self.retry_failed = retry_failed
        self.command = command
        self.recorder = Recorder(store, console)

    def run(self) -> Outcome:
        study = self.study
        self.recorder.session_id = self.store.begin_session(
            {**machine_environment(self.command), "order_seed": self.order_seed},
            {
                "name": study.name,
                "title": study.title,
                "description": study.description,
                "seed": study.seed,
                "base_ranks": study.base_ranks,
                "metric": study.metric,
                "source": study.source,
                "text": study.text,
            },
        )
        for note in study.notes:
            self.console.print(f"[yellow]note:[/] {escape(note)}")
        self._stale_configurations()
        todo = self._record_plan()
        previous = signal.signal(signal.SIGTERM, _interrupt)  # `kill PID`: stop like Ctrl-C
        try:
            self._measure_all(todo)
        finally:
            signal.signal(signal.SIGTERM, previous)
            self.store.end_session(self.recorder.session_id, now().isoformat())
        return self.recorder.outcome

    def _stale_configurations(self) -> None:
        """Configurations of the store that the study file no longer has (an edited file,
        resumed): kept and said, since they still show in the report and the seed's claims,
        or removed with --prune."""
        planned = {p.config.key for p in self.plan}
        stale = [run for run in self.store.runs() if run["run_key"] not in planned]
        if not stale:
            return
        labels = ", ".join(escape(run["label"]) for run in stale[:3])
        more = f" and {len(stale) - 3} more" if len(stale) > 3 else ""
        if not self.prune:
            self.console.print(
                f"[yellow]note:[/] {len(stale)} configuration(s) of the store are not in the "
                f"study file ({labels}{more}): kept, and still in its report; --prune "
                "removes them"
            )
            return
        for path in self.store.remove_runs([run["run_key"] for run in stale]):
            path.unlink(missing_ok=True)
        self.console.print(
            f"pruned {len(stale)} configuration(s) no longer in the study file: {labels}{more}"
        )

    def _record_plan(self) -> list[PlannedRun]:
        todo = []
        for planned in self.plan:
            key = planned.config.key
            previous = self.store.run_row(key)
            has_data = bool(self.store.repetitions(key))
            if planned.skip_reason:
                if previous and has_data:  # keep what was measured, note why it stops here
                    self.store.set_run_status(key, previous["status"], planned.skip_reason)
                else:
                    self.store.save_run(
                        planned.run_row("skipped", planned.skip_reason, self.recorder.session_id)
                    )
                self.recorder.outcome.skipped += 1
                self.console.print(
                    f"[yellow]skipped[/] {escape(planned.config.label)}: "
                    f"{escape(planned.skip_reason)}",
                    soft_wrap=True,
                )
                continue
            status = previous["status"] if previous else "pending"
            if status in ("failed", "timeout") and not self.retry_failed:
                reason = previous.get("reason") if previous else None
                self.recorder.count_final(status, planned, reason, resumed=True)
                continue
            reason = previous.get("reason") if previous and status == "complete" else None
            self.store.save_run(
                planned.run_row(
                    "pending" if status in ("failed", "timeout") else status,
                    reason,
                    self.recorder.session_id,
                )
            )
            todo.append(planned)
        return todo

    def _measure_all(self, todo: list[PlannedRun]) -> None:
        if todo and todo[0].launcher.batch:  # as Slurm jobs, watched from here
            SlurmCampaign(self.recorder, todo[0].slurm).run(todo)
            return
        total = sum(self._expected(planned) for planned in todo)
        columns = (
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
        )
        together = longest_first([p for p in todo if self.jobs > 1 and self._independent(p)])
        in_rounds = [p for p in todo if p not in together]
        with Progress(
            *columns, console=self.console, transient=True, disable=not self.console.is_terminal
        ) as progress:
            task = progress.add_task("study", total=total)

            def on_round(number: int, configurations: int) -> None:
                progress.update(
                    task, description=f"round {number}: {configurations} configurations"
                )

            if in_rounds:
                steps = [self._steps(planned, progress, task) for planned in in_rounds]
                telling = partial(execute, say=lambda text: self.console.print(escape(text)))
                run_in_rounds(steps, telling, random.Random(self.order_seed), on_round)
            if together:
                progress.update(
                    task, description=f"{len(together)} simulations, {self.jobs} at once"
                )
                steps = (self._steps(planned, progress, task) for planned in together)
                run_side_by_side(steps, self.jobs, execute)

    @staticmethod
    def _independent(planned: PlannedRun) -> bool:
        return independent(planned.simulated, dict(planned.config.knobs))

    def _expected(self, planned: PlannedRun) -> int:
        """Repetitions still to run at the least (the progress bar's total, for the ETA)."""
        config = planned.config
        reps = self.store.repetitions(config.key)
        measured = [r for r in reps if r["kind"] == "measure" and r["status"] == "ok"]
        count = 0
        if not enough_repetitions([r["fom"] for r in measured], config):
            count += config.repeats.warmup + max(1, config.repeats.min - len(measured))
        if config.profile == "once" and not has_profile(reps):
            count += 1
        return count

    def _steps(self, planned: PlannedRun, progress: Progress, task: Any) -> Steps:
        """One configuration's measurement: yields each repetition's command and is sent its
        Ran: its execution and the load around it (side_by_side.py and rounds.py run the
        commands; this records them)."""
        config = planned.config
        reps = self.store.repetitions(config.key)
        values = [r["fom"] for r in reps if r["kind"] == "measure" and r["status"] == "ok"]
        if not enough_repetitions(values, config):
            for _ in range(config.repeats.warmup):
                if (yield from self._repetition(planned, "warmup", progress, task)) is None:
                    return
            while not enough_repetitions(values, config):
                row = yield from self._repetition(planned, "measure", progress, task)
                if row is None:
                    return
                values.append(row["fom"])
                if len(values) > config.repeats.min:  # beyond the planned count: grow the bar
                    progress.update(task, total=progress.tasks[0].total + 1)
        if (
            config.profile == "once"
            and not has_profile(self.store.repetitions(config.key))
            and (yield from self._repetition(planned, "profile", progress, task)) is None
        ):
            return
        self.recorder.finish(planned, values)

    def _repetition(
        self, planned: PlannedRun, kind: str, progress: Progress, task: Any
    ) -> Generator[Request, Ran, dict[str, Any] | None]:
        """Run once (yielding the command) and commit the repetition; None (after recording
        why) if it failed."""
        config = planned.config
        rep = self.store.next_rep(config.key)
        env = dict(planned.env)
        profile_file = self.recorder.profile_file(planned, kind, rep)
        if profile_file is not None:
            for stale in (profile_file, profile_file.with_name(profile_file.name + ".part")):
                stale.unlink(missing_ok=True)
            assert planned.profiler is not None
            planned.launcher.profile(planned, env, profile_file)
            width = timeline_bin_seconds(self.store.repetitions(config.key))
            if width is not None and "ESMPROF_BIN_SECONDS" not in env:  # a study's [env] wins
                env["ESMPROF_BIN_SECONDS"] = f"{width:.6g}"
        scratch = planned.scratch
        assert scratch is not None
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        request = Request(
            planned.argv,
            env,
            scratch,
            config.timeout,
            result_watch(config),
            cpu_timeout=planned.simulated,
            profile=profile_file,
        )
        try:
            ran = yield request
        except RunInterrupted as stopped:  # kept, with the ranks' partial profiles
            self.recorder.record_interrupted(planned, kind, rep, stopped, profile_file)
            raise
        row = self.recorder.record_repetition(
            planned, kind, rep, ran.execution, ran.conditions(), profile_file
        )
        progress.advance(task)
        shutil.rmtree(scratch, ignore_errors=True)
        return row


def longest_first(plans: list[PlannedRun]) -> list[PlannedRun]:
    """Simulations side by side start with the most simulated ranks: the longest simulation
    should not start last, with the other cores idle behind it (HOMME's 13,824 ranks take most
    of a seed study). Equal rank counts keep the study's order."""
    return sorted(plans, key=lambda p: -p.config.ranks)


def new_order_seed() -> int:
    """A fresh seed for the order of the interleaved rounds (stored, so it can be replayed)."""
    return random.SystemRandom().randrange(2**31)


def _interrupt(signum: int, frame: Any) -> None:
    raise Interrupt(signal.Signals(signum))  # the running program is ended on the way out


def _short(label: str, width: int = 48) -> str:
    return label if len(label) <= width else label[: width - 1] + "…"


def run_study(
    study: Study,
    store_path: Path,
    stacks: list[Stack],
    workloads: dict[str, Workload],
    console: Console,
    retry_failed: bool = False,
    command: str = "esmperf study",
    plan_hook: Callable[[list[PlannedRun]], None] | None = None,
    slurm: SlurmOptions | None = None,
    jobs: int = 1,
    order_seed: int | None = None,
    prune: bool = False,
) -> Outcome:
    """Plan `study` for this machine and run it into the store at `store_path`: here, in this
    Slurm allocation (srun) or as Slurm jobs (slurm/campaign.py), as `slurm` or the study
    says. `jobs`: how many simulations whose time does not depend on this machine's load
    (computation = model or off) may run at once (side_by_side.py); the rest run here one at a
    time, interleaved in rounds shuffled by `order_seed` (rounds.py; default: a new seed).
    `prune`: remove the store's configurations that the study no longer has (else said)."""
    store_path = Path(store_path).absolute()  # runs work in their own scratch directories
    slurm = slurm or study.slurm
    launcher = launcher_for(slurm.launcher, simulated=False)
    if launcher is not None:
        launcher.check(os.environ)
    plan = plan_study(study, stacks, workloads, store_path, slurm=slurm)
    if plan_hook:
        plan_hook(plan)
    if not plan:
        raise EsmperfError(f"{study.source}: the study has no configuration to run")
    with Store(store_path) as store:
        runner = StudyRunner(
            study, store, plan, console, retry_failed, command, jobs, order_seed, prune
        )
        return runner.run()
