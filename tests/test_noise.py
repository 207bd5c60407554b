"""OS noise on simulated nodes (mpi/noise.py, docs/simulate.md "OS noise"): the signatures carry
their published figures, every node gets its own phase from the seed, the platform file without
noise is the one of before byte for byte, and a simulated run with noise is exact for a seed,
different with another seed, and slower than without. Simulations skip without SimGrid."""

import subprocess
from pathlib import Path

import pytest

from esmperf.cli import main
from esmperf.launch.mpirun import mpirun_command, run_environment
from esmperf.launch.smpirun import simulated_time
from esmperf.mpi import noise, platforms
from esmperf.mpi.build import build_dir
from esmperf.mpi.knob_setting import knob_setting, write_files
from esmperf.mpi.knobs import Unsupported
from esmperf.mpi.stacks import Stack, discover_stacks
from esmperf.workloads import load_workloads, parse_result_line

NET = platforms.INTERCONNECTS["ib-qdr"]


def test_signatures_carry_the_published_figures() -> None:
    assert noise.NOISE_NAMES[0] == "none"
    low, high = noise.SIGNATURES["linux-2007-low"], noise.SIGNATURES["linux-2007-high"]
    assert low.share == pytest.approx(0.005) and high.share == pytest.approx(0.015)
    assert high.detours[0].duration == pytest.approx(15e-6)
    assert noise.SIGNATURES["linux-today-low"].detours[0].duration == 1.845e-6
    assert noise.SIGNATURES["linux-today-high"].detours[0].duration == 2.848e-6
    for signature in noise.SIGNATURES.values():
        assert all(detour.source and detour.frequency == 1000 for detour in signature.detours)


def test_each_node_has_its_own_phase_from_the_seed() -> None:
    high = noise.SIGNATURES["linux-2007-high"]
    first = [noise.node_detours(high, 0, node) for node in range(8)]
    assert first == [noise.node_detours(high, 0, node) for node in range(8)]
    assert first != [noise.node_detours(high, 1, node) for node in range(8)]
    assert len({spans[0][0] for _, spans in first}) == 8  # unsynchronised nodes
    for period, spans in first:
        assert period == 1_000_000 and len(spans) == 1
        start, end = spans[0]
        assert end - start == 15_000 and start >= 0 and end < period


def test_platform_file_without_noise_is_unchanged_and_with_noise_connects_every_host() -> None:
    assert platforms.platform_xml(NET, 4, 2) == platforms.platform_xml(
        NET, 4, 2, "crossbar", "none"
    )
    assert "trace" not in platforms.platform_xml(NET, 4, 2)
    noisy = platforms.platform_xml(NET, 6, 1, "fat-tree-2to1", "linux-today-high", 3)
    assert noisy.count('<trace_connect kind="SPEED"') == 8  # the fat-tree's idle hosts too
    assert platforms.platform_name(NET, 4, 1) == "ib-qdr-4n1c"
    assert (
        platforms.platform_name(NET, 4, 1, "crossbar", "linux-today-high", 3)
        == "ib-qdr-4n1c-noise-linux-today-high-seed3"
    )


def test_noise_needs_charged_computation_and_a_known_signature(tmp_path: Path) -> None:
    smpi = discover_stacks().by_id("smpi")
    if smpi is None:
        pytest.skip("SimGrid SMPI is not installed")
    with pytest.raises(Unsupported, match="computation = off charges none"):
        knob_setting(smpi, {"noise": "linux-2007-high", "computation": "off"}, 4, 2, 1, tmp_path)
    with pytest.raises(ValueError, match="knob noise has no value 'bogus'"):
        knob_setting(smpi, {"noise": "bogus"}, 4, 2, 1, tmp_path)


@pytest.fixture(scope="module")
def smpi() -> Stack:
    stack = discover_stacks().by_id("smpi")
    if stack is None or not (build_dir(stack) / "apps" / "pop" / "pop").is_file():
        pytest.skip("the smpi stack is not installed and built (esmperf build --stack smpi)")
    return stack


def pop_times(smpi: Stack, tmp_path: Path, **knobs: str) -> tuple[float, float]:
    """(the workload's wall, smpirun's simulated time) of pop S, 3 steps, on 4 IB QDR nodes with
    the deterministic node model (computation charged as bytes over the node's bandwidth)."""
    chosen = {"platform": "ib-qdr", "computation": "model", "machine": "dell-m610", **knobs}
    setting = knob_setting(smpi, chosen, 4, 2, 1, tmp_path / "platforms")
    write_files(setting)
    program = [str(load_workloads()["pop"].executable_path(smpi.id)), "--size", "S", "--steps", "3"]
    env = run_environment(smpi) | setting.env | {"TMPDIR": str(tmp_path)}
    result = subprocess.run(
        mpirun_command(smpi, 4, program, setting.launcher_args),
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    record = parse_result_line(result.stdout)
    assert record is not None and record["verification"]["passed"], result.stdout
    return record["wall"], simulated_time(result.stderr)


def test_noise_is_exact_for_a_seed_and_none_is_the_time_of_before(
    smpi: Stack, tmp_path: Path
) -> None:
    quiet = pop_times(smpi, tmp_path)
    assert pop_times(smpi, tmp_path, noise="none", noise_seed="4") == quiet
    noisy = pop_times(smpi, tmp_path, noise="linux-2007-high")
    assert pop_times(smpi, tmp_path, noise="linux-2007-high") == noisy
    assert pop_times(smpi, tmp_path, noise="linux-2007-high", noise_seed="1") != noisy
    # 1.5 % of each core taken: the run is slower by at least that share of its computation
    # and by no more than the noise of every node added up
    assert quiet[0] < noisy[0] < quiet[0] * (1 + 4 * 0.015)
    today = pop_times(smpi, tmp_path, noise="linux-today-low")
    assert quiet[0] < today[0] < noisy[0]


def test_simulate_takes_noise_and_offload_from_the_command_line(
    smpi: Stack, tmp_path: Path
) -> None:
    command = ["simulate", "pop", "--platform", "ib-hdr", "--nodes", "2", "--dry-run"]
    command += [
        "--computation",
        "model",
        "--machine",
        "dell-m610",
        "--noise",
        "none,linux-today-low",
    ]
    command += ["--noise-seed", "3", "--offload", "sharp", "--out", str(tmp_path / "t.duckdb")]
    assert main(command) == 0
    written = sorted(path.name for path in (tmp_path / "t" / "platforms").glob("*.xml"))
    assert written == ["ib-hdr-2n1c-noise-linux-today-low-seed3.xml", "ib-hdr-2n1c.xml"]
    noisy = (tmp_path / "t" / "platforms" / written[0]).read_text()
    assert noisy.count('<trace_connect kind="SPEED"') == 2
