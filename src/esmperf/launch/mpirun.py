"""How to run ranks of an MPI program here: the environment, the launcher command, and which
stack an arbitrary command uses."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from esmperf.errors import EsmperfError
from esmperf.launch.base import Job, Launcher
from esmperf.mpi.stacks import Stack

LAUNCHER_NAMES = ("mpirun", "mpiexec")  # e.g. mpiexec.hydra in a wheel's bin/
# Shared-library sonames that tell an MPI ABI family apart (ldd of the program).
FAMILY_OF_SONAME = {"libmpi.so.40": "openmpi", "libmpich.so.12": "mpich", "libmpi.so.12": "mpich"}


def open_mpi_major(stack: Stack) -> int | None:
    """Open MPI major version (4, 5, ...) from the library version string, None if not Open MPI."""
    match = re.search(r"Open MPI v(\d+)", stack.version)
    return int(match.group(1)) if match else None


def run_environment(stack: Stack, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """`base` (default: this environment) plus what running `stack`'s launcher needs here.

    As root, Open MPI refuses to start unless told it may. On this 2-core machine runs often
    use more ranks than cores; Open MPI refuses that unless oversubscription is allowed (set
    in the environment, so it also holds for a launcher command the user wrote). Variables
    already set by the user are left alone. MPICH's hydra needs none of this.
    """
    env = stack.environment(base)
    if stack.family != "openmpi":
        return env
    if os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    if (open_mpi_major(stack) or 0) >= 5:
        env.setdefault("PRTE_MCA_rmaps_default_mapping_policy", ":oversubscribe")
    else:
        env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    return env


def mpirun_command(
    stack: Stack, ranks: int, program_args: Sequence[str], launcher_args: Sequence[str] = ()
) -> list[str]:
    """The command running `program_args` on `ranks` ranks with `stack`'s launcher and the
    options a knob setting asks for: for the smpi stack, smpirun with -platform, -hostfile and
    the --cfg flags of `knobs.smpi_setting` (its files written with `knobs.write_files`)."""
    return [str(stack.mpirun), "-n", str(ranks), *launcher_args, *program_args]


def stack_of_program(argv: Sequence[str], stacks: Sequence[Stack]) -> Stack:
    """The stack a command uses: from its launcher when that belongs to a stack (e.g.
    `mpirun.openmpi`, `/usr/bin/mpirun`, a wheel's `bin/mpiexec`), otherwise from the MPI
    library its program is linked with (ldd)."""
    launcher = shutil.which(argv[0]) if argv else None
    stack = stack_of_launcher(Path(launcher), stacks) if launcher else None
    if stack:
        return stack
    for argument in argv:
        program = shutil.which(argument)
        stack = _stack_of_linked_library(Path(program), stacks) if program else None
        if stack:
            return stack
    known = ", ".join(stack.id for stack in stacks)
    raise EsmperfError(
        f"cannot tell which MPI `{' '.join(argv)}` uses (neither its launcher nor an "
        f"MPI library linked into its program is known): pass --stack with one of {known}"
    )


def stack_of_launcher(launcher: Path, stacks: Sequence[Stack]) -> Stack | None:
    real = launcher.resolve()
    for stack in stacks:
        if stack.mpirun.resolve() == real:
            return stack
    if not launcher.name.startswith(LAUNCHER_NAMES):
        return None
    owners = [stack for stack in stacks if stack.bin_dir.resolve() == real.parent]
    return owners[0] if len(owners) == 1 else None


def _stack_of_linked_library(program: Path, stacks: Sequence[Stack]) -> Stack | None:
    for soname, library in linked_libraries(program).items():
        family = FAMILY_OF_SONAME.get(soname)
        same_family = [stack for stack in stacks if stack.family == family]
        if not same_family:
            continue
        # Prefer the stack whose install prefix holds the library ldd found.
        prefixes = {stack.id: stack.bin_dir.resolve().parent for stack in same_family}
        holding = [s for s in same_family if library and library.is_relative_to(prefixes[s.id])]
        return max(holding, key=lambda s: len(prefixes[s.id].parts), default=same_family[0])
    return None


def linked_libraries(program: Path, env: Mapping[str, str] | None = None) -> dict[str, Path | None]:
    """soname -> resolved path (None when not found) from `ldd` (in `env`: a stack's library
    path); empty for scripts."""
    try:
        result = subprocess.run(
            ["ldd", str(program)],
            capture_output=True,
            text=True,
            env=None if env is None else dict(env),
        )
    except OSError:  # no ldd on this system
        return {}
    if result.returncode != 0:
        return {}
    libraries: dict[str, Path | None] = {}
    for line in result.stdout.splitlines():
        match = re.match(r"\s*(\S+) => (\S+)", line)
        if match:
            target = match.group(2)
            libraries[match.group(1)] = Path(target).resolve() if target.startswith("/") else None
    return libraries


class MpirunLauncher(Launcher):
    """The run's stack's own mpirun (or mpiexec) on this machine: --launcher local."""

    name = "local"
    position = 0

    def command(self, planned: Job) -> list[str]:
        assert planned.stack is not None
        return mpirun_command(planned.stack, planned.config.ranks, [], planned.launcher_args)
