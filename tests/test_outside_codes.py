"""Real codes nobody here wrote, tried as a new user would (docs/outside-codes.md): ecTrans's
benchmark, the OASIS3-MCT tutorial (two programs under one mpirun) and ANUGA, each under
`esmperf profile`, checked against the figures each code fixes or counts itself, never against
a time. Each test skips, saying how to install it, when its code is not installed
(`make setup-outside`; `make test` installs ecTrans and OASIS, not ANUGA)."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from esmperf.mpi.build import build_dir
from esmperf.mpi.stacks import discover_stacks
from esmperf.paths import repo_root
from esmperf.profile.read import read_profile
from esmperf.profile.summary import summarise
from esmperf.report.analysis import build_groups
from esmperf.report.findings import all_findings
from esmperf.report.html import write_report
from esmperf.store.database import Store
from esmperf.store.results import load_results
from esmperf.study.file import load_study

ROOT = repo_root()
ESMPERF = Path(sys.executable).parent / "esmperf"
OPENMPI = next((s for s in discover_stacks().stacks if s.id == "openmpi"), None)
OASIS = ROOT / "build" / "outside" / "oasis"
ANUGA_PYTHON = ROOT / ".venv" / "anuga" / "bin" / "python"
ECTRANS = ["ectrans-benchmark-dp", "-t", "79", "-n", "3", "-f", "5", "-l", "10"]


def need_openmpi_profiler() -> None:
    if OPENMPI is None or not (build_dir(OPENMPI) / "prof" / "libesmprof.so").is_file():
        pytest.skip("the openmpi stack is not built: run `make build`")


def profile(out: Path, command: list[str], cwd: Path) -> str:
    """`esmperf profile --out OUT -- mpirun.openmpi ...` as a user types it; its console."""
    run = subprocess.run(
        [str(ESMPERF), "profile", "--out", str(out), "--", str(OPENMPI.mpirun), *command],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return run.stdout


def test_outside_studies_parse() -> None:
    for name, ranks in (("ectrans", [1, 1, 2, 2]), ("oasis", [2, 4]), ("anuga", [1, 2])):
        study = load_study(ROOT / "studies" / f"{name}.toml")
        assert sorted(c.ranks for c in study.configurations) == ranks
        assert {c.stack for c in study.configurations} == {"openmpi"}
        assert all(c.profile == "once" for c in study.configurations)
    knobs = [c.knobs for c in load_study(ROOT / "studies" / "ectrans.toml").configurations]
    assert sorted(dict(k)["transport"] for k in knobs) == ["shm", "shm", "tcp", "tcp"]


def test_ectrans_alltoallv_count_is_its_own_transposition_count(tmp_path: Path) -> None:
    if shutil.which("ectrans-benchmark-dp") is None:
        pytest.skip("ecTrans is not installed: `make setup-outside` installs ectrans-utils")
    need_openmpi_profiler()
    console = profile(tmp_path / "ectrans.jsonl", ["-n", "2", *ECTRANS], tmp_path)
    # ecTrans's own statistics: each of the 3 inverse+direct pairs transposes M to L and L to M
    own = {
        name: int(calls)
        for name, calls in re.findall(r"- (M to L|L to M) transposition\s+(\d+)", console)
    }
    assert own == {"M to L": 3, "L to M": 3}
    assert re.search(r"^nproc\s+2$", console, re.M)  # one world of 2 ranks, as asked
    ranks = read_profile(tmp_path / "ectrans.jsonl").ranks
    assert len(ranks) == 2
    for rank in ranks:
        alltoallv = rank["calls"]["MPI_Alltoallv"]
        # one MPI_Alltoallv per transposition, all from Fortran (the wrappers' mpif.h entry)
        assert alltoallv["calls"] == sum(own.values()) == 6
        assert alltoallv["lang"] == {"c": 0, "fortran": 6}
    # the T79 / O80 fields of 5 x 10 levels split between 2 ranks: the bytes are fixed
    sent = [rank["calls"]["MPI_Alltoallv"]["sent"] for rank in ranks]
    received = [rank["calls"]["MPI_Alltoallv"]["recv"] for rank in ranks]
    assert sent == received == [23623200, 24005088]
    for rank in ranks:
        # every MPI second is on a communicator: its MPI_Waitall and MPI_Waitany time too, on the
        # communicator of the requests they complete (it went to none: 28.6 ms of 1.16 s shown)
        assert sum(c["time"] for c in rank["comms"]) == pytest.approx(rank["mpi_time"], rel=1e-6)


def test_oasis_tutorial_both_programs_in_one_profile(tmp_path: Path) -> None:
    if not (OASIS / "ocean").is_file() or not (OASIS / "atmos").is_file():
        pytest.skip("the OASIS3-MCT tutorial is not built: run `make setup-outside`")
    need_openmpi_profiler()
    for data in (OASIS / "data").iterdir():
        shutil.copy(data, tmp_path)
    mpmd = ["-np", "1", str(OASIS / "ocean"), ":", "-np", "1", str(OASIS / "atmos")]
    profile(tmp_path / "oasis.jsonl", mpmd, tmp_path)
    # the tutorial ran: each model's own log ends, both received their coupled field
    assert "End of the program" in (tmp_path / "model1.out_100").read_text()
    assert "End of the program" in (tmp_path / "model2.out_101").read_text()
    assert list(tmp_path.glob("FRECVATM_model2_*.nc")) and list(
        tmp_path.glob("FRECVOCN_model1_*.nc")
    )
    profiled = read_profile(tmp_path / "oasis.jsonl")
    assert profiled.header["ranks"] == 2 and profiled.partial is None
    ocean, atmos = profiled.ranks
    # both programs are in the profile: each rank read its own model's grid and wrote its own
    # log and its component's OASIS debug file (01 = model1, the ocean; 02 = model2)
    for rank, mine, other in ((ocean, "1", "2"), (atmos, "2", "1")):
        names = {Path(f["name"]).name: f for f in rank["files"]}
        assert "read" in names[f"grid_model{mine}.nc"] and f"grid_model{other}.nc" not in names
        assert f"model{mine}.out_10{rank['rank']}" in names
        assert f"debug.0{mine}.000000" in names and f"debug.0{other}.000000" not in names
    for rank in (ocean, atmos):
        # OASIS splits the world into one local communicator per model (1 rank each here)
        split = [c for c in rank["comms"] if c["created_by"] == "MPI_Comm_split"]
        assert [c["size"] for c in split] == [1]
        assert rank["calls"]["MPI_Comm_split"]["calls"] == 1
    # each rank names its own program (MPMD), and the summary keeps the models apart
    assert [(rank["command"], rank["appnum"]) for rank in profiled.ranks] == [
        ([str(OASIS / "ocean")], 0),
        ([str(OASIS / "atmos")], 1),
    ]
    assert_models_apart(profiled, ["0", "1"])


def assert_models_apart(profiled, local: list[str]) -> None:
    """The OASIS pair's programs are the ocean's ranks and the atmosphere's, and each model's
    local communicator (MPI_Comm_split by model) is a row of its own, with its members."""
    summary = summarise(profiled)
    ranks = [rank_list(members) for members in local]
    assert [(p["program"], p["ranks"]) for p in summary["programs"]] == [
        ("ocean", ranks[0]),
        ("atmos", ranks[1]),
    ]
    split = [row for row in summary["communicators"] if row["communicator"] == "MPI_Comm_split"]
    assert sorted((row["members"], row["ranks"]) for row in split) == [
        (members, len(rank_list(members))) for members in local
    ]
    for rank in profiled.ranks:  # every MPI second on a communicator, MPI_Waitall's too
        assert sum(c["time"] for c in rank["comms"]) == pytest.approx(rank["mpi_time"], rel=1e-6)


def rank_list(members: str) -> list[int]:
    first, _, last = members.partition("-")
    return list(range(int(first), int(last or first) + 1))


def test_oasis_tutorial_two_plus_two_models_apart(tmp_path: Path) -> None:
    """2 ocean + 2 atmosphere ranks: both models' local communicators were one row (the same
    creating call and size); each is its own row now, and each program its own ranks."""
    if not (OASIS / "ocean").is_file() or not (OASIS / "atmos").is_file():
        pytest.skip("the OASIS3-MCT tutorial is not built: run `make setup-outside`")
    need_openmpi_profiler()
    for data in (OASIS / "data").iterdir():
        shutil.copy(data, tmp_path)
    mpmd = ["--oversubscribe", "-np", "2", str(OASIS / "ocean"), ":"]
    profile(tmp_path / "oasis.jsonl", [*mpmd, "-np", "2", str(OASIS / "atmos")], tmp_path)
    profiled = read_profile(tmp_path / "oasis.jsonl")
    assert [rank["appnum"] for rank in profiled.ranks] == [0, 0, 1, 1]
    assert_models_apart(profiled, ["0-1", "2-3"])


def test_anuga_allreduce_count_is_its_own_time_step_count(tmp_path: Path) -> None:
    if not ANUGA_PYTHON.is_file():
        pytest.skip("ANUGA is not installed: `make setup-outside` installs it into .venv/anuga")
    need_openmpi_profiler()
    driver = ROOT / "scripts" / "anuga_run.py"
    console = profile(
        tmp_path / "anuga.jsonl", ["-n", "2", str(ANUGA_PYTHON), str(driver)], tmp_path
    )
    result = json.loads(next(line for line in console.splitlines() if line.startswith('{"')))
    assert result["verification"]["passed"] is True, result["verification"]
    model = result["model"]
    # the dam break of 3200 triangles runs 30 flux steps to t = 10 s, on any rank count
    assert (model["triangles"], model["number_of_steps"], model["time"]) == (3200, 30, 10.0)
    # ANUGA agrees each step's time step with one MPI_Allreduce and counts them itself
    assert model["calls_to_update_timestep"] == model["number_of_steps"]
    assert result["profiler_regions"] is True
    for rank in read_profile(tmp_path / "anuga.jsonl").ranks:
        [timed] = [region for region in rank["regions"] if region["path"] == ["timed"]]
        functions = timed["functions"]
        assert functions["MPI_Allreduce"][0] == model["calls_to_update_timestep"]
        # one ghost exchange per step and one before the first: Isend, Irecv, Waitall each
        assert [functions[f][0] for f in ("MPI_Isend", "MPI_Irecv", "MPI_Waitall")] == [31] * 3


def test_ectrans_study_end_to_end(tmp_path: Path) -> None:
    """studies/ectrans.toml with 3 repetitions and no warm-up (16 runs, about 20 s), through
    `esmperf study` into a store: every configuration ran as one Open MPI world of its size,
    the profiled repetitions hold ecTrans's fixed communication, and the transport at 1 rank,
    where no message crosses it, is said as a control, not as a finding about the knob. At 3
    repetitions a side the Mann-Whitney test cannot reach p < 0.05, so the control reads quiet
    whatever the load: what is checked is that the study classes it as a control."""
    if shutil.which("ectrans-benchmark-dp") is None:
        pytest.skip("ecTrans is not installed: `make setup-outside` installs ectrans-utils")
    need_openmpi_profiler()
    text = (ROOT / "studies" / "ectrans.toml").read_text()
    repeats = "repeats = { warmup = 1, min = 6, max = 6 }"
    assert repeats in text
    study = tmp_path / "ectrans.toml"
    study.write_text(text.replace(repeats, "repeats = { warmup = 0, min = 3, max = 3 }"))
    store = tmp_path / "ectrans.duckdb"
    run = subprocess.run(
        [str(ESMPERF), "study", str(study), "--out", str(store)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "4 complete, 0 failed, 0 timed out, 0 skipped; 16 runs this time" in run.stdout
    with Store(store, read_only=True) as opened:
        results = load_results(opened)
        groups = build_groups(results, opened.study_info().get("base_ranks"), opened)
        profiles = opened.con.execute(
            "SELECT run_key, ranks, abi, mpi_library FROM profile ORDER BY run_key"
        ).fetchall()
        alltoallv = opened.con.execute(
            "SELECT run_key, rank, calls, calls_fortran, sent, recv FROM profile_function "
            "WHERE function = 'MPI_Alltoallv' ORDER BY run_key, rank"
        ).fetchall()
    by_key = {r.key: r for r in results}
    configurations = sorted((r.ranks, r.knobs["transport"]) for r in results)
    assert configurations == [(1, "shm"), (1, "tcp"), (2, "shm"), (2, "tcp")]
    for r in results:
        assert r.status == "complete" and r.stack == "openmpi"
        assert r.run["mpi_library"].startswith("Open MPI v")
        # each repetition passed the world check (study/world.py): one world of the asked size
        reps = [(x["kind"], x["status"], x["round_number"]) for x in r.repetitions]
        assert reps == [("measure", "ok", n) for n in (1, 2, 3)] + [("profile", "ok", 4)]
        assert len(r.values) == 3 and r.profile_rep == 4
    # the profiled repetition of each configuration: its world, under Open MPI
    assert [(key, ranks, abi) for key, ranks, abi, _ in profiles] == [
        (key, by_key[key].ranks, "openmpi") for key in sorted(by_key)
    ]
    assert all(library.startswith("Open MPI v") for *_, library in profiles)
    # ecTrans's 3 inverse+direct pairs transpose twice each through MPI_Alltoallv at 2 ranks,
    # from Fortran, with the bytes its T79 / O80 split fixes; at 1 rank it never calls it
    two = sorted(key for key in by_key if by_key[key].ranks == 2)
    assert alltoallv == [
        (key, rank, 6, 6, sent, sent)
        for key in two
        for rank, sent in ((0, 23623200), (1, 24005088))
    ]
    found = all_findings(groups, results, 2)
    assert not [f for f in found if f.alarm]
    [control] = [f.text for f in found if f.text.startswith("Control:")]
    assert control.startswith(
        "Control: ectrans: transport=tcp against transport=shm (the interconnect (InfiniBand vs "
        "Ethernet) analog) at 1 rank on openmpi, where it cannot act (no message crosses the "
        "transport on one rank): no significant difference ("
    )
    assert "; 3 interleaved rounds, " in control and control.endswith("as it must.")
    assert " cores busy with other work, load average " in control
    [knob] = [f.text for f in found if f.topic == "knob"]
    assert "at 2 ranks on openmpi" in knob and "at 1 rank" not in knob  # not compared as the knob
    page = write_report(store, tmp_path / "report").read_text()
    assert "class='alarm'" not in page and control.split(" (the ")[0] in page
