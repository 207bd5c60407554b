"""The Veros demo (studies/veros.toml, scripts/veros_run.py): the study file parses and plans
Veros at 1-2-4 ranks on Open MPI, profiled; and when Veros is installed (`make setup-veros`),
one short profiled run at 2 ranks checks Veros's own verification, the same global state as at
1 rank, and exact receive-wait counts (every MPI_Recv completes a receive)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from esmperf.launch.mpirun import mpirun_command, run_environment
from esmperf.mpi.build import build_dir
from esmperf.mpi.stacks import discover_stacks
from esmperf.paths import repo_root
from esmperf.profile.read import read_profile
from esmperf.study.file import load_study
from esmperf.study.plan import plan_study
from esmperf.workloads import load_workloads

ROOT = repo_root()
VEROS_PYTHON = ROOT / ".venv" / "veros" / "bin" / "python"
DRIVER = ROOT / "scripts" / "veros_run.py"
ESMPERF = Path(sys.executable).parent / "esmperf"
OPENMPI = next((s for s in discover_stacks().stacks if s.id == "openmpi"), None)


def test_veros_study_plans_1_2_4_ranks_profiled(tmp_path: Path) -> None:
    study = load_study(ROOT / "studies" / "veros.toml")
    assert study.name == "veros"
    configs = study.configurations
    assert [(c.workload, c.kind, c.stack, c.ranks, c.size, c.steps) for c in configs] == [
        ("veros", "command", "openmpi", ranks, "S", 5) for ranks in (1, 2, 4)
    ]
    assert all(c.profile == "once" and c.fom.source == "json" for c in configs)
    if OPENMPI is None:
        pytest.skip("Open MPI is not installed here (make setup installs it)")
    if not VEROS_PYTHON.exists():
        pytest.skip("Veros is not installed: `make setup-veros` installs it into .venv/veros")
    plan = plan_study(study, [OPENMPI], load_workloads(), tmp_path / "veros.duckdb")
    for planned, ranks in zip(plan, (1, 2, 4), strict=True):
        assert planned.skip_reason is None
        argv = planned.argv
        assert argv[:3] == [str(OPENMPI.mpirun), "-n", str(ranks)]
        assert Path(argv[-6]).resolve() == VEROS_PYTHON.resolve()
        assert Path(argv[-5]).resolve() == DRIVER.resolve()
        assert argv[-4:] == ["--size", "S", "--steps", "5"]
        assert planned.profiler is not None


def veros_run(ranks: int, tmp_path: Path, profile: Path | None = None) -> dict:
    command = mpirun_command(OPENMPI, ranks, [str(VEROS_PYTHON), str(DRIVER), "--steps", "1"])
    if profile:
        command = [str(ESMPERF), "profile", "--out", str(profile), "--", *command]
    run = subprocess.run(
        command,
        env=run_environment(OPENMPI, os.environ),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return json.loads([line for line in run.stdout.splitlines() if line.startswith('{"')][0])


def test_veros_runs_verified_and_profiled(tmp_path: Path) -> None:
    if not VEROS_PYTHON.is_file():
        pytest.skip("Veros is not installed: run `make setup-veros`")
    if OPENMPI is None or not (build_dir(OPENMPI) / "prof" / "libesmprof.so").is_file():
        pytest.skip("the openmpi stack is not built: run `make build`")
    alone = veros_run(1, tmp_path)
    profiled = veros_run(2, tmp_path, tmp_path / "veros.jsonl")
    for result in (alone, profiled):
        assert result["verification"]["passed"] is True, result["verification"]
        assert result["model"]["itt"] == 2  # the warm-up step and 1 timed step
    assert profiled["decomposition"] == [1, 2] and profiled["profiler_regions"] is True
    # the decomposition changes only the rounding of the global state
    assert profiled["model"]["mean_temperature"] == pytest.approx(
        alone["model"]["mean_temperature"], rel=1e-12
    )
    assert profiled["model"]["kinetic_energy"] == pytest.approx(
        alone["model"]["kinetic_energy"], rel=1e-9
    )
    ranks = read_profile(tmp_path / "veros.jsonl").ranks
    assert len(ranks) == 2
    for rank in ranks:
        recv = rank["calls"]["MPI_Recv"]
        assert recv["calls"] > 0 and recv["recv_wait"][0] == recv["calls"]
    sent, received = ranks[0]["peers"]["sent"]["1"], ranks[1]["peers"]["recv"]["0"]
    assert sent == received  # bytes and messages 0 -> 1, both sides
