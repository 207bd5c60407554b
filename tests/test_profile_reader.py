"""The profile reader on synthetic files, and the summary's figures on a known profile."""

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import call, header, rank_record, small_ranks, write_profile
from esmperf.profile.read import ProfileError, read_profile
from esmperf.profile.summary import bucket_label, summarise


def test_round_trip(tmp_path: Path) -> None:
    head, ranks = header(3), small_ranks()
    profile = read_profile(write_profile(tmp_path / "p.jsonl", head, ranks))
    assert profile.header == head
    assert profile.ranks == ranks


def test_ranks_come_back_in_rank_order(tmp_path: Path) -> None:
    ranks = small_ranks()
    profile = read_profile(write_profile(tmp_path / "p.jsonl", header(3), ranks[::-1]))
    assert [rank["rank"] for rank in profile.ranks] == [0, 1, 2]


def _text(content: str) -> Callable[[Path], Path]:
    def make_file(path: Path) -> Path:
        path.write_text(content)
        return path

    return make_file


@pytest.mark.parametrize(
    ("make_file", "message"),
    [
        (lambda p: p, "no such profile file"),
        (_text(""), "is empty"),
        (_text('{"format": "esmperf-profile",\n'), "line 1 is not JSON"),
        (_text('{"format": "other"}\n'), "is not an esmperf profile"),
        (_text("[1, 2]\n"), "line 1 is not a JSON object"),
        (
            lambda p: write_profile(p, header(3, version=2), small_ranks()),
            "newer esmperf (format version 2",
        ),
        (
            lambda p: write_profile(p, header(3, state="running"), [], trailer=False),
            "did not reach MPI_Finalize",
        ),
        (
            lambda p: write_profile(p, header(3), small_ranks(), trailer=False),
            "truncated: no trailer line (3 of 3 rank lines)",
        ),
        (lambda p: write_profile(p, header(3), small_ranks()[:2]), "missing rank lines (2 of 3"),
        (
            lambda p: write_profile(p, header(3), small_ranks()[:2] + small_ranks()[1:2]),
            "line 4 repeats rank 1",
        ),
        (lambda p: write_profile(p, header(2), small_ranks()), "rank 2 is outside 0..1"),
    ],
    ids=[
        "missing",
        "empty",
        "not-json",
        "not-esmperf",
        "not-object",
        "newer-version",
        "running",
        "no-trailer",
        "missing-rank",
        "duplicate-rank",
        "rank-out-of-range",
    ],
)
def test_bad_files_give_one_clear_error(
    tmp_path: Path, make_file: Callable[[Path], Path], message: str
) -> None:
    path = make_file(tmp_path / "bad.jsonl")
    with pytest.raises(ProfileError, match=re.escape(message)):
        read_profile(path)


def test_garbage_in_the_middle_names_its_line(tmp_path: Path) -> None:
    path = write_profile(tmp_path / "p.jsonl", header(3), small_ranks())
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = "\0" * 40 + "\n"  # a hole left by a rank that never wrote its line
    path.write_text("".join(lines))
    with pytest.raises(ProfileError, match="line 3 is not JSON"):
        read_profile(path)


def test_4096_ranks_read_and_summarise(tmp_path: Path) -> None:
    functions = [
        "MPI_Send",
        "MPI_Irecv",
        "MPI_Wait",
        "MPI_Allreduce",
        "MPI_Bcast",
        "MPI_Isend",
        "MPI_Waitall",
        "MPI_Barrier",
        "MPI_Reduce",
        "MPI_Alltoall",
    ]
    ranks = [
        rank_record(
            rank,
            wall=60.0,
            mpi_time=6.0 + rank % 7,
            bins=60,
            calls={
                name: call(1000, 0.5, sent=8000 * (i + 1), recv=rank, hist=[[4, 900], [14, 100]])
                for i, name in enumerate(functions)
            },
        )
        for rank in range(4096)
    ]
    path = write_profile(tmp_path / "big.jsonl", header(4096), ranks)
    summary = summarise(read_profile(path))
    assert summary["ranks"] == 4096
    assert summary["bytes_per_rank"]["max_rank"] == 4095


@pytest.mark.parametrize(
    ("bucket", "label"),
    [
        (0, "0 B"),
        (1, "1 B"),
        (2, "2-3 B"),
        (3, "4-7 B"),
        (4, "8-15 B"),
        (10, "512-1023 B"),
        (11, "[1, 2) KiB"),
        (13, "[4, 8) KiB"),
        (20, "[512 KiB, 1 MiB)"),
        (21, "[1, 2) MiB"),
    ],
)
def test_bucket_labels(bucket: int, label: str) -> None:
    assert bucket_label(bucket) == label


def test_summary_figures(small_profile: Path) -> None:
    summary = summarise(read_profile(small_profile))
    assert summary["command"] == "./model --steps 10"
    assert summary["ranks"] == 3
    assert summary["mpi_library"] == "Open MPI v4.1.4, package: Debian OpenMPI"
    assert summary["wall_time"] == 10.0
    assert summary["mpi_percent"] == pytest.approx(100 * 6 / 27)
    assert summary["mpi_time_imbalance"] == pytest.approx(1.5)
    assert summary["bytes_per_rank"] == {
        "min": 9,
        "min_rank": 1,
        "median": 32,
        "max": 2448,
        "max_rank": 0,
    }
    assert summary["transfer"] == {"sent": 417, "recv": 2072}
    by_time = [(row["function"], row["time"], row["calls"]) for row in summary["calls_by_time"]]
    assert by_time == [
        ("MPI_Allreduce", 3.0, 2),
        ("MPI_Send", 1.25, 5),
        ("MPI_Recv", 1.15, 6),
        ("MPI_Barrier", 0.6, 1),
        ("MPI_File_write", 0.0, 1),
    ]
    assert summary["calls_by_time"][0]["percent_of_mpi_time"] == pytest.approx(50.0)
    assert summary["calls_by_time"][1]["avg_time"] == pytest.approx(0.25)
    by_count = [(row["function"], row["calls"]) for row in summary["calls_by_count"]]
    assert by_count[:3] == [("MPI_Recv", 6), ("MPI_Send", 5), ("MPI_Allreduce", 2)]
    assert summary["calls_by_count"][0]["percent_of_calls"] == pytest.approx(100 * 6 / 15)
    sizes = [(row["label"], row["messages"]) for row in summary["message_sizes"]]
    assert sizes == [
        ("0 B", 1),
        ("1 B", 1),
        ("2-3 B", 4),
        ("8-15 B", 2),
        ("64-127 B", 4),
        ("[1, 2) KiB", 2),
        ("[512 KiB, 1 MiB)", 1),
    ]
    world = summary["communicators"][0]
    assert (world["communicator"], world["ranks"], world["calls"], world["time"]) == (
        "MPI_COMM_WORLD",
        3,
        14,
        6.0,
    )
    assert summary["communicators"][1]["communicator"] == "MPI_Comm_split"
    assert summary["io"]["mpiio_write_bytes"] == 1 << 19
    assert summary["io"]["posix_write"] == {"calls": 3, "bytes": 300, "time": pytest.approx(0.003)}
    assert summary["profiler_overhead"]["calls"] == 15
    assert summary["profiler_overhead"]["ns_per_call"] == 20.0
    assert summary["fortran_warning"] == "Fortran calls bypass the wrappers"
    json.dumps(summary)  # `esmperf show --json` prints exactly this
