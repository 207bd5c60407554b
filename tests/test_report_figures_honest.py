"""Issue 26, item 7, the report's profile figures and findings: "latency matters more than
bandwidth" is decided by MPI time when the profile can split it by size (and says it counts
messages otherwise); the aggregated transfer leaves out what ranks sent to themselves; the
peer matrix's colour scale starts at zero. (Size labels that do not overlap: test_bucket_labels
in test_profile_reader.py.)"""

import re
from pathlib import Path

from esmperf.profile.summary import bucket_label
from esmperf.report.profile_charts import matrix_figure
from esmperf.report.profile_data import ProfileData, load_profile_data
from esmperf.report.profile_findings import message_findings
from esmperf.store.database import Store
from test_study_fixtures import FakeRun, make_store

MIB = 2**20


def profile(functions: dict[str, float], sizes: dict[str, dict[int, int]]) -> ProfileData:
    histogram: dict[int, int] = {}
    for buckets in sizes.values():
        for bucket, messages in buckets.items():
            histogram[bucket] = histogram.get(bucket, 0) + messages
    return ProfileData(
        ranks=4,
        wall_sum=40.0,
        mpi_sum=sum(functions.values()),
        functions={
            n: {"calls": 1.0, "time": t, "sent": 0.0, "recv": 0.0} for n, t in functions.items()
        },
        histogram=histogram,
        bytes_per_rank=[0.0] * 4,
        mpi_per_rank=[0.0] * 4,
        wall_per_rank=[10.0] * 4,
        peers=[[0.0] * 4 for _ in range(4)],
        bins=[],
        io_write_per_rank=[0.0] * 4,
        io_read_per_rank=[0.0] * 4,
        function_sizes=sizes,
    )


def test_latency_or_bandwidth_is_decided_by_time() -> None:
    # ecTrans-like: 40 Alltoallv messages of 4-8 MiB take 55 % of MPI time; 960 small
    # Allreduces 10 %; MPI_Waitall (no message size) 35 %
    data = profile(
        {"MPI_Alltoallv": 5.5, "MPI_Allreduce": 1.0, "MPI_Waitall": 3.5},
        {"MPI_Alltoallv": {23: 40}, "MPI_Allreduce": {4: 960}},
    )
    [finding] = message_findings("pop S", "pop", 4, data)
    assert finding.text == (
        "pop S: 55 % of MPI time is in calls whose messages are all 4 KiB or larger "
        "(MPI_Alltoallv 55 %); 96% of the 1000 messages at 4 ranks are smaller than 4 KiB "
        "(most common size 8-15 B): by time, bandwidth matters more than latency."
    )
    small = profile(
        {"MPI_Allreduce": 6.0, "MPI_Bcast": 1.0, "MPI_Send": 3.0},
        {"MPI_Allreduce": {4: 10}, "MPI_Bcast": {5: 10}, "MPI_Send": {22: 30}},
    )
    [finding] = message_findings("pop S", "pop", 4, small)
    assert finding.text.startswith(
        "pop S: 70 % of MPI time is in calls whose messages are all smaller than 4 KiB "
        "(MPI_Allreduce 60 %, MPI_Bcast 10 %); 40% of the 50 messages"
    )
    assert finding.text.endswith(": by time, latency matters more than bandwidth.")


def test_a_finding_that_cannot_split_the_time_says_it_counts_messages() -> None:
    data = profile(
        {"MPI_Isend": 1.0, "MPI_Irecv": 0.5, "MPI_Waitall": 8.5},
        {"MPI_Isend": {4: 600, 23: 10}, "MPI_Irecv": {4: 600, 23: 10}},
    )
    [finding] = message_findings("pop S", "pop", 4, data)
    assert finding.text == (
        "pop S: 98% of the 1220 messages at 4 ranks are smaller than 4 KiB (most common size "
        "8-15 B): counted by messages, not time, latency matters more than bandwidth (only 0 % "
        "of MPI time is in calls whose messages are all on one side of 4 KiB: the rest, in "
        "calls of both sizes or of none such as MPI_Waitall, is not split by size)."
    )


def test_the_aggregated_transfer_leaves_out_sends_to_self(tmp_path: Path) -> None:
    # test_study_fixtures.profile_ranks: each rank sends 100 x 1 KiB to its right neighbour
    # (itself at 1 rank) and 80 B in MPI_Allreduce
    path = make_store(
        tmp_path / "s.duckdb", [FakeRun(1, [1.0], profile=True), FakeRun(2, [1.0], profile=True)]
    )
    with Store(path, read_only=True) as store:
        profiled = store.rows(
            "SELECT run.ranks, run_key, rep FROM repetition JOIN run USING (run_key) "
            "WHERE repetition.kind = 'profile' ORDER BY run.ranks"
        )
        transfer = [load_profile_data(store, r["run_key"], r["rep"]).transfer for r in profiled]
        sizes = load_profile_data(store, profiled[1]["run_key"], profiled[1]["rep"]).function_sizes
    assert transfer == [80.0, 2 * (80.0 + 102400.0)]
    assert sizes == {"MPI_Allreduce": {4: 20}, "MPI_Isend": {11: 200}}


def test_the_peer_matrix_scale_starts_at_zero() -> None:
    # every pair near 1 MiB, a rank's sends to itself 0.9 MiB: the scale is 0 to 1 MiB, so
    # 0.9 MiB does not read as the bottom of the scale (nothing)
    figure = matrix_figure("peers", "peers", [[0.9 * MIB, 1.0 * MIB], [0.95 * MIB, 0.9 * MIB]])
    ticks = re.findall(r">([0-9.]+)<", figure.svg.decode())
    assert ticks[-6:] == ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]


def test_size_labels_do_not_overlap() -> None:
    assert [bucket_label(b) for b in (10, 11, 12, 23)] == [
        "512-1023 B",
        "[1, 2) KiB",
        "[2, 4) KiB",
        "[4, 8) MiB",
    ]
