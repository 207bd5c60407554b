"""The smpi stack's build-time check for mutable global state (esmperf.mpi.global_state,
docs/simulate.md "Mutable global state"): every writable global and static variable of a
program is found, constants and the loader's and C runtime's own are not; each is attributed to
the library that defines it; a program the check passes runs with SimGrid's privatization off
and gives the simulated times of a privatized run, to the bit."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from esmperf.launch.mpirun import mpirun_command, run_environment
from esmperf.mpi.build import build_dir
from esmperf.mpi.global_state import GlobalStateError, mutable_globals, summary
from esmperf.mpi.knob_setting import knob_setting, write_files
from ocean_smpi import smpi_built

PROGRAM = r"""
#include <stdio.h>
int counter;                               /* .bss: mutable */
static double table[4] = {1, 2, 3, 4};     /* .data: mutable */
__thread int per_thread;                   /* .tbss: one thread runs every simulated rank */
const int fixed[3] = {1, 2, 3};            /* .rodata */
static const char *const names[] = {"a"};  /* .data.rel.ro: read-only once loaded */
int main(void)
{
    static int calls;                      /* .bss: a function's static */
    counter += ++calls + per_thread++;
    table[counter % 4] += fixed[counter % 3];
    printf("%s %d %g\n", names[0], counter, table[0]);
    return 0;
}
"""


def test_writable_globals_are_found_and_constants_are_not(tmp_path: Path) -> None:
    compiler = shutil.which("cc") or pytest.skip("no C compiler (cc)")
    (tmp_path / "globals.c").write_text(PROGRAM)
    program = tmp_path / "globals"
    subprocess.run([compiler, "-O0", "-o", program, tmp_path / "globals.c"], check=True)
    found = {(g.name, g.section, g.owner) for g in mutable_globals(program)}
    assert found == {
        ("counter", ".bss", "program"),
        ("table", ".data", "program"),
        ("per_thread", ".tbss", "program"),
        ("calls.0", ".bss", "program"),
    }
    assert summary(mutable_globals(program), shown=2).startswith("4 (program 4: calls.0, ")


def test_a_file_that_is_not_a_program_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not an ELF file\n")
    with pytest.raises(GlobalStateError, match="not an ELF program readelf can read"):
        mutable_globals(tmp_path / "notes.txt")


def test_the_smpi_workloads_keep_the_profilers_and_their_own_state() -> None:
    stack = smpi_built(Path("apps") / "homme" / "homme")
    directory = build_dir(stack)
    assert mutable_globals(directory / "bench" / "pingpong", directory) == []
    homme = {(g.name, g.owner) for g in mutable_globals(directory / "apps/homme/homme", directory)}
    # the communicator table and fold state of the workload core, the kernels' sampling
    # records, and the profiler's per-rank state: each simulated rank needs its own
    assert {("comm", "workload core"), ("fold", "workload core")} <= homme
    assert ("advection.6", "program") in homme
    assert sum(owner == "profiler" for _, owner in homme) > 100


def test_a_program_without_mutable_globals_simulates_alike_without_privatization(
    tmp_path: Path,
) -> None:
    stack = smpi_built(Path("bench") / "pingpong")
    program = [str(build_dir(stack) / "bench" / "pingpong"), "5", "0", "65536"]
    times = []
    for privatization in ("mmap", "no"):
        setting = knob_setting(
            stack, {"computation": "off", "platform": "ib-qdr"}, 4, 2, 1, tmp_path / "platforms"
        )
        write_files(setting)
        flags = (*setting.launcher_args, f"--cfg=smpi/privatization:{privatization}")
        done = subprocess.run(
            mpirun_command(stack, 4, program, flags),
            env=run_environment(stack) | {"TMPDIR": str(tmp_path)},
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        times.append(done.stdout.strip().splitlines()[-1])
    assert times[0] == times[1]  # the result line: every one-way time, to the last digit


def test_privatization_by_dlopen_or_mmap_gives_the_same_simulated_times(tmp_path: Path) -> None:
    """Below SMPI_MMAP_RANKS a simulated rank's globals are a dlopen'd copy of the program, from
    it a data segment mapped in at every switch (smpi_knobs.py): the same run either way."""
    from ocean_smpi import FOLD, MODEL, result_of, simulate, smpi_stack

    stack = smpi_stack("pflotran")
    args = ("--size", "S", "--steps", "1")
    results = [
        result_of(simulate(stack, tmp_path, "pflotran", 32, 8, args, env=MODEL | FOLD, flags=flags))
        for flags in ((), ("--cfg=smpi/privatization:mmap",))
    ]
    assert results[0]["simulated_time"] == results[1]["simulated_time"]
    assert results[0]["wall"] == results[1]["wall"] and results[0]["comm"] == results[1]["comm"]


def test_the_smpi_build_prints_each_programs_mutable_globals(monkeypatch) -> None:
    import io

    from rich.console import Console

    from esmperf import cli

    stack = smpi_built(Path("apps") / "homme" / "homme")
    directory = build_dir(stack)
    printed = io.StringIO()
    monkeypatch.setattr(cli, "console", Console(file=printed, width=200))
    programs = [directory / "apps" / "homme" / "homme", directory / "bench" / "pingpong"]
    cli._print_mutable_globals(programs, directory)
    lines = printed.getvalue().splitlines()
    assert lines[0] == "  mutable globals (smpi/privatization:no is safe only with none):"
    assert re.match(r"    apps/homme/homme: \d+ \(profiler \d+: ", lines[1])
    assert "workload core 3: comm, fold, next_tag.0)" in lines[1]
    assert lines[2] == "    bench/pingpong: none"
