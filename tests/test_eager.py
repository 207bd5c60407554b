"""Eager and rendezvous sends (issue 22 item 3, issue 27; mpi/eager.py, docs/simulate.md "Eager
and rendezvous sends"): the eager_limit knob's smpirun options per platform, its refusals, and
a late receiver whose simulated times are exactly an eager send's or a rendezvous' (CM02,
computation off). The SimGrid runs are skipped without SimGrid SMPI."""

import json
import subprocess
from pathlib import Path

import pytest

from conftest import simulate_plan
from esmperf.mpi import eager, platforms
from esmperf.mpi.knob_setting import knob_setting
from esmperf.mpi.knobs import FOLD_AUTO_RANKS, Unsupported
from esmperf.mpi.stacks import Stack, discover_stacks
from test_links import REAL
from test_smpi import run_setting

DELAY_US = 1000  # the receiver posts its receive this late
WTIME_S = 10e-9  # SMPI charges each MPI_Wtime 10 ns
SMPI_DEFAULT = "--cfg=smpi/send-is-detached-thresh:0"  # what eager_limit = simgrid adds at scale


def smpirun_options(platform: str, ranks: int, eager_limit: str) -> list[str]:
    stack = Stack(
        "smpi", "smpi", Path("smpicc"), None, Path("smpirun"), Path("/"), "SimGrid SMPI 3.32"
    )
    knobs = {"platform": platform, "eager_limit": eager_limit}
    args = knob_setting(stack, knobs, ranks, 2, 1, Path("/nonexistent")).launcher_args
    return [arg for arg in args if "detached" in arg or "async-small" in arg]


def test_the_eager_limits_are_open_mpis_defaults() -> None:
    assert eager.eager_limit("gige").limit == eager.eager_limit("10gige").limit == 65536
    assert eager.eager_limit("ib-qdr").limit == eager.eager_limit("ib-fdr").limit == 12288
    assert "btl_tcp_component.c at v1.4.5" in eager.eager_limit("gige").source
    assert "btl_openib_mca.c at v1.4.5" in eager.eager_limit("ib-qdr").source


@pytest.mark.parametrize("ranks", [2, FOLD_AUTO_RANKS, 1024])
def test_mpi_sets_the_transports_limit_at_every_scale(ranks: int) -> None:
    for platform, limit in (("gige", 65536), ("10gige", 65536), ("ib-qdr", 12288)):
        assert smpirun_options(platform, ranks, "mpi") == [
            f"--cfg=smpi/send-is-detached-thresh:{limit}",
            f"--cfg=smpi/async-small-thresh:{limit}",
        ]


@pytest.mark.parametrize("ranks", [2, FOLD_AUTO_RANKS, 1024])
def test_auto_is_mpi_where_a_limit_is_sourced_and_simgrid_elsewhere(ranks: int) -> None:
    for platform in eager.EAGER_LIMITS:
        assert smpirun_options(platform, ranks, "auto") == smpirun_options(platform, ranks, "mpi")
    for platform in ("ib-hdr", "efa", "slingshot-11"):
        assert smpirun_options(platform, ranks, "auto") == smpirun_options(
            platform, ranks, "simgrid"
        )


def test_simgrid_is_the_baseline_unchanged() -> None:
    for platform in ("gige", "ib-qdr", "ib-hdr", "efa"):
        assert smpirun_options(platform, FOLD_AUTO_RANKS - 1, "simgrid") == []
        assert smpirun_options(platform, FOLD_AUTO_RANKS, "simgrid") == [SMPI_DEFAULT]


def test_mpi_is_refused_where_no_limit_is_sourced_and_on_real_stacks() -> None:
    for platform in set(platforms.INTERCONNECTS) - set(eager.EAGER_LIMITS):
        with pytest.raises(Unsupported, match=f"eager_limit = mpi on {platform}: .*UCX"):
            smpirun_options(platform, 4, "mpi")
    with pytest.raises(Unsupported, match="eager_limit is a knob of the simulated cluster"):
        knob_setting(REAL, {"eager_limit": "mpi"}, 2, 2)


# -- a late receiver, simulated ---------------------------------------------------------------


@pytest.fixture(scope="module")
def late_receiver(tmp_path_factory: pytest.TempPathFactory) -> tuple[Stack, Path]:
    smpi = discover_stacks().by_id("smpi")
    if smpi is None:
        pytest.skip("SimGrid SMPI is not installed (smpicc, smpirun): make setup installs it")
    binary = tmp_path_factory.mktemp("eager") / "late_receiver"
    source = Path(__file__).with_name("late_receiver.c")
    subprocess.run([str(smpi.mpicc), "-O2", "-o", str(binary), str(source)], check=True)
    return smpi, binary


def late(
    late_receiver: tuple[Stack, Path], tmp_path: Path, platform: str, size: int, **knobs: str
) -> tuple[float, float]:
    """(when rank 0's MPI_Send returned, when rank 1's MPI_Recv did), simulated seconds."""
    smpi, binary = late_receiver
    ranks = int(knobs.pop("ranks", 2))
    chosen = {"platform": platform, "computation": "off", **knobs}
    setting = knob_setting(smpi, chosen, ranks, 2, 1, tmp_path / "platforms")
    result = run_setting(smpi, tmp_path, [str(binary), str(size), str(DELAY_US)], ranks, setting)
    done = {}
    for line in result.stdout.splitlines():
        done |= json.loads(line)
    return done["send_done_s"], done["recv_done_s"]


def rendezvous(platform: str, size: int) -> float:
    """The receive's time under a rendezvous: posted late, then the whole transfer."""
    net = platforms.INTERCONNECTS[platform]
    transfer = net.latency + (size + platforms.MESSAGE_OVERHEAD_BYTES) / net.bandwidth
    return DELAY_US * 1e-6 + transfer + WTIME_S


@pytest.mark.parametrize("ranks", [2, FOLD_AUTO_RANKS])
def test_an_eager_send_completes_at_once_and_its_data_waits_for_the_receiver(
    late_receiver: tuple[Stack, Path], tmp_path: Path, ranks: int
) -> None:
    for platform, size in (("gige", 65535), ("ib-qdr", 12287)):
        send, recv = late(late_receiver, tmp_path, platform, size, eager_limit="mpi", ranks=ranks)
        assert send == pytest.approx(WTIME_S, rel=1e-9)
        # the data left at once and arrived before the receive was posted
        assert recv == pytest.approx(DELAY_US * 1e-6 + WTIME_S, rel=1e-12)


def test_from_the_limit_a_send_waits_for_its_receive(
    late_receiver: tuple[Stack, Path], tmp_path: Path
) -> None:
    for platform, size in (("gige", 65536), ("ib-qdr", 12288)):
        send, recv = late(late_receiver, tmp_path, platform, size, eager_limit="mpi")
        assert send == recv == pytest.approx(rendezvous(platform, size), rel=1e-12)


def test_simgrid_sends_rendezvous_at_scale_and_detached_below_it(
    late_receiver: tuple[Stack, Path], tmp_path: Path
) -> None:
    # from FOLD_AUTO_RANKS ranks (the old behaviour, the baseline): an 8-byte send waits
    send, recv = late(
        late_receiver, tmp_path, "ib-qdr", 8, ranks=FOLD_AUTO_RANKS, eager_limit="simgrid"
    )
    assert send == recv == pytest.approx(rendezvous("ib-qdr", 8), rel=1e-12)
    # below it SMPI's default: the send returns at once, the data moves once the receive is
    # posted (detached, not asynchronous): the receive pays the whole transfer
    send, recv = late(late_receiver, tmp_path, "ib-qdr", 8, eager_limit="simgrid")
    assert send == pytest.approx(WTIME_S, rel=1e-9)
    assert recv == pytest.approx(rendezvous("ib-qdr", 8), rel=1e-12)


def test_the_default_is_eager_at_scale_where_the_limit_is_sourced(
    late_receiver: tuple[Stack, Path], tmp_path: Path
) -> None:
    send, recv = late(late_receiver, tmp_path, "ib-qdr", 8, ranks=FOLD_AUTO_RANKS)
    assert send == pytest.approx(WTIME_S, rel=1e-9)
    assert recv == pytest.approx(DELAY_US * 1e-6 + WTIME_S, rel=1e-12)


def test_simulate_takes_eager_limit_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    command = ["pop", "--platform", "gige,ib-hdr", "--nodes", "2", "--eager-limit", "mpi"]
    printed = simulate_plan(command, tmp_path, capsys, monkeypatch)
    assert "--cfg=smpi/send-is-detached-thresh:65536 --cfg=smpi/async-small-thresh:65536" in printed
    assert "skip: unsupported knob on smpi: eager_limit = mpi on ib-hdr" in printed
