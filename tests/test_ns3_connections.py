"""esmperf's patch to SimGrid 4.1's ns-3 binding (native/simnet/simgrid-4.1-ns3-connections.patch;
issue 22 item 1; docs/simulate.md, "TCP over Ethernet: the ns3 network model"). Each case runs
the network alone, ns-3 seeded, every simulated time exact, under SimGrid's own binding
(Debian's 3.32 on PATH) and under the patched 4.1 that `make setup-simgrid` builds. What the
patch changes, each with the case that measured the defect before it:

- one TCP connection per pair of hosts (a host per rank), opened by the first message and kept
  open as Open MPI keeps its connections; a message is received when its last byte is read.
  SimGrid's binding opens a connection per message and ends it when the close completes: an
  8-byte message took 205.7 us one way on a 50 us path;
- ns-3's clock and SimGrid's kept together: pflotran S on 2 GigE nodes of 4 ranks stopped with
  "Deadlock detected" under both SimGrids' own bindings;
- a queue per link end, from the platform: a node's transmit queue holds Linux's 1000 packets
  and memory inside a node drops nothing, where SimGrid's binding gives every queue the switch
  port's size (28 frames at the low end of GigE's band);
- a message between two ranks of one node is a copy through shared memory, as the MPI's
  shared-memory transport makes it (no packet, no TCP), where SimGrid's binding sends it as TCP
  through the node's router (and would finish it at once between two ranks of one host).

`make test` builds both (`make build-simgrid`); skipped where they are missing.
"""

import json
import subprocess
from pathlib import Path

import pytest

from esmperf.mpi import ns3_network
from esmperf.mpi.build import build_dir
from esmperf.mpi.platforms import LOOPBACK_BANDWIDTH, LOOPBACK_LATENCY
from esmperf.mpi.stacks import Stack
from esmperf.paths import SIMGRID_VARIABLE
from esmperf.workloads import parse_result_line
from test_ns3 import simulate as ns3_simulate
from test_simgrid41 import PREFIX, on_simgrid, smpi_stack

PROGRAMS = (
    Path("bench") / "pingpong",
    Path("bench") / "incast",
    Path("apps") / "pflotran" / "pflotran",
)


def stack_on(prefix: Path | None) -> Stack:
    """The smpi stack on PATH's SimGrid (None) or on `prefix`'s, with PROGRAMS built; a skip
    naming the fix otherwise."""
    stack = smpi_stack(prefix)
    with on_simgrid(prefix):
        built = all((build_dir(stack) / p).is_file() for p in PROGRAMS)
    if not built:
        variable = f"{SIMGRID_VARIABLE}={prefix} " if prefix else ""
        pytest.skip(f"the smpi stack is not built: {variable}esmperf build --stack smpi")
    return stack


@pytest.fixture(scope="module")
def stacks() -> dict[str, Stack]:
    """{"own": SimGrid's binding (PATH's 3.32), "kept": the patched 4.1}."""
    if not (PREFIX / "bin" / "smpirun").is_file():
        pytest.skip("SimGrid 4.1 is not installed: make setup-simgrid")
    own, kept = stack_on(None), stack_on(PREFIX)
    if not ns3_network.kept_connections(kept.mpicc):
        pytest.skip(f"{PREFIX} lacks esmperf's ns-3 patch: make setup-simgrid rebuilds it")
    assert not ns3_network.kept_connections(own.mpicc)
    return {"own": own, "kept": kept}


def simulate(
    stack: Stack,
    tmp_path: Path,
    program: list[str],
    ranks: int,
    ranks_per_node: int = 1,
    **knobs: str,
) -> subprocess.CompletedProcess[str]:
    """`program` (relative to the stack's build directory) on the simulated GigE cluster under
    ns3, computation off (tests/test_ns3.py), on the stack's own SimGrid."""
    with on_simgrid(PREFIX if ns3_network.kept_connections(stack.mpicc) else None):
        command = [str(build_dir(stack) / program[0]), *program[1:]]
        return ns3_simulate(
            stack, tmp_path, command, ranks, ranks_per_node, network_model="ns3", **knobs
        )


def record(result: subprocess.CompletedProcess[str]) -> dict:
    """The program's JSON line: a benchmark's last line, a workload's result line."""
    assert result.returncode == 0, result.stderr[-2000:]
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    assert lines, result.stderr[-2000:]
    return parse_result_line(result.stdout) or json.loads(lines[-1])


def one_way(stack: Stack, tmp_path: Path, ranks: int, ranks_per_node: int, *sizes: int) -> list:
    program = ["bench/pingpong", "2", *map(str, sizes)]
    return record(simulate(stack, tmp_path, program, ranks, ranks_per_node))["one_way_s"]


PING_PONG_SIZES = (0, 8, 1448, 65536, 1048576)


def both_bindings(stacks: dict[str, Stack], tmp_path: Path, ranks_per_node: int) -> tuple:
    """One-way ping-pong times of 2 ranks, PING_PONG_SIZES, under SimGrid's binding and the
    patched one."""
    return tuple(
        one_way(stacks[name], tmp_path / name, 2, ranks_per_node, *PING_PONG_SIZES)
        for name in ("own", "kept")
    )


def test_a_pairs_connection_is_opened_once_and_kept(
    stacks: dict[str, Stack], tmp_path: Path
) -> None:
    """Ping-pong between two GigE nodes, 0 B to 1 MiB (each size after a round trip that,
    under the patch, has opened the connections). SimGrid's binding pays a connection per
    message (SYN, SYN-ACK, the data, the FIN's acknowledgement: four traversals of the 50 us
    path for 8 bytes) and slow start from 3 segments every time; kept connections pay the
    path once (a 0-byte message takes one byte of the stream), and their windows carry over."""
    own, kept = both_bindings(stacks, tmp_path, 1)
    assert own == pytest.approx(
        [2.055525e-04, 2.056815e-04, 2.290395e-04, 9.158585e-04, 9.0734905e-03], rel=1e-9
    )
    assert kept == pytest.approx(
        [5.1552e-05, 5.16815e-05, 7.5236e-05, 6.067025e-04, 8.7644775e-03], rel=1e-9
    )
    # 8 B: CM02's 50.2 us path plus the headers' serialisation, where each message was 4 paths
    assert kept[1] < 1.05 * 50.2064e-06 and own[1] > 4 * 50.2064e-06


def test_incast_pays_the_connections_once(stacks: dict[str, Stack], tmp_path: Path) -> None:
    """16 senders x 32 KiB into one GigE port, 2 rounds. The low end of the buffer band (28
    frames) loses packets every round under both: one 200 ms retransmission timeout. Under the
    patch the first round also opens the 16 connections and after its timeout waits 42 ms more
    (not traced: a window of one segment and the receiver's 40 ms delayed ACK fit it); the second
    round's senders keep their connections. The high end loses nothing."""
    program = ["bench/incast", "2", "32768"]
    own = record(simulate(stacks["own"], tmp_path / "own", program, 17))["round_s"]
    low = record(simulate(stacks["kept"], tmp_path / "low", program, 17))["round_s"]
    high = record(simulate(stacks["kept"], tmp_path / "high", program, 17, switch_buffer="high"))
    assert own == pytest.approx([2.02120627e-01] * 2, rel=1e-9)
    assert low == pytest.approx([2.43551998e-01, 2.01643442e-01], rel=1e-9)
    assert high["round_s"] == pytest.approx([4.57417e-03, 4.469567e-03], rel=1e-9)


def test_the_two_clocks_stay_together(stacks: dict[str, Stack], tmp_path: Path) -> None:
    """pflotran S, one step, on 2 GigE nodes of 4 ranks: SimGrid's binding reports a short
    remaining delay of ns-3 as none, SimGrid's clock falls behind ns-3's, and the ranks' sleeps
    never end: "Deadlock detected", no result line. Under the patch it finishes."""
    program = ["apps/pflotran/pflotran", "--size", "S", "--steps", "1"]
    own = simulate(stacks["own"], tmp_path / "own", program, 8, 4)
    assert "Deadlock detected" in own.stderr and parse_result_line(own.stdout) is None
    kept = simulate(stacks["kept"], tmp_path / "kept", program, 8, 4)
    assert "Deadlock" not in kept.stderr
    assert record(kept)["steps"] == 1
    assert "Simulated time: 0.118246 seconds" in kept.stderr


def test_a_message_within_a_node_is_a_memory_copy(stacks: dict[str, Stack], tmp_path: Path) -> None:
    """Ping-pong between two ranks of one node, 0 B to 1 MiB. Under the patch each message is
    a copy: the node's memory latency plus its size over the memory bandwidth (the platform's
    host properties, platforms.LOOPBACK_LATENCY and LOOPBACK_BANDWIDTH: 0.2 us, 10 GB/s),
    within 5 ns (ns-3's clock and the benchmark's timer); SimGrid's binding sends it as TCP
    segments through the node's router (a handshake per message: 0.86 us for 8 bytes)."""
    own, kept = both_bindings(stacks, tmp_path, 2)
    assert own == pytest.approx(
        [8.605e-07, 8.625e-07, 1.1535e-06, 8.0515e-06, 1.098855e-04], rel=1e-9
    )
    assert kept == pytest.approx(
        [2.045e-07, 2.045e-07, 3.485e-07, 6.7575e-06, 1.050615e-04], rel=1e-9
    )
    copy = [LOOPBACK_LATENCY + size / LOOPBACK_BANDWIDTH for size in PING_PONG_SIZES]
    assert all(0 < time - model < 5e-9 for time, model in zip(kept, copy, strict=True))


def test_a_nodes_transmit_queue_is_not_a_switch_port(
    stacks: dict[str, Stack], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """8 pairs ping-pong across 2 GigE nodes (ranks 0-7 on node 0, 8-15 on node 1), 8 B (which
    opens the connections) then 64 KiB: each node's own transmit queue is where the 8 flows
    queue. With Linux's 1000 packets
    there nothing is lost; with the switch port's 28 frames (the platform without the queue
    properties: SimGrid's binding's behaviour) packets drop and the senders wait timeouts."""
    linux = one_way(stacks["kept"], tmp_path / "linux", 16, 8, 8, 65536)
    monkeypatch.setattr(ns3_network, "NODE_TRANSMIT_QUEUE", "")
    monkeypatch.setattr(ns3_network, "MEMORY_QUEUE", "")
    everywhere = one_way(stacks["kept"], tmp_path / "port", 16, 8, 8, 65536)
    assert linux == pytest.approx([5.16815e-05, 3.808074e-03], rel=1e-9)
    assert everywhere == pytest.approx([5.16815e-05, 6.099412325e-02], rel=1e-9)
