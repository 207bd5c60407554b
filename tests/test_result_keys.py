"""One vocabulary of result keys across workloads (docs/workloads.md, "Result keys"): the
grid, decomposition, counts, STREAM and kernel keys come from the core (esm_report.h) and are
the same in every workload that has them; old names in stores read under the new ones."""

import pytest

from esmperf.store.result_keys import RENAMED, current_name
from test_core import FIRST, passed

DECOMP = {
    "nx",
    "ny",
    "nz",
    "bx",
    "by",
    "distribution",
    "blocks",
    "land_blocks",
    "idle_ranks",
    "blocks_per_rank_min",
    "blocks_per_rank_max",
    "ocean_points",
    "load_imbalance",
}
COUNTS = {
    "messages_per_step",
    "halo_bytes_per_step",
    "halo_updates_per_step",
    "allreduces_per_step",
}
OLD = {"layers", "tiles", "land_tiles_dropped", "tiles_per_rank_min", "tiles_per_rank_max"}


def stack():
    if not FIRST:
        pytest.skip("no Debian MPI stack")
    return FIRST[0]


def test_the_ocean_models_share_decomposition_and_count_keys():
    pop = passed(stack(), 2, "pop", "--size", "S", "--steps", "2", "--stream", "on")
    hycom = passed(stack(), 2, "hycom", "--size", "S", "--steps", "2", "--stream", "on")
    for result in (pop, hycom):
        assert set(result["params"]) >= DECOMP, result["workload"]
        assert set(result["model"]) >= COUNTS, result["workload"]
        assert not OLD & set(result["params"])
        assert set(result["stream"]) == {"triad_GBps", "megabytes_per_array"}
        assert all(set(k) == {"GBps", "fraction"} for k in result["kernels"].values())
        assert result["params"]["blocks_per_rank_min"] <= result["params"]["blocks_per_rank_max"]
    assert hycom["params"]["nz"] == 26 and hycom["params"]["distribution"] == "patch 2x1"
    assert (hycom["params"]["blocks"], hycom["params"]["land_blocks"]) == (2, 0)


def test_homme_and_pflotran_use_the_same_stream_and_kernel_keys():
    homme = passed(stack(), 1, "homme", "--size", "S", "--steps", "2", "--stream", "8")
    pflotran = passed(stack(), 1, "pflotran", "--size", "S", "--steps", "1", "--stream-mb", "8")
    for result, kernels in ((homme, {"tendency"}), (pflotran, {"matvec", "pc_apply"})):
        assert set(result["stream"]) == {"triad_GBps", "megabytes_per_array"}
        assert result["stream"]["megabytes_per_array"] == 8
        assert set(result["kernels"]) == kernels
        for kernel in kernels:
            fraction = result["kernels"][kernel]["fraction"]
            assert fraction == result["kernels"][kernel]["GBps"] / result["stream"]["triad_GBps"]


def test_messages_per_step_is_a_mean_per_rank_in_every_workload():
    """model.messages_per_step is the core's count per rank over the timed steps in homme and
    pflotran too (summed over ranks before issue 14): on two ranks each rank has one
    neighbour, so one message per halo update (homme: 6 DSS a step)."""
    homme = passed(stack(), 2, "homme", "--size", "S", "--steps", "3", "--stream", "0")
    pflotran = passed(stack(), 2, "pflotran", "--size", "S", "--steps", "1", "--stream-mb", "0")
    for result in (homme, pflotran):
        model = result["model"]
        assert set(model) >= COUNTS, result["workload"]
        assert model["messages_per_step"] == model["halo_updates_per_step"] > 0
        assert model["halo_bytes_per_step"] > 0
    assert homme["model"]["messages_per_step"] == 6
    assert pflotran["params"]["rank_grid"] == "1x1x2"


def test_old_names_in_a_store_read_under_the_new_ones():
    assert current_name("hycom", "params.tiles") == "params.blocks"
    assert current_name("hycom", "params.layers") == "params.nz"
    assert current_name("pflotran", "kernels.matvec.fraction_of_triad") == "kernels.matvec.fraction"
    assert current_name("pop", "params.blocks") == "params.blocks"  # already the name
    assert current_name("pop", "params.layers") == "params.layers"  # not a hycom key there
    assert len(set(RENAMED.values())) == len(RENAMED) - 1  # stream.megabytes: homme, pflotran
