"""The study runner: plan every configuration (or say why it is skipped), then measure each one
as Hoefler & Belli ask: warm-up, repetitions until the CI of the median is narrow enough or a
maximum count is reached, the profile in a run of its own. Every repetition is committed to the
store as it ends, so a study stopped at any moment resumes where it was, without running a
finished repetition again; failures and timeouts are recorded with their output, never
stopping the study.
"""

import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)

from esmperf import stats
from esmperf.mpi.build import build_dir
from esmperf.environment import (busy_cores, load_average, machine_environment, now,
                                  usable_cores)
from esmperf.errors import EsmperfError
from esmperf.mpi.knobs import Unsupported, knob_setting, write_files
from esmperf.mpi.platforms import PlatformError, nodes_for
from esmperf.launch.mpirun import mpirun_command, run_environment
from esmperf.paths import build_root
from esmperf.profile.read import ProfileError, read_profile
from esmperf.store.results import HUNG_AFTER_RESULT, killed_after_result_text
from esmperf.slurm.batch import SlurmOptions, check_allocation, check_commands, srun_command
from esmperf.slurm.mpi import srun_failure
from esmperf.mpi.stacks import Stack, library_name
from esmperf.store.database import TAIL_CHARS, Store
from esmperf.study.file import Configuration, Study, StudyError
from esmperf.workloads import (Workload, fom_from_result, not_built_reason, numeric_metrics,
                               parse_result_line, regex_fom)

# Variables that tune an MPI library or the profiler: recorded with every run.
KNOB_PREFIXES = ("ESM_", "OMPI_", "PRTE_MCA_", "PMIX_MCA_", "MPIR_CVAR_", "MPICH_", "UCX_", "FI_",
                 "I_MPI_", "PSP_", "HYDRA_", "ESMPROF_")
PLACEHOLDERS = ("ranks", "nodes", "size", "steps", "stack", "build", "scratch", "mpirun")
KILL_GRACE = 3.0  # seconds between SIGTERM and SIGKILL for a run that timed out
# A profiled repetition's time bins: about this many over the run (the profiler's default 1 s
# leaves a sub-second run one bin, no timeline), none narrower than MIN_BIN_SECONDS.
TIMELINE_BINS = 100
MIN_BIN_SECONDS = 0.001
# Signals that stop a program from outside (kill, Ctrl-C, a closed terminal), not a crash.
STOPPING_SIGNALS = (signal.SIGTERM, signal.SIGKILL, signal.SIGINT, signal.SIGHUP)


@dataclass
class PlannedRun:
    """A configuration made concrete for this machine, or the reason it cannot run here."""

    config: Configuration
    position: int
    argv: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    knob_env: dict[str, str] = field(default_factory=dict)
    launcher_args: tuple[str, ...] = ()
    stack: Stack | None = None
    mpi_library: str = ""
    profiler: Path | None = None
    scratch: Path | None = None
    cores: int = 1
    skip_reason: str | None = None
    slurm: SlurmOptions = field(default_factory=SlurmOptions)

    @property
    def simulated(self) -> bool:
        """Run on a simulated cluster (SimGrid SMPI): its times are simulated."""
        return self.stack is not None and self.stack.simulated

    @property
    def oversubscribed(self) -> bool:
        """More ranks than cores here; never for a simulated run (SMPI runs the ranks one at
        a time and charges each its own measured compute)."""
        return self.config.ranks > self.cores and not self.simulated

    @property
    def nodes(self) -> int:
        """Nodes the run spans: on a simulated cluster one rank per node unless the study
        gives ranks_per_node; here the ranks_per_node the study asked for."""
        if self.simulated:
            return nodes_for(self.config.ranks, self.config.ranks_per_node or 1)
        return self.config.nodes

    def run_row(self, status: str, reason: str | None, session_id: int) -> dict[str, Any]:
        config = self.config
        return {
            "run_key": config.key, "series": config.series, "position": self.position,
            "matrix": config.matrix, "label": config.label, "kind": config.kind,
            "workload": config.workload, "size": config.size, "steps": config.steps,
            "ranks": config.ranks, "ranks_per_node": config.ranks_per_node,
            "nodes": self.nodes, "stack": config.stack, "mpi_library": self.mpi_library,
            "knobs": dict(config.knobs), "options": dict(config.options),
            "env": dict(config.env), "knob_env": self.knob_env,
            "launcher_args": list(self.launcher_args), "argv": self.argv,
            "fom_source": config.fom.source, "fom_unit": config.fom.unit,
            "higher_is_better": config.fom.higher_is_better, "profile": config.profile,
            "timeout": config.timeout, "repeats": vars(config.repeats), "cores": self.cores,
            "oversubscribed": self.oversubscribed, "status": status, "reason": reason,
            "identity": config.identity(), "session_id": session_id,
            "launched_by": self.slurm.launcher,
        }


@dataclass
class Execution:
    returncode: int | None
    elapsed: float
    stdout: str
    stderr: str
    timed_out: bool
    simulated_time: float | None = None  # SimGrid's "Simulated time" of an smpi run
    peak_rss: float | None = None  # bytes: the launched process tree's peak resident memory
    program_error: str = ""  # the program's own last error line, even if cut from the tail


SIMULATED_TIME = re.compile(r"Simulated time: ([0-9.eE+-]+) seconds")


def simulated_time(stderr: str) -> float | None:
    """The simulated time smpirun prints at the end (--cfg=smpi/display-timing:yes)."""
    matches = SIMULATED_TIME.findall(stderr)
    return float(matches[-1]) if matches else None


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


def results_dir(store_path: Path) -> Path:
    """Where a study's profiles, scratch directories and report go: beside its store."""
    return store_path.with_suffix("")


def plan_study(study: Study, stacks: list[Stack], workloads: dict[str, Workload],
               store_path: Path, cores: int | None = None,
               slurm: SlurmOptions | None = None) -> list[PlannedRun]:
    """`slurm`: how runs are launched (default: the study's [slurm] table, local unless it
    says otherwise); on Slurm a run has a core per rank (cores = ranks)."""
    slurm = slurm or study.slurm
    cores = cores or usable_cores()
    by_id = {stack.id: stack for stack in stacks}
    directory = results_dir(Path(store_path).absolute())
    return [_plan(config, position, by_id, workloads, directory,
                  cores if slurm.launcher == "local" else config.ranks, slurm)
            for position, config in enumerate(study.configurations)]


def _plan(config: Configuration, position: int, stacks: dict[str, Stack],
          workloads: dict[str, Workload], directory: Path, cores: int,
          slurm: SlurmOptions) -> PlannedRun:
    planned = PlannedRun(config, position, cores=cores,
                         scratch=directory / "scratch" / config.key, slurm=slurm)
    if slurm.launcher != "local" and config.stack == "smpi":
        planned.skip_reason = ("the smpi stack simulates a cluster on one machine: run it "
                               "with --launcher local")
        return planned
    stack = stacks.get(config.stack)
    if config.stack != "none" and stack is None:
        fix = "`make setup-more-mpi`" if config.stack.endswith("-pypi") else "`make setup`"
        planned.skip_reason = (f"MPI stack {config.stack} is not installed here (see `esmperf "
                               f"stacks`; {fix} installs it)")
        return planned
    planned.stack = stack
    env = _clean_environment()
    if stack is not None:
        planned.mpi_library = library_name(stack.version)
        env = run_environment(stack, env)
        try:
            setting = knob_setting(stack, dict(config.knobs), config.ranks, cores,
                                   config.ranks_per_node, directory / "platforms")
        except Unsupported as reason:
            planned.skip_reason = f"unsupported knob on {stack.id}: {reason}"
            return planned
        except PlatformError as error:
            planned.skip_reason = str(error)
            return planned
        write_files(setting)
        env.update(setting.env)
        reason = _fold_check(config, workloads, env)
        if reason:
            planned.skip_reason = reason
            return planned
        if stack.simulated:  # smpirun's per-rank copies of the program go to the scratch dir
            env["TMPDIR"] = str(planned.scratch)
        if stack.simulated and config.profile != "off":
            planned.skip_reason = ("the profiler cannot run under SimGrid SMPI (no PMPI layer "
                                   "to preload): profile = false for the smpi stack")
            return planned
        planned.launcher_args = setting.launcher_args
        if config.profile != "off":
            library = build_dir(stack) / "prof" / "libesmprof.so"
            if not library.is_file():
                planned.skip_reason = (f"the profiler is not built for {stack.id} ({library} is "
                                       f"missing): run `make build`")
                return planned
            planned.profiler = library
    elif config.knobs:
        planned.skip_reason = "knobs need an MPI stack (stack \"none\" has no MPI)"
        return planned
    env.update(dict(config.env))
    planned.env = env
    planned.knob_env = {key: value for key, value in sorted(env.items())
                        if key.startswith(KNOB_PREFIXES)}
    try:
        planned.argv = _argv(config, planned, workloads)
    except _NotRunnable as reason:
        planned.skip_reason = str(reason)
    return planned


class _NotRunnable(Exception):
    pass


def _fold_check(config: Configuration, workloads: dict[str, Workload],
                env: dict[str, str]) -> str | None:
    """Folding only for the workloads that fold: fold = auto leaves the others unfolded,
    fold = on is a reason not to run them."""
    if "ESM_FOLD" not in env:
        return None
    workload = workloads.get(config.workload) if config.kind == "workload" else None
    if workload is not None and workload.folds:
        return None
    if dict(config.knobs).get("fold") == "on":
        return (f"{config.workload} does not fold (folding needs `folds = true` in a workload "
                "manifest, docs/simulate.md): use fold = off or auto")
    del env["ESM_FOLD"]
    return None


def _clean_environment() -> dict[str, str]:
    """This process's environment without the profiler's variables (the runner sets them for
    profiled runs only). Inherited MPI variables stay, and are recorded with the run."""
    env = dict(os.environ)
    for name in ("ESMPROF_OUT", "ESMPROF_DISABLE", "LD_PRELOAD"):
        env.pop(name, None)
    return env


def _argv(config: Configuration, planned: PlannedRun, workloads: dict[str, Workload]) -> list[str]:
    stack = planned.stack
    launcher = (mpirun_command(stack, config.ranks, [], planned.launcher_args)
                if stack is not None and config.launcher else [])
    if launcher and planned.slurm.uses_srun:
        if planned.launcher_args:
            raise _NotRunnable(f"its knobs need mpirun options ({' '.join(planned.launcher_args)})"
                               " that srun does not take: set mpi_launcher = \"mpirun\" in "
                               "[slurm]")
        launcher = srun_command(planned.slurm, config.ranks, config.nodes,
                                config.ranks_per_node, stack.family if stack else None)
    if config.kind == "workload":
        workload = workloads[config.workload]
        assert stack is not None
        if not workload.is_built(stack.id):
            raise _NotRunnable(not_built_reason(workload, stack.id))
        program = [str(workload.executable_path(stack.id)), "--size", str(config.size)]
        if config.steps is not None:
            program += ["--steps", str(config.steps)]
        for name, value in config.options:
            program += [f"--{name}", value]
        return launcher + program
    values = {
        "ranks": str(config.ranks), "nodes": str(config.nodes), "size": config.size or "",
        "steps": "" if config.steps is None else str(config.steps), "stack": config.stack,
        "build": str(build_root() / config.stack), "scratch": str(planned.scratch),
        "mpirun": str(stack.mpirun) if stack else "",
    }
    program = []
    for part in config.command:
        try:
            program.append(part.format_map(values))
        except (KeyError, ValueError, IndexError) as error:
            raise StudyError(
                f"command {' '.join(config.command)!r}: bad placeholder ({error}); the "
                f"placeholders are {', '.join('{' + name + '}' for name in PLACEHOLDERS)} "
                "(write {{ and }} for literal braces)") from None
    program[0] = _program_path(program[0])
    return launcher + program


def _program_path(program: str) -> str:
    if os.sep not in program:
        found = shutil.which(program)
        if not found:
            raise _NotRunnable(f"program not found: {program} (not on PATH)")
        return program
    path = Path(program).expanduser().absolute()
    if not path.is_file():
        hint = ": run `make build`" if path.is_relative_to(build_root()) else ""
        raise _NotRunnable(f"program not found: {path}{hint}")
    if not os.access(path, os.X_OK):
        raise _NotRunnable(f"{path} is not executable: chmod +x {path}")
    return str(path)


def execute(argv: list[str], env: dict[str, str], cwd: Path, timeout: float) -> Execution:
    """Run `argv` in its own process group; on timeout, terminate the whole group (mpirun and
    every rank), keeping the output so far."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        try:
            process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=err,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as error:
            return Execution(None, 0.0, "", f"cannot run {argv[0]}: {error.strerror}", False)
        timed_out = False
        peak_rss = None
        try:
            peak_rss = _wait(process, started + timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(process)
        except BaseException:  # Ctrl-C: leave no ranks behind
            _kill_group(process)
            raise
        elapsed = time.monotonic() - started
        return Execution(process.returncode, elapsed, _tail(out), _tail(err), timed_out,
                         peak_rss=peak_rss, program_error=_program_error(err))


def _wait(process: subprocess.Popen[bytes], deadline: float) -> float:
    """Wait for `process` until `deadline` (TimeoutExpired after it); return the peak resident
    memory in bytes of the process and of the descendants it waited for (Linux wait4: for
    smpirun, the simulator that runs every simulated rank)."""
    pause = 0.001
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid == process.pid:
            process.returncode = os.waitstatus_to_exitcode(status)
            return usage.ru_maxrss * 1024.0  # KiB on Linux
        if time.monotonic() >= deadline:
            raise subprocess.TimeoutExpired(process.args, 0)
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    for sig, wait in ((signal.SIGTERM, KILL_GRACE), (signal.SIGKILL, None)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _program_error(file: Any) -> str:
    """The last "<program>: error: ..." line of the whole output (a simulator's thousands of
    per-rank warnings after it may push it out of the stored tail)."""
    file.seek(0)
    found = ""
    for raw in file:
        line = raw.decode("utf-8", errors="replace")
        if PROGRAM_ERROR.match(line):
            found = " ".join(line.split())
    return found if len(found) <= 200 else found[:199] + "…"


def _tail(file: Any) -> str:
    file.seek(0, os.SEEK_END)
    size = file.tell()
    file.seek(max(0, size - TAIL_CHARS))
    text = file.read().decode("utf-8", errors="replace")
    return text if size <= TAIL_CHARS else "[... earlier output cut ...]\n" + text


def enough_repetitions(values: list[float], config: Configuration) -> bool:
    policy = config.repeats
    if len(values) < policy.min:
        return False
    if len(values) >= policy.max:
        return True
    return stats.ci_reached(values, policy.confidence, policy.ci_width)


class StudyRunner:
    """Runs a planned study into a store."""

    def __init__(self, study: Study, store: Store, plan: list[PlannedRun], console: Console,
                 retry_failed: bool = False, command: str = "esmperf study") -> None:
        self.study = study
        self.store = store
        self.plan = plan
        self.console = console
        self.retry_failed = retry_failed
        self.command = command
        self.outcome = Outcome(store.path)
        self.session_id = 0

    def run(self) -> Outcome:
        study = self.study
        self.session_id = self.store.begin_session(
            machine_environment(self.command),
            {"name": study.name, "title": study.title, "description": study.description,
             "seed": study.seed, "base_ranks": study.base_ranks, "metric": study.metric,
             "source": study.source, "text": study.text})
        for note in study.notes:
            self.console.print(f"[yellow]note:[/] {escape(note)}")
        todo = self._record_plan()
        previous = signal.signal(signal.SIGTERM, _interrupt)  # `kill PID`: stop like Ctrl-C
        try:
            self._measure_all(todo)
        finally:
            signal.signal(signal.SIGTERM, previous)
            self.store.end_session(self.session_id, now().isoformat())
        return self.outcome

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
                    self.store.save_run(planned.run_row("skipped", planned.skip_reason,
                                                        self.session_id))
                self.outcome.skipped += 1
                self.console.print(f"[yellow]skipped[/] {escape(planned.config.label)}: "
                                   f"{escape(planned.skip_reason)}", soft_wrap=True)
                continue
            status = previous["status"] if previous else "pending"
            if status in ("failed", "timeout") and not self.retry_failed:
                self._count_final(status, planned, previous.get("reason") if previous else None,
                                  resumed=True)
                continue
            reason = previous.get("reason") if previous and status == "complete" else None
            self.store.save_run(planned.run_row(
                "pending" if status in ("failed", "timeout") else status, reason,
                self.session_id))
            todo.append(planned)
        return todo

    def _measure_all(self, todo: list[PlannedRun]) -> None:
        if todo and todo[0].slurm.launcher == "slurm":
            from esmperf.slurm.campaign import SlurmCampaign

            SlurmCampaign(self, todo[0].slurm).run(todo)
            return
        total = sum(self._expected(planned) for planned in todo)
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())
        with Progress(*columns, console=self.console, transient=True,
                      disable=not self.console.is_terminal) as progress:
            task = progress.add_task("study", total=total)
            for planned in todo:
                progress.update(task, description=escape(_short(planned.config.label)))
                self._measure(planned, progress, task)

    def _expected(self, planned: PlannedRun) -> int:
        """Repetitions still to run at the least (the progress bar's total, for the ETA)."""
        config = planned.config
        reps = self.store.repetitions(config.key)
        measured = [r for r in reps if r["kind"] == "measure" and r["status"] == "ok"]
        count = 0
        if not enough_repetitions([r["fom"] for r in measured], config):
            count += config.repeats.warmup + max(1, config.repeats.min - len(measured))
        if config.profile == "once" and not _has_profile(reps):
            count += 1
        return count

    def _measure(self, planned: PlannedRun, progress: Progress, task: Any) -> None:
        config = planned.config
        reps = self.store.repetitions(config.key)
        values = [r["fom"] for r in reps if r["kind"] == "measure" and r["status"] == "ok"]
        if not enough_repetitions(values, config):
            for _ in range(config.repeats.warmup):
                if not self._repetition(planned, "warmup", progress, task):
                    return
            while not enough_repetitions(values, config):
                row = self._repetition(planned, "measure", progress, task)
                if row is None:
                    return
                values.append(row["fom"])
                if len(values) > config.repeats.min:  # beyond the planned count: grow the bar
                    progress.update(task, total=progress.tasks[0].total + 1)
        if config.profile == "once" and not _has_profile(self.store.repetitions(config.key)):
            if self._repetition(planned, "profile", progress, task) is None:
                return
        self.finish(planned, values)

    def finish(self, planned: PlannedRun, values: list[float]) -> None:
        """Mark a configuration with enough repetitions complete and print its line."""
        config = planned.config
        summary = stats.summarise(values, config.repeats.confidence)
        note = None
        if summary.confidence < config.repeats.confidence or \
                summary.ci_relative_width > config.repeats.ci_width:
            note = (f"stopped at {summary.n} repetitions (max): the CI is "
                    f"{summary.ci_relative_width:.1%} of the median at "
                    f"{summary.confidence:.0%} confidence (target {config.repeats.ci_width:.1%}"
                    f" at {config.repeats.confidence:.0%})")
        self.store.set_run_status(config.key, "complete", note)
        self.outcome.complete += 1
        self._report_line(planned, summary)

    def _repetition(self, planned: PlannedRun, kind: str, progress: Progress,
                    task: Any) -> dict[str, Any] | None:
        """Run once and commit the repetition; None (after recording why) if it failed."""
        config = planned.config
        rep = self.store.next_rep(config.key)
        env = dict(planned.env)
        profile_file = self.profile_file(planned, kind, rep)
        if profile_file is not None:
            for stale in (profile_file, profile_file.with_name(profile_file.name + ".part")):
                stale.unlink(missing_ok=True)
            assert planned.profiler is not None
            env["LD_PRELOAD"] = str(planned.profiler)
            env["ESMPROF_OUT"] = str(profile_file)
            width = timeline_bin_seconds(self.store.repetitions(config.key))
            if width is not None and "ESMPROF_BIN_SECONDS" not in env:  # a study's [env] wins
                env["ESMPROF_BIN_SECONDS"] = f"{width:.6g}"
        scratch = planned.scratch
        assert scratch is not None
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        load_before = load_average()
        busy_before = busy_cores()
        started = now()
        execution = execute(planned.argv, env, scratch, config.timeout)
        measured = {"started": started, "load_before": load_before,
                    "busy_cores_before": busy_before, "load_after": load_average()}
        row = self.record_repetition(planned, kind, rep, execution, measured, profile_file)
        progress.advance(task)
        shutil.rmtree(scratch, ignore_errors=True)
        return row

    def profile_file(self, planned: PlannedRun, kind: str, rep: int) -> Path | None:
        """Where repetition `rep` writes its profile, None when it is not profiled."""
        config = planned.config
        if kind == "profile" or (kind == "measure" and config.profile == "every"):
            profile_dir = results_dir(self.store.path) / "profiles"
            profile_dir.mkdir(parents=True, exist_ok=True)
            return profile_dir / f"{config.key}-{rep}.jsonl"
        return None

    def record_repetition(self, planned: PlannedRun, kind: str, rep: int,
                          execution: Execution, measured: dict[str, Any],
                          profile_file: Path | None) -> dict[str, Any] | None:
        """Classify and commit one repetition that ran (here or in a Slurm job); None (after
        recording the configuration as failed) if it failed. `measured`: started, load_before,
        busy_cores_before, load_after."""
        config = planned.config
        if planned.simulated:
            execution.simulated_time = simulated_time(execution.stderr)
        row = {
            "run_key": config.key, "rep": rep, "kind": kind, "session_id": self.session_id,
            "elapsed": execution.elapsed, **measured,
            "oversubscribed": planned.oversubscribed,
            "stdout": execution.stdout, "stderr": execution.stderr,
            "exit_code": execution.returncode, "fom_unit": config.fom.unit,
        }
        status, reason, result = _classify(execution, config)
        if planned.slurm.uses_srun and config.launcher:  # srun's MPI plug-in, when it failed
            status, reason = srun_failure(status, reason, execution.stdout + execution.stderr,
                                          result, config.ranks, planned.argv)
        metrics: dict[str, float] = {"elapsed": execution.elapsed}
        if execution.peak_rss is not None:  # for a simulated run: the simulator's cost
            metrics["peak_rss_bytes"] = execution.peak_rss
        if result is not None:
            row["result"] = result
            metrics.update(numeric_metrics(result))
            verification = result.get("verification")
            if isinstance(verification, dict) and "passed" in verification:
                passed = verification["passed"]  # null: nothing to verify (a folded run)
                row["verification"] = ("unverified" if passed is None else
                                       "passed" if passed else "failed")
            fom = result.get("fom")
            if isinstance(fom, dict) and fom.get("unit"):
                row["fom_unit"] = str(fom["unit"])
            if isinstance(fom, dict) and config.kind == "command" and config.fom.source == "json":
                self.store.set_run_fom(config.key, row["fom_unit"],
                                       bool(fom.get("higher_is_better", True)))
        row["status"] = status
        row["fom"] = _fom_value(execution, config, result) if status == "ok" else None
        row["killed_after_result"] = reason if status == "ok" else None
        wall = result.get("wall") if result else None
        row["wall"] = float(wall) if isinstance(wall, (int, float)) else _elapsed(execution)
        profile = None
        if profile_file is not None and status == "ok":
            row["profile_file"] = str(profile_file)
            try:
                profile = read_profile(profile_file)
            except ProfileError as error:
                row["profile_error"] = str(error)
        self.store.add_repetition(row, metrics, profile)
        self.outcome.repetitions += 1
        if row["killed_after_result"]:
            self.outcome.killed_after_result += 1
        if status != "ok":
            final = "timeout" if status == "timeout" else "failed"
            self.store.set_run_status(config.key, final, reason)
            self._count_final(final, planned, reason)
            return None
        return row

    def _count_final(self, status: str, planned: PlannedRun, reason: str | None,
                     resumed: bool = False) -> None:
        if status == "timeout":
            self.outcome.timeout += 1
        else:
            self.outcome.failed += 1
        label = planned.config.label
        self.outcome.failures.append(f"{label}: {reason}")
        prefix = "previously " if resumed else ""
        hint = " (--retry-failed runs it again)" if resumed else ""
        self.console.print(f"[bold red]{prefix}{status}[/] {escape(label)}: "
                           f"{escape(reason or '')}{hint}", soft_wrap=True)

    def _report_line(self, planned: PlannedRun, summary: stats.Summary) -> None:
        config = planned.config
        unit = config.fom.unit if config.fom.source != "json" else ""
        rows = self.store.rows("SELECT fom_unit FROM repetition WHERE run_key = ? AND "
                               "kind = 'measure' AND status = 'ok' LIMIT 1", [config.key])
        unit = (rows[0]["fom_unit"] if rows else unit) or unit
        flag = " [yellow](oversubscribed)[/]" if planned.oversubscribed else ""
        if planned.simulated:
            flag = f" [cyan](simulated, {planned.nodes} node{'s' if planned.nodes > 1 else ''})[/]"
        spread = (f"{summary.confidence:.0%} CI {summary.ci_low:.4g}-{summary.ci_high:.4g}, "
                  f"n={summary.n}" if summary.n > 1 else "one run: no CI")
        killed = killed_after_result_text(self.store.repetitions(config.key))
        killed = f"; [yellow]{escape(killed)}: their figures count[/]" if killed else ""
        self.console.print(
            f"[green]done[/] {escape(config.label)}: median {summary.median:.4g} {escape(unit)} "
            f"({spread}){flag}{killed}", soft_wrap=True, highlight=False)


def timeline_bin_seconds(repetitions: list[dict[str, Any]]) -> float | None:
    """The time-bin width that gives a profile about TIMELINE_BINS bins: the median wall time
    of the configuration's repetitions so far (the workload's timed part, not mpirun's start;
    the whole run for a command) over TIMELINE_BINS; None before any ran (the profiler's
    default then)."""
    walls = [r["wall"] for r in repetitions if r["status"] == "ok" and r["wall"]]
    if not walls:
        return None
    return max(MIN_BIN_SECONDS, statistics.median(walls) / TIMELINE_BINS)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt  # the running program's process group is killed on the way out


def _has_profile(reps: list[dict[str, Any]]) -> bool:
    return any(r["kind"] == "profile" and r["status"] == "ok" for r in reps)


def _short(label: str, width: int = 48) -> str:
    return label if len(label) <= width else label[: width - 1] + "…"


def _classify(execution: Execution, config: Configuration
              ) -> tuple[str, str | None, dict[str, Any] | None]:
    """(status, reason, JSON result) of one repetition. The reason says why it failed; for an
    "ok" repetition it is None, or what happened after its result when the program had to be
    killed (stored as killed_after_result)."""
    result = parse_result_line(execution.stdout) if config.fom.source == "json" else None
    last_error = (execution.program_error or _last_message(execution.stderr)
                  or _last_message(execution.stdout))
    if _killed(execution) and _verified_result(result):
        # The measurement is complete and checked; only the teardown went wrong (MPICH 4
        # over TCP sometimes hangs in MPI_Finalize): the figure counts, the kill is kept.
        return "ok", _killed_after_result(execution, config), result
    if execution.timed_out:
        return "timeout", f"timed out after {config.timeout:g} s (killed)", result
    if execution.returncode is None:
        return "failed", execution.stderr, None
    verification = (result or {}).get("verification")
    if isinstance(verification, dict) and verification.get("passed") is False:
        norms = json.dumps(verification.get("norms", {}))
        return "verification_failed", f"verification FAILED ({verification.get('what', '')} " \
                                      f"{norms})", result
    if execution.returncode != 0:
        if execution.returncode < 0:
            outcome = f"killed by signal {_signal_name(-execution.returncode)}"
        else:
            outcome = f"exit code {execution.returncode}"
        return "failed", f"{outcome}" + (f": {last_error}" if last_error else ""), result
    if _fom_value(execution, config, result) is None:
        if config.fom.source == "json":
            return "failed", "no JSON result line with a figure of merit on stdout " \
                             "(docs/workloads.md)", None
        return "failed", f"the figure-of-merit regex {config.fom.regex!r} matched nothing " \
                         "in the output", None
    return "ok", None, result


def _killed(execution: Execution) -> bool:
    """Stopped from outside: at its timeout, or by a stopping signal (a crash, e.g. SIGSEGV,
    is not a kill and stays a failure even after a result)."""
    code = execution.returncode
    return execution.timed_out or (code is not None and -code in STOPPING_SIGNALS)


def _verified_result(result: dict[str, Any] | None) -> bool:
    """A complete JSON result line with a figure of merit whose verification passed."""
    verification = (result or {}).get("verification")
    return (result is not None and fom_from_result(result) is not None
            and isinstance(verification, dict) and verification.get("passed") is True)


def _killed_after_result(execution: Execution, config: Configuration) -> str:
    if execution.timed_out:
        return f"{HUNG_AFTER_RESULT}: killed at the {config.timeout:g} s timeout"
    assert execution.returncode is not None
    return (f"killed by signal {_signal_name(-execution.returncode)} after its result (in "
            "MPI_Finalize or teardown)")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:  # a real-time signal has no name
        return str(number)


# A program's own error line ("pop: error: ...", docs/workloads.md), wherever a launcher's or
# simulator's chatter comes after it (smpirun ends with its own timing and advice lines).
PROGRAM_ERROR = re.compile(r"^\S+: error: \S")
SIMULATOR_CHATTER = re.compile(r"^\[[^\]]*\] |^The simulation took |seconds were actual "
                               r"computation|^You may want to use sampling|^Execution failed "
                               r"with code")


def _last_message(output: str) -> str:
    """The program's own error line if it printed one, else the last line of `output` that
    says something (not a rule of dashes, not the simulator's chatter), shortened."""
    lines = [" ".join(line.split()) for line in output.splitlines()]
    errors = [line for line in lines if PROGRAM_ERROR.match(line)]
    said = [line for line in lines if any(c.isalnum() for c in line)
            and not SIMULATOR_CHATTER.search(line)]
    for line in errors[-1:] or said[-1:]:
        return line if len(line) <= 200 else line[:199] + "…"
    return ""


def _fom_value(execution: Execution, config: Configuration,
               result: dict[str, Any] | None) -> float | None:
    if config.fom.source == "json":
        return fom_from_result(result) if result else None
    if config.fom.source == "regex":
        assert config.fom.regex is not None
        return regex_fom(config.fom.regex, execution.stdout + "\n" + execution.stderr)
    return _elapsed(execution)


def _elapsed(execution: Execution) -> float:
    """The run's time: simulated for an smpi run (the real time is only the simulation's)."""
    return execution.elapsed if execution.simulated_time is None else execution.simulated_time


def run_study(study: Study, store_path: Path, stacks: list[Stack],
              workloads: dict[str, Workload], console: Console, retry_failed: bool = False,
              command: str = "esmperf study",
              plan_hook: Callable[[list[PlannedRun]], None] | None = None,
              slurm: SlurmOptions | None = None) -> Outcome:
    """Plan `study` for this machine and run it into the store at `store_path`: here, in this
    Slurm allocation (srun) or as Slurm jobs (slurm_study.py), as `slurm` or the study says."""
    store_path = Path(store_path).absolute()  # runs work in their own scratch directories
    slurm = slurm or study.slurm
    if slurm.launcher == "srun":
        check_allocation(dict(os.environ))
    elif slurm.launcher == "slurm":
        check_commands()
    plan = plan_study(study, stacks, workloads, store_path, slurm=slurm)
    if plan_hook:
        plan_hook(plan)
    if not plan:
        raise EsmperfError(f"{study.source}: the study has no configuration to run")
    with Store(store_path) as store:
        return StudyRunner(study, store, plan, console, retry_failed, command).run()
