"""Traces and call sites (docs/profiler.md "Traces", "Call sites"), under each Debian MPI stack:
exact event counts in the trace and in its Perfetto JSON, nested and unclosed regions, a SimGrid
replay that runs and sends as many messages as the trace has, and call counts per source line
of native/tests/prof_test_c.c. Counts only, never times."""

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from esmperf.mpi.build import build_dir
from esmperf.mpi.stacks import discover_stacks
from esmperf.profile.callsites import callsites
from esmperf.profile.read import read_profile
from esmperf.profile.replay import write_ti
from esmperf.profile.replay_run import replay
from esmperf.profile.trace import CALL, ENTER, EXIT, read_trace

ROOT = Path(__file__).resolve().parents[1]
ESMPERF = Path(sys.executable).parent / "esmperf"
STACKS = [s for s in discover_stacks().stacks if not s.simulated and s.id in ("openmpi", "mpich")]
STEPS = 5  # tests/trace_mix.c


def profiled(stack, tmp_path: Path, binary: Path, *options: str, args: tuple[str, ...] = ()):
    out = tmp_path / "p.jsonl"
    command = [
        str(ESMPERF),
        "profile",
        *options,
        "--out",
        str(out),
        "--",
        str(stack.mpirun),
        "-n",
        "4",
        str(binary),
        *args,
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    return out


def trace_mix(stack, tmp_path: Path) -> Path:
    binary = tmp_path / "trace_mix"
    source = Path(__file__).with_name("trace_mix.c")
    subprocess.run([str(stack.mpicc), "-O2", "-g", "-o", str(binary), str(source)], check=True)
    return binary


@pytest.fixture(params=STACKS, ids=lambda s: s.id)
def stack(request):
    return request.param


def test_trace_counts_regions_and_perfetto_json(stack, tmp_path):
    out = profiled(stack, tmp_path, trace_mix(stack, tmp_path), "--trace")
    profile = read_profile(out)
    traces = read_trace(out)
    assert [t.rank for t in traces] == [0, 1, 2, 3]
    for trace, record in zip(traces, profile.ranks):
        calls = Counter(e.name for e in trace.events if e.kind == CALL)
        assert calls == Counter({name: c["calls"] for name, c in record["calls"].items()})
        assert calls["MPI_Isend"] == calls["MPI_Irecv"] == calls["MPI_Allreduce"] == STEPS
        assert trace.header["lost"] == 0
        enters = Counter(e.name for e in trace.events if e.kind == ENTER)
        exits = Counter(e.name for e in trace.events if e.kind == EXIT)
        assert enters == {"step": STEPS, "halo": STEPS, "tail": 1}
        assert exits == {"step": STEPS, "halo": STEPS}
        isends = [e for e in trace.events if e.name == "MPI_Isend"]
        assert [e.sent for e in isends] == [8 * (128 + s) for s in range(STEPS)]
        assert {(e.peer, e.tag) for e in isends} == {((trace.rank + 1) % 4, 7)}
        irecvs = [e for e in trace.events if e.name == "MPI_Irecv"]
        assert {(e.peer, e.tag) for e in irecvs} == {((trace.rank + 3) % 4, 7)}
        assert all(e.t0 <= e.t1 for e in trace.events)
    chrome = tmp_path / "p.perfetto.json"
    run = subprocess.run(
        [str(ESMPERF), "trace", str(out), "--out", str(chrome)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    document = json.loads(chrome.read_text())
    phases = Counter(e["ph"] for e in document["traceEvents"])
    total_calls = sum(c["calls"] for r in profile.ranks for c in r["calls"].values())
    assert phases["X"] == total_calls
    assert phases["B"] == 4 * (2 * STEPS + 1)
    assert phases["E"] == 4 * (2 * STEPS + 1)  # "tail" closed at each rank's end
    assert phases["M"] == 4 * 3  # process name, sort index, thread name
    assert {e["pid"] for e in document["traceEvents"]} == {0, 1, 2, 3}
    sends = [e for e in document["traceEvents"] if e.get("name") == "MPI_Isend" and e["pid"] == 2]
    assert [e["args"]["sent"] for e in sends] == [8 * (128 + s) for s in range(STEPS)]


@pytest.mark.skipif(not shutil.which("smpirun"), reason="SimGrid's smpirun is not installed")
def test_trace_replays_with_the_traces_messages(stack, tmp_path):
    out = profiled(stack, tmp_path, trace_mix(stack, tmp_path), "--trace-cpu")
    traces = read_trace(out)
    assert all(t.header["cpu"] for t in traces)
    ti = write_ti(traces, tmp_path / "ti")
    sends = sum(1 for t in traces for e in t.events if e.name in ("MPI_Isend", "MPI_Send"))
    assert sends == 4 * STEPS + 1
    assert ti.messages == sends
    assert ti.actions["allreduce"] == 4 * STEPS and ti.actions["bcast"] == 4
    assert ti.actions["barrier"] == 4 and ti.actions["waitall"] == 4 * STEPS
    assert (tmp_path / "ti" / "rank-1.txt").read_text().count("bcast 80 1\n") == 1  # root: 1
    assert (tmp_path / "ti" / "rank-1.txt").read_text().count("recv 0 9 24\n") == 1
    result = replay(ti, "gige", count_messages=True)
    assert result.messages == sends
    assert result.simulated_time > 0
    cpu = write_ti(traces, tmp_path / "ti-cpu", compute="cpu")  # computation from CPU time
    assert (cpu.messages, cpu.actions) == (ti.messages, ti.actions)
    assert replay(cpu, "gige", count_messages=True).messages == sends


def site_calls(ranks) -> Counter:
    """(function, 'prof_test_c.c:LINE') -> calls over all ranks."""
    out: Counter = Counter()
    for site in callsites(ranks):
        location = site["stack"][0].split()[-1]
        out[(site["function"], location)] += site["calls"]
    return out


def test_callsites_count_calls_per_source_line(stack, tmp_path):
    binary = build_dir(stack) / "tests" / "prof_test_c"
    if not binary.is_file():
        pytest.skip(f"{binary} not built")
    out = profiled(stack, tmp_path, binary, "--callsites", "1", args=(str(tmp_path),))
    ranks = read_profile(out).ranks
    for record in ranks:  # every call has a site: per function, the sites add up to the calls
        per_function = Counter()
        for site in record["callsites"]["sites"]:
            per_function[site["function"]] += site["calls"]
        assert per_function == Counter({n: c["calls"] for n, c in record["calls"].items()})
    got = site_calls(ranks)
    source = (ROOT / "native" / "tests" / "prof_test_c.c").read_text().splitlines()

    def at(function: str, k: int) -> str:
        """The site of the k-th call of `function` in prof_test_c.c (0 = the first)."""
        lines = [n for n, text in enumerate(source, 1) if function + "(" in text]
        return f"prof_test_c.c:{lines[k]}"

    expected = {
        ("MPI_Send", at("MPI_Send", 0)): 2,
        ("MPI_Recv", at("MPI_Recv", 0)): 2,  # even ranks send first
        ("MPI_Recv", at("MPI_Recv", 1)): 2,
        ("MPI_Send", at("MPI_Send", 1)): 2,
        ("MPI_Irecv", at("MPI_Irecv", 0)): 4,
        ("MPI_Isend", at("MPI_Isend", 0)): 4,
        ("MPI_Waitall", at("MPI_Waitall", 0)): 4,
        ("MPI_Irecv", at("MPI_Irecv", 1)): 4,
        ("MPI_Irecv", at("MPI_Irecv", 2)): 4,
        ("MPI_Send", at("MPI_Send", 2)): 4,
        ("MPI_Send", at("MPI_Send", 3)): 4,
        ("MPI_Waitany", at("MPI_Waitany", 0)): 8,
        ("MPI_Startall", at("MPI_Startall", 0)): 12,
        ("MPI_Waitall", at("MPI_Waitall", 1)): 12,
        ("MPI_Start", at("MPI_Start", 0)): 8,
        ("MPI_Start", at("MPI_Start", 1)): 8,
        ("MPI_Wait", at("MPI_Wait", 0)): 8,
        ("MPI_Wait", at("MPI_Wait", 1)): 8,
        ("MPI_Allreduce", at("MPI_Allreduce", 0)): 4,
        ("MPI_Bcast", at("MPI_Bcast", 0)): 4,
        ("MPI_Barrier", at("MPI_Barrier", 0)): 4,
        ("MPI_Allreduce", at("MPI_Allreduce", 1)): 4,
        ("MPI_Sendrecv", at("MPI_Sendrecv", 0)): 4,
        ("MPI_Isend", at("MPI_Isend", 1)): 4,
        ("MPI_Mrecv", at("MPI_Mrecv", 0)): 4,
        ("MPI_Wait", at("MPI_Wait", 2)): 4,
        ("MPI_Barrier", at("MPI_Barrier", 1)): 4,
        ("MPI_Sendrecv", at("MPI_Sendrecv", 1)): 80,  # 2 threads x 10
        ("MPI_Put", at("MPI_Put", 0)): 4,
        ("MPI_Get", at("MPI_Get", 0)): 4,
    }
    assert {key: got[key] for key in expected} == expected
    assert got[("MPI_Reduce", at("MPI_Reduce", 0))] + got[("MPI_Reduce", at("MPI_Reduce", 1))] == 4


@pytest.mark.skipif(not shutil.which("smpirun"), reason="SimGrid's smpirun is not installed")
def test_known_mix_replays_persistent_and_sendrecv_messages(stack, tmp_path):
    """prof_test_c.c: per rank 3 Send, 2 Isend, 5 persistent sends started, 1 Sendrecv on the
    main thread (the 2 threads' 20 Sendrecv are not replayed: one actor per rank), and the
    MPI_Allreduce on the halves (even, odd ranks) as messages: 2 per half, to its first
    member and back."""
    binary = build_dir(stack) / "tests" / "prof_test_c"
    if not binary.is_file():
        pytest.skip(f"{binary} not built")
    out = profiled(stack, tmp_path, binary, "--trace", args=(str(tmp_path),))
    ti = write_ti(read_trace(out), tmp_path / "ti")
    assert ti.messages == 4 * (3 + 2 + 5 + 1) + 2 * 2
    assert ti.point_to_point == {"MPI_Allreduce": 4}
    assert ti.not_replayed["MPI_Sendrecv (threads)"] == 4 * 20
    assert replay(ti, "ib-qdr", count_messages=True).messages == ti.messages


def test_sigterm_leaves_a_partial_trace(tmp_path):
    """tests/io_and_wait.py (mpi4py, 2 ranks) killed while waiting: each rank's trace is written
    by the signal helper, marked partial, with the 7 MPI_Sendrecv calls it made."""
    from test_profiler_partial_files import STACKS as MPI4PY_STACKS
    from test_profiler_partial_files import rank_pids, sigterm_every_rank, start

    stack = MPI4PY_STACKS[0]
    run = start(stack, tmp_path, wait=True, ESMPROF_TRACE="1")
    sigterm_every_rank(rank_pids(tmp_path, run))  # the launcher held until each rank ended
    run.communicate(timeout=120)
    traces = read_trace(tmp_path / "p.jsonl")
    assert [t.header["partial"] for t in traces] == ["SIGTERM", "SIGTERM"]
    lines = {rank["rank"]: rank for rank in read_profile(tmp_path / "p.jsonl").ranks}
    for trace in traces:  # the trace is written after the rank line, to the moment it is written
        assert trace.header["wall"] >= lines[trace.header["rank"]]["wall"] > 0
        calls = Counter(e.name for e in trace.events if e.kind == CALL)
        assert calls["MPI_Sendrecv"] + calls["MPI_Sendrecv_c"] == 7
