"""Exact late-sender time from a trace (src/esmperf/profile/late_sender.py) on a C program whose
receives are late or on time by construction (native/tests/prof_late_sender_exact.c): counts
exact, times bounded by the program's own sleep S (never by the machine's speed), and on a
crafted trace the figures to the nanosecond."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from esmperf.mpi.build import build_dir
from esmperf.mpi.stacks import discover_stacks
from esmperf.profile.late_sender import late_sender
from esmperf.profile.read import read_profile
from esmperf.profile.summary import summarise
from esmperf.profile.trace import CALL, RECEIVED, Event, RankTrace, read_trace
from esmperf.store.profile_tables import profile_tables

ESMPERF = Path(sys.executable).parent / "esmperf"
DEBIAN_STACKS = [s for s in discover_stacks().stacks if s.id in ("openmpi", "mpich")]
SLEEP_MS = 100


def event(kind: int, name: str, t0: int, t1: int, **fields: int) -> Event:
    values = {"sent": 0, "recv": 0, "req": 0, "peer": -1, "src": -1, "tag": 0, "comm": 0}
    return Event(kind, name, 0, t0, t1, cpu_gap=0.0, **(values | fields))


def rank(number: int, events: list[Event], mono: float = 100.0, host: str = "h") -> RankTrace:
    header = {"rank": number, "ranks": 2, "init_mono": mono, "init_epoch": 5.0, "host": host}
    return RankTrace(header | {"lost": 0}, sorted(events, key=lambda e: (e.t0, e.t1)))


def test_crafted_trace_exact() -> None:
    """Rank 1 starts MPI_Init 1 us after rank 0 (init_mono). Rank 0: MPI_Recv entered at 1000
    ns, the send (tag 7) starts at 4000 on its clock, 5000 on rank 0's: late 4000 ns. MPI_Irecv tag 8 and
    tag 9, one MPI_Waitall entered at 10,000: the tag-8 send started at 9,000 (on time), the
    tag-9 send at 16,000 (late 6,000 ns; the call's time is 6,000, not 6,000 + 0). An MPI_Test
    completes a receive of tag 10 whose send started later: matched, never late."""
    r0 = [
        event(CALL, "MPI_Recv", 1000, 6000, peer=1, tag=7),
        event(RECEIVED, "MPI_Recv", 6000, 6000, src=1, tag=7),
        event(CALL, "MPI_Irecv", 7000, 7100, peer=1, tag=8, req=11),
        event(CALL, "MPI_Irecv", 7200, 7300, peer=1, tag=9, req=12),
        event(CALL, "MPI_Waitall", 10000, 17000, req=12),
        event(RECEIVED, "MPI_Waitall", 17000, 17000, src=1, tag=8, req=11),
        event(RECEIVED, "MPI_Waitall", 17000, 17000, src=1, tag=9, req=12),
        event(CALL, "MPI_Irecv", 18000, 18100, peer=1, tag=10, req=13),
        event(CALL, "MPI_Test", 30000, 30100, req=13),
        event(RECEIVED, "MPI_Test", 30100, 30100, src=1, tag=10, req=13),
    ]
    r1 = [
        event(CALL, "MPI_Send", 4000, 4100, peer=0, tag=7),
        event(CALL, "MPI_Send", 8000, 8100, peer=0, tag=8),
        event(CALL, "MPI_Isend", 15000, 15100, peer=0, tag=9, req=5),
        event(CALL, "MPI_Send", 20000, 20100, peer=0, tag=10),
        event(CALL, "MPI_Send", 21000, 21100, peer=0, tag=11),  # never received
    ]
    late = late_sender([rank(0, r0), rank(1, r1, mono=100.000001)])
    assert late["receive_late"] == [
        (0, 1, 7, 4000),
        (0, 1, 8, 0),
        (0, 1, 9, 6000),
        (0, 1, 10, 0),
    ]
    assert (late["calls"], late["receives"], late["late_receives"]) == (2, 4, 2)
    assert late["time"] == pytest.approx(10000e-9, abs=1e-15)
    assert [(r["function"], r["calls"]) for r in late["by_function"]] == [
        ("MPI_Waitall", 1),
        ("MPI_Recv", 1),
    ]
    assert (late["unmatched_sends"], late["unmatched_receives"], late["impossible"]) == (1, 0, 0)
    assert late["clock"] == "one host"
    hosts = late_sender([rank(0, r0, host="a"), rank(1, r1, mono=100.000001, host="b")])
    assert hosts["clock"] == "2 hosts" and hosts["late_receives"] == 2  # same epochs: 1 us less
    assert hosts["receive_late"][0] == (0, 1, 7, 3000)


def test_any_source_any_tag_match_by_status() -> None:
    """A receive posted with MPI_ANY_SOURCE and MPI_ANY_TAG is matched by its status."""
    r0 = [
        event(CALL, "MPI_Recv", 0, 900, peer=-1, tag=-1),
        event(RECEIVED, "MPI_Recv", 900, 900, src=1, tag=3),
    ]
    r1 = [event(CALL, "MPI_Send", 300, 310, peer=0, tag=3)]
    assert late_sender([rank(0, r0), rank(1, r1)])["receive_late"] == [(0, 1, 3, 300)]


@pytest.mark.parametrize("stack", DEBIAN_STACKS, ids=lambda s: s.id)
def test_late_sender_from_trace(stack, tmp_path: Path) -> None:
    binary = build_dir(stack) / "tests" / "prof_late_sender_exact"
    if not binary.is_file():
        pytest.skip(f"{binary} not built: run `make build`")
    out = tmp_path / "late.jsonl"
    run = subprocess.run(
        [
            str(ESMPERF),
            "profile",
            "--trace",
            "--out",
            str(out),
            "--",
            str(stack.mpirun),
            "-n",
            "2",
            str(binary),
            str(SLEEP_MS),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    s = SLEEP_MS * 1e-3
    traces = read_trace(out)
    late = late_sender(traces)
    assert late["clock"] == "one host" and late["lost_events"] == 0
    assert (late["receives"], late["unmatched_receives"], late["unmatched_sends"]) == (6, 0, 0)
    assert late["impossible"] == 0
    by_receive = {(r, source, tag): ns * 1e-9 for r, source, tag, ns in late["receive_late"]}
    assert sorted(by_receive) == [(0, 1, 1), (0, 1, 2), (0, 1, 3), (0, 1, 4), (0, 1, 5), (1, 0, 9)]
    # Late by causality: the sender's sleep S starts after the receiver entered the Sendrecv
    # (tag 1), or after it entered the barrier before its Wait or Waitall (tags 2 and 5).
    calls = [e for e in traces[0].events if e.kind == CALL]

    def since_barrier(function: str) -> float:
        """Rank 0's time from entering the barrier before `function` to entering it."""
        at = next(i for i, e in enumerate(calls) if e.name == function)
        barrier = max(i for i, e in enumerate(calls[:at]) if e.name == "MPI_Barrier")
        return (calls[at].t0 - calls[barrier].t0) * 1e-9

    assert by_receive[(0, 1, 1)] >= s
    assert by_receive[(0, 1, 2)] >= s - since_barrier("MPI_Wait") and by_receive[(0, 1, 2)] > 0
    assert by_receive[(0, 1, 5)] >= s - since_barrier("MPI_Waitall") and by_receive[(0, 1, 5)] > 0
    # On time by causality (the send started before the receiver left a barrier): exactly 0.
    assert by_receive[(0, 1, 3)] == by_receive[(0, 1, 4)] == by_receive[(1, 0, 9)] == 0
    assert (late["late_receives"], late["late_receives_per_rank"], late["calls"]) == (3, [3, 0], 3)
    assert sorted((r["function"], r["calls"]) for r in late["by_function"]) == [
        ("MPI_Sendrecv", 1),
        ("MPI_Wait", 1),
        ("MPI_Waitall", 1),
    ]
    # The upper bound holds: each late call's time is within its receive wait.
    summary = summarise(read_profile(out))
    wait = {row["function"]: row["time"] for row in summary["receive_wait"]["by_function"]}
    for row in late["by_function"]:
        assert row["time"] <= wait[row["function"]]
    assert summary["late_sender"]["late_receives"] == 3 and late["time"] >= s
    assert summary["late_sender"]["time"] <= summary["receive_wait"]["time"]
    shown = subprocess.run(
        [str(ESMPERF), "show", str(out)],
        capture_output=True,
        text=True,
        env=os.environ | {"COLUMNS": "250"},
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    assert "in 3 calls, 3 of 6 receives late (exact, from the trace; clocks: one host)" in (
        shown.stdout
    )
    tables = profile_tables(read_profile(out), "run-a", 1)
    row = {name: values[0] for name, values in tables["profile_efficiency"].items()}
    assert (row["late_sender_calls"], row["late_receives"]) == (3, 3)
    assert row["late_sender"] == pytest.approx(late["time"])
