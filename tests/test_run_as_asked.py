"""A run proves it ran as asked (issue 26, item 1): a program linked with another MPI than the
stack's is refused before it runs; a repetition whose ranks did not form one world of the asked
size fails with the reason; a profiled repetition the profiler stops keeps the profiler's own
message as its reason, not the backtrace that follows it."""

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from rich.console import Console

from esmperf.mpi.build import world_census_path
from esmperf.mpi.stacks import Stack, discover_stacks, library_name
from esmperf.slurm.batch import SlurmOptions
from esmperf.store.database import Store
from esmperf.study import world
from esmperf.study.file import load_study
from esmperf.study.orchestrate import run_study
from esmperf.study.plan import plan_study

FAKE_SLURM = Path(__file__).parent / "fake_slurm"
HELLO_C = """#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("nproc %d\\n", size);
    MPI_Finalize();
    return 0;
}
"""
HELLO_F = """program hello
  use mpi
  integer :: ierr, nproc
  call MPI_Init(ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  print '(a,i0)', 'nproc ', nproc
  call MPI_Finalize(ierr)
end program
"""


def both_stacks() -> dict[str, Stack]:
    stacks = {s.id: s for s in discover_stacks().stacks if s.id in ("openmpi", "mpich")}
    if len(stacks) < 2 or not all(world_census_path(s).is_file() for s in stacks.values()):
        pytest.skip("needs Debian Open MPI and MPICH and `make build`")
    return stacks


def open_mpi_program(tmp_path: Path, fortran: bool = False) -> Path:
    """A tiny program built with Open MPI's wrapper; and a script that runs it (ldd sees no MPI
    in a script, so only the world check after the run can tell)."""
    compiler = "mpif90.openmpi" if fortran else "mpicc.openmpi"
    if not shutil.which(compiler):
        pytest.skip(f"needs {compiler}")
    source = tmp_path / ("hello.f90" if fortran else "hello.c")
    source.write_text(HELLO_F if fortran else HELLO_C)
    program = tmp_path / "hello"
    subprocess.run([compiler, "-o", str(program), str(source)], check=True)
    script = tmp_path / "hello.sh"
    script.write_text(f'#!/bin/sh\nexec {program} "$@"\n')
    script.chmod(0o755)
    return program


def run(tmp_path: Path, matrix: str, stacks: list[Stack]) -> tuple[list[dict[str, Any]], str]:
    """Run a one-block study; (its runs with their repetitions, the console's text)."""
    path = tmp_path / "s.toml"
    path.write_text(f'name = "as-asked"\n[[matrix]]\n{matrix}\ntimeout = 60\n')
    text = io.StringIO()
    run_study(
        load_study(path, workloads={}),
        tmp_path / "s.duckdb",
        stacks,
        {},
        Console(file=text, width=400),
    )
    with Store(tmp_path / "s.duckdb", read_only=True) as store:
        runs = [{**r, "reps": store.repetitions(r["run_key"])} for r in store.runs()]
    return runs, text.getvalue()


def test_a_program_linked_with_another_mpi_is_refused_and_never_run(tmp_path: Path) -> None:
    stacks = both_stacks()
    program = open_mpi_program(tmp_path)
    runs, console = run(
        tmp_path,
        f'name = "hello"\ncommand = ["{program}"]\nranks = [2]\nstack = ["openmpi", "mpich"]\n'
        'fom = { regex = "nproc (\\\\d+)" }\nrepeats = { warmup = 0, min = 1, max = 1 }',
        list(stacks.values()),
    )
    by_stack = {r["stack"]: r for r in runs}
    assert by_stack["openmpi"]["status"] == "complete"
    assert [r["fom"] for r in by_stack["openmpi"]["reps"]] == [2.0]
    refused = by_stack["mpich"]
    reason = (
        f"hello is linked with Open MPI (libmpi.so.40), not with stack mpich's "
        f"{library_name(stacks['mpich'].version)}: under mpich's launcher its ranks would each "
        "start a world of their own; run it with --stack openmpi"
    )
    assert (refused["status"], refused["reason"], refused["reps"]) == ("skipped", reason, [])
    assert f"skipped hello · mpich · 2 ranks: {reason}" in console


def test_a_repetition_whose_world_is_wrong_fails_with_the_reason(tmp_path: Path) -> None:
    stacks = both_stacks()
    open_mpi_program(tmp_path)
    runs, console = run(
        tmp_path,
        f'name = "hello"\ncommand = ["{tmp_path}/hello.sh"]\nranks = [1, 2]\nstack = ["mpich"]\n'
        'fom = { regex = "nproc (\\\\d+)" }\nrepeats = { warmup = 0, min = 2, max = 2 }',
        [stacks["mpich"]],
    )
    ompi = library_name(stacks["openmpi"].version)
    under = f"stack mpich's launcher ({library_name(stacks['mpich'].version)})"
    by_ranks = {r["ranks"]: r for r in runs}
    expected = {
        1: f"ran as one world, but of {ompi} under {under}: not a run of mpich",
        2: "ran as 2 worlds of 1 rank, asked for one world of 2 ranks: the program ran "
        f"{ompi} under {under}",
    }
    for ranks, reason in expected.items():
        failed = by_ranks[ranks]
        assert (failed["status"], failed["reason"]) == ("failed", reason)
        assert [(r["status"], r["fom"]) for r in failed["reps"]] == [("failed", None)]
        assert f"failed hello · mpich · {ranks} rank{'s' * (ranks > 1)}: {reason}" in console


def test_the_world_of_a_profile_or_a_result_line_must_be_the_asked_one() -> None:
    config = SimpleNamespace(ranks=2, launcher=True, command=["prog"])
    planned: Any = SimpleNamespace(config=config, scratch=None, stack=None)
    profile: Any = SimpleNamespace(header={"ranks": 1})
    assert world.wrong_world(planned, None, profile) == (
        "the profile holds a world of 1 rank, asked for one world of 2 ranks"
    )
    assert world.wrong_world(planned, {"ranks": 1}, None) == (
        "its result line says 1 rank, asked for one world of 2 ranks"
    )
    assert world.wrong_world(planned, {"ranks": 2}, SimpleNamespace(header={"ranks": 2})) is None
    config.launcher = False  # the command starts its own ranks: no size was asked
    assert world.wrong_world(planned, None, profile) is None


def test_a_stopped_profiled_repetition_keeps_the_profiler_s_message(tmp_path: Path) -> None:
    """gfortran prints a backtrace after an abort: the reason is the profiler's line before
    it, with its fix, not "#15 0xffffffffffffffff in ???"."""
    message = (
        "esmprof: the program runs Open MPI (/lib/libmpi.so.40) but the profiler was built for "
        "the MPICH ABI: profile with the Open MPI stack (esmperf profile --stack), or make the "
        "program load the MPI its launcher belongs to (mpi4py: MPI4PY_LIBMPI)"
    )
    backtrace = "; ".join(f"echo '#{i} 0xffffffffffffffff in ???' >&2" for i in range(16))
    runs, _ = run(
        tmp_path,
        f'name = "aborts"\nlauncher = false\nranks = 1\n'
        f'command = ["sh", "-c", "echo \'{message}\' >&2; {backtrace}; exit 15"]\n'
        "repeats = { warmup = 0, min = 1, max = 1 }",
        [],
    )
    assert runs[0]["reason"] == f"exit code 15: {message}"


def test_a_real_profiled_abi_mismatch_stores_the_profiler_s_message(tmp_path: Path) -> None:
    stacks = both_stacks()
    open_mpi_program(tmp_path, fortran=True)
    runs, _ = run(
        tmp_path,
        f'name = "hello"\ncommand = ["{tmp_path}/hello.sh"]\nranks = [1]\nstack = ["mpich"]\n'
        'profile = "every"\nrepeats = { warmup = 0, min = 1, max = 1 }',
        [stacks["mpich"]],
    )
    assert runs[0]["status"] == "failed"
    assert "esmprof: the program runs Open MPI" in runs[0]["reason"]
    assert runs[0]["reason"].endswith("(mpi4py: MPI4PY_LIBMPI)")


def test_a_slurm_job_s_wrong_world_fails_as_a_local_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the Slurm test double (tests/fake_slurm): the census is kept beside the job's
    repetition output (its scratch directory is gone when esmperf reads it)."""
    stacks = both_stacks()
    open_mpi_program(tmp_path)
    monkeypatch.setenv("PATH", f"{FAKE_SLURM}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_SLURM_DIR", str(tmp_path / "fake-slurm"))
    monkeypatch.setenv("FAKE_SLURM_PYTHON", sys.executable)
    path = tmp_path / "s.toml"
    path.write_text(
        f'name = "as-asked"\n[[matrix]]\nname = "hello"\ncommand = ["{tmp_path}/hello.sh"]\n'
        'ranks = [2]\nstack = ["mpich"]\nfom = { regex = "nproc (\\\\d+)" }\ntimeout = 60\n'
        "repeats = { warmup = 0, min = 1, max = 1 }\n"
    )
    slurm = SlurmOptions(launcher="slurm", partition="debug", poll=0.05)
    quiet = Console(file=io.StringIO())
    run_study(
        load_study(path, workloads={}),
        tmp_path / "s.duckdb",
        [stacks["mpich"]],
        {},
        quiet,
        slurm=slurm,
    )
    with Store(tmp_path / "s.duckdb", read_only=True) as store:
        failed = store.runs()[0]
    assert (failed["status"], failed["launched_by"]) == ("failed", "slurm")
    assert failed["reason"] == (
        f"ran as 2 worlds of 1 rank, asked for one world of 2 ranks: the program ran "
        f"{library_name(stacks['openmpi'].version)} under stack mpich's launcher "
        f"({library_name(stacks['mpich'].version)})"
    )


def test_the_census_of_one_world_passes_and_of_two_fails(tmp_path: Path) -> None:
    """The files libesmworld writes, one per process: rank, world size, MPI library."""
    stack: Any = SimpleNamespace(id="openmpi", family="openmpi", version="Open MPI v4.1.4, x")
    config = SimpleNamespace(ranks=2, launcher=True, command=["prog"])
    planned: Any = SimpleNamespace(config=config, scratch=tmp_path, stack=stack)
    census = tmp_path / world.CENSUS_DIR
    census.mkdir()
    for pid, line in ((10, "0 2 Open MPI v4.1.4, x"), (11, "1 2 Open MPI v4.1.4, x")):
        (census / f"node-{pid}").write_text(line + "\n")
    assert world.wrong_world(planned, None, None) is None
    (census / "node-11").write_text("0 1 Open MPI v4.1.4, x\n")
    (census / "node-10").write_text("0 1 Open MPI v4.1.4, x\n")
    assert world.wrong_world(planned, None, None) == (
        "ran as 2 worlds of 1 rank, asked for one world of 2 ranks"
    )
    config.ranks = 3  # three processes: two in a world of 2, one alone
    (census / "node-12").write_text("1 2 Open MPI v4.1.4, x\n")
    assert world.wrong_world(planned, None, None) == (
        "ran as 3 processes in worlds of 1 and 2 ranks, asked for one world of 3 ranks"
    )


def test_a_command_naming_another_stack_s_launcher_is_refused(tmp_path: Path) -> None:
    stacks = both_stacks()
    program = open_mpi_program(tmp_path)
    path = tmp_path / "s.toml"
    path.write_text(
        f'name = "own-launcher"\n[[matrix]]\nname = "hello"\nlauncher = false\nranks = 2\n'
        f'command = ["{stacks["openmpi"].mpirun}", "-n", "2", "{program}"]\n'
        'stack = ["openmpi", "mpich"]\n'
    )
    plan = plan_study(load_study(path, workloads={}), list(stacks.values()), {}, tmp_path / "s")
    reasons = {planned.config.stack: planned.skip_reason for planned in plan}
    assert reasons == {
        "openmpi": None,
        "mpich": f"{stacks['openmpi'].mpirun} is openmpi's launcher (Open MPI), asked to run "
        f"under stack mpich ({library_name(stacks['mpich'].version)}): run it with --stack "
        "openmpi",
    }
