"""The `esmperf` command line: parses arguments and calls the modules. Every error the user
can cause ends as one message naming the fix and a non-zero exit, never a traceback."""

import argparse
import contextlib
import json
import os
import shutil
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from esmperf.errors import EsmperfError
from esmperf.launch.mpirun import run_environment, stack_of_program
from esmperf.mpi.build import build_dir, build_stack, profiler_library
from esmperf.mpi.global_state import mutable_globals, summary
from esmperf.mpi.stacks import Discovery, Stack, discover_stacks, library_name
from esmperf.mpi.stacks_table import render_stacks
from esmperf.paths import repo_root
from esmperf.profile.callsites import MAX_DEPTH
from esmperf.profile.interrupt import run_profiled
from esmperf.profile.read import ProfileError, partial_dir, profile_state, read_profile
from esmperf.profile.render import render_summary
from esmperf.profile.summary import summarise
from esmperf.profile.trace_cli import add_trace_command
from esmperf.study.cli import add_commands as add_study_commands

console = Console()
error_console = Console(stderr=True, soft_wrap=True)  # one message, one line

DEFAULT_PROFILE = "esmperf-profile.jsonl"


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.handler(args)
    except EsmperfError as error:
        error_console.print(f"[bold red]error:[/] {escape(str(error))}")
        return 1
    except KeyboardInterrupt:
        error_console.print("[bold red]interrupted[/]")
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="esmperf", description="A performance lab for earth-system MPI codes."
    )
    commands = parser.add_subparsers(title="commands", required=True, metavar="COMMAND")

    stacks = commands.add_parser("stacks", help="list the MPI stacks found here")
    stacks.add_argument("--json", action="store_true", help="print them as JSON")
    stacks.set_defaults(handler=_stacks)

    build = commands.add_parser("build", help="build the native code once per MPI stack")
    build.add_argument("--stack", metavar="ID", help="build only this stack (see `esmperf stacks`)")
    build.set_defaults(handler=_build)

    profile = commands.add_parser(
        "profile",
        help="run an MPI program under the profiler and print its summary",
        description="Run any MPI program (C or Fortran) under the profiler built for the MPI "
        "it uses, then print an IPM-style summary.",
        epilog="example: esmperf profile -- mpirun.openmpi -n 4 ./my_model",
    )
    profile.add_argument(
        "--out",
        default=DEFAULT_PROFILE,
        metavar="FILE",
        help=f"profile file to write (default: {DEFAULT_PROFILE})",
    )
    profile.add_argument(
        "--stack",
        metavar="ID",
        help="MPI stack the program uses (default: told from its launcher or its libraries)",
    )
    profile.add_argument(
        "--bin-seconds",
        type=_positive_float,
        metavar="S",
        help="width of the profile's time bins in seconds (default: the profiler's, 1 s)",
    )
    profile.add_argument(
        "--trace",
        action="store_true",
        help="also record a timeline trace (FILE.trace/; convert it: esmperf trace FILE)",
    )
    profile.add_argument(
        "--trace-cpu",
        action="store_true",
        help="a timeline trace with each thread's CPU time between calls (for replays of "
        "runs on busy or oversubscribed nodes; two more clock reads per call)",
    )
    profile.add_argument(
        "--callsites",
        type=_callsite_depth,
        metavar="DEPTH",
        help="also count MPI calls per call site, DEPTH return addresses deep (1: the "
        f"caller; at most {MAX_DEPTH})",
    )
    profile.add_argument(
        "command", nargs=argparse.REMAINDER, help="launcher and program, after `--`"
    )
    profile.set_defaults(handler=_profile)

    show = commands.add_parser("show", help="print the summary of a profile file")
    show.add_argument("--json", action="store_true", help="print the summary's figures as JSON")
    show.add_argument(
        "--region",
        metavar="PATH",
        help="the figures of one region, e.g. timed/barotropic, or 'all' for the "
        "whole run (default: the region 'timed' when the profile has it)",
    )
    show.add_argument("file", type=Path, help="the profile file (.jsonl)")
    show.set_defaults(handler=_show)

    add_study_commands(commands)  # study, run, report, compare, export, knobs, workloads
    add_trace_command(commands)
    return parser


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value


def _callsite_depth(text: str) -> int:
    """--callsites: 1 to MAX_DEPTH return addresses (the profiler keeps no more: refused, not
    cut short)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_DEPTH:
        raise argparse.ArgumentTypeError(
            f"expected a depth of 1 to {MAX_DEPTH} return addresses (the profiler records at "
            f"most {MAX_DEPTH}), got {text!r}"
        )
    return value


def _stacks(args: argparse.Namespace) -> int:
    discovery = discover_stacks()
    if args.json:
        print(json.dumps([stack.as_dict() for stack in discovery.stacks], indent=2))
    else:
        render_stacks(discovery, console)
    return 0


def _build(args: argparse.Namespace) -> int:
    discovery = discover_stacks()
    stacks = [_stack_by_id(discovery, args.stack)] if args.stack else _all_stacks(discovery)
    failed = []
    for stack in stacks:
        with console.status(f"building {stack.id} ..."):
            result = build_stack(stack)
        if result.up_to_date():
            console.print(f"[green]up to date[/] {stack.id} ({result.seconds:.1f} s)")
        elif result.ok:
            directory = build_dir(stack)
            built = ", ".join(str(path.relative_to(directory)) for path in result.artifacts())
            console.print(
                f"[green]built[/] {stack.id} in {result.seconds:.1f} s: "
                f"{directory.relative_to(repo_root())}/ {{{built}}}",
                soft_wrap=True,
            )
            for part in result.skipped():
                console.print(f"  skipped {escape(part)}", soft_wrap=True, highlight=False)
            if stack.simulated:
                _print_mutable_globals(result.artifacts(), directory)
        else:
            failed.append(stack.id)
            console.print(f"[bold red]build failed[/] for {stack.id}; the end of {result.log}:")
            console.print(result.output_tail, markup=False, highlight=False, soft_wrap=True)
    if failed:
        raise EsmperfError(
            f"the build failed for {', '.join(failed)} (the others built): "
            "see the output above and the logs in build/"
        )
    return 0


def _print_mutable_globals(programs: list[Path], directory: Path) -> None:
    """The smpi stack's build-time check: which programs keep mutable globals, so that each
    simulated rank needs its own copy (docs/simulate.md, "Mutable global state")."""
    console.print("  mutable globals (smpi/privatization:no is safe only with none):")
    for program in programs:
        found = summary(mutable_globals(program, directory))
        console.print(
            f"    {program.relative_to(directory)}: {escape(found)}",
            soft_wrap=True,
            highlight=False,
        )


def _profile(args: argparse.Namespace) -> int:
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        raise EsmperfError("no program given: esmperf profile -- mpirun -n 4 ./my_model")
    _check_program(command[0])
    out = _writable_output(Path(args.out))
    discovery = discover_stacks()
    stack = (
        _stack_by_id(discovery, args.stack)
        if args.stack
        else stack_of_program(command, _all_stacks(discovery))
    )
    if stack.simulated:
        raise EsmperfError(
            "under SimGrid SMPI nothing can be preloaded: the profiler is linked into the "
            "program. esmperf's workloads have it (`esmperf simulate --profile`, or profile = "
            "true in a study); link your own program with it as docs/profiler.md says "
            '("Simulated runs"), then run it with ESMPROF_OUT set'
        )
    env = run_environment(stack)
    preload = [str(profiler_library(stack)), env.get("LD_PRELOAD", "")]
    env["LD_PRELOAD"] = ":".join(item for item in preload if item)
    env["ESMPROF_OUT"] = str(out)
    if args.bin_seconds:
        env["ESMPROF_BIN_SECONDS"] = str(args.bin_seconds)
    if args.trace or args.trace_cpu:
        env["ESMPROF_TRACE"] = "cpu" if args.trace_cpu else "1"
    if args.callsites:
        env["ESMPROF_CALLSITES"] = str(args.callsites)
    for stale in (out, out.with_name(out.name + ".part")):
        stale.unlink(missing_ok=True)
    shutil.rmtree(partial_dir(out), ignore_errors=True)

    library = escape(library_name(stack.version))
    console.print(f"[bold]esmperf:[/] profiling with {stack.id} ({library})")
    try:
        ended = run_profiled(command, env, out, lambda text: console.print(escape(text)))
    except OSError as error:
        raise EsmperfError(f"cannot run {command[0]}: {error.strerror}") from None
    if ended.interrupt is not None:
        return _interrupted(ended.interrupt, out)
    if ended.returncode != 0:
        _show_partial(out)
        raise EsmperfError(_failure(command, ended.returncode, out))
    if not out.exists():
        raise EsmperfError(
            f"`{command[0]}` ran but wrote no profile to {out}: the program did not call "
            f"MPI_Init, or it uses another MPI than {stack.id} (pass --stack, see `esmperf stacks`)"
        )
    render_summary(summarise(read_profile(out)), console)
    console.print(f"[bold]profile:[/] {escape(str(out))} (reprint it: esmperf show FILE)")
    if args.trace or args.trace_cpu:
        console.print(
            f"[bold]trace:[/] {escape(str(out))}.trace/ (as Perfetto JSON and a "
            "SimGrid replay: esmperf trace FILE)"
        )
    return 0


def _interrupted(interrupt: signal.Signals, out: Path) -> int:
    """The profile of a run ended by `interrupt`: its summary (partial, as it says) when the
    ranks wrote one; the exit status of a program ended by that signal."""
    try:
        summary = summarise(read_profile(out))
    except ProfileError as error:
        error_console.print(f"[bold red]interrupted[/] by {interrupt.name}: {escape(str(error))}")
        return 128 + interrupt
    render_summary(summary, console)
    where = f"{partial_dir(out)}/" if summary.get("partial") else str(out)
    error_console.print(
        f"[bold red]interrupted[/] by {interrupt.name}: the profile is in {escape(where)} "
        f"(reprint it: esmperf show {escape(str(out))})"
    )
    return 128 + interrupt


def _show_partial(out: Path) -> None:
    """The summary of what the ranks of a failed run wrote before they ended, if any: which
    rank exited, which were in which MPI call and for how long."""
    if profile_state(out) != "running":
        return
    with contextlib.suppress(ProfileError):  # no partial line: the failure message says so
        render_summary(summarise(read_profile(out)), console)


def _show(args: argparse.Namespace) -> int:
    summary = summarise(read_profile(args.file), args.region)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        render_summary(summary, console)
    return 0


def _all_stacks(discovery: Discovery) -> list[Stack]:
    if not discovery.stacks:
        raise EsmperfError(
            "no MPI stack found: run `make setup` (as root on Debian), `make setup-more-mpi`, "
            "or `module load` an MPI so that mpicc is on PATH"
        )
    return discovery.stacks


def _stack_by_id(discovery: Discovery, stack_id: str) -> Stack:
    stack = discovery.by_id(stack_id)
    if stack is None:
        found = ", ".join(stack.id for stack in discovery.stacks) or "none"
        raise EsmperfError(f"unknown MPI stack {stack_id!r} (found: {found}; see `esmperf stacks`)")
    return stack


def _check_program(program: str) -> None:
    if shutil.which(program):
        return
    if os.sep in program and Path(program).is_file():
        raise EsmperfError(f"{program} is not executable: chmod +x {program}")
    raise EsmperfError(
        f"program not found: {program} (not on PATH and not an executable file; "
        "give its path, e.g. ./my_model)"
    )


def _writable_output(out: Path) -> Path:
    """`out` made absolute, after checking that the profiler will be able to write it."""
    out = out.expanduser().absolute()
    directory = out.parent
    if out.is_dir():
        raise EsmperfError(
            f"--out {out} is a directory: give a file name such as {out / DEFAULT_PROFILE}"
        )
    if not directory.is_dir():
        reason = "is not a directory" if directory.exists() else "does not exist"
        raise EsmperfError(
            f"cannot write {out}: {directory} {reason}; create the directory "
            "or choose another --out"
        )
    writable = os.access(directory, os.W_OK | os.X_OK)
    if not writable or (out.exists() and not os.access(out, os.W_OK)):
        raise EsmperfError(f"cannot write {out}: permission denied; choose another --out")
    return out


def _failure(command: list[str], returncode: int, out: Path) -> str:
    if returncode < 0:
        outcome = f"was killed by signal {signal.Signals(-returncode).name}"
    else:
        outcome = f"failed with exit code {returncode}"
    message = f"`{' '.join(command)}` {outcome}"
    if profile_state(out) == "running":
        kept = partial_dir(out)
        if kept.is_dir() and any(kept.glob("*.jsonl")):
            message += (
                f"; the run died before MPI_Finalize, its ranks' partial profiles are in "
                f"{kept} (esmperf show {out})"
            )
        else:
            message += f"; the run died before MPI_Finalize ({out} holds only the start-up marker)"
    return message + ": see its output above"


if __name__ == "__main__":
    sys.exit(main())
