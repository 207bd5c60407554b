"""The smpi stack's build-time check for mutable global state (esmperf.mpi.global_state,
docs/simulate.md "Mutable global state"): every writable global and static variable of a
program is found, constants and the loader's and C runtime's own are not; each is attributed to
the library that defines it; a program the check passes runs with SimGrid's privatization off
and gives the simulated times of a privatized run, to the bit."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from esmperf.launch.mpirun import mpirun_command, run_environment
from esmperf.mpi.build import build_dir
from esmperf.mpi.global_state import (
    NO_PRIVATIZATION,
    GlobalStateError,
    mutable_globals,
    privatization_args,
    summary,
)
from esmperf.mpi.knob_setting import knob_setting, write_files
from esmperf.mpi.smpi_knobs import SMPI_MMAP
from ocean_smpi import smpi_built

PROGRAM = r"""
#include <stdio.h>
int counter;                               /* .bss: mutable */
static double table[4] = {1, 2, 3, 4};     /* .data: mutable */
__thread int per_thread;                   /* .tbss: one thread runs every simulated rank */
const int fixed[3] = {1, 2, 3};            /* .rodata */
static const char *const names[] = {"a"};  /* .data.rel.ro: read-only once loaded */
/* ESM_RANK_INVARIANT (esm_rank_state.h): set alike by every rank, allowed */
static int resolved __attribute__((section("esm_rank_invariant")));
int main(void)
{
    static int calls;                      /* .bss: a function's static */
    resolved = 1;
    counter += ++calls + per_thread++ + resolved;
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


def test_the_smpi_programs_keep_no_mutable_global() -> None:
    """The profiler, the workload core, the redistribution library and every program built for
    the smpi stack keep their per-rank state in per-rank blocks (native/include/
    esm_rank_state.h): SimGrid's privatization can be off for all of them."""
    stack = smpi_built(Path("apps") / "homme" / "homme")
    directory = build_dir(stack)
    programs = [
        path
        for part in ("apps", "bench", "core")
        for path in sorted((directory / part).rglob("*"))
        if path.is_file() and os.access(path, os.X_OK) and path.read_bytes()[:4] == b"\x7fELF"
    ]
    assert {p.relative_to(directory).as_posix() for p in programs} >= {
        "apps/cesm/cesm", "apps/homme/homme", "apps/hycom/hycom", "apps/pflotran/pflotran",
        "apps/pop/pop", "apps/redist/redist-bench", "bench/pingpong", "core/esm_fold_test",
    }  # fmt: skip
    kept = {
        p.relative_to(directory).as_posix(): summary(mutable_globals(p, directory))
        for p in programs
    }
    assert kept == dict.fromkeys(kept, "none")


def test_a_program_that_keeps_none_runs_without_privatization(tmp_path: Path) -> None:
    """smpirun's options for a program the check passes: privatization off in place of the
    smpi knobs' choice (mmap from SMPI_MMAP_RANKS ranks); unchanged for a program with globals."""
    stack = smpi_built(Path("apps") / "homme" / "homme")
    homme = build_dir(stack) / "apps" / "homme" / "homme"
    at_scale = ("-platform", "p.xml", SMPI_MMAP, "--cfg=surf/precision:1e-8")
    assert privatization_args(homme, at_scale) == (
        "-platform", "p.xml", "--cfg=surf/precision:1e-8", NO_PRIVATIZATION,
    )  # fmt: skip
    compiler = shutil.which("cc") or pytest.skip("no C compiler (cc)")
    (tmp_path / "globals.c").write_text(PROGRAM)
    program = tmp_path / "globals"
    subprocess.run([compiler, "-O0", "-o", program, tmp_path / "globals.c"], check=True)
    assert privatization_args(program, at_scale) == at_scale


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


def test_privatization_by_dlopen_mmap_or_none_gives_the_same_simulated_times(
    tmp_path: Path,
) -> None:
    """Below SMPI_MMAP_RANKS a simulated rank's globals are a dlopen'd copy of the program, from
    it a data segment mapped in at every switch (smpi_knobs.py); a program that keeps none
    needs neither (privatization_args): the same run every way."""
    from ocean_smpi import FOLD, MODEL, result_of, simulate, smpi_stack

    stack = smpi_stack("pflotran")
    args = ("--size", "S", "--steps", "1")
    results = [
        result_of(simulate(stack, tmp_path, "pflotran", 32, 8, args, env=MODEL | FOLD, flags=flags))
        for flags in ((), ("--cfg=smpi/privatization:mmap",), (NO_PRIVATIZATION,))
    ]
    for other in results[1:]:
        assert other["simulated_time"] == results[0]["simulated_time"]
        assert other["wall"] == results[0]["wall"] and other["comm"] == results[0]["comm"]


def test_the_smpi_build_prints_each_programs_mutable_globals(monkeypatch, tmp_path) -> None:
    import io

    from rich.console import Console

    from esmperf import cli

    stack = smpi_built(Path("apps") / "homme" / "homme")
    directory = build_dir(stack)
    compiler = shutil.which("cc") or pytest.skip("no C compiler (cc)")
    (tmp_path / "globals.c").write_text(PROGRAM)
    subprocess.run(
        [compiler, "-O0", "-o", tmp_path / "globals", tmp_path / "globals.c"], check=True
    )
    printed = io.StringIO()
    monkeypatch.setattr(cli, "console", Console(file=printed, width=200))
    cli._print_mutable_globals([directory / "apps" / "homme" / "homme"], directory)
    cli._print_mutable_globals([tmp_path / "globals"], tmp_path)
    lines = printed.getvalue().splitlines()
    assert lines[0] == "  mutable globals (smpi/privatization:no is safe only with none):"
    assert lines[1] == "    apps/homme/homme: none"
    assert lines[3] == "    globals: 4 (program 4: calls.0, counter, per_thread, table)"
