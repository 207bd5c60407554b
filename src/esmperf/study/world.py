"""A run proves it ran as asked (docs/studies.md). Before a configuration runs, its program's
MPI is checked against the stack it is asked to run under: an Open MPI-linked program started by
MPICH's launcher runs as separate 1-rank worlds, so the configuration is refused, with the
reason, and never run. After each repetition, the ranks must have formed one world of the asked
size: a profiled repetition's profile says so; any other repetition's processes each wrote their
rank and world size (libesmworld, preloaded: native/prof/world_check.c); a workload's result line
states its ranks. A repetition whose world is wrong fails with the reason."""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from esmperf.launch.mpirun import FAMILY_OF_SONAME, linked_libraries, stack_of_launcher
from esmperf.mpi.build import world_census_path
from esmperf.mpi.stacks import Stack, family_of, library_name

if TYPE_CHECKING:
    from esmperf.profile.read import Profile
    from esmperf.study.plan import PlannedRun

CENSUS_DIR = ".esmperf-world"  # in a repetition's scratch directory: one file per MPI process
FAMILY_NAMES = {"openmpi": "Open MPI", "mpich": "the MPICH ABI (MPICH, Intel MPI)"}


def refusal(planned: PlannedRun, stacks: Sequence[Stack]) -> str | None:
    """Why `planned` must not run: a program of its command is linked with (or a launcher it
    names belongs to) another MPI than its stack's. None when they agree, or when nothing says
    (a script, a program linking no MPI: the world check after each repetition still holds)."""
    stack, config = planned.stack, planned.config
    if stack is None or stack.simulated or config.kind != "command":
        return None  # a workload is built for each stack
    program = planned.argv[len(planned.argv) - len(config.command) :]
    for argument in program:
        found = shutil.which(argument, path=planned.env.get("PATH"))
        if not found:
            continue
        launcher = stack_of_launcher(Path(found), stacks)
        if launcher is not None and launcher.family != stack.family:
            return (
                f"{argument} is {launcher.id}'s launcher ({FAMILY_NAMES.get(launcher.family, launcher.family)}), "
                f"asked to run under stack {stack.id} ({library_name(stack.version)}): run it "
                f"with --stack {launcher.id}"
            )
        reason = _linked_mismatch(Path(found), stack, stacks, planned.env)
        if reason:
            return reason
    return None


def _linked_mismatch(
    program: Path, stack: Stack, stacks: Sequence[Stack], env: Mapping[str, str]
) -> str | None:
    for soname in linked_libraries(program, env):
        family = FAMILY_OF_SONAME.get(soname)
        if family is None or family == stack.family:
            continue
        fitting = [other.id for other in stacks if other.family == family]
        fix = (
            f"run it with --stack {' or '.join(fitting)}"
            if fitting
            else f"rebuild it with {stack.id}'s {stack.mpicc.name}"
        )
        return (
            f"{program.name} is linked with {FAMILY_NAMES.get(family, family)} ({soname}), "
            f"not with stack {stack.id}'s {library_name(stack.version)}: under {stack.id}'s "
            f"launcher its ranks would each start a world of their own; {fix}"
        )
    return None


def arm(planned: PlannedRun, env: dict[str, str]) -> None:
    """Have each MPI process of `planned`'s repetitions write its rank and world size into the
    repetition's scratch directory (a profiled repetition preloads the profiler instead)."""
    stack = planned.stack
    census = world_census_path(stack) if stack is not None and not stack.simulated else None
    if census is None or not census.is_file() or planned.scratch is None:
        return
    env["LD_PRELOAD"] = ":".join(filter(None, (str(census), env.get("LD_PRELOAD"))))
    env["ESMPERF_WORLD_DIR"] = str(planned.scratch / CENSUS_DIR)


def census_dir(planned: PlannedRun) -> Path | None:
    """Where a repetition run here leaves its census (a Slurm job's: slurm/batch_script.py)."""
    return planned.scratch / CENSUS_DIR if planned.scratch else None


def wrong_world(
    planned: PlannedRun,
    result: dict[str, Any] | None,
    profile: Profile | None,
    census: Path | None = None,
) -> str | None:
    """Why a repetition that ended well did not run as one world of the asked size, or None.
    `census`: the directory its processes wrote their ranks in (default: census_dir)."""
    config = planned.config
    asked = config.ranks
    size_known = config.launcher or any("{ranks}" in part for part in config.command)
    ranks = (result or {}).get("ranks")
    if isinstance(ranks, int) and size_known and ranks != asked:
        return f"its result line says {_ranks(ranks)}, asked for {_world(1, asked)}"
    if profile is not None:
        size = profile.header.get("ranks")
        if isinstance(size, int) and size_known and size != asked:
            return f"the profile holds a world of {_ranks(size)}, asked for {_world(1, asked)}"
        return None
    census = census or census_dir(planned)
    entries = _census(census) if census else []
    if not entries:
        return None  # no process initialised a dynamically linked MPI: nothing to check
    sizes = {size for _, size, _ in entries}
    worlds = sum(1 for rank, _, _ in entries if rank == 0)
    one_world = (
        worlds == 1
        and len(sizes) == 1
        and sorted(r for r, _, _ in entries) == list(range(len(entries)))
    )
    right_size = one_world and (not size_known or sizes == {asked})
    other = _other_library(planned.stack, [library for _, _, library in entries])
    if right_size and other is None:
        return None
    stack = planned.stack
    assert stack is not None  # arm() preloads the census only under a stack
    under = f"stack {stack.id}'s launcher ({library_name(stack.version)})"
    if right_size:
        return f"ran as one world, but of {other} under {under}: not a run of {stack.id}"
    if len(sizes) == 1 and worlds * min(sizes) == len(entries):
        ran = _world(worlds, min(sizes))
    else:
        ran = f"{len(entries)} processes in worlds of {' and '.join(map(str, sorted(sizes)))} ranks"
    reason = f"ran as {ran}, asked for {_world(1, asked)}"
    return reason + (f": the program ran {other} under {under}" if other else "")


def _other_library(stack: Stack | None, libraries: list[str]) -> str | None:
    """The MPI library the processes ran when it is not of the stack's ABI family."""
    for library, _ in Counter(libraries).most_common():
        family = family_of(library)
        if stack is not None and family is not None and family != stack.family:
            return library_name(library)
    return None


def _census(directory: Path) -> list[tuple[int, int, str]]:
    """(rank, world size, MPI library) of each process that initialised MPI."""
    entries = []
    for file in sorted(directory.glob("*")) if directory.is_dir() else ():
        rank, _, rest = file.read_text(errors="replace").strip().partition(" ")
        size, _, library = rest.partition(" ")
        if rank.lstrip("-").isdigit() and size.lstrip("-").isdigit():
            entries.append((int(rank), int(size), library))
    return entries


def _world(count: int, size: int) -> str:
    worlds = "one world" if count == 1 else f"{count} worlds"
    return f"{worlds} of {_ranks(size)}"


def _ranks(size: int) -> str:
    return f"{size} rank" + ("" if size == 1 else "s")
