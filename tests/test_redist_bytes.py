"""redist-bench against the seed's Table 1 (../shared/seeds/003): the bytes moved between
different ranks per redistribution of the 512x1024x16 8-field bundle, exactly.

Every row (4 to 2048 ranks) from the store-scaling mode (one process stores the route of every
rank of the layout: block routes need no communication), 4 and 8 ranks also for real; plus a
real 4-rank run of the whole benchmark (route store, runs, copy bound, the peers) that checks
every destination value. Figures only: timings are never checked here."""

import json
import subprocess

import pytest

from esmperf.launch.mpirun import mpirun_command, run_environment
from esmperf.mpi.build import build_dir
from esmperf.mpi.stacks import discover_stacks

DEBIAN = [s for s in discover_stacks().stacks if s.id in ("openmpi", "mpich")]

# ranks: (source partition, destination partition, total bytes redistributed)
TABLE_1 = {
    4: ("4x1", "1x4", 402653184),
    8: ("2x4", "4x2", 402653184),
    16: ("2x8", "8x2", 469762048),
    32: ("4x8", "16x2", 503316480),
    64: ("4x16", "16x4", 503316480),
    128: ("8x16", "32x4", 520093696),
    256: ("16x16", "32x8", 520093696),
    512: ("32x16", "16x32", 520093696),
    1024: ("32x32", "64x16", 528482304),
    2048: ("32x64", "64x32", 528482304),
}


def bench(stack, ranks: int, *args: str) -> dict:
    program = build_dir(stack) / "apps" / "redist" / "redist-bench"
    if not program.is_file():
        pytest.skip(f"{program} not built: run `make build`")
    command = mpirun_command(stack, ranks, [str(program), *args])
    run = subprocess.run(
        command, env=run_environment(stack), capture_output=True, text=True, timeout=240
    )
    assert run.returncode == 0, run.stdout + run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["workload"] == "redist" and result["ranks"] == ranks
    return result


@pytest.mark.parametrize("stack", DEBIAN, ids=lambda s: s.id)
def test_table_1_every_row_by_store_scaling(stack):
    counts = ",".join(map(str, TABLE_1))
    result = bench(stack, 1, "--mode", "store-scaling", "--store-ranks", counts, "--repeats", "1")
    rows = {row["n"]: row for row in result["store_scaling"]}
    assert sorted(rows) == sorted(TABLE_1)
    for n, (src, dst, moved) in TABLE_1.items():
        assert (rows[n]["src_parts"], rows[n]["dst_parts"]) == (src, dst), n
        assert rows[n]["bytes_moved"] == moved, n
        assert rows[n]["peers_max"] >= 1 and rows[n]["segments_max"] >= 1


@pytest.mark.parametrize("stack", DEBIAN, ids=lambda s: s.id)
def test_table_1_eight_ranks_for_real(stack):
    """Eight processes store the route through MPI (no fields): the same bytes."""
    result = bench(stack, 8, "--mode", "store", "--repeats", "1")
    assert result["params"]["src_parts"] == "2x4x1" and result["params"]["dst_parts"] == "4x2x1"
    assert result["model"]["bytes_moved"] == TABLE_1[8][2]


@pytest.mark.parametrize("stack", DEBIAN, ids=lambda s: s.id)
def test_table_1_four_ranks_run(stack):
    """The seed's grid on 4 ranks, run and checked (one timed run: figures, not timings)."""
    result = bench(stack, 4, "--size", "M", "--steps", "1", "--repeats", "1", "--peers", "none")
    assert result["model"]["bytes_moved"] == TABLE_1[4][2]
    assert result["verification"]["passed"] and result["verification"]["norms"]["max_abs"] == 0
    assert result["params"]["grid"] == "512x1024x16" and result["params"]["fields"] == 8
    assert result["machine"]["oversubscribed"] == (result["machine"]["cores"] < 4)
    assert result["model"]["peers_max"] == 3  # 4x1 -> 1x4: every rank meets the 3 others


@pytest.mark.parametrize("stack", DEBIAN, ids=lambda s: s.id)
def test_peers_same_data_same_check(stack):
    """The small grid with the peers: MPI_Alltoallw everywhere, PETSc and MCT where this stack
    has them; each checked like ours, each reported as a ratio to ours."""
    result = bench(stack, 4, "--size", "S", "--steps", "2", "--repeats", "1")
    assert result["verification"]["passed"]
    assert result["model"]["bytes_moved"] == TABLE_1[4][2] // 16  # 128x256x16: 1/16 of the points
    peers = result["peers"]
    assert peers["alltoallw"]["available"] and peers["alltoallw"]["passed"]
    assert peers["alltoallw"]["ratio_to_ours"] > 0
    for name in ("petsc", "mct"):
        peer = peers[name]
        if stack.id == "openmpi" and peer["available"]:
            assert peer["passed"] and peer["max_abs"] == 0, name
        else:
            assert not peer["available"] and peer["why"], name
    assert result["redist"]["copy_ratio"] > 0 and len(result["redist"]["run_s_repeats"]) == 1


@pytest.mark.parametrize("stack", DEBIAN, ids=lambda s: s.id)
def test_one_rank_redistributes_by_copy_with_a_rate(stack):
    """One rank moves nothing between ranks, but copies the whole bundle: its figure of merit
    is that rate, not 0 (the base of a scaling study)."""
    result = bench(stack, 1, "--size", "S", "--steps", "2", "--repeats", "1", "--peers", "none")
    assert result["verification"]["passed"] and result["model"]["bytes_moved"] == 0
    assert result["model"]["bytes_redistributed"] == 128 * 256 * 16 * 8 * 8
    assert result["fom"]["value"] > 0 and result["redist"]["bandwidth_GBps"] == 0


@pytest.mark.parametrize("stack", DEBIAN, ids=lambda s: s.id)
@pytest.mark.parametrize(
    "options",
    [
        ("--comm", "sync", "--pack", "datatype", "--single-copy", "off", "--memory", "private"),
        (
            "--comm",
            "persistent",
            "--pack",
            "xp",
            "--bundle",
            "off",
            "--local",
            "mpi",
            "--type",
            "float",
        ),
    ],
    ids=["sync-datatype-private", "persistent-xp-float"],
)
def test_bench_options_reach_the_library(stack, options):
    result = bench(
        stack, 2, "--size", "S", "--steps", "2", "--repeats", "1", "--peers", "none", *options
    )
    assert result["verification"]["passed"]
    given = dict(zip(options[::2], options[1::2]))
    for key, value in given.items():
        assert result["params"][key.removeprefix("--").replace("-", "_")] == value
    element = 4 if given.get("--type") == "float" else 8
    bundle = 128 * 256 * 16 * 8 * element
    assert result["model"]["bytes_moved"] == bundle // 2  # 2x1 -> 1x2: half moves
    # The figure of merit is the whole bundle redistributed (moved or copied) per second.
    assert result["model"]["bytes_redistributed"] == bundle
    assert result["fom"]["value"] == pytest.approx(
        bundle / result["redist"]["run_s"]["median"] / 1e9
    )


def test_simulated_at_scale_ends_cleanly(tmp_path):
    """From SMPI_MMAP_RANKS simulated ranks the smpi stack privatizes each rank's globals by
    mmap (here forced on 32): the library's process-wide tables must not be destroyed once per
    rank at exit (they were: a double free, exit 134, after a correct result)."""
    from ocean_smpi import result_of, simulate, smpi_stack

    smpi = smpi_stack("redist", "redist-bench")
    args = ("--size", "S", "--steps", "1", "--repeats", "1", "--peers", "none")
    mmap = ("--cfg=smpi/privatization:mmap",)
    done = simulate(smpi, tmp_path, "redist", 32, 1, args, program="redist-bench", flags=mmap)
    assert "--cfg=smpi/privatization:mmap" in " ".join(done.args)
    assert done.returncode == 0, done.stderr[-2000:]
    result = result_of(done)
    assert result["verification"]["passed"]
    assert result["model"]["bytes_moved"] == TABLE_1[32][2] // 16
