"""Synthetic profile files (docs/profile-format.md): reader, summary, CLI tests need no MPI."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# the esmperf command line as a user runs it, in a subprocess of this interpreter
ESMPERF_CLI = (sys.executable, "-m", "esmperf.cli")


def esmperf(
    *args: str, env: dict[str, str] | None = None, root: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`esmperf ARGS...` in a subprocess: its exit status, standard output and error. `env`
    replaces the environment (default: this one); `root` sets ESMPERF_ROOT (the tree whose
    build the command uses)."""
    env = dict(os.environ if env is None else env) | ({"ESMPERF_ROOT": str(root)} if root else {})
    return subprocess.run(
        [*ESMPERF_CLI, *args], capture_output=True, text=True, env=env, timeout=timeout
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "end_of_session: run after every other test (a wait the suite fills)"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked end_of_session run last, so the tests before them fill a wait they need
    (a real Slurm job past its 1-minute limit: tests/test_slurm_real.py)."""
    items.sort(key=lambda item: item.get_closest_marker("end_of_session") is not None)


def header(ranks: int, **overrides: Any) -> dict[str, Any]:
    record = {
        "format": "esmperf-profile",
        "version": 1,
        "state": "complete",
        "ranks": ranks,
        "start_epoch": 1795000000.0,
        "command": ["./model", "--steps", "10"],
        "mpi_library": "Open MPI v4.1.4, package: Debian OpenMPI\nsecond line",
        "abi": "openmpi",
        "profiler": {"version": "1", "bin_width": 1.0, "max_bins": 1024, "hist_buckets": 40},
        "knobs": {"ESMPROF_BIN_SECONDS": "1"},
        "fortran": {
            "bindings_loaded": False,
            "wrappers_reached": False,
            "library_calls_c_layer": False,
        },
        "thread_level": 0,
    }
    return record | overrides


def call(
    calls: int, time: float, sent: int = 0, recv: int = 0, hist: list[list[int]] | None = None
) -> dict[str, Any]:
    return {
        "calls": calls,
        "time": time,
        "time_min": time / calls,
        "time_max": time / calls,
        "sent": sent,
        "recv": recv,
        "hist": hist or [],
        "lang": {"c": calls, "fortran": 0},
    }


def rank_record(
    rank: int,
    wall: float,
    mpi_time: float,
    calls: dict[str, Any],
    comms: list[dict[str, Any]] | None = None,
    bins: int = 4,
) -> dict[str, Any]:
    n_calls = sum(c["calls"] for c in calls.values())
    return {
        "rank": rank,
        "host": "node0",
        "pid": 1000 + rank,
        "init_epoch": 1795000000.0,
        "wall": wall,
        "mpi_time": mpi_time,
        "calls": calls,
        "peers": {"sent": {str((rank + 1) % 4): [8, 1]}, "recv": {}},
        "comms": comms or [],
        "io": {
            "write": {"calls": 1, "bytes": 100, "time": 0.001},
            "read": {"calls": 0, "bytes": 0, "time": 0.0},
        },
        "bins": {
            "width": 1.0,
            **{
                key: [0] * bins
                for key in ("mpi_time", "calls", "sent", "recv", "io_write", "io_read", "io_time")
            },
        },
        "overhead": {"ns_per_call": 20.0, "calls": n_calls, "seconds": n_calls * 20e-9},
    }


def write_profile(
    path: Path, head: dict[str, Any], ranks: list[dict[str, Any]], trailer: bool = True
) -> Path:
    lines = [head, *ranks]
    if trailer:
        lines.append({"end": "esmperf-profile", "ranks": head["ranks"]})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def small_ranks() -> list[dict[str, Any]]:
    """Three ranks with known figures (checked exactly in test_profile_reader.py)."""
    world = {"id": 0, "size": 3, "name": "MPI_COMM_WORLD", "created_by": "MPI_COMM_WORLD"}
    return [
        rank_record(
            0,
            wall=10.0,
            mpi_time=2.0,
            calls={
                "MPI_Send": call(4, 1.0, sent=400, hist=[[7, 4]]),
                "MPI_Recv": call(2, 0.4, recv=2048, hist=[[11, 2]]),
                "MPI_Barrier": call(1, 0.6, hist=[[0, 1]]),
            },
            comms=[world | {"calls": 7, "time": 2.0, "bytes": 2448}],
        ),
        rank_record(
            1,
            wall=8.0,
            mpi_time=1.0,
            calls={
                "MPI_Send": call(1, 0.25, sent=1, hist=[[1, 1]]),
                "MPI_Recv": call(4, 0.75, recv=8, hist=[[2, 4]]),
            },
            comms=[world | {"calls": 5, "time": 1.0, "bytes": 9}],
        ),
        rank_record(
            2,
            wall=9.0,
            mpi_time=3.0,
            calls={
                "MPI_Allreduce": call(2, 3.0, sent=16, recv=16, hist=[[4, 2]]),
                "MPI_File_write": call(1, 0.0, sent=1 << 19, hist=[[20, 1]]),
            },
            comms=[
                world | {"calls": 2, "time": 3.0, "bytes": 32},
                {
                    "id": 1,
                    "size": 1,
                    "name": "",
                    "created_by": "MPI_Comm_split",
                    "calls": 1,
                    "time": 0.0,
                    "bytes": 0,
                },
            ],
        ),
    ]


@pytest.fixture
def small_profile(tmp_path: Path) -> Path:
    warning = {
        "bindings_loaded": True,
        "wrappers_reached": False,
        "library_calls_c_layer": False,
        "warning": "Fortran calls bypass the wrappers",
    }
    return write_profile(tmp_path / "small.jsonl", header(3, fortran=warning), small_ranks())


def as_terminal_job() -> None:
    """preexec_fn of a command a test interrupts as a terminal's Ctrl-C would: SIGINT and
    SIGQUIT at their defaults, as in a terminal's foreground job. A shell without job control
    starts its background commands with both ignored, and an ignored signal stays ignored
    across exec (esmperf then rightly leaves SIGINT alone), so pytest run as `make test &`
    would otherwise interrupt nothing."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


# For a run whose ranks all exit with an error after MPI_Finalize (a bad-input test): Open MPI's
# mpirun would wait its SIGTERM-to-SIGKILL grace (2.3 s here) for ranks already gone.
NO_KILL_GRACE = {"OMPI_MCA_odls_base_sigkill_timeout": "0"}


def run_simulated(
    smpi: Any,
    tmp_path: Path,
    program: list[str],
    ranks: int,
    knobs: dict[str, str],
    ranks_per_node: int = 1,
    plugins: bool = True,
    options: tuple[str, ...] = (),
) -> str:
    """`program` under smpirun with the knobs' options, files and variables (knob_setting.py)
    and the simulator's plugins preloaded as the smpi launcher preloads them (unless not
    `plugins`), and smpirun's `options`, in `tmp_path`; its standard output (the run must
    succeed)."""
    from esmperf.launch.mpirun import mpirun_command, run_environment
    from esmperf.launch.smpirun import counter_arguments
    from esmperf.mpi.knob_setting import knob_setting, write_files
    from esmperf.study.execute import execute

    setting = knob_setting(smpi, knobs, ranks, 2, ranks_per_node, tmp_path / "platforms")
    write_files(setting)
    command = mpirun_command(smpi, ranks, program, setting.launcher_args)
    preload = counter_arguments(smpi, setting.env.get("LD_PRELOAD", "")) if plugins else []
    # the launcher's own runner: its process group, so a timeout ends the simulator too
    done = execute(
        [*command[:3], *preload, *options, *command[3:]],
        run_environment(smpi) | setting.env | {"TMPDIR": str(tmp_path)},
        tmp_path,
        timeout=120,
    )
    assert done.returncode == 0 and not done.timed_out, done.stderr[-2000:]
    return done.stdout


def simulate_plan(
    command: list[str],
    tmp_path: Path,
    capsys: Any,
    monkeypatch: Any,
) -> str:
    """What `esmperf simulate COMMAND --dry-run` prints (the plan, one line per table cell);
    skipped without SimGrid SMPI."""
    from esmperf.cli import main
    from esmperf.mpi.stacks import discover_stacks

    if discover_stacks().by_id("smpi") is None:
        pytest.skip("SimGrid SMPI is not installed (smpicc, smpirun): make setup installs it")
    monkeypatch.setenv("COLUMNS", "400")  # the plan's table on one line per cell
    assert main(["simulate", *command, "--dry-run", "--out", str(tmp_path / "plan.duckdb")]) == 0
    return capsys.readouterr().out
