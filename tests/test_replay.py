"""Replays that are right or say why not (docs/profiler.md, "Replaying a run on a simulated
cluster"): each receive replayed from the source its own completion reported, the collectives
SimGrid's time-independent format has replayed (what is still folded stated as a caveat), a
deadlock or a SimGrid error failing the replay with its message, relative paths, one clear
error for an unknown platform, and the replay of a run on its own platform reproducing its
measured time within the stated tolerance. Synthetic traces check exact actions and exact
simulated times; tests/replay_mix.c checks real runs under each Debian MPI stack."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from esmperf.mpi.stacks import discover_stacks
from esmperf.profile.replay import ReplayError, TiTrace, measured_time, write_ti
from esmperf.profile.replay_run import replay
from esmperf.profile.replay_subcomm import SUBCOMM_TAG
from esmperf.profile.trace import CALL, PEER_BYTES, RECEIVED, Event, RankTrace, read_trace

ESMPERF = Path(sys.executable).parent / "esmperf"
STACKS = [s for s in discover_stacks().stacks if not s.simulated and s.id in ("openmpi", "mpich")]
needs_simgrid = pytest.mark.skipif(not shutil.which("smpirun"), reason="SimGrid is not installed")
GIGE_LATENCY, GIGE_BANDWIDTH = 50e-6, 1e9 / 8 * 1448 / 1538  # platforms.INTERCONNECTS["gige"]
OVERHEAD = 16  # bytes SMPI 3.32 adds to every message (platforms.MESSAGE_OVERHEAD_BYTES)
PRINTED = 5e-6  # smpirun prints the simulated time to 6 significant digits: half the last one


def call(name: str, t0: int, t1: int, **fields) -> Event:
    """An MPI call of the main thread on MPI_COMM_WORLD (communicator id 0)."""
    f = {"sent": 0, "recv": 0, "req": 0, "peer": -1, "src": -1, "tag": 0, "comm": 0} | fields
    return Event(CALL, name, 0, t0, t1, f["sent"], f["recv"], f["req"], f["peer"], f["src"],
                 f["tag"], f["comm"], 0.0)  # fmt: skip


def received(at: int, req: int, src: int, tag: int, nbytes: int) -> Event:
    """A receive completed at `at` (its status: source, tag), by the call that ended then."""
    return Event(RECEIVED, "MPI_Waitall", 0, at, at, 0, nbytes, req, -1, src, tag, 0, 0.0)


def rank_trace(rank: int, ranks: int, wall: float, events: list[Event]) -> RankTrace:
    header = {
        "rank": rank,
        "ranks": ranks,
        "wall": wall,
        "host": "one-host",
        "init_mono": 0.0,
        "cpu": False,
        "comms": [{"id": 0, "size": ranks, "world": True}],
    }
    return RankTrace(header, sorted(events, key=lambda e: (e.t0, e.t1)))


def any_source_pair() -> list[RankTrace]:
    """Rank 0 posts two MPI_ANY_SOURCE receives (requests 11, 12) and completes both in one
    MPI_Waitall, whose own event names the last source (1); request 11 got rank 2's message
    (256 bytes, sent at 1 ms), request 12 rank 1's (128 bytes, sent at 2 ms)."""
    ms = 1_000_000
    return [
        rank_trace(
            0,
            3,
            0.003,
            [
                call("MPI_Irecv", 0, 1000, req=11, tag=5),
                call("MPI_Irecv", 1000, 2000, req=12, tag=5),
                call("MPI_Waitall", 2000, 3 * ms, req=12, src=1, recv=384),
                received(3 * ms, 11, 2, 5, 256),
                received(3 * ms, 12, 1, 5, 128),
            ],
        ),  # fmt: skip
        rank_trace(
            1, 3, 0.002001, [call("MPI_Send", 2 * ms, 2 * ms + 1000, peer=0, tag=5, sent=128)]
        ),  # fmt: skip
        rank_trace(2, 3, 0.001001, [call("MPI_Send", ms, ms + 1000, peer=0, tag=5, sent=256)]),
    ]


def actions(folder: Path, rank: int) -> list[str]:
    return (folder / f"rank-{rank}.txt").read_text().splitlines()


@needs_simgrid
def test_any_source_receives_of_one_waitall_take_their_own_sources(tmp_path):
    ti = write_ti(any_source_pair(), tmp_path / "ti")
    assert actions(tmp_path / "ti", 0) == [
        "0 init",
        "0 irecv 2 5 256",
        "0 irecv 1 5 128",
        "0 waitall",
        "0 finalize",
    ]
    assert actions(tmp_path / "ti", 1) == ["1 init", "1 compute 2000000", "1 send 0 5 128",
                                           "1 finalize"]  # fmt: skip
    assert not ti.not_replayed
    # gige, a rank per node: rank 0 is done when rank 1's message, sent at 2 ms, has arrived
    result = replay(ti, "gige", count_messages=True)
    assert result.messages == 2
    expected = 0.002 + GIGE_LATENCY + (128 + OVERHEAD) / GIGE_BANDWIDTH
    assert result.simulated_time == pytest.approx(expected, rel=PRINTED)


def peer(rank: int, to: int, sent: int, recv: int) -> Event:
    """An alltoallv's bytes to and from one peer, written after the call that ends at 10 ns."""
    return Event(PEER_BYTES, "MPI_Alltoallv", 0, 10, 10, sent, recv, 0, to, -1, 0, 0, 0.0)


V_COLLECTIVES = {  # 2 ranks: each one's events; rank 1's part (3,000 or 6,000 bytes) the biggest
    "allgatherv": [[call("MPI_Allgatherv", 0, 10, sent=1000, recv=4000)],
                   [call("MPI_Allgatherv", 0, 10, sent=3000, recv=4000)]],
    "gatherv": [[call("MPI_Gatherv", 0, 10, sent=1000, recv=4000)],
                [call("MPI_Gatherv", 0, 10, sent=3000)]],
    "scatterv": [[call("MPI_Scatterv", 0, 10, sent=4000, recv=1000)],
                 [call("MPI_Scatterv", 0, 10, recv=3000)]],
    "reducescatter": [[call("MPI_Reduce_scatter", 0, 10, sent=4000, recv=1000)],
                      [call("MPI_Reduce_scatter", 0, 10, sent=4000, recv=3000)]],
    "alltoallv": [[call("MPI_Alltoallv", 0, 10, sent=2100, recv=6100), peer(0, 0, 100, 100),
                   peer(0, 1, 2000, 6000)],
                  [call("MPI_Alltoallv", 0, 10, sent=6200, recv=2200), peer(1, 0, 6000, 2000),
                   peer(1, 1, 200, 200)]],
}  # fmt: skip
V_ACTIONS = {
    "allgatherv": "0 allgatherv 1000 1000 3000",
    "gatherv": "0 gatherv 1000 1000 3000 0",
    "scatterv": "0 scatterv 1000 3000 1000 0",
    "reducescatter": "0 reducescatter 1000 3000 0",
    "alltoallv": "0 alltoallv 2100 100 2000 6100 100 6000",
}


@needs_simgrid
@pytest.mark.parametrize("verb", V_COLLECTIVES)
def test_v_collectives_replay_with_every_ranks_counts(tmp_path, verb):
    """On gige, a rank per node, the two ranks' messages cross at once (full-duplex links): the
    collective takes the latency and the biggest message's time, exactly."""
    traces = [rank_trace(r, 2, 0.0, events) for r, events in enumerate(V_COLLECTIVES[verb])]
    ti = write_ti(traces, tmp_path / "ti")
    assert actions(tmp_path / "ti", 0) == ["0 init", V_ACTIONS[verb], "0 finalize"]
    assert not ti.not_replayed
    biggest = 6000 if verb == "alltoallv" else 3000
    expected = GIGE_LATENCY + (biggest + OVERHEAD) / GIGE_BANDWIDTH
    assert replay(ti, "gige").simulated_time == pytest.approx(expected, rel=PRINTED)


def test_waitsome_waits_for_each_receive_it_completed(tmp_path):
    """MPI_Waitsome completing two receives (requests 21 and 22, from ranks 1 and 2): a wait for
    each, not only for the last."""
    ms = 1_000_000
    traces = [
        rank_trace(
            0,
            3,
            0.003,
            [
                call("MPI_Irecv", 0, 1000, req=21, peer=1, tag=4),
                call("MPI_Irecv", 1000, 2000, req=22, peer=2, tag=4),
                call("MPI_Waitsome", 2000, 3 * ms, req=22, src=2, recv=16),
                received(3 * ms, 21, 1, 4, 8),
                received(3 * ms, 22, 2, 4, 8),
            ],
        ),  # fmt: skip
        *(
            rank_trace(r, 3, 0.001, [call("MPI_Send", 0, 10, peer=0, tag=4, sent=8)])
            for r in (1, 2)
        ),
    ]
    write_ti(traces, tmp_path / "ti")
    assert actions(tmp_path / "ti", 0)[3:5] == ["0 wait 1 0 4", "0 wait 2 0 4"]


@needs_simgrid
def test_a_deadlocked_replay_fails_with_simgrids_message(tmp_path):
    """Each rank receives first: SimGrid says "Deadlock detected" and smpirun exits 0; the
    replay fails, naming the ranks left waiting, instead of printing a simulated time."""
    traces = [
        rank_trace(r, 2, 0.001, [call("MPI_Recv", 0, 10**6, peer=1 - r, src=1 - r, recv=8)])
        for r in (0, 1)
    ]
    ti = write_ti(traces, tmp_path / "ti")
    with pytest.raises(ReplayError, match=r"^the replay deadlocked .*ranks still waiting: 0, 1\)"):
        replay(ti, "gige")


@needs_simgrid
def test_a_simgrid_error_fails_the_replay_with_its_message(tmp_path):
    (tmp_path / "rank-0.txt").write_text("0 init\n0 bogus 5\n0 finalize\n")
    (tmp_path / "traces.txt").write_text(f"{tmp_path / 'rank-0.txt'}\n")
    with pytest.raises(ReplayError) as error:
        replay(TiTrace(tmp_path / "traces.txt", 1, 1e9), "gige")
    assert str(error.value) == (
        "smpirun -replay failed (exit 134), no simulated time: [root/CRITICAL] Replay Error: "
        "action bogus is unknown, please register it properly in the replay engine"
    )


@needs_simgrid
def test_collectives_on_a_sub_communicator_replay_as_their_messages(tmp_path):
    """Ranks 1-3 of 4 in one communicator (id 1): every collective SimGrid's replay has, as
    the messages of a linear algorithm among the three; rank 0 takes no part."""
    members = (1, 2, 3)
    calls = [  # name, per member: (sent, recv)
        ("MPI_Barrier", [(0, 0)] * 3),
        ("MPI_Bcast", [(0, 100), (100, 0), (0, 100)]),  # root: member 1, world rank 2
        ("MPI_Reduce", [(8, 8), (8, 0), (8, 0)]),  # root: member 0
        ("MPI_Gatherv", [(1, 0), (2, 0), (3, 6)]),  # root: member 2
        ("MPI_Scatterv", [(9, 2), (0, 3), (0, 4)]),  # root: member 0
        ("MPI_Allgatherv", [(5, 18), (6, 18), (7, 18)]),
        ("MPI_Alltoall", [(30, 30)] * 3),
        ("MPI_Reduce_scatter", [(24, 8)] * 3),
        ("MPI_Scan", [(16, 16)] * 3),
        ("MPI_Exscan", [(16, 16)] * 3),
    ]
    comms = [{"id": 0, "size": 4, "world": True}, {"id": 1, "size": 3, "world": False,
                                                   "members": list(members)}]  # fmt: skip
    traces = [rank_trace(0, 4, 0.001, [])]
    for m, rank in enumerate(members):
        events = [call(name, 10 * k, 10 * k + 5, sent=row[m][0], recv=row[m][1], comm=1)
                  for k, (name, row) in enumerate(calls)]  # fmt: skip
        traces.append(rank_trace(rank, 4, 0.001, events))
    for trace in traces:
        trace.header["comms"] = comms
    ti = write_ti(traces, tmp_path / "ti")
    assert ti.point_to_point == {name: 3 for name, _ in calls}
    assert not ti.not_replayed
    # messages: barrier 2 + 2, bcast 2, reduce 2, gatherv 2, scatterv 2, allgatherv 6,
    # alltoall 6, reduce_scatter 2 + 2, scan 2, exscan 2
    assert ti.messages == 32
    tag = SUBCOMM_TAG
    two = actions(tmp_path / "ti", 2)
    assert two[two.index(f"2 isend 1 {tag} 100") + 1] == f"2 isend 3 {tag} 100"  # bcast
    assert f"2 recv 1 {tag} 16" in two and f"2 send 3 {tag} 16" in two  # scan's chain
    assert replay(ti, "gige", count_messages=True).messages == 32


def test_alltoallv_without_per_peer_counts_is_folded_and_said(tmp_path):
    """A trace written before the profiler recorded an alltoallv's per-peer counts."""
    traces = [rank_trace(r, 2, 0.001, [call("MPI_Alltoallv", 0, 1000, sent=80, recv=80)])
              for r in (0, 1)]  # fmt: skip
    ti = write_ti(traces, tmp_path / "ti")
    assert ti.not_replayed == {"MPI_Alltoallv (no per-peer counts in the trace)": 2}
    assert ti.caveat().startswith("2 calls not replayed, their measured time counted as")


def test_an_unknown_platform_is_one_clear_error(tmp_path):
    run = subprocess.run(
        [str(ESMPERF), "trace", "p.jsonl", "--replay", "gig"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=os.environ | {"COLUMNS": "400"},
    )
    assert run.returncode == 1
    assert run.stderr.splitlines() == [
        "error: unknown platform 'gig' for --replay (platforms: own (the trace's own), gige, "
        "10gige, ib-qdr, ib-fdr, ib-hdr, ib-ndr, roce-100, roce-200, slingshot-11, efa; "
        "see docs/simulate.md)"
    ]


def traced_mix(stack, tmp_path: Path, ranks: int) -> tuple[Path, str]:
    """tests/replay_mix.c run under esmperf profile --trace: the profile and the run's output."""
    binary = tmp_path / "replay_mix"
    source = Path(__file__).with_name("replay_mix.c")
    subprocess.run([str(stack.mpicc), "-O2", "-o", str(binary), str(source)], check=True)
    command = [str(ESMPERF), "profile", "--trace", "--out", "p.jsonl", "--",
               str(stack.mpirun), "-n", str(ranks), str(binary)]  # fmt: skip
    run = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    return tmp_path / "p.jsonl", run.stdout


def replay_own(tmp_path: Path) -> str:
    """`esmperf trace p.jsonl --replay own` from the profile's folder, the path relative."""
    run = subprocess.run(
        [str(ESMPERF), "trace", "p.jsonl", "--replay", "own"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=os.environ | {"COLUMNS": "400"},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


@needs_simgrid
@pytest.mark.parametrize("stack", STACKS, ids=lambda s: s.id)
def test_real_mix_replays_every_source_and_v_collective(stack, tmp_path):
    traced_mix(stack, tmp_path, 4)
    out = replay_own(tmp_path)
    ti = tmp_path / "p.jsonl.ti"
    zero = actions(ti, 0)
    assert zero.count("0 irecv 1 5 128") == zero.count("0 irecv 2 5 256") == 3
    for i in range(4):
        lines = actions(ti, i)
        counts = [64 * (i + 1) * (j + 1) for j in range(4)]
        row = " ".join(map(str, counts))
        assert lines.count(f"{i} alltoallv {sum(counts)} {row} {sum(counts)} {row}") == 3
        assert lines.count(f"{i} allgatherv {128 * (i + 1)} 128 256 384 512") == 3
        assert f"{i} gatherv {8 * (i + 2)} 16 24 32 40 3" in lines
        assert f"{i} scatterv 24 48 72 96 {24 * (i + 1)} 1" in lines
        assert f"{i} reducescatter 8 16 24 32 0" in lines
        assert f"{i} scan 40 0" in lines and f"{i} exscan 48 0" in lines
        p, tag = (i + 2) % 4, SUBCOMM_TAG  # the alltoallv on half of the ranks, pairwise
        at = lines.index(f"{i} isend {p} {tag} {32 * (i + 1)}")
        assert lines[at + 1 : at + 4] == [f"{i} irecv {p} {tag} {32 * (p + 1)}",
                                          f"{i} wait {i} {p} {tag}", f"{i} wait {p} {i} {tag}"]  # fmt: skip
    assert re.search(r"replay on its own platform \(1 node, 4 ranks\): simulated \S+ s", out)
    for i in range(4):  # the allreduce on half of the ranks: to its first member and back
        first, other, tag = i % 2, i % 2 + 2, SUBCOMM_TAG
        fan = (
            [f"irecv {other} {tag} 8", f"wait {other} {first} {tag}"]
            + [f"isend {other} {tag} 8", f"wait {first} {other} {tag}"]
            if i == first
            else [f"isend {first} {tag} 8", f"wait {other} {first} {tag}"]
            + [f"irecv {first} {tag} 8", f"wait {first} {other} {tag}"]
        )
        lines = [line.split(" ", 1)[1] for line in actions(ti, i) if "compute" not in line]
        assert fan == lines[lines.index(fan[0]) : lines.index(fan[0]) + 4]
    assert (
        "note: 8 collectives on communicators other than MPI_COMM_WORLD's group replayed as the "
        "point-to-point messages of a linear algorithm (SimGrid's replay has collectives on "
        "MPI_COMM_WORLD only): MPI_Allreduce 4, MPI_Alltoallv 4"
    ) in out.splitlines()
    assert (
        "caveat: 8 calls not replayed, their measured time counted as computation "
        "(docs/profiler.md, Replaying a run): MPI_Comm_split 4, MPI_Comm_free 4"
    ) in out.splitlines()


@needs_simgrid
@pytest.mark.parametrize("stack", STACKS, ids=lambda s: s.id)
def test_replay_on_its_own_platform_reproduces_the_measured_run(stack, tmp_path):
    """Tolerance (docs/profiler.md): the replay is within 1 % + 2 ms of the measured run, less
    the time its ranks waited for a CPU inside MPI calls (replay_mix.c prints it), which the
    replay, a core per rank, does not have. 2 ranks: one per core of this machine."""
    profile, output = traced_mix(stack, tmp_path, 2)
    waited = sum(int(n) for n in re.findall(r"mpi_run_delay_ns (\d+)", output)) * 1e-9
    assert len(re.findall(r"mpi_run_delay_ns", output)) == 2
    measured = measured_time(read_trace(profile))
    simulated = float(re.search(r"simulated (\S+) s", replay_own(tmp_path)).group(1))
    slack = 0.01 * measured + 0.002
    assert measured - waited - slack <= simulated <= measured + slack
