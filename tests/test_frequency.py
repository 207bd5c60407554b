"""Core frequency in the node model (issue 23, item 3; docs/simulate.md "The computation model"):
under computation = model a kernel costs max(flops / (flops per cycle x clock), bytes / the
rank's share of its node's memory bandwidth), the ECM model's in-core part overlapped with its
memory part. Through the core's self-test esm_fold_test on a simulated Dell R815 node: its
Horner kernel (64 flops, 16 bytes a point) is compute-bound and scales with 1/clock, its triad
(2 flops, 24 bytes a point) is memory-bound and does not change. The frequency knob offers a
preset's clock settings and refuses the others with the range named."""

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from esmperf.launch.mpirun import mpirun_command, run_environment
from esmperf.launch.smpirun import simulated_time
from esmperf.mpi import machines
from esmperf.mpi.build import build_dir
from esmperf.mpi.knob_setting import knob_setting, write_files
from esmperf.mpi.knobs import Unsupported
from esmperf.mpi.stacks import Stack, discover_stacks

STEPS = 10
RANKS = 4  # on one node: each rank has a quarter of its memory bandwidth
R815 = machines.machine("dell-r815")
BANDWIDTH = float(f"{R815.bandwidth:.6g}")  # as the environment gives it to the core
HORNER_FLOPS, HORNER_BYTES = 64, 16  # fold_test.c: degree 32, reads b and writes a
TRIAD_FLOPS, TRIAD_BYTES = 2, 24


@pytest.fixture(scope="module")
def smpi() -> Stack:
    stack = discover_stacks().by_id("smpi")
    if stack is None:
        pytest.skip("SimGrid SMPI is not installed (smpicc, smpirun): make setup installs it")
    if not (build_dir(stack) / "core" / "esm_fold_test").is_file():
        pytest.skip("the smpi stack is not built: run `esmperf build --stack smpi`")
    return stack


def points(rank: int) -> int:
    return 1000 + 100 * rank  # fold_test.c: rank r's field


def run_kernel(stack: Stack, tmp_path: Path, kernel: str, frequency: str) -> dict[str, Any]:
    """fold_test's `kernel` on RANKS simulated ranks of one R815 node at `frequency`."""
    knobs = {"machine": "dell-r815", "computation": "model", "frequency": frequency}
    setting = knob_setting(stack, knobs, RANKS, 2, RANKS, tmp_path / "platforms")
    write_files(setting)
    program = [str(build_dir(stack) / "core" / "esm_fold_test"), "--steps", str(STEPS)]
    program += ["--kernel", kernel]
    command = mpirun_command(stack, RANKS, program, setting.launcher_args)
    env = run_environment(stack, os.environ) | setting.env | {"TMPDIR": str(tmp_path)}
    done = subprocess.run(
        command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    line = [text for text in done.stdout.splitlines() if text.startswith('{"workload"')][-1]
    record = json.loads(line)
    assert record["verification"]["passed"]
    record["simulated_time"] = simulated_time(done.stderr)
    return record


def test_a_compute_bound_kernel_scales_with_one_over_the_clock(smpi, tmp_path):
    """The busiest rank (3, 1300 points) charges 64 flops a point at 4 flops a cycle: its
    in-core time exceeds its memory time (16 bytes a point over a quarter of the node's
    bandwidth) at every clock, so the charged time is STEPS x 64 x 1300 / (4 x clock)."""
    busiest = points(RANKS - 1)
    memory = STEPS * HORNER_BYTES * busiest * RANKS / BANDWIDTH
    runs = {mhz: run_kernel(smpi, tmp_path, "horner", str(mhz)) for mhz in (2200, 1800, 1400)}
    for mhz, record in runs.items():
        in_core = STEPS * HORNER_FLOPS * busiest / (4 * mhz * 1e6)
        assert in_core > memory
        assert record["fold"]["kernel_seconds_max"] == pytest.approx(in_core, rel=1e-12)
        assert record["fold"]["core_flops"] == 4 * mhz * 1e6
        assert record["fold"]["kernel_flops"] == STEPS * HORNER_FLOPS * sum(map(points, range(4)))
    # the run's simulated time grows by what the busiest rank's kernel grew
    slower = runs[1400]["simulated_time"] - runs[2200]["simulated_time"]
    charged = runs[1400]["fold"]["kernel_seconds_max"] - runs[2200]["fold"]["kernel_seconds_max"]
    assert slower == pytest.approx(charged, abs=1e-8)
    nominal = run_kernel(smpi, tmp_path, "horner", "nominal")
    assert nominal["simulated_time"] == runs[2200]["simulated_time"]


def test_a_memory_bound_kernel_does_not_change_with_the_clock(smpi, tmp_path):
    """The triad's 24 bytes a point over a quarter of the node's bandwidth exceed its 2 flops
    even at 1400 MHz: STEPS x 24 x 1300 x 4 / bandwidth at every clock."""
    busiest = points(RANKS - 1)
    memory = STEPS * TRIAD_BYTES * busiest * RANKS / BANDWIDTH
    assert STEPS * TRIAD_FLOPS * busiest / (4 * 1400e6) < memory
    runs = [run_kernel(smpi, tmp_path, "triad", mhz) for mhz in ("2200", "1400")]
    for record in runs:
        assert record["fold"]["kernel_seconds_max"] == pytest.approx(memory, rel=1e-12)
        assert record["fold"]["kernel_flops"] == STEPS * TRIAD_FLOPS * sum(map(points, range(4)))
    assert runs[0]["simulated_time"] == runs[1]["simulated_time"]


# -- the knob (no SimGrid run needed) -----------------------------------------------------------


def test_frequency_sets_the_core_s_clock_and_keeps_the_memory(smpi, tmp_path):
    def env(frequency: str) -> dict[str, str]:
        knobs = {"machine": "dell-r815", "frequency": frequency}
        return knob_setting(smpi, knobs, 96, 2, 48, tmp_path).env

    nominal, low = env("nominal"), env("1400")
    assert env("2200") == nominal
    assert nominal["ESM_CORE_FLOPS"] == "8.8e+09" and low["ESM_CORE_FLOPS"] == "5.6e+09"
    assert float(low["ESM_CORE_SPEED"]) == pytest.approx(R815.core_speed * 1400 / 2200, rel=1e-5)
    assert low["ESM_NODE_BANDWIDTH"] == nominal["ESM_NODE_BANDWIDTH"]


def test_frequency_refusals_name_the_fix(smpi, tmp_path):
    def setting(ranks_per_node: int = 48, **knobs: str) -> None:
        knob_setting(smpi, knobs, 96, 2, ranks_per_node, tmp_path)

    with pytest.raises(
        Unsupported,
        match=r"^dell-r815 runs at 1400, 1800, 2200 MHz \(its range "
        r"1400-2200 MHz\), not 2930: choose one of them or nominal$",
    ):
        setting(machine="dell-r815", frequency="2930")
    with pytest.raises(
        Unsupported, match="^juropa runs at its nominal 2930 MHz only .*, not 1400: choose nominal$"
    ):
        setting(8, machine="juropa", frequency="1400")
    with pytest.raises(
        Unsupported, match="frequency = 1800 sets a simulated node's clock: choose a machine"
    ):
        setting(1, frequency="1800")
    with pytest.raises(Unsupported, match="computation = off charges no computation"):
        setting(machine="dell-r815", computation="off", frequency="1800")
    with pytest.raises(
        ValueError,
        match=r"knob frequency has no value '1900' \(values: "
        r"nominal, 1400, 1800, 2200, 2400, 2930\)",
    ):
        setting(machine="dell-r815", frequency="1900")


# -- the workloads' counts (ESM_KERNEL_REPORT=1: each kernel's totals over all ranks) ------------

# PFLOTRAN's flops per cell, counted from its code (native/apps/pflotran): an interior cell's six
# faces, the chemistry's (pflotran.h: the speciation 258, the activity coefficients 153, the
# calcite rate 25), the 4x4 block operations (a block times a vector 32, a block product 112, an
# inverse 144).
PFLOTRAN_FLOPS_PER_CELL = {
    "update": 4 + 258,  # exp of ln m, the totals and their derivatives
    "begin_step": 153 + 258,  # the activity coefficients, the totals again
    "rates": 25,
    "residual": 6 * 4 * 3 + 25 + 1 + 4 * 4,  # 114
    "jacobian": 6 * (1 + 16) + 25 + 1 + 4 + 16 * 3,  # 180
    "update_limit": 0,  # a min and a max per unknown: no flops by the rule
    "matvec_local": 7 * 32,  # 224
    "ilu_factor": 3 * (2 * 112 + 16) + 144,  # 864
    "ilu_solve": 7 * 32,  # 224
    "dot": 1,  # a multiply-add for every two elements read
}


def test_pflotran_kernels_charge_the_flops_counted_from_their_code(smpi, tmp_path):
    knobs = {"computation": "off", "fold": "off"}
    setting = knob_setting(smpi, knobs, 2, 2, 2, tmp_path / "platforms")
    write_files(setting)
    grid = ["--nx", "4", "--ny", "4", "--nz", "4", "--steps", "1", "--stream-mb", "0"]
    grid += ["--solver", "bicgstab"]  # its vector kernels, below
    program = [str(build_dir(smpi) / "apps" / "pflotran" / "pflotran"), *grid]
    command = mpirun_command(smpi, 2, program, setting.launcher_args)
    model = {"ESM_KERNEL_COST": "model", "ESM_NODE_BANDWIDTH": "1e9", "ESM_KERNEL_REPORT": "1"}
    env = run_environment(smpi, os.environ) | setting.env | {"TMPDIR": str(tmp_path)} | model
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    line = [text for text in done.stdout.splitlines() if text.startswith('{"workload"')][-1]
    kernels = json.loads(line)["fold"]["kernels"]["pflotran"]
    for name, per_cell in PFLOTRAN_FLOPS_PER_CELL.items():
        kernel = kernels[name]
        assert kernel["calls"] > 0 and kernel["flops"] == per_cell * kernel["work"], name
    # the vector kernels give their flops per element of a vector, their work per element of
    # every vector they read or write: BiCGStab's s = r - alpha v, 2 flops over 3 vectors
    half = kernels["bicgstab_s"]
    assert half["flops"] * 3 == 2 * half["work"] and half["bytes"] == 8 * half["work"]


# Two kernels of each other workload, flops per point of work counted from their code.
WORKLOAD_FLOPS = {
    "pop": {"barotropic.apply": 17, "tracer": 62},  # 9-point operator; the tracer sweeps
    "homme": {"sw_tendency": 113, "laplace_wk": 56},  # native/apps/homme/sweq.h
    "hycom": {"cfl": 4, "layer_masses": 1 + 17},  # a level point; h x area and an exact sum
}


@pytest.mark.parametrize("workload", sorted(WORKLOAD_FLOPS))
def test_workload_kernels_charge_the_flops_counted_from_their_code(smpi, tmp_path, workload):
    setting = knob_setting(smpi, {"computation": "off"}, 2, 2, 2, tmp_path / "platforms")
    write_files(setting)
    program = [str(build_dir(smpi) / "apps" / workload / workload), "--size", "S"]
    command = mpirun_command(smpi, 2, [*program, "--steps", "2"], setting.launcher_args)
    model = {"ESM_KERNEL_COST": "model", "ESM_NODE_BANDWIDTH": "1e9", "ESM_KERNEL_REPORT": "1"}
    env = run_environment(smpi, os.environ) | setting.env | {"TMPDIR": str(tmp_path)} | model
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    line = [text for text in done.stdout.splitlines() if text.startswith('{"workload"')][-1]
    kernels = json.loads(line)["fold"]["kernels"][workload]
    for path, per_point in WORKLOAD_FLOPS[workload].items():
        kernel = kernels
        for part in path.split("."):
            kernel = kernel[part]
        assert kernel["calls"] > 0 and kernel["flops"] == per_point * kernel["work"], path
