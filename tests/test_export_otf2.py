"""Issue 25, item 2: a trace of `esmperf profile --trace` as OTF2 (`esmperf trace --otf2`,
`esmperf export --format otf2`), read back with Debian's otf2-print (package otf2-tools,
scripts/setup.sh): every message and collective of tests/otf2_mix.c with its bytes and tag, and
the ranks of a split communicator, numbered backwards, mapped to the right processes."""

import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from esmperf.store.database import Store
from make_installs import require
from test_cli import assert_fails_with, esmperf
from test_profiler_traces import STACKS, profiled
from test_study_fixtures import FakeRun, make_store

OTF2_PRINT = shutil.which("otf2-print")
EVENT = re.compile(r"^(\S+)\s+(\d+)\s+\d+\s+(.*)$")


@pytest.fixture
def otf2_print_installed() -> None:
    require(OTF2_PRINT is not None, "otf2-print (Debian otf2-tools)", "setup")


@pytest.fixture(params=STACKS, ids=lambda s: s.id)
def traced(request, tmp_path: Path) -> Path:
    stack = request.param
    binary = tmp_path / "otf2_mix"
    source = Path(__file__).with_name("otf2_mix.c")
    subprocess.run([str(stack.mpicc), "-O2", "-o", str(binary), str(source)], check=True)
    return profiled(stack, tmp_path, binary, "--trace")


def events(anchor: Path) -> list[tuple[str, int, str]]:
    """(event, location, attributes) of every event otf2-print lists."""
    printed = subprocess.run(
        [OTF2_PRINT, str(anchor)], capture_output=True, text=True, check=True, timeout=60
    )
    rows = [EVENT.match(line) for line in printed.stdout.splitlines()]
    return [(m[1], int(m[2]), m[3]) for m in rows if m and m[1].isupper() and m[1] != "EVENT"]


def check_archive(anchor: Path) -> None:
    listed = events(anchor)
    kinds = Counter(kind for kind, _, _ in listed)
    assert kinds["ENTER"] == kinds["LEAVE"]
    ring = [(where, a) for kind, where, a in listed if kind == "ENTER" and '"ring"' in a]
    assert sorted(where for where, _ in ring) == [0, 1, 2, 3]

    def messages(kind: str, who: str) -> set[tuple[int, str, str]]:
        found = set()
        for event, where, attributes in listed:
            if event == kind:
                peer = re.search(who + r': \d+ \("(rank \d) main"', attributes)[1]
                comm = re.search(r'Communicator: "([^"]+)"', attributes)[1]
                tag_length = re.search(r"Tag: (\d+), Length: (\d+)", attributes).groups()
                found.add((where, peer, comm, *tag_length))
        return found

    world = "MPI_COMM_WORLD"
    assert messages("MPI_ISEND", "Receiver") == {
        (r, f"rank {(r + 1) % 4}", world, "7", "128") for r in range(4)
    }
    assert messages("MPI_IRECV", "Sender") == {
        (r, f"rank {(r + 3) % 4}", world, "7", "128") for r in range(4)
    }
    assert kinds["MPI_IRECV_REQUEST"] == 4
    # the halves ordered backwards: rank 0 of the odd half is world rank 3, of the even one 2
    sends = messages("MPI_SEND", "Receiver")
    assert {(where, peer) for where, peer, _, _, _ in sends} == {(3, "rank 1"), (2, "rank 0")}
    receives = messages("MPI_RECV", "Sender")
    assert {(where, peer) for where, peer, _, _, _ in receives} == {(1, "rank 3"), (0, "rank 2")}
    assert {(tag, length) for *_, tag, length in sends | receives} == {("3", "20")}
    assert all(comm.endswith("(2 ranks)") for _, _, comm, _, _ in sends | receives)
    ends = Counter(
        (re.search(r"Operation: (\w+)", a)[1], re.search(r"Sent: (\d+), Received: (\d+)", a)[0])
        for kind, _, a in listed
        if kind == "MPI_COLLECTIVE_END"
    )
    assert ends == {
        ("ALLREDUCE", "Sent: 4, Received: 4"): 4,
        ("BCAST", "Sent: 16, Received: 0"): 1,  # world rank 2, the root
        ("BCAST", "Sent: 0, Received: 16"): 3,
    }
    assert kinds["MPI_COLLECTIVE_BEGIN"] == 8


@pytest.mark.usefixtures("otf2_print_installed")
def test_trace_otf2_maps_every_message_to_its_ranks(traced: Path) -> None:
    archive = traced.parent / "otf2"
    result = esmperf("trace", str(traced), "--otf2", str(archive))
    assert result.returncode == 0, result.stderr
    check_archive(archive / "traces.otf2")
    assert_fails_with(
        esmperf("trace", str(traced), "--otf2", str(archive)),
        f"{archive} exists and is not empty: give a new folder for the OTF2 archive",
    )


@pytest.mark.usefixtures("otf2_print_installed")
def test_export_otf2_writes_an_archive_per_traced_repetition(traced: Path) -> None:
    store = make_store(traced.parent / "study.duckdb", [FakeRun(4, [1.0], profile=True)])
    assert_fails_with(
        esmperf("export", str(store), "--format", "otf2"),
        f"{store} has no traced repetition (no PROFILE.trace/ beside its profiles): set "
        'ESMPROF_TRACE = "1" in the study\'s env',
    )
    with Store(store) as opened:
        opened.con.execute(
            "UPDATE repetition SET profile_file = ? WHERE kind = 'profile'", [str(traced)]
        )
        key = opened.rows("SELECT run_key FROM repetition WHERE kind = 'profile'")[0]["run_key"]
    out = traced.parent / "export"
    for _ in range(2):  # a second export replaces its own archive
        result = esmperf("export", str(store), "--format", "otf2", "--out", str(out))
        assert result.returncode == 0, result.stderr
        assert "exported 1 traces as OTF2 archives" in " ".join(result.stdout.split())
    check_archive(out / f"{key}-rep2" / "traces.otf2")


def test_trace_warns_past_the_perfetto_json_size_limit(traced: Path, monkeypatch, capsys) -> None:
    from esmperf.profile import trace_cli

    monkeypatch.setattr(trace_cli, "PERFETTO_JSON_LIMIT", 1000)  # this trace's JSON: ~7 kB
    args = trace_cli.argparse.Namespace(
        file=traced,
        out=None,
        otf2=None,
        ti=None,
        speed=1e9,
        compute=None,
        replay=None,
        ranks_per_node=1,
    )
    assert trace_cli._trace(args) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert (
        "is over 0 MiB: ui.perfetto.dev and chrome://tracing may fail to load it; serve it with "
        "Perfetto's `trace_processor server http` (docs/profiler.md), or open the OTF2 archive "
        "(--otf2 DIR) in Vampir"
    ) in printed
