"""Plan a study for this machine: each configuration made concrete (its launcher, the
environment with its knobs, the command line), or the reason it cannot run here."""

import contextlib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from esmperf.environment import usable_cores
from esmperf.launch import launcher_for, simulated_launchers
from esmperf.launch.base import Launcher, NotRunnable
from esmperf.launch.mpirun import MpirunLauncher, run_environment
from esmperf.mpi.build import profiler_path
from esmperf.mpi.global_state import GlobalStateError, privatization_args
from esmperf.mpi.knob_setting import knob_setting, write_files
from esmperf.mpi.knobs import Unsupported
from esmperf.mpi.platforms import PlatformError, nodes_for
from esmperf.mpi.stacks import SMPI, Stack, library_name
from esmperf.paths import build_root, stack_build_dir
from esmperf.slurm.batch import SlurmOptions
from esmperf.store.database import results_dir
from esmperf.study import world
from esmperf.study.configuration import Configuration, Study, StudyError
from esmperf.workloads import Workload, not_built_reason

# Variables that tune an MPI library or the profiler: recorded with every run.
KNOB_PREFIXES = (
    "ESM_",
    "OMPI_",
    "PRTE_MCA_",
    "PMIX_MCA_",
    "MPIR_CVAR_",
    "MPICH_",
    "UCX_",
    "FI_",
    "I_MPI_",
    "PSP_",
    "HYDRA_",
    "ESMPROF_",
)
PLACEHOLDERS = ("ranks", "nodes", "size", "steps", "stack", "build", "scratch", "mpirun")


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
    launcher: Launcher = field(default_factory=MpirunLauncher)

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
            "run_key": config.key,
            "series": config.series,
            "position": self.position,
            "matrix": config.matrix,
            "label": config.label,
            "kind": config.kind,
            "workload": config.workload,
            "size": config.size,
            "steps": config.steps,
            "ranks": config.ranks,
            "ranks_per_node": config.ranks_per_node,
            "nodes": self.nodes,
            "stack": config.stack,
            "mpi_library": self.mpi_library,
            "knobs": dict(config.knobs),
            "options": dict(config.options),
            "env": dict(config.env),
            "knob_env": self.knob_env,
            "launcher_args": list(self.launcher_args),
            "argv": self.argv,
            "fom_source": config.fom.source,
            "fom_unit": config.fom.unit,
            "higher_is_better": config.fom.higher_is_better,
            "profile": config.profile,
            "timeout": config.timeout,
            "repeats": vars(config.repeats),
            "cores": self.cores,
            "oversubscribed": self.oversubscribed,
            "status": status,
            "reason": reason,
            "identity": config.identity(),
            "session_id": session_id,
            "launched_by": self.slurm.launcher,
        }


def plan_study(
    study: Study,
    stacks: list[Stack],
    workloads: dict[str, Workload],
    store_path: Path,
    cores: int | None = None,
    slurm: SlurmOptions | None = None,
) -> list[PlannedRun]:
    """`slurm`: how runs are launched (default: the study's [slurm] table, local unless it
    says otherwise); on Slurm a run has a core per rank (cores = ranks)."""
    slurm = slurm or study.slurm
    cores = cores or usable_cores()
    by_id = {stack.id: stack for stack in stacks}
    directory = results_dir(Path(store_path).absolute())
    return [
        _plan(config, position, by_id, workloads, directory, cores, slurm)
        for position, config in enumerate(study.configurations)
    ]


def _plan(
    config: Configuration,
    position: int,
    stacks: dict[str, Stack],
    workloads: dict[str, Workload],
    directory: Path,
    here: int,
    slurm: SlurmOptions,
) -> PlannedRun:
    launcher = launcher_for(slurm.launcher, simulated=config.stack == SMPI)
    cores = launcher.cores(config.ranks, here) if launcher else config.ranks
    planned = PlannedRun(
        config, position, cores=cores, scratch=directory / "scratch" / config.key, slurm=slurm
    )
    if launcher is None:
        planned.skip_reason = (
            f"the {config.stack} stack simulates a cluster on one machine: "
            f"run it with --launcher {' or '.join(simulated_launchers())}"
        )
        return planned
    planned.launcher = launcher
    stack = stacks.get(config.stack)
    if config.stack != "none" and stack is None:
        fix = "`make setup-more-mpi`" if config.stack.endswith("-pypi") else "`make setup`"
        planned.skip_reason = (
            f"MPI stack {config.stack} is not installed here (see `esmperf "
            f"stacks`; {fix} installs it)"
        )
        return planned
    planned.stack = stack
    env = _clean_environment()
    if stack is not None:
        planned.mpi_library = library_name(stack.version)
        env = run_environment(stack, env)
        try:
            setting = knob_setting(
                stack,
                dict(config.knobs),
                config.ranks,
                cores,
                config.ranks_per_node,
                directory / "platforms",
            )
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
        reason = launcher.prepare(planned, env)
        if reason:
            planned.skip_reason = reason
            return planned
        planned.launcher_args = setting.launcher_args
        if config.profile != "off":
            library = profiler_path(stack)
            if not library.is_file():
                planned.skip_reason = (
                    f"the profiler is not built for {stack.id} ({library} is "
                    f"missing): run `make build`"
                )
                return planned
            planned.profiler = library
    elif config.knobs:
        planned.skip_reason = 'knobs need an MPI stack (stack "none" has no MPI)'
        return planned
    env.update(dict(config.env))
    planned.env = env
    planned.knob_env = {
        key: value for key, value in sorted(env.items()) if key.startswith(KNOB_PREFIXES)
    }
    try:
        planned.argv = _argv(config, planned, workloads)
    except NotRunnable as reason:
        planned.skip_reason = str(reason)
        return planned
    planned.skip_reason = world.refusal(planned, list(stacks.values()))
    world.arm(planned, env)
    return planned


def _fold_check(
    config: Configuration, workloads: dict[str, Workload], env: dict[str, str]
) -> str | None:
    """Folding only for the workloads that fold: fold = auto leaves the others unfolded,
    fold = on is a reason not to run them."""
    if "ESM_FOLD" not in env:
        return None
    workload = workloads.get(config.workload) if config.kind == "workload" else None
    if workload is not None and workload.folds:
        return None
    if dict(config.knobs).get("fold") == "on":
        return (
            f"{config.workload} does not fold (folding needs `folds = true` in a workload "
            "manifest, docs/simulate.md): use fold = off or auto"
        )
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
    if config.kind == "workload":
        workload = workloads[config.workload]
        assert stack is not None
        if not workload.is_built(stack.id):
            raise NotRunnable(not_built_reason(workload, stack.id))
        program = [str(workload.executable_path(stack.id)), "--size", str(config.size)]
        if config.steps is not None:
            program += ["--steps", str(config.steps)]
        for name, value in config.options:
            program += [f"--{name}", value]
        return _launcher(config, planned, program[0]) + program
    values = {
        "ranks": str(config.ranks),
        "nodes": str(config.nodes),
        "size": config.size or "",
        "steps": "" if config.steps is None else str(config.steps),
        "stack": config.stack,
        "build": str(stack_build_dir(config.stack)),
        "scratch": str(planned.scratch),
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
                "(write {{ and }} for literal braces)"
            ) from None
    program[0] = _program_path(program[0])
    return _launcher(config, planned, program[0]) + program


def _launcher(config: Configuration, planned: PlannedRun, program: str) -> list[str]:
    """The launcher's part of the command. A simulated rank needs no copy of the program's
    globals if it keeps none (SimGrid's privatization off: global_state.privatization_args)."""
    if planned.stack is None or not config.launcher:
        return []
    if planned.stack.simulated:
        # a program readelf cannot read (a script) keeps the smpi knobs' privatization
        with contextlib.suppress(GlobalStateError, OSError):
            planned.launcher_args = privatization_args(Path(program), planned.launcher_args)
    return planned.launcher.command(planned)


def _program_path(program: str) -> str:
    if os.sep not in program:
        found = shutil.which(program)
        if not found:
            raise NotRunnable(f"program not found: {program} (not on PATH)")
        return program
    path = Path(os.path.normpath(Path(program).expanduser().absolute()))  # {build}/../.. too
    if not path.is_file():
        hint = ": run `make build`" if path.is_relative_to(build_root()) else ""
        raise NotRunnable(f"program not found: {path}{hint}")
    if not os.access(path, os.X_OK):
        raise NotRunnable(f"{path} is not executable: chmod +x {path}")
    return str(path)
