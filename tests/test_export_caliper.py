"""Issue 25, item 2: `esmperf export --format caliper` writes one Caliper JSON (json-split)
file per profiled repetition, and Thicket, the real reader, loads a study's runs into one
Thicket with the store's figures: calls and seconds per MPI function per rank, the regions'
tree, the run's metadata under Adiak's names."""

from pathlib import Path

import pytest

from esmperf.store.database import Store
from make_installs import require
from test_cli import assert_fails_with, esmperf
from test_study_fixtures import FakeRun, make_store

try:
    import thicket
except ImportError as error:  # the test extra (pyproject.toml) installs llnl-thicket
    thicket, THICKET_MISSING = None, str(error)

RUNS = [
    FakeRun(1, [10.0], profile=True),  # no regions: the MPI calls sit under the program
    FakeRun(2, [19.0], profile=True, regions=True),
    FakeRun(4, [35.0], profile=True, regions=True, knobs={"OMPI_MCA_btl": "self,tcp"}),
]


@pytest.fixture(scope="module", autouse=True)
def thicket_installed() -> None:
    if thicket is None:
        require(False, f"Thicket (llnl-thicket, the test extra: {THICKET_MISSING})", "setup")


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    folder = tmp_path_factory.mktemp("caliper")
    store = make_store(folder / "study.duckdb", RUNS)
    result = esmperf("export", str(store), "--format", "caliper", "--out", str(folder / "cali"))
    assert result.returncode == 0, result.stderr
    assert "exported 3 profiles as Caliper JSON" in " ".join(result.stdout.split())
    return store, sorted((folder / "cali").glob("*.json"))


def test_thicket_finds_the_stores_calls_and_time_per_function_and_rank(exported) -> None:
    store, files = exported
    assert len(files) == 3
    tk = thicket.Thicket.from_caliper([str(f) for f in files], disable_tqdm=True)
    meta = tk.metadata
    assert sorted(meta["mpi.world.size"]) == [1, 2, 4]
    frame = tk.dataframe.reset_index().dropna(subset=["calls"])
    frame = frame[frame["name"].str.startswith("MPI_")]
    found = frame.groupby(["profile", "rank", "name"])[["calls", "time"]].sum()
    with Store(store, read_only=True) as opened:
        for profile, row in meta.iterrows():
            expected = opened.rows(
                "SELECT rank, function, calls, time FROM profile_function WHERE run_key = ? "
                "AND rep = ? ORDER BY rank, function",
                [row["esmperf.run_key"], int(row["repetition"])],
            )
            assert len(expected) == 3 * row["mpi.world.size"]
            for want in expected:
                calls, seconds = found.loc[(profile, want["rank"], want["function"])]
                assert calls == want["calls"]
                assert seconds == pytest.approx(want["time"], rel=1e-12)


def test_the_regions_tree_merges_across_runs_with_exclusive_and_inclusive_time(exported) -> None:
    _, files = exported
    tk = thicket.Thicket.from_caliper([str(f) for f in files], disable_tqdm=True)
    size = tk.metadata["mpi.world.size"]
    four = size[size == 4].index[0]
    one = size[size == 1].index[0]
    rows = {}
    for (node, profile, rank), row in tk.dataframe.iterrows():
        if rank == 0 and profile in (one, four):
            names = [n.frame["name"] for n in node.path()]
            rows[(profile, "/".join(names))] = (row["calls"], row["time"], row["time (inc)"])
    # 4 ranks: MPI time 4 s a rank; timed 8 s = 2 s halo + 3 s Allreduce + 3 s own;
    # halo 2 s = 0.2 s Isend + 0.8 s Waitall + 1 s own; the program 10 s = 8 s timed + 2 s own
    assert rows[(four, "pop")] == (1, 2.0, 10.0)
    assert rows[(four, "pop/timed")] == (1, 3.0, 8.0)
    assert rows[(four, "pop/timed/MPI_Allreduce")] == (10, 3.0, 3.0)
    assert rows[(four, "pop/timed/halo")] == (10, pytest.approx(1.0), 2.0)
    assert rows[(four, "pop/timed/halo/MPI_Isend")] == (100, pytest.approx(0.2), 0.2)
    assert rows[(four, "pop/timed/halo/MPI_Waitall")] == (100, pytest.approx(0.8), 0.8)
    # the run without regions: its calls under the program, in the same merged tree
    assert rows[(one, "pop")] == (1, 9.0, 10.0)
    assert rows[(one, "pop/MPI_Allreduce")] == (10, 0.75, 0.75)
    assert len(tk.graph) == 9  # pop, its 3 calls, timed, Allreduce, halo, its 2 calls


def test_the_metadata_has_adiaks_names_the_library_the_knobs_and_the_repetition(exported) -> None:
    _, files = exported
    tk = thicket.Thicket.from_caliper([str(f) for f in files], disable_tqdm=True)
    row = tk.metadata[tk.metadata["mpi.world.size"] == 4].iloc[0]
    assert row["jobsize"] == 4 and row["numhosts"] == 1
    assert row["mpi_library"] == "openmpi"
    assert row["mpi_library_version"] == "Open MPI v4.1.4, package: Debian OpenMPI"
    assert row["knob.OMPI_MCA_btl"] == "self,tcp"
    assert row["repetition"] == 2  # one measured repetition, then the profiled one
    assert row["executable"] == "model" and row["cmdline"] == "./model --steps 10"
    assert row["esmperf.workload"] == "pop" and row["esmperf.size"] == "S"
    assert {"Node order", "mpi.rank"}.isdisjoint(tk.exc_metrics + tk.inc_metrics)


def test_a_store_without_profiles_names_the_fix(tmp_path: Path) -> None:
    store = make_store(tmp_path / "plain.duckdb", [FakeRun(2, [1.0, 2.0])])
    assert_fails_with(
        esmperf("export", str(store), "--format", "caliper"),
        f"{store} holds no profile: run the study with profiling on",
    )


def test_by_default_the_files_go_to_a_folder_of_their_own_beside_the_store(exported) -> None:
    store, _ = exported
    assert esmperf("export", str(store), "--format", "caliper").returncode == 0
    folder = store.with_suffix("") / "caliper"
    assert len(list(folder.iterdir())) == 3  # Thicket.from_caliper(folder) reads them all
    tk = thicket.Thicket.from_caliper(str(folder), disable_tqdm=True)
    assert sorted(tk.metadata["mpi.world.size"]) == [1, 2, 4]
