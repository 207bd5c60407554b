"""The command line: help, errors (one message, non-zero exit, no traceback), and the profile
flow driven by stand-in programs and a stand-in profiler library (no MPI build needed)."""

import json
import subprocess
from pathlib import Path

import pytest

from conftest import esmperf, header, small_ranks, write_profile
from esmperf.mpi.stacks import Stack, discover_stacks
from esmperf.profile.read import read_profile
from esmperf.profile.summary import summarise


def assert_fails_with(result: subprocess.CompletedProcess[str], message: str) -> None:
    assert result.returncode != 0
    assert message in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("command", [[], ["stacks"], ["build"], ["profile"], ["show"]])
def test_help_everywhere(command: list[str]) -> None:
    result = esmperf(*command, "--help")
    assert result.returncode == 0 and "usage: esmperf" in result.stdout


def test_unknown_program() -> None:
    assert_fails_with(
        esmperf("profile", "--", "no-such-model-xyz"), "program not found: no-such-model-xyz"
    )


def test_program_not_executable(tmp_path: Path) -> None:
    (tmp_path / "model").write_text("#!/bin/sh\n")
    assert_fails_with(esmperf("profile", "--", str(tmp_path / "model")), "is not executable")


def test_no_program() -> None:
    assert_fails_with(esmperf("profile", "--out", "x.jsonl"), "no program given")


@pytest.mark.parametrize(
    ("out", "message"),
    [
        ("missing-dir/p.jsonl", "missing-dir does not exist"),
        ("a-file/p.jsonl", "a-file is not a directory"),
        (".", "is a directory"),
    ],
)
def test_unwritable_output(tmp_path: Path, out: str, message: str) -> None:
    (tmp_path / "a-file").write_text("")
    assert_fails_with(esmperf("profile", "--out", str(tmp_path / out), "--", "true"), message)


def test_show_a_malformed_profile(tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_text("not json\n")
    assert_fails_with(esmperf("show", str(tmp_path / "bad.jsonl")), "line 1 is not JSON")


def test_show_a_missing_profile(tmp_path: Path) -> None:
    assert_fails_with(esmperf("show", str(tmp_path / "none.jsonl")), "no such profile file")


def test_show_text_and_json(small_profile: Path) -> None:
    text = esmperf("show", str(small_profile))
    assert text.returncode == 0
    for figure in (
        "MPI_Allreduce",
        "22.22 %",
        "[1, 2) KiB",
        "min 9 B (rank 1)",
        "Fortran calls bypass the wrappers",
    ):
        assert figure in text.stdout
    as_json = esmperf("show", "--json", str(small_profile))
    assert json.loads(as_json.stdout) == summarise(read_profile(small_profile))


def test_stacks_json() -> None:
    result = esmperf("stacks", "--json")
    assert result.returncode == 0
    assert {"id", "family", "version", "mpicc", "mpirun"} <= set(json.loads(result.stdout)[0])


@pytest.fixture
def built(tmp_path: Path) -> tuple[Path, Stack]:
    """A tree whose first MPI stack has a stand-in (empty) profiler library."""
    stacks = discover_stacks(tmp_path / "build" / "stacks.json").stacks
    if not stacks:
        pytest.skip("no MPI stack here")
    library = tmp_path / "build" / stacks[0].id / "prof" / "libesmprof.so"
    library.parent.mkdir(parents=True)
    (tmp_path / "empty.c").write_text("int esmprof_stand_in;\n")
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-o", str(library), str(tmp_path / "empty.c")], check=True
    )
    return tmp_path, stacks[0]


def program(directory: Path, body: str) -> str:
    path = directory / "model.sh"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def test_unknown_stack(built: tuple[Path, Stack]) -> None:
    root, _ = built
    assert_fails_with(
        esmperf("profile", "--stack", "nompi", "--", "true", root=root), "unknown MPI stack 'nompi'"
    )


def test_stack_not_built(
    built: tuple[Path, Stack], tmp_path_factory: pytest.TempPathFactory
) -> None:
    _, stack = built
    empty_tree = tmp_path_factory.mktemp("tree")
    assert_fails_with(
        esmperf("profile", "--stack", stack.id, "--", "true", root=empty_tree), "run `make build`"
    )


def test_program_fails(built: tuple[Path, Stack]) -> None:
    root, stack = built
    model = program(root, "exit 3\n")
    assert_fails_with(
        esmperf("profile", "--stack", stack.id, "--", model, root=root), "failed with exit code 3"
    )


def test_run_dies_before_finalize(built: tuple[Path, Stack]) -> None:
    root, stack = built
    marker = write_profile(root / "marker.jsonl", header(3, state="running"), [], trailer=False)
    model = program(root, f'cp {marker} "$ESMPROF_OUT"\nkill -9 $$\n')
    assert_fails_with(
        esmperf("profile", "--stack", stack.id, "--", model, root=root),
        "was killed by signal SIGKILL; the run died before MPI_Finalize",
    )


def test_program_writes_no_profile(built: tuple[Path, Stack]) -> None:
    root, stack = built
    model = program(root, "exit 0\n")
    assert_fails_with(
        esmperf("profile", "--stack", stack.id, "--", model, root=root), "wrote no profile"
    )


def test_profile_runs_the_program_under_the_profiler(built: tuple[Path, Stack]) -> None:
    root, stack = built
    done = write_profile(root / "done.jsonl", header(3), small_ranks())
    model = program(
        root, f'echo "preload=$LD_PRELOAD bins=$ESMPROF_BIN_SECONDS"\ncp {done} "$ESMPROF_OUT"\n'
    )
    out = root / "out" / "run.jsonl"
    out.parent.mkdir()
    result = esmperf(
        "profile",
        "--stack",
        stack.id,
        "--out",
        str(out),
        "--bin-seconds",
        "0.5",
        "--",
        model,
        root=root,
    )
    assert result.returncode == 0, result.stderr
    assert f"preload={root / 'build' / stack.id / 'prof' / 'libesmprof.so'}" in result.stdout
    assert "bins=0.5" in result.stdout
    assert "Top MPI calls by time" in result.stdout
    assert read_profile(out).header["ranks"] == 3
