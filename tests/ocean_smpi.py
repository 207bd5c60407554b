"""Running the ocean workloads under SimGrid SMPI from the tests (test_hycom.py, test_pop.py):
smpirun driven directly with a platform from the smpi knobs, as tests/test_smpi.py does; a
folded run is ESM_FOLD=1 in its environment (native/core/esm_fold.h)."""

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from esmperf.launch.mpirun import mpirun_command, run_environment
from esmperf.launch.smpirun import simulated_time
from esmperf.mpi.build import build_dir
from esmperf.mpi.knob_setting import knob_setting, write_files
from esmperf.mpi.stacks import Stack, discover_stacks
from esmperf.workloads import parse_result_line

# The deterministic cost model: kernels charged their bytes over a node's bandwidth share,
# nothing measured, so that folded and full runs take the same simulated time.
MODEL = {
    "ESM_KERNEL_COST": "model",
    "ESM_NODE_BANDWIDTH": "1e9",
    "ESM_NODE_RANKS": "2",
    "ESM_RESULT_PER_RANK": "1",
}
FOLD = {"ESM_FOLD": "1"}


def smpi_stack(workload: str, program: str | None = None) -> Stack:
    return smpi_built(Path("apps") / workload / (program or workload))


def smpi_built(program: Path) -> Stack:
    """The smpi stack, with `program` (relative to its build directory) built; else a skip
    naming the fix."""
    stack = discover_stacks().by_id("smpi")
    if stack is None:
        pytest.skip("SimGrid SMPI is not installed (smpicc, smpirun): make setup installs it")
    if not (build_dir(stack) / program).is_file():
        pytest.skip("the smpi stack is not built: run `esmperf build --stack smpi`")
    return stack


def simulate(
    stack: Stack,
    tmp_path: Path,
    workload: str,
    ranks: int,
    ranks_per_node: int,
    args: tuple[str, ...],
    env: dict[str, str] | None = None,
    timeout: float = 600,
    program: str | None = None,
    flags: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[str]:
    """The workload on `ranks` simulated ranks, network only (computation off), unfolded
    unless `env` folds it (ESM_FOLD=1: the fold knob's auto would fold from 32 ranks);
    `flags`: smpirun options after the knobs' (SimGrid keeps an option's last value)."""
    setting = knob_setting(
        stack,
        {"computation": "off", "platform": "ib-qdr", "fold": "off"},
        ranks,
        2,
        ranks_per_node,
        tmp_path / "platforms",
    )
    write_files(setting)
    argv = [str(build_dir(stack) / "apps" / workload / (program or workload)), *args]
    command = mpirun_command(stack, ranks, argv, (*setting.launcher_args, *flags))
    full_env = (
        run_environment(stack, os.environ) | setting.env | {"TMPDIR": str(tmp_path)} | (env or {})
    )
    return subprocess.run(
        command, env=full_env, cwd=tmp_path, capture_output=True, text=True, timeout=timeout
    )


def result_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The result line, with SimGrid's simulated time; the run may only fail verification."""
    assert done.returncode in (0, 2), done.stderr[-3000:]
    record = parse_result_line(done.stdout)
    assert record is not None, done.stdout[-2000:] + done.stderr[-2000:]
    record["simulated_time"] = simulated_time(done.stderr)
    return record


def error_of(done: subprocess.CompletedProcess[str], program: str) -> str:
    """The program's one error line of a bad run (exit 1, no result)."""
    assert done.returncode != 0 and '{"workload"' not in done.stdout
    lines = [line for line in done.stderr.splitlines() if line.startswith(f"{program}: error:")]
    assert len(lines) == 1, done.stderr[-3000:]
    return lines[0]
