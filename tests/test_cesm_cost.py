"""What the CESM proxy's components cost in a simulated run (`--cost`, native/apps/cesm/cost.c;
docs/cesm.md "What the components cost"). Under `cesm-low` and `cesm-high` each component is
charged, per model day over its whole grid, the core-seconds CESM 1.0.3's own component took:
the published ccsm_timing file `comparison1/single.8` (github:JungleComputing/climate-modelling
at dd82fa1; f09_g16, B_2000, 40 cores of DAS-4), its run timers' min (low end, as in-core work at
DAS-4's 9.6 Gflop/s a core) and max (high end, as memory traffic at its 3.84 GB/s a core: the
peak at the presets' STREAM efficiency). The
kernel report (ESM_KERNEL_REPORT=1: each kernel's flops and bytes over all ranks) shows every
point charged, whatever the decomposition."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from esmperf.launch.mpirun import mpirun_command, run_environment
from esmperf.mpi import machines
from esmperf.mpi.build import build_dir
from esmperf.mpi.knob_setting import knob_setting, write_files
from esmperf.mpi.stacks import Stack, discover_stacks
from ocean_smpi import smpi_stack

# comparison1/single.8, seconds per model day (DRIVER_<C>_RUN min:max; the coupler's CPL Run
# Time) times the component's PEs: core-seconds per model day
DAS4 = {
    "atm": (97.263 * 32, 116.390 * 32),
    "lnd": (18.365 * 16, 18.950 * 16),
    "ice": (26.685 * 16, 28.970 * 16),
    "ocn": (133.111 * 8, 133.114 * 8),
    "cpl": (17.661 * 32, 17.661 * 32),
}
CORE_FLOPS = 4 * 2.4e9  # DAS-4's Xeon E5620: 4 flops a cycle at 2.4 GHz
# 2 sockets of 3 DDR3-1066 channels over 8 cores, at the presets' STREAM efficiency (the
# simulated node's bandwidth is a figure of that kind)
CORE_BANDWIDTH = machines.STREAM_EFFICIENCY * 2 * 25.6e9 / 8  # Intel ARK: 25.6 GB/s an E5620
KERNELS = {  # the proxy's kernels of each component (the radiation and the maps: its own cost)
    "atm": ["atm.substep"],
    "lnd": ["lnd.run"],
    "ice": ["ice.run"],
    "ocn": ["ocn.substep"],
    "cpl": ["cpl.ice_prep", "cpl.fluxes", "cpl.merge"],
}
STEPS, WARMUP, DT = 3, 1, 1800.0
DAYS = (STEPS + WARMUP) * DT / 86400


@pytest.fixture(scope="module")
def smpi() -> Stack:
    return smpi_stack("cesm")


def simulate(stack: Stack, tmp_path: Path, ranks: int, cost: str, layout: str) -> dict:
    """cesm S on `ranks` simulated ranks of Dell M610 nodes (2 a node), computation = model."""
    knobs = {"machine": "dell-m610", "computation": "model", "platform": "ib-qdr"}
    setting = knob_setting(stack, knobs, ranks, 2, 2, tmp_path / "platforms")
    write_files(setting)
    program = [str(build_dir(stack) / "apps" / "cesm" / "cesm"), "--size", "S"]
    program += ["--steps", str(STEPS), "--warmup", str(WARMUP), "--output", "off"]
    program += ["--cost", cost, "--layout", layout]
    command = mpirun_command(stack, ranks, program, setting.launcher_args)
    env = run_environment(stack, os.environ) | setting.env | {"TMPDIR": str(tmp_path)}
    done = subprocess.run(
        command,
        env=env | {"ESM_KERNEL_REPORT": "1"},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    line = [text for text in done.stdout.splitlines() if text.startswith('{"workload"')][-1]
    return json.loads(line)


def kernel(result: dict, path: str) -> dict:
    node = result["fold"]["kernels"]["cesm"]
    for part in path.split("."):
        node = node[part]
    return node


@pytest.mark.parametrize(
    ("ranks", "layout"), [(1, "sequential"), (4, "sequential"), (4, "concurrent")]
)
def test_each_component_costs_what_cesm_1_0_3_s_did_at_the_low_end(smpi, tmp_path, ranks, layout):
    result = simulate(smpi, tmp_path, ranks, "cesm-low", layout)
    assert result["params"]["cost"] == "cesm-low"
    for component, names in KERNELS.items():
        flops = sum(kernel(result, name)["flops"] for name in names)
        assert all(kernel(result, name)["bytes"] == 0 for name in names), component
        want = DAS4[component][0] * DAYS * CORE_FLOPS
        assert flops == pytest.approx(want, rel=1e-9), component


def test_the_high_end_charges_the_slowest_rank_s_time_as_memory_traffic(smpi, tmp_path):
    result = simulate(smpi, tmp_path, 4, "cesm-high", "sequential")
    for component, names in KERNELS.items():
        moved = sum(kernel(result, name)["bytes"] for name in names)
        assert all(kernel(result, name)["flops"] == 0 for name in names), component
        want = DAS4[component][1] * DAYS * CORE_BANDWIDTH
        assert moved == pytest.approx(want, rel=1e-9), component


def test_the_proxy_end_keeps_the_proxy_s_byte_model(smpi, tmp_path):
    result = simulate(smpi, tmp_path, 2, "proxy", "sequential")
    atm = kernel(result, "atm.substep")
    assert atm["bytes"] == 64 * atm["work"] and atm["flops"] == 0  # models.c: 64 B a point


def test_cesm_s_cost_outside_a_modelled_simulation_is_refused(tmp_path):
    stack = discover_stacks().by_id("openmpi")
    if stack is None or not (build_dir(stack) / "apps" / "cesm" / "cesm").is_file():
        pytest.skip("the openmpi stack is not built")
    program = [str(build_dir(stack) / "apps" / "cesm" / "cesm"), "--cost", "cesm-low"]
    command = mpirun_command(stack, 1, [*program, "--steps", "1", "--output", "off"], [])
    env = run_environment(stack, os.environ) | {"TMPDIR": str(tmp_path)}
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode != 0
    assert "--cost cesm-low charges CESM 1.0.3's measured cost as simulated time" in (
        done.stdout + done.stderr
    )
    assert "or use --cost proxy" in done.stdout + done.stderr
