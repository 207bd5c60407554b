"""TCP over Ethernet on SimGrid's flow model (issue 22 item 1, mpi/tcp_model.py and the plugin
native/simnet/esm_tcp_model.cpp): the kernel's CPU cost per byte (tcp_kernel) and incast
(network_model = cm02-tcp). Every simulated time exact (network only, CM02: deterministic)."""

import io
import json
import subprocess
from pathlib import Path

import pytest
from rich.console import Console

from esmperf.launch.mpirun import mpirun_command, run_environment
from esmperf.mpi import platforms
from esmperf.mpi.build import build_dir
from esmperf.mpi.knob_setting import knob_setting, write_files
from esmperf.mpi.knobs import Unsupported
from esmperf.mpi.stacks import Stack, discover_stacks
from esmperf.mpi.tcp_model import plugin_library
from esmperf.store.database import Store
from esmperf.study.file import study_from_dict
from esmperf.study.orchestrate import run_study
from esmperf.workloads import load_workloads
from ocean_smpi import smpi_built
from test_smpi import NETWORK_ONLY

R815_KERNEL_RATE = 2.2e9 / 8  # Opteron 6174 at 2.2 GHz, 8 cycles a byte: 275 MB/s
SMPI_BYTES = 16  # SMPI 3.32 adds 16 bytes to every message (platforms.MESSAGE_OVERHEAD_BYTES)


@pytest.fixture(scope="module")
def smpi() -> Stack:
    stack = smpi_built(Path("bench") / "incast")
    if not (build_dir(stack) / "simnet" / "libesmtcp.so").is_file():
        pytest.skip("the smpi stack's TCP plugin is not built: run `esmperf build --stack smpi`")
    return stack


def run(
    stack: Stack, tmp_path: Path, program: list[str], ranks: int, ranks_per_node: int, **knobs: str
) -> dict:
    chosen = NETWORK_ONLY | knobs
    setting = knob_setting(stack, chosen, ranks, 2, ranks_per_node, tmp_path / "platforms")
    write_files(setting)
    env = run_environment(stack) | {"TMPDIR": str(tmp_path)} | setting.env
    command = mpirun_command(stack, ranks, program, setting.launcher_args)
    result = subprocess.run(
        command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def pingpong(stack: Stack, *sizes: int) -> list[str]:
    return [str(build_dir(stack) / "bench" / "pingpong"), "2", *map(str, sizes)]


def one_way(net: str, size: int, rate: float | None = None) -> float:
    """CM02 between two nodes: latency + (n + 16) / bandwidth, the bandwidth capped at `rate`."""
    link = platforms.interconnect(net)
    return link.latency + (size + SMPI_BYTES) / min(link.bandwidth, rate or link.bandwidth)


# -- the kernel's CPU cost per byte -------------------------------------------------------------


def test_tcp_kernel_sets_the_plugins_rate_from_the_machines_clock(smpi: Stack) -> None:
    setting = knob_setting(smpi, {"tcp_kernel": "1hz-per-bit", "machine": "dell-r815"}, 2, 2)
    assert setting.env["ESM_TCP_KERNEL_RATE"] == "275000000"
    assert setting.env["LD_PRELOAD"] == str(plugin_library())  # build/smpi/simnet/libesmtcp.so
    m610 = knob_setting(smpi, {"tcp_kernel": "1hz-per-bit", "machine": "dell-m610"}, 2, 2)
    assert m610.env["ESM_TCP_KERNEL_RATE"] == "366250000"  # 2.93 GHz / 8
    assert "LD_PRELOAD" not in knob_setting(smpi, {}, 2, 2).env
    with pytest.raises(Unsupported, match="choose a machine"):
        knob_setting(smpi, {"tcp_kernel": "1hz-per-bit"}, 2, 2)
    with pytest.raises(Unsupported, match="platform gige or 10gige, not ib-qdr"):
        knob_setting(
            smpi, {"tcp_kernel": "1hz-per-bit", "machine": "dell-r815", "platform": "ib-qdr"}, 2, 2
        )
    with pytest.raises(Unsupported, match="not smpi"):
        knob_setting(
            smpi,
            {"tcp_kernel": "1hz-per-bit", "machine": "dell-r815", "network_model": "smpi"},
            2,
            2,
        )
    with pytest.raises(Unsupported, match="not ns3"):
        knob_setting(
            smpi,
            {"tcp_kernel": "1hz-per-bit", "machine": "dell-r815", "network_model": "ns3"},
            2,
            2,
        )


def test_tcp_kernel_caps_a_transfer_between_nodes_at_the_cores_rate(
    smpi: Stack, tmp_path: Path
) -> None:
    """8 B and 1 MiB ping-pongs on two Dell R815 nodes. 10GigE carries 1.25 GB/s, more than
    one 2.2 GHz core's TCP stack moves under the rule (275 MB/s): the 1 MiB message takes
    10 us + 1,048,592 B / 275 MB/s = 3.823 ms instead of 0.849 ms, the 8 B one (24 B with
    SMPI's) 68 ns more (the rule has no cost per message: that is inside the measured
    latency). On GigE the wire (125 MB/s) is slower than the core: nothing changes. Two ranks
    of one node: unchanged (shared memory)."""
    sizes = (8, 1048576)
    r815 = {"machine": "dell-r815", "platform": "10gige"}
    plain = run(smpi, tmp_path, pingpong(smpi, *sizes), 2, 1, **r815)
    kernel = run(smpi, tmp_path, pingpong(smpi, *sizes), 2, 1, tcp_kernel="1hz-per-bit", **r815)
    # within SMPI's own cost of MPI_Wtime (2.5 ns) of the analytic figure
    assert plain["one_way_s"] == [pytest.approx(one_way("10gige", n), abs=5e-9) for n in sizes]
    for size, with_kernel, without in zip(sizes, kernel["one_way_s"], plain["one_way_s"]):
        slower = one_way("10gige", size, R815_KERNEL_RATE) - one_way("10gige", size)
        assert with_kernel - without == pytest.approx(slower, rel=1e-6)
    assert kernel["one_way_s"][1] == pytest.approx(10e-6 + 1048592 / 275e6, abs=5e-9)
    gige = {"machine": "dell-r815", "platform": "gige"}
    assert run(smpi, tmp_path, pingpong(smpi, *sizes), 2, 1, tcp_kernel="1hz-per-bit", **gige)[
        "one_way_s"
    ] == [pytest.approx(one_way("gige", n), abs=5e-9) for n in sizes]
    on_node = run(smpi, tmp_path, pingpong(smpi, *sizes), 2, 2, tcp_kernel="1hz-per-bit", **r815)
    assert (
        on_node["one_way_s"]
        == run(smpi, tmp_path, pingpong(smpi, *sizes), 2, 2, **r815)["one_way_s"]
    )


# -- incast: network_model = cm02-tcp ----------------------------------------------------------


def incast(
    stack: Stack, senders: int, size: int, tmp_path: Path, per_node: int = 1, **knobs: str
) -> list[float]:
    program = [str(build_dir(stack) / "bench" / "incast"), "2", str(size)]
    return run(stack, tmp_path, program, senders + 1, per_node, **knobs)["round_s"]


def test_cm02_tcp_gives_the_plugin_the_ns3_models_figures(smpi: Stack) -> None:
    setting = knob_setting(smpi, {"network_model": "cm02-tcp"}, 2, 2)
    model = setting.launcher_args.index("--cfg=network/model:CM02")
    assert setting.launcher_args[model + 1] == "--cfg=network/crosstraffic:0"
    assert {key: value for key, value in setting.env.items() if "INCAST" in key} == {
        "ESM_TCP_INCAST_BUFFER_PACKETS": "28",  # 2 MiB / 48 ports / 1518 B
        "ESM_TCP_INCAST_INITIAL_WINDOW": "3",
        "ESM_TCP_INCAST_MSS": "1448",
        "ESM_TCP_INCAST_FRAME": "1518",
        "ESM_TCP_INCAST_RTO": "0.2",
        "ESM_TCP_INCAST_RECOVERY_WINDOW": "10.56",
    }
    high = knob_setting(smpi, {"network_model": "cm02-tcp", "switch_buffer": "high"}, 2, 2)
    assert high.env["ESM_TCP_INCAST_BUFFER_PACKETS"] == "690"
    ten = knob_setting(smpi, {"network_model": "cm02-tcp", "platform": "10gige"}, 2, 2)
    assert ten.env["ESM_TCP_INCAST_BUFFER_PACKETS"] == "431"
    with pytest.raises(Unsupported, match="platform gige or 10gige, not ib-qdr"):
        knob_setting(smpi, {"network_model": "cm02-tcp", "platform": "ib-qdr"}, 2, 2)
    with pytest.raises(Unsupported, match="topology = crossbar"):
        knob_setting(smpi, {"network_model": "cm02-tcp", "topology": "torus"}, 2, 2)


def test_cm02_tcp_waits_the_rto_where_ns3_does_and_is_cm02_elsewhere(
    smpi: Stack, tmp_path: Path
) -> None:
    """bench/incast on GigE, one sender a node, the low buffer (28 frames), 2 rounds alike.
    GigE at its framed rate, 117.7 MB/s (mpi/links.py). 8 x 8 KiB: first windows of 3
    segments, 7 x 3 = 21 stored of 24 (the port forwards one sender's share as it arrives), no
    loss: CM02's 0.659 ms (ns-3: 0.968 ms, its per-message connection set-up and close).
    11 x 8 KiB: 30 > 28, the 11th flow waits Linux's 200 ms RTO and finishes alone: 200.171 ms
    (ns-3: 200.920). 4 x 256 KiB: first windows fit, but each flow's share of the buffer and the
    7.75 packets in flight, 35.75 / 4 = 8.9, is under the recovery window (10.56): one RTO,
    202.328 ms (ns-3: 201.918); 3 x 256 KiB share 11.9 each: none, 6.783 ms (ns-3: 6.967). The
    high buffer (690 frames), 16 x 32 KiB: CM02's 4.559 ms."""
    assert (
        incast(smpi, 8, 8192, tmp_path, network_model="cm02-tcp")
        == [pytest.approx(6.590603e-04, rel=1e-6)] * 2
    )
    assert incast(smpi, 8, 8192, tmp_path) == [pytest.approx(6.590603e-04, rel=1e-6)] * 2
    assert (
        incast(smpi, 11, 8192, tmp_path, network_model="cm02-tcp")
        == [pytest.approx(2.00171251e-01, rel=1e-8)] * 2
    )
    assert incast(smpi, 11, 8192, tmp_path) == [pytest.approx(8.687041e-04, rel=1e-6)] * 2
    assert (
        incast(smpi, 4, 262144, tmp_path, network_model="cm02-tcp")
        == [pytest.approx(2.02328190e-01, rel=1e-8)] * 2
    )
    assert (
        incast(smpi, 3, 262144, tmp_path, network_model="cm02-tcp")
        == [pytest.approx(6.783325e-03, rel=1e-6)] * 2
    )
    high = incast(smpi, 16, 32768, tmp_path, network_model="cm02-tcp", switch_buffer="high")
    assert high == incast(smpi, 16, 32768, tmp_path) == [pytest.approx(4.559360e-03, rel=1e-6)] * 2


def test_cm02_tcp_counts_what_the_port_stores_from_its_sender_links(
    smpi: Stack, tmp_path: Path
) -> None:
    """12 flows of 4 KiB (3 segments: too short for rule 2's share) into rank 0's port. From
    12 nodes (one rank a node) they arrive at 12 x the port's rate and it stores 11/12 of their
    36 first-window packets, 33 > 28: one RTO. From 4 nodes (3 ranks a node: ranks 1 and 2
    share rank 0's node, no port) it stores 3/4, 27: no loss, CM02's round. (Derived, not checked against ns-3: its nodes' own queues
    drop too, docs/simulate.md.)"""
    rounds = incast(smpi, 12, 4096, tmp_path, network_model="cm02-tcp")
    assert rounds == [pytest.approx(2.00136582e-01, rel=1e-8)] * 2
    four_nodes = incast(smpi, 14, 4096, tmp_path, 3, network_model="cm02-tcp")
    assert four_nodes == incast(smpi, 14, 4096, tmp_path, 3)
    assert four_nodes[0] < 2e-3


def test_a_study_run_of_cm02_tcp_has_the_plugin_and_the_message_counter(
    smpi: Stack, tmp_path: Path
) -> None:
    """The study runner preloads the simulator's message counter through smpirun's -wrapper,
    whose LD_PRELOAD replaced the environment's, so the TCP plugin was lost in studies (the
    seed studies' Ethernet blocks ran as plain CM02): both are preloaded. 11 x 8 KiB into one
    GigE port, 2 rounds: one RTO each (as test_cm02_tcp_waits_the_rto_where_ns3_does...)."""
    block = {
        "name": "incast",
        "command": [str(build_dir(smpi) / "bench" / "incast"), "2", "8192"],
        "stack": "smpi",
        "ranks": [12],
        "ranks_per_node": 1,
        "knobs": {"platform": ["gige"], "network_model": ["cm02-tcp"], "computation": ["off"]},
        "repeats": {"warmup": 0, "min": 1, "max": 1},
    }
    study = study_from_dict({"name": "tcp", "matrix": [block]}, "test")
    store_path = tmp_path / "tcp.duckdb"
    outcome = run_study(
        study, store_path, discover_stacks().stacks, load_workloads(), Console(file=io.StringIO())
    )
    assert outcome.complete == 1
    with Store(store_path, read_only=True) as store:
        [rep] = store.rows("SELECT stdout, simulator_messages FROM repetition")
    rounds = json.loads(rep["stdout"].strip().splitlines()[-1])["round_s"]
    assert rounds == [pytest.approx(2.00171251e-01, rel=1e-8)] * 2
    assert rep["simulator_messages"] > 0
