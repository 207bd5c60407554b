"""Collectives offloaded to the network (mpi/offload.py, native/prof/prof_offload.c,
docs/simulate.md "Collective offload"): with the offload knob, MPI_Barrier, MPI_Bcast,
MPI_Reduce, MPI_Allreduce, MPI_Allgather(v) give the right answers and take exactly levels x the
published latency per level + bytes / bandwidth once every rank has arrived: equal for every rank
count under one tree level, one step per level; without it, SMPI's algorithms to the bit.
Skipped without SimGrid."""

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import run_simulated
from esmperf.mpi import offload, platforms
from esmperf.mpi.build import build_dir
from esmperf.mpi.knob_setting import knob_setting
from esmperf.mpi.knobs import Unsupported
from esmperf.mpi.stacks import Stack, discover_stacks

ITERS = 20
# smpirun's surf/precision: SimGrid drops a sleep's last nanosecond (8 bytes on HDR: 0.33 ns)
PRECISION_S = 1e-9
WTIME_S = 10e-9  # SMPI charges each MPI_Wtime 10 ns


@pytest.fixture(scope="module")
def smpi() -> Stack:
    stack = discover_stacks().by_id("smpi")
    if stack is None or not (build_dir(stack) / "bench" / "collectives").is_file():
        pytest.skip("the smpi stack is not installed and built (esmperf build --stack smpi)")
    return stack


def collectives(
    smpi: Stack,
    tmp_path: Path,
    ranks: int,
    ranks_per_node: int = 1,
    compute_us: float = 0,
    **knobs: str,
) -> dict[str, Any]:
    """bench/collectives on a simulated IB HDR cluster, the network alone unless computation is
    chosen (deterministic): {"us": mean per call, "after_last_us": from the last arrival}."""
    chosen = {"platform": "ib-hdr", "computation": "off", **knobs}
    program = [str(build_dir(smpi) / "bench" / "collectives"), str(ITERS), str(compute_us)]
    out = run_simulated(smpi, tmp_path, program, ranks, chosen, ranks_per_node)
    record = json.loads(out.strip().splitlines()[-1])
    assert record["right"] and record["ranks"] == ranks
    return {"us": record["us"], "after_last_us": record["after_last_us"]}


def test_offloads_cite_their_figures() -> None:
    fca, sharp = offload.OFFLOADS["fca"], offload.OFFLOADS["sharp"]
    assert fca.level_latency == pytest.approx(14.72e-6 / 2)
    assert sharp.level_latency == pytest.approx(2.83e-6 / 2)
    assert "EuroMPI 2010" in fca.source and "SC16" in sharp.source


def test_offload_needs_the_hardware_and_a_switch_tree(tmp_path: Path) -> None:
    smpi = discover_stacks().by_id("smpi")
    if smpi is None:
        pytest.skip("SimGrid SMPI is not installed")
    with pytest.raises(Unsupported, match="offload = sharp needs hardware the ib-qdr"):
        knob_setting(smpi, {"platform": "ib-qdr", "offload": "sharp"}, 4, 2, 1, tmp_path)
    with pytest.raises(Unsupported, match="the torus has no switches"):
        knob_setting(
            smpi, {"platform": "ib-qdr", "offload": "fca", "topology": "torus"}, 4, 2, 1, tmp_path
        )
    setting = knob_setting(smpi, {"platform": "ib-qdr", "offload": "fca"}, 8, 2, 2, tmp_path)
    assert setting.env["ESM_OFFLOAD_LEAF_NODES"] == "0"  # the crossbar: one switch
    assert setting.env["ESM_OFFLOAD_RANKS_PER_NODE"] == "2"
    assert not any(
        name.startswith("ESM_OFFLOAD") for name in knob_setting(smpi, {}, 8, 2, 2, tmp_path).env
    )


def test_offloaded_latency_grows_with_tree_levels_not_ranks(smpi: Stack, tmp_path: Path) -> None:
    sharp = offload.OFFLOADS["sharp"]
    bandwidth = platforms.INTERCONNECTS["ib-hdr"].bandwidth
    tree = {"offload": "sharp", "topology": "fat-tree-1to1"}
    times = {ranks: collectives(smpi, tmp_path, ranks, **tree) for ranks in (4, 8, 16)}
    times[32] = collectives(smpi, tmp_path, 32, 2, **tree)  # 16 nodes, 2 ranks each
    # 4 nodes: one leaf, one level; 8 and 16 nodes: across leaves, two levels. From the last
    # rank's arrival to rank 0's return (the MPI_Wtime that reads it costs 10 ns):
    for ranks, levels in ((4, 1), (8, 2), (16, 2), (32, 2)):
        after = times[ranks]["after_last_us"]
        expected = levels * sharp.level_latency + WTIME_S
        for op in ("barrier", "bcast"):  # rank 0 is the root: receives nothing
            assert after[op] * 1e-6 == pytest.approx(expected, rel=1e-8)
        for op in ("reduce", "allreduce"):  # 8 bytes received
            assert after[op] * 1e-6 == pytest.approx(expected + 8 / bandwidth, abs=PRECISION_S)
        for op in ("allgather", "allgatherv"):
            assert after[op] * 1e-6 == pytest.approx(
                expected + 8 * (ranks - 1) / bandwidth, abs=PRECISION_S
            )
    for op in ("barrier", "bcast", "reduce", "allreduce"):
        assert times[8]["us"][op] == times[16]["us"][op] == times[32]["us"][op] > times[4]["us"][op]
    # one switch (the crossbar): one level at every size
    flat = [collectives(smpi, tmp_path, ranks, offload="fca") for ranks in (4, 16)]
    assert flat[0]["us"]["barrier"] == flat[1]["us"]["barrier"]
    assert flat[0]["after_last_us"]["barrier"] * 1e-6 == pytest.approx(
        offload.OFFLOADS["fca"].level_latency + WTIME_S, rel=1e-8
    )


def test_offloaded_collectives_are_not_delayed_by_noise_once_all_arrived(
    smpi: Stack, tmp_path: Path
) -> None:
    """30 us of computation before each call: the noise delays the arrivals, not what follows."""
    knobs = {"offload": "sharp", "computation": "model", "machine": "dell-m610"}
    quiet = collectives(smpi, tmp_path, 8, compute_us=30, **knobs)
    noisy = collectives(smpi, tmp_path, 8, compute_us=30, noise="linux-2007-high", **knobs)
    assert noisy["after_last_us"] == quiet["after_last_us"]
    assert all(noisy["us"][op] > quiet["us"][op] for op in quiet["us"])


def test_no_offload_is_smpis_algorithms_to_the_bit(smpi: Stack, tmp_path: Path) -> None:
    default = collectives(smpi, tmp_path, 8)
    assert collectives(smpi, tmp_path, 8, offload="none") == default
    sharp = collectives(smpi, tmp_path, 8, offload="sharp")
    assert default["us"]["allreduce"] != sharp["us"]["allreduce"]
    # ranks of one node keep SMPI's algorithms under the offload too
    assert collectives(smpi, tmp_path, 4, 4, offload="sharp") == collectives(smpi, tmp_path, 4, 4)
