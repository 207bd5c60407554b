"""The report of a stored study: the seeds' figures (each performance axis saying which way
is better, oversubscribed points marked), findings with the exact numbers, and a page that
loads in headless Chromium without a JavaScript error."""

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from esmperf.report.html import write_report
from esmperf.report.profile_data import ProfileData
from test_study_fixtures import FakeRun, make_store

SHM = {"transport": "shm"}
TCP = {"transport": "tcp"}
QUIET = [1.0, 1.01, 0.99, 1.005, 0.995, 1.002]  # six repetitions, 1 % spread


def values(level: float) -> list[float]:
    return [level * q for q in QUIET]


RUNS = [
    FakeRun(1, values(10.0), knobs=SHM, profile=True),
    FakeRun(2, values(19.0), knobs=SHM, profile=True),
    FakeRun(4, values(24.0), knobs=SHM, profile=True),
    FakeRun(1, values(10.0), knobs=TCP),
    FakeRun(2, values(15.0), knobs=TCP),
    FakeRun(4, values(16.0), knobs=TCP),
    FakeRun(1, values(11.0), knobs=SHM, stack="mpich"),
    FakeRun(2, values(21.0), knobs=SHM, stack="mpich", killed_after_result=2),
    FakeRun(4, [], knobs=SHM, stack="mpich", status="failed", failure="rank 3: segfault"),
]
FIGURES = (
    "performance",
    "efficiency",
    "gain-transport",
    "gain-stack",
    "libraries",
    "mpi-user",
    "mpi-calls",
    "mpi-time",
    "message-sizes",
    "data-per-rank",
    "aggregated-transfer",
    "timeline",
    "peers",
)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("report")
    store = make_store(directory / "study.duckdb", RUNS)
    return write_report(store)


def test_report_has_the_seeds_figures(report: Path) -> None:
    figures = report.parent / "figures"
    assert sorted(p.name for p in figures.glob("*.svg")) == sorted(
        f"pop-s-{name}.svg" for name in FIGURES
    )
    assert all((figures / f"pop-s-{name}.png").stat().st_size > 1000 for name in FIGURES)
    for name in ("performance", "efficiency", "gain-transport", "gain-stack", "libraries"):
        assert "higher is better" in (figures / f"pop-s-{name}.svg").read_text(), name
    performance = (figures / "pop-s-performance.svg").read_text()
    assert "oversubscribed: ranks &gt; 2 cores" in performance
    assert "ideal (linear) scaling" in performance


def test_report_tables_and_failures(report: Path) -> None:
    page = report.read_text()
    assert "http://" not in page.replace("http://www.w3.org", "")  # nothing to fetch
    assert page.count("<img class='figure-image'") == len(FIGURES)
    assert "<span class='over'>oversubscribed</span>" in page
    assert "rank 3: segfault" in page and "1 failed" in page
    assert "Test CPU" in page and "abc123" in page
    killed = (
        "pop S · mpich · transport=shm · 2 ranks: 2 of 6 repetitions hung after their "
        "result (in MPI_Finalize or teardown) and were killed at the timeout"
    )
    assert (
        f"<li>{killed} (repetitions 1, 2: hung after its result (in MPI_Finalize or "
        "teardown): killed at the 600 s timeout)</li>" in page
    )
    assert "<td class='small'>2 of 6 repetitions hung after their result" in page


def findings_of(report: Path) -> list[str]:
    page = report.read_text()
    return [re.sub(r"\s+", " ", item) for item in re.findall(r"<li>(.*?)</li>", page, re.S)]


def test_findings_state_the_numbers(report: Path) -> None:
    found = "\n".join(findings_of(report))
    assert (
        "pop S, openmpi · transport=shm: MPI takes 10 % of the run time at 1 rank, 20 % of "
        "the run time at 2 ranks, 40 % of the run time at 4 ranks; communication grows with "
        "ranks."
    ) in found
    assert "MPI_Allreduce takes 75 % of MPI time at 4 ranks; next is MPI_Waitall (20 %)" in found
    assert (
        "the most frequent MPI calls at 4 ranks are MPI_Isend (48 %), MPI_Waitall (48 %), "
        "MPI_Allreduce (5 %)"
    ) in found
    assert (  # decided by time: MPI_Allreduce (8 B) and MPI_Isend (1 KiB) take 80 % of it
        "80 % of MPI time is in calls whose messages are all smaller than 4 KiB (MPI_Allreduce "
        "75 %, MPI_Isend 5 %); 100% of the 440 messages at 4 ranks are smaller than 4 KiB (most "
        "common size [1, 2) KiB): by time, latency matters more than bandwidth" in found
    )
    assert "2 ranks: speed-up 1.90x, scaling efficiency 95%" in found
    assert (
        "transport=tcp against transport=shm (the interconnect (InfiniBand vs Ethernet) "
        "analog): 21.1% worse at 2 ranks on openmpi" in found
    )
    assert (  # at 1 rank the transport cannot act: a control, which shows nothing, as it must
        "Control: pop S: transport=tcp against transport=shm (the interconnect (InfiniBand vs "
        "Ethernet) analog) at 1 rank on openmpi, where it cannot act (no message crosses the "
        "transport on one rank): no significant difference (0.0% better, p = 1;" in found
    )
    assert "mpich against openmpi: 10.0% better at 1 rank" in found
    assert "did not complete: pop S · mpich · transport=shm · 4 ranks (failed" in found
    assert (
        "1 configuration had repetitions that printed their verified result and then had "
        "to be killed: pop S · mpich · transport=shm · 2 ranks: 2 of 6 repetitions hung "
        "after their result (in MPI_Finalize or teardown) and were killed at the timeout. "
        "Their figures count; they are listed under Failures."
    ) in found


CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--virtual-time-budget=10000",
]


def test_report_renders_in_headless_chromium(report: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium is not installed (`make setup` installs Debian's chromium as root)")
    with tempfile.TemporaryDirectory(prefix="esmperf-chromium-") as profile:
        result = subprocess.run(
            [
                chromium,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                "--dump-dom",
                report.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    root = re.search(r"<html[^>]*>", result.stdout)
    assert root, result.stderr[-2000:]
    attributes = dict(re.findall(r'([\w-]+)="([^"]*)"', root.group(0)))
    assert attributes["data-ready"] == "yes"
    assert attributes["data-js-errors"] == "0"
    assert attributes["data-figures"] == attributes["data-figures-loaded"] == str(len(FIGURES))
    assert set(attributes["data-figure-kinds"].split()) == {
        "performance",
        "efficiency",
        "gains",
        "stacks",
        "mpi_user",
        "mpi_calls",
        "mpi_time",
        "message_sizes",
        "data_per_rank",
        "aggregated_transfer",
        "timeline",
        "peers",
    }


def test_timeline_share_counts_a_rank_only_until_its_finalize() -> None:
    """Bins of 1 s; rank 0 ran 2.5 s, rank 1 1.5 s: the last bins are partly empty."""
    bins = [
        {"start": float(i), "width": 1.0, "mpi_time": mpi, "io_write": 0.0, "io_read": 0.0}
        for i, mpi in enumerate([1.0, 0.5, 0.25, 0.0])
    ]
    profile = ProfileData(
        ranks=2,
        wall_sum=4.0,
        mpi_sum=1.75,
        functions={},
        histogram={},
        bytes_per_rank=[0.0, 0.0],
        mpi_per_rank=[1.0, 0.75],
        wall_per_rank=[2.5, 1.5],
        peers=[[0.0, 0.0], [0.0, 0.0]],
        bins=bins,
        io_write_per_rank=[0.0, 0.0],
        io_read_per_rank=[0.0, 0.0],
    )
    assert profile.bin_mpi_percent() == pytest.approx([50.0, 100 / 3, 50.0, 0.0], abs=1e-12)
