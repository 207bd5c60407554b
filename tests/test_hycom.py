"""The HYCOM proxy (native/apps/hycom): layer masses conserved to round-off, a linear inertia-
gravity wave against the scheme's discrete dispersion relation and the continuous one,
bit-identical results whatever the rank count, tile size (with all-land tiles dropped),
halo width, halo engine, distribution and MPI stack; wide halos exchanged less often; the
persistent Startall/Waitall + Allreduce call mix seen by the profiler; clean errors. At the
seeds' scale (issue 11): tiles cut for the rank count, 48 simulated ranks with real MPI's
bits, folded runs communicating exactly as full ones (tests/ocean_smpi.py)."""

import tomllib
from pathlib import Path

import pytest

from ocean_smpi import FOLD, MODEL, error_of, result_of, simulate, smpi_stack
from test_core import FIRST, STACKS, bad_input, calls, passed, profile_run, rank_counts, run

QUICK = ("--size", "S", "--steps", "3", "--stream", "off")
TILES = ("--block", "16x12")  # 62 tiles, 2 of them all land and dropped
MANIFEST = Path(__file__).resolve().parents[1] / "native" / "apps" / "hycom" / "workload.toml"


def hycom(stack, ranks: int, *options: str) -> dict:
    return passed(stack, ranks, "hycom", *QUICK, *options)


def first_stack():
    if not FIRST:
        pytest.skip("no Debian MPI stack")
    return FIRST[0]


def test_conserves_layer_mass_and_is_bit_identical_on_1_to_4_ranks_and_every_stack():
    reference = hycom(first_stack(), 1, *TILES)
    norms = reference["verification"]["norms"]
    assert norms["layer_mass_drift"] < 1e-14
    assert norms["thinnest_layer"] > 0 and norms["cfl"] < 1
    params = reference["params"]
    assert params["nz"] == 26 and params["halo_width"] == 6 and params["halo"] == "persistent"
    assert (params["blocks"], params["land_blocks"]) == (62, 2)
    assert params["substeps"] > 10
    for stack in STACKS:
        for ranks in rank_counts(stack):
            result = hycom(stack, ranks, *TILES)
            assert result["checksum"] == reference["checksum"], (stack.id, ranks)
            assert result["verification"]["norms"] == norms, (stack.id, ranks)


@pytest.mark.parametrize(
    "ranks, options",
    [
        (1, ()),  # 16 tiles of 32x24, none dropped
        (2, ("--block", "16x12", "--halo-width", "1")),
        (3, ("--block", "16x12", "--halo-width", "3", "--halo", "isend", "--distribution", "sfc")),
    ],
    ids=["bigger_tiles", "width_1", "width_3_isend_sfc"],
)
def test_tiles_halo_widths_engines_and_distributions_give_the_same_bits(ranks, options):
    stack = first_stack()
    reference = hycom(stack, 1, *TILES)
    result = hycom(stack, ranks, *options)
    assert result["checksum"] == reference["checksum"]
    assert result["verification"]["norms"]["layer_mass_drift"] < 1e-14


def test_wider_halos_mean_fewer_exchanges():
    stack = first_stack()
    updates = [
        hycom(stack, 2, *TILES, "--halo-width", str(w))["model"]["halo_updates_per_step"]
        for w in (1, 3, 6)
    ]
    assert updates[0] > updates[1] > updates[2]
    assert updates[2] < 8  # 6 rings: the barotropic arrays last about 5 substeps


def test_linear_wave_follows_the_dispersion_relation():
    stack = first_stack()
    result = passed(
        stack,
        2,
        "hycom",
        "--case",
        "wave",
        "--size",
        "S",
        "--steps",
        "20",
        "--stream",
        "off",
        "--block",
        "32x24",
    )
    norms = result["verification"]["norms"]
    assert norms["wave_vs_scheme"] < 1e-8  # the parallel code is the scheme, exactly
    assert norms["omega_vs_theory"] < 2e-4  # the scheme's omega: omega^2 = f^2 + g H k^2
    assert norms["wave_vs_theory"] < 1e-2  # over one wave period
    assert norms["layer_mass_drift"] < 1e-14
    assert result["params"]["land_blocks"] == 0
    other = passed(
        stack,
        3,
        "hycom",
        "--case",
        "wave",
        "--size",
        "S",
        "--steps",
        "20",
        "--stream",
        "off",
        "--block",
        "16x12",
        "--halo-width",
        "2",
    )
    assert other["checksum"] == result["checksum"]


def test_call_mix_is_persistent_halos_and_allreduce(tmp_path):
    """Startall/Waitall for halos, Allreduce for CFL and diagnostics: exact counts."""
    stack = first_stack()
    profile, result = profile_run(stack, 4, "hycom", tmp_path, *QUICK, *TILES)
    comm = result["comm"]
    for mpi, key in (
        ("MPI_Startall", "startall"),
        ("MPI_Waitall", "waitall"),
        ("MPI_Send_init", "send_init"),
        ("MPI_Recv_init", "recv_init"),
        ("MPI_Allreduce", "allreduce"),
    ):
        assert sum(calls(profile, mpi)) == comm[key], mpi
    assert sum(calls(profile, "MPI_Isend")) == sum(calls(profile, "MPI_Irecv")) == 0
    assert calls(profile, "MPI_Startall") == calls(profile, "MPI_Waitall")
    assert len(set(calls(profile, "MPI_Allreduce"))) == 1
    # per timed step: the CFL/thickness allreduce, plus the layer masses every 10 steps and
    # at the end
    assert result["model"]["allreduces_per_step"] * result["steps"] == result["steps"] + 1
    # persistent requests: made once per halo plan and neighbour, freed at the end
    assert comm["send_init"] == comm["recv_init"] > 0


def test_manifest_matches_the_program():
    manifest = tomllib.loads(MANIFEST.read_text())
    assert manifest["name"] == manifest["executable"] == "hycom"
    helped = run(first_stack(), 1, "hycom", "--help")
    assert helped.returncode == 0
    assert "{" + ", ".join(manifest["sizes"]) + "}" in helped.stdout
    for option, values in manifest["options"].items():
        assert f"--{option}" in helped.stdout and "{" + ",".join(values) + "}" in helped.stdout


def test_bad_input_is_one_clear_error():
    stack = first_stack()
    assert "unknown size 'XXL'" in bad_input(stack, "hycom", "--size", "XXL")
    assert "invalid value --halo-width 7: use an integer in [1, 6]" in bad_input(
        stack, "hycom", "--halo-width", "7"
    )
    assert "halo width 6 is wider than block" in bad_input(stack, "hycom", *QUICK, "--block", "5x5")
    assert "2 ranks but only 1 ocean blocks" in bad_input(
        stack, "hycom", *QUICK, "--block", "128x96"
    )


# -- the seeds' rank counts and folding (issue 11), under SimGrid SMPI --------------------------


def test_patch_chooses_tiles_for_the_rank_count_with_the_same_bits():
    """HYCOM's patch (the default): without --block the tile grid is cut for the rank count,
    land tiles dropped, one tile per rank where the land allows."""
    stack = first_stack()
    reference = hycom(stack, 1, *TILES, "--distribution", "cartesian")
    for ranks in (1, 3):
        result = hycom(stack, ranks)
        params = result["params"]
        assert params["distribution"].startswith("patch ")
        assert params["blocks"] >= ranks and params["blocks_per_rank_min"] >= 1
        assert result["checksum"] == reference["checksum"], ranks


def test_48_simulated_ranks_give_the_bits_of_real_mpi(tmp_path):
    """S on 48 ranks of one 48-core node: tiles chosen for 48 ranks (the deck's 16 tiles are
    too few), the same state as on 1 real rank."""
    smpi = smpi_stack("hycom")
    reference = hycom(first_stack(), 1, *TILES)
    result = result_of(simulate(smpi, tmp_path, "hycom", 48, 48, QUICK))
    assert result["verification"]["passed"] is True
    assert result["checksum"] == reference["checksum"]
    params = result["params"]
    assert params["blocks"] >= 48 and params["idle_ranks"] == 0
    assert params["distribution"].startswith("patch ")


def test_folded_run_sends_what_a_full_run_sends_in_the_same_simulated_time(tmp_path):
    """Folded (fields shared, kernels charged after their samples) against full, with the
    deterministic cost model: every rank's messages and bytes, and the simulated time, equal;
    the folded result says it was not verified."""
    smpi = smpi_stack("hycom")
    args = (*QUICK, "--block", "32x24")
    full = result_of(simulate(smpi, tmp_path, "hycom", 6, 2, args, MODEL))
    folded = result_of(simulate(smpi, tmp_path, "hycom", 6, 2, args, MODEL | FOLD))
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
    assert folded["wall"] == full["wall"]


def test_too_many_ranks_for_any_tiling_is_one_clear_error(tmp_path):
    smpi = smpi_stack("hycom")
    done = simulate(smpi, tmp_path, "hycom", 40, 8, (*QUICK, "--grid", "36x24"))
    message = error_of(done, "hycom")
    assert "40 ranks: no cut of the 36x24 grid into blocks of at least 6x6 points" in message
    assert "use at most" in message and "--halo-width" in message
