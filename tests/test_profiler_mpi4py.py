"""A Python program that loads MPI late and locally (mpi4py, imported with RTLD_LOCAL) profiled
without any workaround, on every stack that has an mpi4py: exact calls and bytes of
tests/mpi4py_mix.py at 4 ranks. Under MPICH mpi4py calls the MPI-4 large-count `_c` functions,
which the profiler wraps; MPI-4 libraries also run Isendrecv and a persistent Allreduce."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from esmperf.mpi.stacks import discover_stacks
from esmperf.profile.read import read_profile

ROOT = Path(__file__).resolve().parent.parent
ESMPERF = Path(sys.executable).parent / "esmperf"
MIX = Path(__file__).with_name("mpi4py_mix.py")
STACKS = [s for s in discover_stacks().stacks if not s.simulated]


def mpi4py_path(stack) -> str | None:
    """PYTHONPATH giving this stack an mpi4py, "" for the venv's wheel, None when there is none."""
    if stack.id == "mpich":  # Debian MPICH: built from source (make setup-mpi4py)
        prefix = ROOT / ".venv" / "mpi4py" / "mpich"
        return str(prefix) if (prefix / "mpi4py" / "__init__.py").is_file() else None
    try:
        import mpi4py  # noqa: F401  (the test extra's wheel: Open MPI and the MPI wheels)
    except ImportError:
        return None
    return ""


def mpi4py_env(stack, path: str) -> dict[str, str]:
    """The environment running mpi4py on `stack`: its PYTHONPATH, and for a stack in its own
    prefix (the MPI wheels) the libmpi the mpi4py wheel must load (MPI4PY_LIBMPI; by default it
    finds the system's libmpi.so, Debian's Open MPI)."""
    env = dict(os.environ, PYTHONPATH=path)
    env.pop("LD_PRELOAD", None)
    libdir = Path(stack.bin_dir).parent / "lib"
    if stack.id.endswith("-pypi"):
        libmpi = sorted(libdir.glob("libmpi.so.[0-9]*"))
        if libmpi:
            env["MPI4PY_LIBMPI"] = str(libmpi[0])
    return env


def merged_calls(rank_record) -> dict[str, tuple[int, int, int]]:
    """Calls, sent, received per function, a large-count MPI_X_c counted with MPI_X."""
    out: dict[str, tuple[int, int, int]] = {}
    for name, c in rank_record["calls"].items():
        base = name[:-2] if name.endswith("_c") else name
        n, s, r = out.get(base, (0, 0, 0))
        out[base] = (n + c["calls"], s + c["sent"], r + c["recv"])
    return out


def expected(rank: int, mpi4: bool) -> dict[str, tuple[int, int, int]]:
    figures = {
        "MPI_Comm_rank": (4, 0, 0),
        "MPI_Comm_size": (2, 0, 0),
        "MPI_Sendrecv": (10, 1000, 1000),
        "MPI_Isend": (5, 1000, 0),
        "MPI_Irecv": (5, 0, 1000),  # 200 real bytes of 1000 posted
        "MPI_Waitall": (5, 0, 0),
        "MPI_Allreduce": (10, 80, 80),
        "MPI_Bcast": (3, 192, 0) if rank == 0 else (3, 0, 192),
    }
    if mpi4:
        figures |= {
            "MPI_Isendrecv": (4, 200, 200),
            "MPI_Allreduce_init": (1, 0, 0),
            "MPI_Start": (3, 48, 48),
            "MPI_Wait": (7, 0, 0),
            "MPI_Request_free": (1, 0, 0),
        }
    return figures


@pytest.mark.parametrize("stack", STACKS, ids=[s.id for s in STACKS])
def test_mpi4py_program_counts(stack, tmp_path):
    path = mpi4py_path(stack)
    if path is None:
        pytest.skip(f"no mpi4py for {stack.id}: `make setup-mpi4py` builds it for Debian MPICH")
    out = tmp_path / "mix.jsonl"
    env = mpi4py_env(stack, path)
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
        "4",
        sys.executable,
        str(MIX),
    ]
    run = subprocess.run(
        command, capture_output=True, text=True, timeout=180, cwd=tmp_path, env=env
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "symbol lookup error" not in run.stderr
    mpi4 = "mpi4=1" in run.stdout
    profile = read_profile(out)
    assert profile.header["state"] == "complete"
    binding = profile.header["mpi_binding"]
    assert binding["loaded_locally"] is True  # Python loaded libmpi with RTLD_LOCAL
    used = {
        "MPI_Send",
        "MPI_Sendrecv",
        "MPI_Isend",
        "MPI_Irecv",
        "MPI_Allreduce",
        "MPI_Bcast",
        "MPI_Isendrecv",
        "MPI_Allreduce_init",
        "MPI_Start",
        "MPI_Wait",
        "MPI_Waitall",
    }
    missed = [n for n in binding["unwrapped_communicating"] if n.removesuffix("_c") in used]
    assert missed == []
    for rank in profile.ranks:
        assert merged_calls(rank) == expected(rank["rank"], mpi4), f"rank {rank['rank']}"
    if stack.id == "mpich":  # mpi4py built on MPICH 4 takes the large-count entry points
        assert "MPI_Sendrecv_c" in profile.ranks[0]["calls"]
        assert mpi4
        # the one communicating export left unwrapped is listed at start-up and in the header
        assert binding["unwrapped_communicating"] == ["MPI_Pready_list"]
        assert "not wrapped" in run.stderr and "MPI_Pready_list" in run.stderr
        assert binding["wrapped"] == binding["exported"] - len(
            binding["unwrapped_communicating"]
        ) - len(binding["unwrapped_local"])


@pytest.mark.parametrize("stack", STACKS, ids=[s.id for s in STACKS])
def test_spawned_jobs_write_their_own_linked_profiles(stack, tmp_path):
    """tests/mpi4py_spawn.py: 1 parent rank spawns 2 children and sends each 3 x 40 bytes."""
    path = mpi4py_path(stack)
    if path is None:
        pytest.skip(f"no mpi4py for {stack.id}: `make setup-mpi4py` builds it for Debian MPICH")
    program = [str(stack.mpirun), "-n", "1", sys.executable, str(MIX.with_name("mpi4py_spawn.py"))]
    env = mpi4py_env(stack, path)
    out = tmp_path / "parent.jsonl"
    (tmp_path / "parent.spawn7.jsonl").write_text("stale, from an earlier run\n")
    run = subprocess.run(
        [str(ESMPERF), "profile", "--out", str(out), "--stack", stack.id, "--", *program],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
        env=env,
    )
    if run.returncode != 0:
        bare = subprocess.run(
            program, capture_output=True, text=True, timeout=180, cwd=tmp_path, env=env
        )
        if bare.returncode != 0:
            pytest.skip(
                f"MPI_Comm_spawn fails on {stack.id} without the profiler too: "
                f"{bare.stderr.strip().splitlines()[-1] if bare.stderr.strip() else bare.returncode}"
            )
    assert run.returncode == 0, run.stdout + run.stderr
    parent = read_profile(out)
    assert parent.header["spawn"]["children"] == ["parent.spawn1.jsonl"]  # the stale one removed
    assert not (tmp_path / "parent.spawn7.jsonl").exists()
    calls = merged_calls(parent.ranks[0])
    assert calls["MPI_Comm_spawn"] == (1, 0, 0)
    assert calls["MPI_Send"] == (6, 240, 0)
    child = read_profile(tmp_path / "parent.spawn1.jsonl")
    assert child.header["ranks"] == 2
    assert child.header["spawn"]["parent"] == str(out)
    for rank in child.ranks:
        assert merged_calls(rank)["MPI_Recv"] == (3, 0, 120)
