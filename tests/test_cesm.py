"""The CESM proxy (native/apps/cesm): its verification (conservative maps that keep constants,
the coupled energy budget closed to round-off), bit-identical results whatever the rank count,
processor layout (sequential or concurrent ocean) and MPI stack, the MPI call mix seen by the
profiler equal to the core's own counts (Isend/Irecv/Wait/Waitall the majority of calls,
Barrier and Bcast at their expected counts), the history and restart bytes the profiler saw
written equal to the files' sizes, clean errors, a failed check exiting 2. Size S with few
coupling intervals: fast; ranks past 2 oversubscribe this machine, which changes no figure
checked here (counts and bytes, never timings)."""

import tomllib
from pathlib import Path

import pytest

from test_core import FIRST, STACKS, bad_input, calls, passed, profile_run, rank_counts, run

QUICK = ("--size", "S", "--steps", "6", "--warmup", "1", "--output", "off")
MANIFEST = Path(__file__).resolve().parents[1] / "native" / "apps" / "cesm" / "workload.toml"
STATE = ("atm", "lnd", "ice", "ocn", "cpl_x2o")


def cesm(stack, ranks: int, *options: str) -> dict:
    return passed(stack, ranks, "cesm", *QUICK, *options)


def first_stack():
    if not FIRST:
        pytest.skip("no Debian MPI stack")
    return FIRST[0]


def test_verifies_and_is_bit_identical_on_1_to_4_ranks_and_every_stack():
    reference = cesm(first_stack(), 1)
    norms = reference["verification"]["norms"]
    assert norms["map_a2o_conservation"] <= 1e-14  # global integrals equal on both grids
    assert norms["map_o2a_conservation"] <= 1e-14
    assert norms["map_constant_error"] <= 1e-13  # a constant maps to itself
    assert norms["energy_closure"] <= 1e-13  # change = sunlight absorbed - longwave out
    energy = reference["energy"]
    assert energy["sw_absorbed_J"] > 0 and energy["olr_J"] > 0 and energy["ice_J"] < 0
    assert set(reference["checksum"]) == set(STATE)
    for stack in STACKS:
        for ranks in rank_counts(stack):
            result = cesm(stack, ranks)
            assert result["checksum"] == reference["checksum"], (stack.id, ranks)
            assert result["energy"] == reference["energy"], (stack.id, ranks)
            assert result["verification"]["norms"] == norms, (stack.id, ranks)


@pytest.mark.parametrize(
    "ranks, options",
    [
        (2, ("--layout", "concurrent")),
        (3, ("--layout", "concurrent")),
        (4, ("--layout", "concurrent", "--ocean-fraction", "0.5", "--barriers", "off")),
    ],
    ids=["concurrent_2", "concurrent_3", "concurrent_4_half_no_barriers"],
)
def test_layouts_give_the_same_bits(ranks, options):
    stack = first_stack()
    reference = cesm(stack, 1)
    result = cesm(stack, ranks, *options)
    assert result["checksum"] == reference["checksum"]
    assert result["energy"] == reference["energy"]
    assert result["params"]["ocn_first_rank"] == result["params"]["cpl_ranks"]
    assert result["params"]["cpl_ranks"] + result["params"]["ocn_ranks"] == ranks


def test_call_mix_matches_the_core_counts_and_the_driver(tmp_path):
    """Every Isend, Irecv, Wait, Waitall, Barrier, Bcast the profiler saw is one the core
    counted; non-blocking point-to-point is the majority of calls, as in the deck."""
    stack = first_stack()
    profile, result = profile_run(stack, 4, "cesm", tmp_path, *QUICK)
    comm, coupling = result["comm"], result["coupling_comm"]
    for mpi, count in (
        ("MPI_Isend", comm["isend"]),
        ("MPI_Irecv", comm["irecv"]),
        ("MPI_Waitall", comm["waitall"]),
        ("MPI_Barrier", comm["barrier"]),
        ("MPI_Allreduce", comm["allreduce"]),
        ("MPI_Wait", coupling["wait"]),
        ("MPI_Bcast", coupling["bcast"]),
        ("MPI_Allgather", coupling["allgather"]),
        ("MPI_Allgatherv", coupling["allgatherv"]),
        ("MPI_Comm_split", coupling["comm_split"]),
    ):
        assert sum(calls(profile, mpi)) == count, mpi
    assert sum(calls(profile, "MPI_Startall")) == 0
    # the driver: per coupling interval, one infodata broadcast per component (4) on each of
    # its ranks; 14 timing barriers (12 on the coupler's set, 2 around the ocean exchange)
    intervals, ranks = result["driver"]["intervals"], result["ranks"]
    assert coupling["bcast"] == 4 * intervals * ranks
    bcasts = calls(profile, "MPI_Bcast")
    assert len(set(bcasts)) == 1
    per_rank_barriers = calls(profile, "MPI_Barrier")
    assert len(set(per_rank_barriers)) == 1
    assert per_rank_barriers[0] == 14 * intervals + 1  # + the one before timing starts
    assert result["model"]["barrier_per_interval"] == 14 * ranks
    assert result["model"]["bcast_per_interval"] == 4 * ranks
    # every receive completed by its own MPI_Wait in the rearranger: Wait = its messages
    assert coupling["wait"] == coupling["messages"]
    every = sum(sum(c["calls"] for c in rank["calls"].values()) for rank in profile.ranks)
    nonblocking = sum(
        sum(calls(profile, name)) for name in ("MPI_Isend", "MPI_Irecv", "MPI_Wait", "MPI_Waitall")
    )
    assert nonblocking / every > 0.5  # the deck's "majority" (72 % here: CAM FV's bands)
    assert sum(calls(profile, "MPI_Irecv")) > sum(calls(profile, "MPI_Barrier"))


def test_barriers_off_leaves_only_the_timing_barrier(tmp_path):
    stack = first_stack()
    profile, result = profile_run(stack, 2, "cesm", tmp_path, *QUICK, "--barriers", "off")
    assert calls(profile, "MPI_Barrier") == [1, 1]
    assert result["comm"]["barrier"] == 2
    assert sum(calls(profile, "MPI_Bcast")) == result["coupling_comm"]["bcast"]


def test_history_and_restart_bytes_are_what_the_profiler_saw_written(tmp_path):
    stack = first_stack()
    out = tmp_path / "files"
    out.mkdir()
    options = ("--size", "S", "--steps", "4", "--warmup", "1", "--output-dir", str(out))
    profile, result = profile_run(stack, 2, "cesm", tmp_path, *options, "--layout", "concurrent")
    files = sorted(out.iterdir())
    names = {f.name for f in files}
    # history at the beginning, middle and end of the timed intervals; restart at the end
    for component in ("atm", "lnd", "ice", "ocn"):
        for interval in (1, 3, 4):
            assert f"cesm.{component}.h0.{interval:06d}.bin" in names
        assert f"cesm.{component}.r.000004.bin" in names
    assert "cesm.cpl.r.000004.bin" in names
    assert len(files) == result["io"]["files"] == 17
    size = sum(f.stat().st_size for f in files)
    written = [rank["io"]["write"]["bytes"] for rank in profile.ranks]
    assert sum(written) == size == result["io"]["bytes_written"]
    assert written[0] > 0 and written[1] > 0  # concurrent: the ocean's root writes its own
    assert sum(rank["io"]["read"]["bytes"] for rank in profile.ranks) == 0
    header = (out / "cesm.ocn.r.000004.bin").read_bytes()[:16]
    assert header.startswith(b"ESMPERF-CESMr")
    grid = result["params"]["ocn_nx"] * result["params"]["ocn_ny"]
    assert (out / "cesm.ocn.r.000004.bin").stat().st_size == 64 + 2 * 16 + 2 * 8 * grid


def test_manifest_matches_the_program():
    manifest = tomllib.loads(MANIFEST.read_text())
    assert manifest["name"] == manifest["executable"] == "cesm"
    helped = run(first_stack(), 1, "cesm", "--help")
    assert helped.returncode == 0
    assert "{" + ", ".join(manifest["sizes"]) + "}" in helped.stdout
    assert manifest["default_size"] == manifest["sizes"][0]
    for option, values in manifest["options"].items():
        assert f"--{option}" in helped.stdout
        if all(isinstance(v, str) for v in values):
            assert "{" + ",".join(values) + "}" in helped.stdout


def test_bad_input_is_one_clear_error():
    stack = first_stack()
    assert "unknown size 'XL': use one of S, M, 1deg" in bad_input(stack, "cesm", "--size", "XL")
    message = bad_input(stack, "cesm", *QUICK, "--layout", "concurrent", ranks=1)
    assert "--layout concurrent" in message and "at least 2 ranks" in message
    assert "invalid value --layout mixed" in bad_input(stack, "cesm", "--layout", "mixed")
    message = bad_input(stack, "cesm", "--size", "S", "--output-dir", "/nonexistent/dir")
    assert "--output-dir /nonexistent/dir is not a writable directory" in message
    assert "invalid value --ocean-fraction 2" in bad_input(stack, "cesm", "--ocean-fraction", "2")


@pytest.mark.parametrize(
    "fault, norm", [("map", "map_a2o_conservation"), ("leak", "energy_closure")]
)
def test_failed_verification_exits_2_with_its_result(fault, norm):
    """A wrong map weight or an ocean point that drops its forcing: the run says so, exits 2."""
    done = run(first_stack(), 2, "cesm", *QUICK, "--fault", fault)
    assert done.returncode == 2, done.stdout + done.stderr
    verification = done.result["verification"]
    assert verification["passed"] is False
    assert verification["norms"][norm] > 1e-9


def test_folded_run_sends_what_a_full_run_sends_in_the_same_simulated_time(tmp_path):
    """Folded (kernels charged after their first calls; issue 11) against full, both with the
    deterministic cost model on 6 simulated ranks (2 a node): every rank's messages and bytes
    and the simulated time equal; the folded result says it was not verified. The folded run
    asks for the same field memory and holds a fraction of it (shared). Both layouts."""
    from ocean_smpi import FOLD, MODEL, result_of, simulate, smpi_stack

    smpi = smpi_stack("cesm")
    for layout in ("sequential", "concurrent"):
        args = (*QUICK, "--layout", layout)
        full = result_of(simulate(smpi, tmp_path, "cesm", 6, 2, args, MODEL))
        folded = result_of(simulate(smpi, tmp_path, "cesm", 6, 2, args, MODEL | FOLD))
        assert full["verification"]["passed"] is True
        assert folded["verification"] == {
            "passed": None,
            "what": "not verified: folded run",
            "norms": {},
        }
        assert folded["fold"]["folded"] and folded["fold"]["kernel_calls_charged"] > 0
        assert folded["comm"] == full["comm"]
        assert folded["comm_per_rank"] == full["comm_per_rank"]
        assert folded["simulated_time"] == full["simulated_time"] > 0
        asked = full["fold"]["field_bytes"]
        assert folded["fold"]["field_bytes"] == full["fold"]["field_bytes_held"] == asked > 0
        assert folded["fold"]["field_bytes_held"] < asked / 2


def test_more_ranks_than_the_deck_s_blocks_cut_smaller_blocks(tmp_path):
    """On more ranks than a component has blocks of the deck's size, its blocks are halved until
    every rank gets one; the atmosphere's are CAM FV's, a block per rank: the most latitude
    bands of 3 rows or more dividing rows and ranks, each cut into ranks / bands equal pieces.
    64 simulated ranks of size S give the 2-rank run's bits."""
    from ocean_smpi import result_of, simulate, smpi_stack

    smpi = smpi_stack("cesm")
    reference = cesm(first_stack(), 2)
    result = result_of(simulate(smpi, tmp_path, "cesm", 64, 16, QUICK))
    assert result["verification"]["passed"] is True
    assert result["checksum"] == reference["checksum"]
    assert reference["params"]["atm_block"] == "96x24"  # 2 bands of 24 rows
    assert reference["params"]["lnd_block"] == "12x8"
    assert result["params"]["atm_block"] == "24x3"  # 16 bands of 3 rows, each in 4 pieces
    assert result["params"]["lnd_block"] == "6x8"  # and at least 64 of them hold land
