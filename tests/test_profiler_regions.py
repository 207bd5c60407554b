"""Regions (docs/profiler.md, "Regions"): exact calls, bytes, enters and problems of regions marked
with MPI_Pcontrol, nested and unbalanced, from C (native/tests/prof_test_regions.c), Fortran
(prof_test_regions_f.f90 through libesmprof_api.a) and Python (tests/mpi4py_regions.py through
ctypes); a workload's timed loop and phases with its MPI calls in them; and the summary, the store
and the findings showing the timed loop by default. Counts and bytes only, never times."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from esmperf.mpi.build import build_dir
from esmperf.mpi.stacks import discover_stacks
from esmperf.profile.read import read_profile
from esmperf.profile.regions import TIMED, region_paths
from esmperf.profile.summary import summarise
from esmperf.report.profile_data import load_profile_data
from esmperf.store.database import Store
from esmperf.store.profile_tables import profile_tables
from test_profiler_mpi4py import mpi4py_env, mpi4py_path
from test_smpi_profile import homme, smpi  # noqa: F401  (smpi: the fixture)

ESMPERF = Path(sys.executable).parent / "esmperf"
STACKS = [s for s in discover_stacks().stacks if not s.simulated]
IDS = [s.id for s in STACKS]


def profile_of(stack, binary: Path, tmp_path: Path, ranks: int, *args: str, env=None):
    if not binary.is_file():
        pytest.skip(f"{binary} not built")
    out = tmp_path / f"{binary.name}.jsonl"
    command = [
        str(ESMPERF),
        "profile",
        "--out",
        str(out),
        "--stack",
        stack.id,
        "--",
        str(stack.mpirun),
        "-n",
        str(ranks),
        str(binary),
        *args,
    ]
    run = subprocess.run(
        command, capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return read_profile(out)


def regions(rank_record) -> dict[str, dict]:
    return {"/".join(r["path"]): r for r in rank_record["regions"]}


def figures(region) -> dict[str, tuple[int, int, int]]:
    """Calls, sent, received per function, a large-count MPI_X_c counted with MPI_X."""
    out: dict[str, tuple[int, int, int]] = {}
    for name, (calls, _seconds, sent, recv) in region["functions"].items():
        base = name.removesuffix("_c")
        n, s, r = out.get(base, (0, 0, 0))
        out[base] = (n + calls, s + sent, r + recv)
    return out


def problems(rank_record) -> set[tuple[str, str, int]]:
    return {(p["kind"], p["name"], p["count"]) for p in rank_record["region_problems"]}


@pytest.mark.parametrize("stack", STACKS, ids=IDS)
def test_nested_and_unbalanced_regions_in_c(stack, tmp_path):
    profile = profile_of(stack, build_dir(stack) / "tests" / "prof_test_regions", tmp_path, 4)
    for rank in profile.ranks:
        r = rank["rank"]
        bcast = (1, 4, 0) if r == 0 else (1, 0, 4)
        inner = {
            "MPI_Allreduce": (3, 12, 12),
            "MPI_Isend": (1, 8, 0),
            "MPI_Irecv": (1, 0, 8),
            "MPI_Waitall": (1, 0, 0),
            "MPI_Bcast": bcast,
        }
        got = regions(rank)
        assert list(got) == ["outer", "outer/inner", "a", "a/b", "left_open"]
        assert figures(got["outer/inner"]) == inner
        assert figures(got["outer"]) == inner | {"MPI_Barrier": (1, 0, 0)}  # inclusive
        assert figures(got["a"]) == figures(got["a/b"]) == {"MPI_Allreduce": (1, 4, 4)}
        assert figures(got["left_open"]) == {"MPI_Barrier": (1, 0, 0)}
        assert [got[p]["enters"] for p in got] == [1, 2, 1, 1, 1]
        assert [got[p]["open"] for p in got] == [0, 0, 0, 0, 1]
        assert got["outer"]["calls"] == 8 and got["outer"]["sent"] == 12 + 8 + bcast[1]
        # 3 Allreduce and the Bcast of 4 bytes (bucket 3), the ring's 8-byte message both ways
        # (bucket 4), the Barrier (bucket 0)
        assert dict(map(tuple, got["outer"]["hist"])) == {0: 1, 3: 4, 4: 2}
        assert problems(rank) == {
            ("end_without_begin", "nothing", 1),
            ("end_not_innermost", "a", 1),
            ("pcontrol_ignored", "0", 1),
            ("pcontrol_ignored", "1", 2),
            ("open_at_end", "left_open", 1),
        }
        # the whole run still has every call
        assert rank["calls"]["MPI_Barrier"]["calls"] == 2


@pytest.mark.parametrize("stack", STACKS, ids=IDS)
def test_fortran_program_marks_a_region(stack, tmp_path):
    profile = profile_of(stack, build_dir(stack) / "tests" / "prof_test_regions_f", tmp_path, 2)
    for rank in profile.ranks:
        assert list(regions(rank)) == ["ftimed"]
        assert figures(regions(rank)["ftimed"]) == {"MPI_Allreduce": (2, 8, 8)}
        assert rank["calls"]["MPI_Allreduce"]["calls"] == 3
        assert rank["region_problems"] == []


@pytest.mark.parametrize("stack", STACKS, ids=IDS)
def test_python_marks_regions_through_ctypes(stack, tmp_path):
    path = mpi4py_path(stack)
    if path is None:
        pytest.skip(f"no mpi4py for {stack.id}: `make setup-mpi4py` builds it for Debian MPICH")
    script = Path(__file__).with_name("mpi4py_regions.py")
    out = tmp_path / "regions.jsonl"
    command = [
        str(ESMPERF),
        "profile",
        "--out",
        str(out),
        "--stack",
        stack.id,
        "--",
        str(stack.mpirun),
        "-n",
        "2",
        sys.executable,
        str(script),
    ]
    run = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
        env=mpi4py_env(stack, path),
    )
    assert run.returncode == 0, run.stdout + run.stderr
    for rank in read_profile(out).ranks:
        got = regions(rank)
        assert list(got) == ["timed", "timed/step"]
        assert figures(got["timed"]) == {"MPI_Allreduce": (3, 12, 12), "MPI_Barrier": (1, 0, 0)}
        assert figures(got["timed/step"]) == {"MPI_Barrier": (1, 0, 0)}
        assert ("pcontrol_ignored", "0", 1) in problems(rank)  # mpi4py's MPI.Pcontrol(0)


@pytest.fixture(scope="module")
def pop_profile(tmp_path_factory):
    """POP at 2 ranks, 3 timed steps after 1 warm-up step, profiled on the first stack."""
    stack = STACKS[0]
    tmp_path = tmp_path_factory.mktemp("pop")
    return profile_of(
        stack,
        build_dir(stack) / "apps" / "pop" / "pop",
        tmp_path,
        2,
        "--size",
        "S",
        "--steps",
        "3",
        "--warmup",
        "1",
    )


def test_workload_timed_loop_and_phases(pop_profile):
    for rank in pop_profile.ranks:
        got = regions(rank)
        assert set(got) == {
            "baroclinic",
            "barotropic",
            "timed",
            "timed/baroclinic",
            "timed/barotropic",
        }
        assert got["timed"]["enters"] == 1
        assert got["timed/baroclinic"]["enters"] == got["timed/barotropic"]["enters"] == 3
        assert got["baroclinic"]["enters"] == 1  # the warm-up step
        timed = figures(got["timed"])
        assert "MPI_Barrier" not in timed  # the harness's barrier
        assert "MPI_Barrier" in rank["calls"]
        assert timed["MPI_Allreduce"][0] > 0 and timed["MPI_Waitall"][0] > 0
        # every MPI call of the timed loop is in one of its two phases
        parts = [figures(got["timed/baroclinic"]), figures(got["timed/barotropic"])]
        for name, (calls, sent, recv) in timed.items():
            assert (calls, sent, recv) == tuple(
                sum(p.get(name, (0, 0, 0))[k] for p in parts) for k in range(3)
            ), name
        # the halo messages of the baroclinic phase: an Isend per Irecv, Waitall per exchange
        baroclinic = figures(got["timed/baroclinic"])
        assert baroclinic["MPI_Isend"][0] == baroclinic["MPI_Irecv"][0]
        assert baroclinic["MPI_Isend"][1] == baroclinic["MPI_Irecv"][2]
        assert rank["region_problems"] == []


def test_summary_store_and_findings_default_to_the_timed_loop(pop_profile, tmp_path):
    assert TIMED in region_paths(pop_profile)
    summary = summarise(pop_profile)
    assert summary["region"] == TIMED
    shown = {row["function"]: row["calls"] for row in summary["calls_by_time"]}
    assert "MPI_Barrier" not in shown
    timed_calls = sum(regions(r)["timed"]["calls"] for r in pop_profile.ranks)
    assert sum(shown.values()) == timed_calls
    whole = summarise(pop_profile, "all")
    assert whole["region"] is None
    assert any(row["function"] == "MPI_Barrier" for row in whole["calls_by_time"])
    assert summarise(pop_profile, "timed/barotropic")["region"] == "timed/barotropic"
    assert {row["region"] for row in summary["regions"]} == set(region_paths(pop_profile))

    with Store(tmp_path / "s.duckdb") as store:
        for table, columns in profile_tables(pop_profile, "k", 1).items():
            store._insert_columns(table, columns)
        rows = store.rows("SELECT count(*) AS n FROM profile_region WHERE region = 'timed'")
        assert rows[0]["n"] == 2
        data = load_profile_data(store, "k", 1)
        assert data.region == TIMED
        assert "MPI_Barrier" not in data.functions
        assert sum(f["calls"] for f in data.functions.values()) == timed_calls
        assert data.mpi_sum == pytest.approx(
            sum(regions(r)["timed"]["mpi_time"] for r in pop_profile.ranks)
        )
        whole_data = load_profile_data(store, "k", 1, region=None)
        assert whole_data.region is None and "MPI_Barrier" in whole_data.functions


def test_simulated_run_records_regions(smpi, tmp_path):  # noqa: F811 (the fixture)
    """Under SimGrid SMPI the profiler linked into the core records the phases too: HOMME S,
    2 steps (the first is the warm-up), 4 simulated ranks."""
    out = tmp_path / "homme.jsonl"
    homme(smpi, tmp_path, 4, {"ESMPROF_OUT": str(out)})
    for rank in read_profile(out).ranks:
        got = regions(rank)
        for stage in ("rk_stage1", "rk_stage2", "rk_stage3", "rk_stage4"):
            assert got[f"timed/{stage}"]["enters"] == 1
            assert got[stage]["enters"] == 1  # the warm-up step, outside the timed loop
            # all of a stage's MPI is its DSS
            assert figures(got[f"timed/{stage}"]) == figures(got[f"timed/{stage}/dss"])
        assert got["timed/hyperviscosity/dss"]["enters"] == 2
        assert rank["region_problems"] == []


@pytest.mark.parametrize(
    "stack", [s for s in STACKS if s.id in ("openmpi", "mpich")], ids=lambda s: s.id
)
def test_receive_wait_per_region(stack, tmp_path):
    """native/tests/prof_late_sender_exact.c: the calls that completed a receive, per region
    (inclusive), exact in the profile, the summary's regions table, the store and the report's
    figures of a region."""
    binary = build_dir(stack) / "tests" / "prof_late_sender_exact"
    profile = profile_of(stack, binary, tmp_path, 2, "5")  # S = 5 ms: counts only
    waits = [
        {
            path: {name: calls for name, (calls, _) in region.get("recv_wait", {}).items()}
            for path, region in regions(rank).items()
        }
        for rank in profile.ranks
    ]
    assert waits[0] == {
        "cases": {"MPI_Sendrecv": 1, "MPI_Wait": 1, "MPI_Recv": 1, "MPI_Waitall": 1},
        "cases/late": {"MPI_Sendrecv": 1, "MPI_Wait": 1},
        "cases/ontime": {"MPI_Recv": 1},
    }
    assert waits[1] == {"cases": {"MPI_Recv": 1}, "cases/late": {"MPI_Recv": 1}, "cases/ontime": {}}
    for rank in profile.ranks:  # a region's receive wait is within its calls' time
        for region in rank["regions"]:
            for name, (_, seconds) in region.get("recv_wait", {}).items():
                assert 0 < seconds <= region["functions"][name][1]
    rows = {row["region"]: row["receive_wait"] for row in summarise(profile)["regions"]}
    assert {path: (w["calls"], w["per_rank"][1] > 0) for path, w in rows.items()} == {
        "cases": (5, True),
        "cases/late": (3, True),
        "cases/ontime": (1, False),
    }
    assert [r["function"] for r in rows["cases/ontime"]["by_function"]] == ["MPI_Recv"]
    tables = profile_tables(profile, "run-a", 1)
    with Store(tmp_path / "s.duckdb") as store:
        for table, columns in tables.items():
            store._insert_columns(table, columns)
        stored = store.rows(
            "SELECT region, sum(recv_wait_calls) AS calls FROM profile_region_function "
            "GROUP BY region ORDER BY region"
        )
        late = load_profile_data(store, "run-a", 1, region="cases/late")
    assert [(row["region"], row["calls"]) for row in stored] == [
        ("cases", 5),
        ("cases/late", 3),
        ("cases/ontime", 1),
    ]
    assert late.region == "cases/late" and late.receive_wait["calls"] == 3
    assert {row["function"] for row in late.receive_wait["by_function"]} == {
        "MPI_Sendrecv",
        "MPI_Wait",
        "MPI_Recv",
    }


FORTRAN_PCONTROL = """
program fpc
  {use}
  implicit none
  {include}
  integer :: ierr, one, total
  call MPI_Init(ierr)
  one = 1
  call MPI_PCONTROL(1, "fregion")
  call MPI_Allreduce(one, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_PCONTROL(1, "inner   ")
  call MPI_Allreduce(one, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_PCONTROL(-1, "inner")
  call MPI_PCONTROL(-1, "fregion")
  call MPI_Allreduce(one, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
end program fpc
"""


@pytest.mark.parametrize(
    "stack, binding",
    [
        (s, binding)
        for s in STACKS
        if s.id in ("openmpi", "mpich")
        for binding in ("mpif.h", "use mpi")
        if not (binding == "use mpi" and s.id == "openmpi")  # its interface refuses the name
    ],
    ids=lambda value: getattr(value, "id", str(value).replace(" ", "_")),
)
def test_fortran_pcontrol_names_a_region(stack, binding, tmp_path):
    """`call MPI_PCONTROL(1, "name")` from Fortran (IPM's convention), built here with the
    stack's mpifort: the profiler takes the Fortran entry point (Open MPI's Fortran layer calls
    PMPI_Pcontrol, which no C wrapper sees); the trailing blanks of "inner   " are dropped. (A
    level-only call in the same file is refused by gfortran once it has seen two arguments.)"""
    if stack.mpifort is None or not shutil.which("gfortran"):
        pytest.skip(f"no Fortran compiler for {stack.id} (install gfortran)")
    source = tmp_path / "fpc.f90"
    source.write_text(
        FORTRAN_PCONTROL.format(
            use="use mpi" if binding == "use mpi" else "",
            include="include 'mpif.h'" if binding == "mpif.h" else "",
        )
    )
    binary = tmp_path / "fpc"
    built = subprocess.run(
        [str(stack.mpifort), "-o", str(binary), str(source)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 0, built.stderr
    profile = profile_of(stack, binary, tmp_path, 2)
    for rank in profile.ranks:
        assert {path: figures(r) for path, r in regions(rank).items()} == {
            "fregion": {"MPI_Allreduce": (2, 8, 8)},
            "fregion/inner": {"MPI_Allreduce": (1, 4, 4)},
        }
        assert problems(rank) == set()
        assert rank["calls"]["MPI_Allreduce"]["calls"] == 3
