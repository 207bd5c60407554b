"""MPI stack discovery and the launch environment (no native build needed)."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from esmperf.errors import EsmperfError
from esmperf.launch.mpirun import mpirun_command, run_environment, stack_of_program
from esmperf.mpi.stacks import Stack, discover_stacks, family_of, tool_environment

DEBIAN = {"openmpi": "Open MPI v4", "mpich": "MPICH Version:"}
needs_debian_mpi = pytest.mark.skipif(
    not all(shutil.which(f"mpicc.{suffix}") for suffix in DEBIAN),
    reason="Debian MPI packages not installed (`make setup` installs them as root)",
)


@pytest.fixture(scope="module")
def stacks(tmp_path_factory: pytest.TempPathFactory) -> list[Stack]:
    return discover_stacks(tmp_path_factory.mktemp("cache") / "stacks.json").stacks


def _stack(stack_id: str, family: str, version: str, **fields: object) -> Stack:
    bin_dir = Path("/opt") / stack_id / "bin"
    return Stack(
        id=stack_id,
        family=family,
        mpicc=bin_dir / "mpicc",
        mpifort=None,
        mpirun=bin_dir / "mpirun",
        bin_dir=bin_dir,
        version=version,
        **fields,
    )


@needs_debian_mpi
@pytest.mark.parametrize("suffix", DEBIAN)
def test_finds_the_debian_stacks(stacks: list[Stack], suffix: str) -> None:
    stack = next(stack for stack in stacks if stack.id == suffix)
    assert stack.family == suffix
    assert stack.version.startswith(DEBIAN[suffix])
    assert stack.mpicc == Path(shutil.which(f"mpicc.{suffix}"))
    assert stack.mpifort == Path(shutil.which(f"mpifort.{suffix}"))
    assert stack.mpirun == Path(shutil.which(f"mpirun.{suffix}"))


def test_the_generic_mpicc_link_is_not_a_stack_of_its_own(stacks: list[Stack]) -> None:
    resolved = [stack.mpicc.resolve() for stack in stacks]
    assert len(resolved) == len(set(resolved))


@needs_debian_mpi
def test_versions_come_from_the_cache(tmp_path: Path) -> None:
    cache_file = tmp_path / "stacks.json"
    discover_stacks(cache_file)
    cache = json.loads(cache_file.read_text())
    key = next(key for key in cache if key.startswith(shutil.which("mpicc.mpich") + ":"))
    cache[key] = "MPICH Version: 99 (from the cache)"
    cache_file.write_text(json.dumps(cache))
    mpich = discover_stacks(cache_file).by_id("mpich")
    assert mpich is not None and mpich.version.endswith("(from the cache)")


@pytest.mark.parametrize(
    ("version", "family"),
    [
        ("Open MPI v5.0.11, package: Open MPI", "openmpi"),
        ("MPICH Version:\t4.0.2", "mpich"),
        ("Intel(R) MPI Library 2021.13 for Linux* OS", "mpich"),
        ("MPI VERSION    : CRAY MPICH version 8.1.28", "mpich"),
        ("Some Other MPI 1.0", None),
    ],
)
def test_family_of_a_library_version(version: str, family: str | None) -> None:
    assert family_of(version) == family


def test_tool_environment_puts_the_stack_first() -> None:
    base = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": "/x", "HOME": "/root"}
    env = tool_environment(
        Path("/opt/impi/bin"), {"I_MPI_ROOT": "/opt/impi", "LD_LIBRARY_PATH": "/opt/impi/lib"}, base
    )
    assert env["PATH"] == "/opt/impi/bin:/usr/bin:/bin"
    assert env["LD_LIBRARY_PATH"] == "/opt/impi/lib:/x"
    assert env["I_MPI_ROOT"] == "/opt/impi" and env["HOME"] == "/root"
    assert tool_environment(Path("/usr/bin"), {}, base)["PATH"] == "/usr/bin:/bin"


@pytest.mark.parametrize(
    ("version", "oversubscribe"),
    [
        ("Open MPI v4.1.4", {"OMPI_MCA_rmaps_base_oversubscribe": "1"}),
        ("Open MPI v5.0.11", {"PRTE_MCA_rmaps_default_mapping_policy": ":oversubscribe"}),
    ],
)
def test_open_mpi_runs_as_root_and_oversubscribed(
    monkeypatch: pytest.MonkeyPatch, version: str, oversubscribe: dict[str, str]
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    env = run_environment(_stack("openmpi", "openmpi", version), base={"PATH": "/bin"})
    assert env["OMPI_ALLOW_RUN_AS_ROOT"] == env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] == "1"
    assert oversubscribe.items() <= env.items()


def test_user_settings_win_and_mpich_needs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    base = {"PATH": "/bin", "OMPI_MCA_rmaps_base_oversubscribe": "0"}
    env = run_environment(_stack("openmpi", "openmpi", "Open MPI v4.1.4"), base=base)
    assert env["OMPI_MCA_rmaps_base_oversubscribe"] == "0"
    env = run_environment(_stack("mpich", "mpich", "MPICH Version: 4.0.2"), base=base)
    assert env == base | {"PATH": "/opt/mpich/bin:/bin"}


def test_mpirun_command() -> None:
    stack = _stack("mpich", "mpich", "MPICH")
    assert mpirun_command(stack, 4, ["./model", "-s"]) == [
        "/opt/mpich/bin/mpirun",
        "-n",
        "4",
        "./model",
        "-s",
    ]


@needs_debian_mpi
@pytest.mark.parametrize("suffix", DEBIAN)
def test_stack_of_a_launcher(stacks: list[Stack], suffix: str) -> None:
    assert stack_of_program([f"mpirun.{suffix}", "-n", "2", "./model"], stacks).id == suffix
    assert stack_of_program([f"mpiexec.{suffix}", "-n", "2", "./model"], stacks).id == suffix


def test_every_stack_owns_its_launcher(stacks: list[Stack]) -> None:
    for stack in stacks:
        assert stack_of_program([str(stack.mpirun), "-n", "2", "./model"], stacks) == stack


@needs_debian_mpi
@pytest.mark.parametrize("suffix", DEBIAN)
def test_stack_of_a_program_from_its_libraries(
    stacks: list[Stack], tmp_path: Path, suffix: str
) -> None:
    source = tmp_path / "hello.c"
    source.write_text("#include <mpi.h>\nint main(void) { return MPI_Init(0, 0); }\n")
    program = tmp_path / "hello"
    subprocess.run([f"mpicc.{suffix}", str(source), "-o", str(program)], check=True)
    assert stack_of_program([str(program)], stacks).id == suffix
    assert stack_of_program(["env", "A=1", str(program)], stacks).id == suffix


def test_stack_of_an_unknown_program(stacks: list[Stack]) -> None:
    with pytest.raises(EsmperfError, match="pass --stack"):
        stack_of_program(["/bin/true"], stacks)
