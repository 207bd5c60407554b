"""The host's CPU cost per message (mpi/host_overhead.py, docs/simulate.md "The host's cost per
message") and the collective selector (the `collectives` knob): the published figures in
SimGrid's piecewise form, the refusals, and exact simulated times on IB QDR (CM02, computation
off): a ping-pong's one-way time grows by o_s + o_r, an MPI_Isend pays ois, Open MPI's
recursive-doubling barrier on 16 ranks by 4 x (ois + or), an offloaded barrier by nothing.
The SimGrid runs are skipped without SimGrid SMPI."""

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import run_simulated, simulate_plan
from esmperf.mpi import host_overhead
from esmperf.mpi.build import build_dir
from esmperf.mpi.host_overhead import IB_HIGH, IB_LOW, STAMPEDE, TAURUS, TUKEY, charged
from esmperf.mpi.knob_setting import knob_setting
from esmperf.mpi.knobs import FOLD_AUTO_RANKS, KNOBS, Unsupported
from esmperf.mpi.smpi_knobs import SMPI_COLLECTIVES_AT_SCALE
from esmperf.mpi.stacks import Stack, discover_stacks
from test_eager import DELAY_US, WTIME_S

EAGER = {"platform": "ib-qdr", "eager_limit": "mpi", "computation": "off"}
# smpirun's surf/precision: SimGrid may drop a sleep's last nanosecond
PRECISION_S = 1e-9
STACK = Stack("smpi", "smpi", Path("smpicc"), None, Path("smpirun"), Path("/"), "SimGrid SMPI 3.32")


def options(ranks: int = 2, **knobs: str) -> tuple[str, ...]:
    return knob_setting(STACK, knobs, ranks, 2, 1, Path("/nonexistent")).launcher_args


def test_the_options_carry_the_published_figures() -> None:
    # Tukey (Netgauge): o_s and o_r as measured at 1, 64 and 8192 B, linear between
    assert charged(TUKEY.send, 1) == pytest.approx(1.103756e-6, rel=1e-6)
    assert charged(TUKEY.send, 64) == pytest.approx(1.240573e-6, rel=1e-6)
    assert charged(TUKEY.recv, 64) == pytest.approx(1.145113e-6, rel=1e-6)
    assert charged(TUKEY.recv, 8192) == pytest.approx(4.945954e-6, rel=1e-6)
    assert charged(TUKEY.send, 48) == pytest.approx((1.213187e-6 + 1.240573e-6) / 2, rel=1e-6)
    assert TUKEY.isend == TUKEY.send
    # Stampede and taurus: SimGrid's calibrations as published
    assert charged(STAMPEDE.send, 8) == pytest.approx(0.33381e-6 + 8 * 0.119758e-9, rel=1e-6)
    assert charged(STAMPEDE.recv, 8) == pytest.approx(1.3636e-6 + 8 * 0.108009e-9, rel=1e-6)
    assert charged(TAURUS.send, 8) == pytest.approx(3.79946e-6 + 8 * 0.10981e-9, rel=1e-6)
    assert charged(TAURUS.recv, 2000) == pytest.approx(8.16125e-6 + 2000 * 0.26684e-9, rel=1e-6)
    assert "ng-mpi-tukey.dat" in TUKEY.source and "stampede_output.xml" in STAMPEDE.source
    assert "taurus.xml" in TAURUS.source
    assert KNOBS["host_overhead"].values == host_overhead.HOST_OVERHEAD_VALUES
    # Ethernet's one calibration between nodes at both ends; within a node nothing at the low end
    low, high = host_overhead.HOST_OVERHEADS["gige"].values()
    assert (low.send, low.isend, low.recv, low.on_node_share) == (
        TAURUS.send,
        TAURUS.isend,
        TAURUS.recv,
        0.0,
    )
    assert high == TAURUS and TAURUS.on_node_share == 1.0 and IB_LOW.on_node_share == 0.0


def test_infinibands_ends_are_the_smaller_and_the_larger_figure_at_every_size() -> None:
    def at(option: list, size: int) -> float:
        offset, per_byte = host_overhead.line(option, size)
        return offset + per_byte * size

    for option in ("send", "isend", "recv"):
        low, high = (host_overhead.pieces(getattr(end, option)) for end in (IB_LOW, IB_HIGH))
        sources = [host_overhead.pieces(getattr(s, option)) for s in (STAMPEDE, TUKEY)]
        for size in range(0, 20000):
            figures = [at(source, size) for source in sources]
            assert abs(at(low, size) - min(figures)) <= 1e-9 * min(figures) + 1e-18, size
            assert abs(at(high, size) - max(figures)) <= 1e-9 * max(figures) + 1e-18, size
    # neither source is below the other everywhere: o_s Stampede's, o_r Tukey's for 8 bytes
    assert charged(IB_LOW.send, 8) == charged(STAMPEDE.send, 8)
    assert charged(IB_LOW.recv, 8) == charged(TUKEY.recv, 8)
    assert KNOBS["host_overhead"].baseline == "none"


def test_the_knob_sets_os_ois_or_and_none_changes_nothing() -> None:
    high = options(host_overhead="high", **{**EAGER, "platform": "ib-fdr"})
    assert f"--cfg=smpi/os:{IB_HIGH.send}" in high and f"--cfg=smpi/or:{IB_HIGH.recv}" in high
    assert f"--cfg=smpi/ois:{IB_HIGH.isend}" in high and not any("esm/" in a for a in high)
    # the low end: the simulator's plugin charges by destination, nothing within a node
    low = options(host_overhead="low", **{**EAGER, "platform": "gige"})
    assert f"--cfg=esm/os:{TAURUS.send}" in low and f"--cfg=esm/or:{TAURUS.recv}" in low
    assert f"--cfg=esm/ois:{TAURUS.isend}" in low and "--cfg=esm/on-node-share:0" in low
    assert not any("smpi/o" in arg for arg in low)
    for ranks in (2, FOLD_AUTO_RANKS):
        assert options(ranks, host_overhead="none") == options(ranks)
        assert not any("smpi/o" in arg for arg in options(ranks, **EAGER))


def test_refused_without_eager_sends_or_a_published_figure() -> None:
    with pytest.raises(Unsupported, match="choose eager_limit = mpi or auto"):
        options(platform="ib-qdr", host_overhead="low", eager_limit="simgrid")
    # the default, auto, is the MPI's eager limit on ib-qdr: the overhead applies
    assert options(platform="ib-qdr", host_overhead="low") == options(
        platform="ib-qdr", host_overhead="low", eager_limit="mpi"
    )
    with pytest.raises(Unsupported, match="host_overhead = high on ib-hdr: no published"):
        options(platform="ib-hdr", host_overhead="high")


def test_the_collective_selector_and_the_algorithm_knobs() -> None:
    assert "--cfg=smpi/coll-selector:ompi" in options(collectives="ompi")
    assert not any("coll-selector" in arg for arg in options())
    # an <op>_algorithm knob overrides the selector for its collective (smpi_coll.cpp)
    chosen = options(collectives="mpich", allreduce_algorithm="ring")
    assert "--cfg=smpi/coll-selector:mpich" in chosen and "--cfg=smpi/allreduce:lr" in chosen
    # SimGrid's defaults keep the at-scale replacements; a selector chooses its own
    at_scale = [f"--cfg=smpi/{op}:{alg}" for op, alg in SMPI_COLLECTIVES_AT_SCALE.items()]
    assert all(arg in options(FOLD_AUTO_RANKS) for arg in at_scale)
    assert not any(arg in options(FOLD_AUTO_RANKS, collectives="ompi") for arg in at_scale)


# -- simulated ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def smpi() -> Stack:
    stack = discover_stacks().by_id("smpi")
    if stack is None or not (build_dir(stack) / "bench" / "collectives").is_file():
        pytest.skip("the smpi stack is not installed and built (esmperf build --stack smpi)")
    return stack


def run(smpi: Stack, tmp_path: Path, program: list[str], ranks: int, **knobs: str) -> Any:
    """The program's JSON lines, with the knobs' variables (offload's) in its environment."""
    out = run_simulated(smpi, tmp_path, program, ranks, {**EAGER, **knobs})
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def test_a_ping_pong_pays_o_s_plus_o_r_per_one_way_message(smpi: Stack, tmp_path: Path) -> None:
    sizes = (0, 8, 1024, 8192)
    program = [str(build_dir(smpi) / "bench" / "pingpong"), "10", *map(str, sizes)]
    base = run(smpi, tmp_path, program, 2)[-1]["one_way_s"]
    for end, figures in (("low", IB_LOW), ("high", IB_HIGH)):
        one_way = run(smpi, tmp_path, program, 2, host_overhead=end)[-1]["one_way_s"]
        for size, before, after in zip(sizes, base, one_way, strict=True):
            expected = charged(figures.send, size) + charged(figures.recv, size)
            assert after - before == pytest.approx(expected, abs=PRECISION_S)


def test_a_message_within_a_node_pays_nothing_at_the_low_end_and_o_at_the_high_end(
    smpi: Stack, tmp_path: Path
) -> None:
    sizes = (0, 8, 1024)
    program = [str(build_dir(smpi) / "bench" / "pingpong"), "10", *map(str, sizes)]

    def one_way(ranks_per_node: int, **knobs: str) -> list[float]:
        out = run_simulated(smpi, tmp_path, program, 2, {**EAGER, **knobs}, ranks_per_node)
        return [json.loads(line) for line in out.splitlines() if line.startswith("{")][-1][
            "one_way_s"
        ]

    on_node = one_way(2)
    assert one_way(2, host_overhead="low") == on_node  # to the bit
    for size, before, after in zip(sizes, on_node, one_way(2, host_overhead="high"), strict=True):
        expected = charged(IB_HIGH.send, size) + charged(IB_HIGH.recv, size)
        assert after - before == pytest.approx(expected, abs=PRECISION_S)


def test_a_send_and_an_isend_pay_their_own_overhead(smpi: Stack, tmp_path: Path) -> None:
    binary = tmp_path / "late_receiver"
    source = Path(__file__).with_name("late_receiver.c")
    subprocess.run([str(smpi.mpicc), "-O2", "-o", str(binary), str(source)], check=True)
    for mode, sender in (("send", TAURUS.send), ("isend", TAURUS.isend)):
        done: dict[str, float] = {}
        program = [str(binary), "100", str(DELAY_US), mode]
        for line in run(smpi, tmp_path, program, 2, platform="gige", host_overhead="high"):
            done |= line
        assert done["send_done_s"] == pytest.approx(charged(sender, 100) + WTIME_S, abs=PRECISION_S)
        # the data arrived before the late receive: it pays its o_r alone
        assert done["recv_done_s"] == pytest.approx(
            DELAY_US * 1e-6 + charged(TAURUS.recv, 100) + WTIME_S, abs=PRECISION_S
        )


def test_a_barrier_pays_per_round_and_an_offloaded_one_nothing(smpi: Stack, tmp_path: Path) -> None:
    program = [str(build_dir(smpi) / "bench" / "collectives"), "20"]

    def barrier(**knobs: str) -> tuple[float, float]:
        record = run(smpi, tmp_path, program, 16, **knobs)[-1]
        assert record["right"]
        return record["us"]["barrier"] * 1e-6, record["after_last_us"]["barrier"] * 1e-6

    # Open MPI's rules pick recursive doubling for 16 ranks: 4 rounds of MPI_Sendrecv of 0
    # bytes, each an MPI_Isend (ois) and a receive of an eager message (or) on every rank
    # (at the high end Tukey's ois, 1.0616 us, and Stampede's or, 1.3636 us)
    extra = 4 * (charged(IB_HIGH.isend, 0) + charged(IB_HIGH.recv, 0))
    before = barrier(collectives="ompi")
    after = barrier(collectives="ompi", host_overhead="high")
    assert extra == pytest.approx(9.7008e-6, rel=1e-4)
    for mean, mean_after in zip(before, after, strict=True):
        assert mean_after - mean == pytest.approx(extra, abs=4 * PRECISION_S)
    # offloaded (FCA): no message, no overhead, to the bit; 7.36 us after the last arrival
    offloaded = barrier(offload="fca")
    assert barrier(offload="fca", host_overhead="high") == offloaded
    assert offloaded[1] == pytest.approx(7.36e-6 + WTIME_S, rel=1e-8)


def test_simulate_takes_host_overhead_and_collectives_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    command = ["pop", "--platform", "gige,ib-hdr", "--nodes", "2", "--eager-limit", "mpi"]
    command += ["--host-overhead", "high", "--collectives", "ompi"]
    printed = simulate_plan(command, tmp_path, capsys, monkeypatch)
    assert f"--cfg=smpi/os:{TAURUS.send}" in printed.replace("\n", "")
    assert "--cfg=smpi/coll-selector:ompi" in printed
    assert "skip: unsupported knob on smpi: eager_limit = mpi on ib-hdr" in printed
