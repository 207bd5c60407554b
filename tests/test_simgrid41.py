"""SimGrid 4.1 beside Debian's 3.32 (docs/simulate.md, "SimGrid 4.1"; issue 27): $ESMPERF_SIMGRID
points the smpi stack at `make setup-simgrid`'s prefix, its version string says which SimGrid,
its native build has its own directory and its runs their own keys in a store; the late
receiver of tests/test_eager.py gets the same simulated times to the bit under both (eager and
rendezvous, below and from FOLD_AUTO_RANKS ranks), and the message counter counts the same
messages. The runs under 4.1 are skipped unless it is installed (`make setup-simgrid`; `make
test` builds it)."""

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from esmperf.launch.mpirun import mpirun_command, run_environment
from esmperf.launch.smpirun import counter_arguments, message_counter, simulated_messages
from esmperf.mpi.build import build_dir
from esmperf.mpi.knob_setting import knob_setting, write_files
from esmperf.mpi.knobs import FOLD_AUTO_RANKS
from esmperf.mpi.stacks import Stack, discover_stacks
from esmperf.paths import SIMGRID_VARIABLE, build_root, repo_root, stack_build_dir
from esmperf.study.configuration import Configuration

PREFIX = repo_root() / ".venv" / "simgrid-4.1"  # where `make setup-simgrid` installs it
DELAY_US = 1000  # the receiver posts its receive this late (tests/late_receiver.c)


def test_the_variable_chooses_the_smpi_stacks_simgrid_and_build_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SIMGRID_VARIABLE, raising=False)
    assert stack_build_dir("smpi") == build_root() / "smpi"
    simulated, real = (Configuration("homme", "workload", 64, stack) for stack in ("smpi", "mpich"))
    keys = simulated.key, real.key  # a store's run keys under PATH's SimGrid: as before
    assert "simgrid" not in simulated.identity()
    monkeypatch.setenv(SIMGRID_VARIABLE, str(tmp_path / "simgrid-4.1"))
    assert stack_build_dir("smpi") == build_root() / "smpi-simgrid-4.1"
    assert stack_build_dir("openmpi") == build_root() / "openmpi"  # real stacks keep theirs
    # a store resumed under 4.1 does not take 3.32's runs for its own
    assert simulated.identity()["simgrid"] == "simgrid-4.1"
    assert simulated.key != keys[0] and real.key == keys[1]
    discovery = discover_stacks()
    assert discovery.by_id("smpi") is None  # not PATH's SimGrid instead
    assert (
        f"{SIMGRID_VARIABLE}={tmp_path / 'simgrid-4.1'}: no bin/smpicc and bin/smpirun there "
        "(make setup-simgrid builds SimGrid 4.1 into .venv/simgrid-4.1)"
    ) in discovery.problems


@contextmanager
def on_simgrid(prefix: Path | None) -> Iterator[None]:
    """$ESMPERF_SIMGRID names `prefix` inside the block (None: unset, PATH's SimGrid): the
    smpi stack, its build directory and its runs' keys follow it."""
    with pytest.MonkeyPatch.context() as patch:
        if prefix is None:
            patch.delenv(SIMGRID_VARIABLE, raising=False)
        else:
            patch.setenv(SIMGRID_VARIABLE, str(prefix))
        yield


def smpi_stack(prefix: Path | None) -> Stack:
    """The smpi stack on PATH's SimGrid (None) or on `prefix`'s; a skip when absent."""
    with on_simgrid(prefix):
        stack = discover_stacks().by_id("smpi")
    if stack is None:
        pytest.skip(f"SimGrid SMPI is not installed {'at ' + str(prefix) if prefix else ''}")
    return stack


@pytest.fixture(scope="module")
def late_receivers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Stack, Path]]:
    """tests/late_receiver.c built by each SimGrid's smpicc: {"3.32": ..., "4.1": ...}."""
    if not (PREFIX / "bin" / "smpirun").is_file():
        pytest.skip("SimGrid 4.1 is not installed: make setup-simgrid")
    built = {}
    for prefix in (None, PREFIX):
        stack = smpi_stack(prefix)
        binary = tmp_path_factory.mktemp("late") / "late_receiver"
        source = Path(__file__).with_name("late_receiver.c")
        command = [str(stack.mpicc), "-O2", "-o", str(binary), str(source)]
        subprocess.run(command, check=True, env=stack.environment())
        built[stack.version.split()[2]] = (stack, binary)
    assert sorted(built) == ["3.32", "4.1"]
    return built


def late(stack: Stack, binary: Path, tmp_path: Path, ranks: int, size: int, **knobs: str):
    """(when rank 0's MPI_Send returned, when rank 1's MPI_Recv did), simulated seconds."""
    chosen = {"computation": "off", **knobs}
    setting = knob_setting(stack, chosen, ranks, 2, 1, tmp_path / "platforms")
    write_files(setting)
    program = [str(binary), str(size), str(DELAY_US)]
    command = mpirun_command(stack, ranks, program, setting.launcher_args)
    env = run_environment(stack) | {"TMPDIR": str(tmp_path)}
    result = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    done = {}
    for line in result.stdout.splitlines():
        done |= json.loads(line)
    return done["send_done_s"], done["recv_done_s"]


CASES = [  # (ranks, platform, bytes, eager_limit, whether MPI_Send returns before the receive)
    (2, "gige", 65535, "mpi", True),  # eager: below Open MPI's TCP limit
    (2, "gige", 65536, "mpi", False),  # rendezvous from it
    (2, "ib-qdr", 8, "simgrid", True),  # SMPI's default: detached below 64 KiB
    (FOLD_AUTO_RANKS, "ib-qdr", 12287, "mpi", True),  # eager at scale
    (FOLD_AUTO_RANKS, "ib-qdr", 8, "simgrid", False),  # SMPI_AT_SCALE: every send a rendezvous
]


@pytest.mark.parametrize(("ranks", "platform", "size", "eager_limit", "returns_first"), CASES)
def test_the_late_receivers_times_are_the_same_under_both(
    late_receivers: dict[str, tuple[Stack, Path]],
    tmp_path: Path,
    ranks: int,
    platform: str,
    size: int,
    eager_limit: str,
    returns_first: bool,
) -> None:
    times = {
        version: late(
            stack,
            binary,
            tmp_path / version,
            ranks,
            size,
            platform=platform,
            eager_limit=eager_limit,
        )
        for version, (stack, binary) in late_receivers.items()
    }
    assert times["4.1"] == times["3.32"]  # to the bit
    send, recv = times["4.1"]
    assert recv > DELAY_US * 1e-6  # the receive waited for its late posting
    assert (send < recv) == returns_first


def test_the_counter_counts_the_same_messages_under_4_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SIMGRID_VARIABLE, str(PREFIX))
    stack = smpi_stack(PREFIX)
    assert stack.version == "SimGrid SMPI 4.1 (simulated MPI)"
    pingpong = build_dir(stack) / "bench" / "pingpong"
    if not (message_counter(stack).is_file() and pingpong.is_file()):
        pytest.skip(f"the smpi stack is not built on 4.1: {SIMGRID_VARIABLE}={PREFIX} make build")
    setting = knob_setting(stack, {"platform": "ib-qdr", "computation": "off"}, 2, 2, 1, tmp_path)
    write_files(setting)
    launcher = [*counter_arguments(stack), *setting.launcher_args]
    command = mpirun_command(stack, 2, [str(pingpong), "1", "0"], launcher)
    env = run_environment(stack) | {"TMPDIR": str(tmp_path)}
    result = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    # as under 3.32 (tests/test_simulator_cost.py): SMPI's barrier on 2 ranks (2), the
    # synchronising round trip and one timed (2 each), one reduction (1)
    assert simulated_messages(result.stderr) == 7
