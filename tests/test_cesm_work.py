"""Where the CESM proxy's components work (native/apps/cesm/work.c; docs/cesm.md, "Where the
components work"): the work maps exact on small grids (counts worked out by hand below), the
masks' global figures against the Earth's (land fraction, NSIDC sea-ice extents), and the
result line's per-component work per rank (min, mean, max, load balance) summing to the whole
grid's counts on 1, 2 and 4 ranks. Counts only, never timings."""

import json
import subprocess

import pytest

from test_core import FIRST, build_dir, passed

QUICK = ("--size", "S", "--steps", "6", "--warmup", "1", "--output", "off")
COMPONENTS = ("atm", "atm_radiation", "lnd", "ice", "ocn")


@pytest.fixture(scope="module")
def maps() -> dict:
    if not FIRST:
        pytest.skip("no Debian MPI stack")
    path = build_dir(FIRST[0]) / "apps" / "cesm" / "cesm_work_test"
    if not path.is_file():
        pytest.skip(f"{path} is not built (make build)")
    done = subprocess.run([str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_sunlit_columns_per_rank_are_exact(maps):
    """An 8 x 4 grid (columns centred on 0, 45, ..., 315 E), rank 0 the western half: at 01:30
    on the equinox the sun is up where the hour angle lon - 157.5 is within 90 degrees of noon,
    columns 90-225 E, two on each rank per row; at 07:30 (lon - 67.5) columns 0-135 E, all
    rank 0's."""
    assert maps["sunlit"] == {"5400": [8, 8, 16], "27000": [16, 0, 16]}


def test_sunlit_columns_of_cam_s_latitude_bands_are_exact(maps):
    """CAM's ranks own latitude bands: the same grid's columns dealt in two contiguous pieces,
    rank 0 the southern rows (67.5 S, 22.5 S). At 01:30 on the June solstice (declination
    23.44) the sun is up where cos(hour angle) > -tan(lat) tan(23.44): none at 67.5 S, |h| <
    79.7 at 22.5 S, |h| < 100.3 at 22.5 N, every column at 67.5 N; the hour angles are 22.5,
    67.5, 112.5 and 157.5 from noon, two columns each: 0 + 4 and 4 + 8."""
    assert maps["sunlit_bands_june"] == [4, 12]


def test_radiation_steps_and_even_deals(maps):
    """iradsw = -1 is hourly: with a 30-minute step CAM's radiation_do runs the shortwave on
    steps 0, 3, 5, 7, ...; with an hourly step, every one. 10 dealt to 4: 3, 3, 2, 2,
    starting at 0, 3, 6, 8."""
    assert maps["radiation_due_1800"] == [1, 0, 0, 1, 0, 1, 0, 1]
    assert maps["radiation_due_3600"] == [1, 1, 1, 1]
    assert maps["share_10_over_4"] == [3, 3, 2, 2]
    assert maps["first_10_over_4"] == [0, 3, 6, 8]


def test_ice_points_per_rank_are_exact(maps):
    """A 10-degree aquaplanet of 8 columns, rank 0 the southern 9 rows. Polar caps of whole
    rows: 80-90 is 3.874 million km^2, 70-90 15.381, 60-90 34.17. Mid-March: the Arctic's
    15.43 is nearest two rows (16 points), the Antarctic's 4.03 one (8). Mid-September: the
    Arctic's 6.41 one row, the Antarctic's 18.49 two."""
    assert maps["extent_mkm2"] == {"north_march": 15.43, "south_september": 18.49}
    assert maps["icy"] == {"march": [8, 16], "september": [16, 8]}


def test_masks_match_the_earth_at_size_S(maps):
    """Land: 29.2 % of the Earth (148.9 of 510.1 million km^2); the analytic continents on the
    3.75-degree grid give 30.2 %. Ice: within half the largest polar row of ocean (the edge
    moves by whole rows) of NSIDC's 1981-2010 monthly means."""
    size_s = maps["size_S"]
    assert size_s["land_fraction"] == pytest.approx(0.292, abs=0.015)
    half_row = size_s["polar_row_mkm2_max"] / 2
    source = {"north_march": 15.43, "north_september": 6.41}
    source |= {"south_february": 3.07, "south_september": 18.49}
    for key, extent in source.items():
        assert abs(size_s["ice_mkm2"][key] - extent) <= half_row, key


def cesm(ranks: int, *options: str) -> dict:
    if not FIRST:
        pytest.skip("no Debian MPI stack")
    return passed(FIRST[0], ranks, "cesm", *QUICK, *options)


def test_result_line_shows_each_component_s_work_per_rank():
    """On 1 rank each component's work is the whole grid's: the atmosphere's 96 x 48 points
    3 sub-steps an interval; radiation half the columns on 3 of the 6 timed intervals (CAM's
    steps 3, 5, 7 of 2-7); sea ice the 576 ocean points under the March cover. On 2 and 4
    ranks the means times the ranks give the same totals, the bits stay the same, and the
    ice, on POP-like blocks, is unevenly shared."""
    one = cesm(1)
    work = one["work"]
    assert work["atm"]["mean"] == 96 * 48 * 3
    assert work["atm_radiation"]["mean"] == 96 * 48 / 2 * 3 / 6
    assert work["ice"]["mean"] == 576
    assert work["ocn"]["mean"] == one["params"]["ocean_points"] * 2
    assert work["lnd"]["mean"] == one["params"]["land_points"]
    for ranks in (2, 4):
        result = cesm(ranks)
        assert result["checksum"] == one["checksum"]
        for c in COMPONENTS:
            w = result["work"][c]
            assert w["mean"] * ranks == work[c]["mean"], (ranks, c)
            assert w["min"] <= w["mean"] <= w["max"]
            assert w["load_balance"] == pytest.approx(w["mean"] / w["max"])
        assert result["work"]["lnd"]["max"] - result["work"]["lnd"]["min"] <= 1  # CLM's deal
    assert cesm(4)["work"]["ice"]["load_balance"] < 0.6


def test_uniform_work_charges_every_point():
    result = cesm(2, "--work", "uniform")
    assert result["params"]["work"] == "uniform"
    assert result["work"]["ice"]["mean"] * 2 == result["params"]["ocean_points"]
