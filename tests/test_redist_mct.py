"""redist-bench's MCT peer (MCT's Rearranger, native/apps/redist/peer_mct.c and
mct_rearranger.f90): on the openmpi stack it moves the bundle exactly (every destination value
equal to the formula's, as the other peers are checked) at 2 and 4 ranks, on the seed's layouts
and on layouts cut in every dimension with uneven blocks; on mpich it is listed as unavailable,
with why. Figures only: timings are never checked here."""

from pathlib import Path

import pytest

from make_installs import require
from test_redist_bytes import DEBIAN, bench

# Debian's MCT (liboasis3-dev, which `make setup` installs): without it the peer is not built.
MCT_INSTALLED = Path("/usr/include/mct/m_rearranger.mod").is_file()
OPENMPI = [s for s in DEBIAN if s.id == "openmpi"]
MPICH = [s for s in DEBIAN if s.id == "mpich"]
SMALL = ("--grid", "25x19x7", "--fields", "3", "--steps", "2", "--repeats", "2")


@pytest.fixture
def mct_installed() -> None:
    require(MCT_INSTALLED, "Debian's MCT (liboasis3-dev: /usr/include/mct)", "setup")


def mct(result: dict) -> dict:
    assert result["verification"]["passed"], result
    return result["peers"]["mct"]


@pytest.mark.usefixtures("mct_installed")
@pytest.mark.parametrize("stack", OPENMPI, ids=lambda s: s.id)
@pytest.mark.parametrize(
    "ranks, layout",
    [
        (2, ()),  # the seed's rule for 2 ranks: 2x1 -> 1x2
        (4, ()),  # Table 1: 4x1 -> 1x4
        (4, ("--src-parts", "2x1x2", "--dst-parts", "1x2x2")),
        (4, ("--src-parts", "1x1x4", "--dst-parts", "2x2x1")),
    ],
)
def test_mct_peer_moves_every_value_exactly(stack, ranks, layout):
    peer = mct(bench(stack, ranks, *SMALL, "--peers", "mct", *layout))
    assert peer["available"], peer.get("why")
    assert peer["passed"] and peer["max_abs"] == 0
    assert peer["store_s"]["median"] > 0 and peer["run_s"]["median"] > 0
    assert len(peer["run_s_repeats"]) == len(peer["store_s_repeats"]) == 2  # --repeats 2


@pytest.mark.usefixtures("mct_installed")
@pytest.mark.parametrize("stack", OPENMPI, ids=lambda s: s.id)
def test_mct_peer_beside_alltoallw_on_the_small_size(stack):
    """--peers alltoallw,mct: both in one run on the S grid at 2 ranks, each checked; no PETSc."""
    result = bench(
        stack, 2, "--size", "S", "--steps", "1", "--repeats", "1", "--peers", "alltoallw,mct"
    )
    peers = result["peers"]
    assert sorted(peers) == ["alltoallw", "mct"]
    assert peers["mct"]["available"] and peers["mct"]["max_abs"] == 0
    assert peers["alltoallw"]["available"] and peers["alltoallw"]["max_abs"] == 0
    assert peers["mct"]["ratio_to_ours"] > 0


@pytest.mark.parametrize("stack", MPICH, ids=lambda s: s.id)
def test_mct_peer_unavailable_on_mpich_says_why(stack):
    result = bench(stack, 2, *SMALL, "--peers", "mct")
    peer = result["peers"]["mct"]
    assert not peer["available"]
    assert peer["why"] == (
        "the MCT peer exists in the openmpi stack's build only (Debian's MCT, in liboasis3-dev, "
        "is built on Debian Open MPI)"
    )


@pytest.mark.usefixtures("mct_installed")
@pytest.mark.parametrize("stack", OPENMPI, ids=lambda s: s.id)
def test_mct_peer_refuses_other_types(stack):
    result = bench(stack, 2, *SMALL, "--peers", "mct", "--type", "int32")
    peer = result["peers"]["mct"]
    assert not peer["available"] and "--type double" in peer["why"]
