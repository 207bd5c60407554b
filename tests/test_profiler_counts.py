"""The profiler on the known mixes of native/tests (prof_test_c.c, prof_test_f.f90), run through
`esmperf profile` with 4 ranks (oversubscribed here: counts and bytes are exact, times are not
checked) under every MPI stack found (the Debian ones always; the PyPI wheels after `make setup-more-mpi`): exact calls, bytes, histograms, peers, communicators, I/O."""

import subprocess
import sys
from pathlib import Path

import pytest

from esmperf.mpi.build import build_dir
from esmperf.mpi.stacks import discover_stacks
from esmperf.profile.read import read_profile

ESMPERF = Path(sys.executable).parent / "esmperf"
STACKS = [s for s in discover_stacks().stacks if not s.simulated]  # smpi: test_smpi.py


def profile_of(stack, program: str, tmp_path: Path, *args: str):
    binary = build_dir(stack) / "tests" / program
    if not binary.is_file():
        pytest.skip(f"{binary} not built")
    out = tmp_path / f"{program}.jsonl"
    command = [
        str(ESMPERF),
        "profile",
        "--out",
        str(out),
        "--",
        str(stack.mpirun),
        "-n",
        "4",
        str(binary),
        *args,
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    return read_profile(out)


def figures(rank_record):
    return {
        name: (c["calls"], c["sent"], c["recv"], dict(map(tuple, c["hist"])))
        for name, c in rank_record["calls"].items()
    }


def neighbours(r):
    return (r + 1) % 4, (r + 3) % 4, r ^ 1, r ^ 2


def merged(pairs):
    """{world rank: [bytes, messages]} from (rank, bytes, messages), adding coinciding ranks."""
    out = {}
    for rank, nbytes, msgs in pairs:
        b, m = out.get(str(rank), [0, 0])
        out[str(rank)] = [b + nbytes, m + msgs]
    return out


def expected_c(r):
    bcast = (7, 0) if r == 1 else (0, 7)
    return {
        "MPI_Send": (3, 832, 0, {5: 2, 10: 1}),
        "MPI_Recv": (1, 0, 800, {10: 1}),  # posted for 1600 bytes
        "MPI_Sendrecv": (21, 176, 176, {4: 40, 5: 2}),  # 1 in the split + 2 threads x 10
        "MPI_Isend": (2, 36, 0, {4: 1, 5: 1}),
        "MPI_Irecv": (3, 0, 44, {4: 1, 5: 2}),  # 12 real bytes of a 4000-byte receive
        "MPI_Send_init": (1, 0, 0, {}),
        "MPI_Recv_init": (1, 0, 0, {}),
        "MPI_Start": (4, 80, 80, {6: 4}),
        "MPI_Startall": (3, 120, 120, {6: 6}),
        "MPI_Mprobe": (1, 0, 0, {}),
        "MPI_Mrecv": (1, 0, 24, {5: 1}),
        "MPI_Wait": (5, 0, 0, {}),
        "MPI_Waitall": (4, 0, 0, {}),
        "MPI_Waitany": (2, 0, 0, {}),
        "MPI_Request_free": (2, 0, 0, {}),
        "MPI_Barrier": (2, 0, 0, {0: 2}),
        "MPI_Bcast": (1, *bcast, {3: 1}),
        "MPI_Gather": (1, 8, 32, {6: 1}) if r == 0 else (1, 8, 0, {4: 1}),
        "MPI_Reduce": (1, 16, 16 if r == 0 else 0, {5: 1}),
        "MPI_Allreduce": (2, 84, 84, {3: 1, 7: 1}),
        "MPI_Neighbor_allgather": (1, 8, 8, {4: 1}),
        "MPI_Neighbor_alltoall": (1, 48, 48, {6: 1}),
        "MPI_Comm_size": (1, 0, 0, {}),
        "MPI_Comm_rank": (2, 0, 0, {}),
        "MPI_Comm_dup": (1, 0, 0, {}),
        "MPI_Comm_split": (1, 0, 0, {}),
        "MPI_Cart_create": (1, 0, 0, {}),
        "MPI_Comm_free": (3, 0, 0, {}),
        "MPI_Comm_set_name": (1, 0, 0, {}),
        "MPI_File_open": (1, 0, 0, {}),
        "MPI_File_write_at_all": (1, 400, 0, {}),
        "MPI_File_sync": (2, 0, 0, {}),
        "MPI_File_read_at": (1, 0, 400, {}),
        "MPI_File_close": (1, 0, 0, {}),
        "MPI_Win_create": (1, 0, 0, {}),
        "MPI_Win_fence": (2, 0, 0, {}),
        "MPI_Put": (1, 80, 0, {7: 1}),
        "MPI_Get": (1, 0, 40, {6: 1}),
        "MPI_Win_free": (1, 0, 0, {}),
    }


def expected_f(r):
    return {
        "MPI_Send": (3, 832, 0, {5: 2, 10: 1}),
        "MPI_Recv": (1, 0, 800, {10: 1}),
        "MPI_Sendrecv": (1, 16, 16, {5: 2}),
        "MPI_Isend": (1, 12, 0, {4: 1}),
        "MPI_Irecv": (3, 0, 44, {4: 1, 5: 2}),
        "MPI_Send_init": (1, 0, 0, {}),
        "MPI_Recv_init": (1, 0, 0, {}),
        "MPI_Startall": (3, 120, 120, {6: 6}),
        "MPI_Waitall": (4, 0, 0, {}),
        "MPI_Waitany": (2, 0, 0, {}),
        "MPI_Request_free": (2, 0, 0, {}),
        "MPI_Gather": (1, 8, 32, {6: 1}) if r == 0 else (1, 8, 0, {4: 1}),
        "MPI_Allreduce": (2, 84, 84, {3: 1, 7: 1}),
        "MPI_Comm_size": (1, 0, 0, {}),
        "MPI_Comm_rank": (2, 0, 0, {}),
        "MPI_Comm_split": (1, 0, 0, {}),
        "MPI_Comm_free": (1, 0, 0, {}),
        "MPI_Comm_set_name": (1, 0, 0, {}),
    }


@pytest.mark.parametrize("stack", STACKS, ids=lambda s: s.id)
def test_c_mix_exact(stack, tmp_path):
    profile = profile_of(stack, "prof_test_c", tmp_path, str(tmp_path))
    assert profile.header["ranks"] == 4
    assert profile.header["abi"] == stack.family
    assert profile.header["thread_level"] == "MPI_THREAD_MULTIPLE"
    for r, rec in enumerate(profile.ranks):
        assert figures(rec) == expected_c(r), f"rank {r}"
        assert all(c["lang"] == {"c": c["calls"], "fortran": 0} for c in rec["calls"].values())
        right, left, partner, half_partner = neighbours(r)
        # point-to-point plus one MPI_Put to the right and one MPI_Get from the left
        assert rec["peers"]["sent"] == merged(
            [(right, 1012 + 80, 7 + 1), (partner, 216, 23), (half_partner, 16, 1)]
        )
        assert rec["peers"]["recv"] == merged(
            [(left, 1012 + 40, 7 + 1), (partner, 216, 23), (half_partner, 16, 1)]
        )
        comms = {c["created_by"]: c for c in rec["comms"]}
        assert comms["MPI_COMM_WORLD"]["size"] == 4
        assert (comms["MPI_Comm_split"]["name"], comms["MPI_Comm_split"]["size"]) == ("halves", 2)
        assert comms["MPI_Comm_split"]["calls"] == 4  # Allreduce, Comm_rank, Sendrecv, Comm_free
        assert comms["MPI_Comm_dup"]["calls"] == 21  # the threads' Sendrecv, Comm_free
        assert comms["MPI_Cart_create"]["calls"] == 3
        assert rec["io"]["write"]["bytes"] == 1000 and rec["io"]["write"]["calls"] == 1
        assert rec["io"]["read"]["bytes"] == 1000 and rec["io"]["read"]["calls"] == 1
        bins, calls = rec["bins"], rec["calls"]
        messages = [c for name, c in calls.items() if not name.startswith("MPI_File_")]
        assert sum(bins["calls"]) == sum(c["calls"] for c in calls.values())
        assert sum(bins["sent"]) == sum(c["sent"] for c in messages)
        assert sum(bins["recv"]) == sum(c["recv"] for c in messages)
        assert sum(bins["io_write"]) == 1000 + 400  # POSIX write + MPI_File_write_at_all
        assert sum(bins["io_read"]) == 1000 + 400
        assert rec["overhead"]["calls"] == sum(c["calls"] for c in rec["calls"].values())


@pytest.mark.parametrize("stack", [s for s in STACKS if s.mpifort], ids=lambda s: s.id)
def test_fortran_mix_exact_and_counted_once(stack, tmp_path):
    profile = profile_of(stack, "prof_test_f", tmp_path)
    fortran = profile.header["fortran"]
    assert fortran["bindings_loaded"] and fortran["wrappers_reached"]
    assert "warning" not in fortran
    # measured: Open MPI's Fortran layer calls PMPI_ directly, MPICH's calls the C MPI_ symbols
    assert fortran["library_calls_c_layer"] == (stack.family == "mpich")
    for r, rec in enumerate(profile.ranks):
        assert figures(rec) == expected_f(r), f"rank {r}"
        assert all(c["lang"] == {"c": 0, "fortran": c["calls"]} for c in rec["calls"].values())
        right, left, partner, half_partner = neighbours(r)
        assert rec["peers"]["sent"] == merged(
            [(right, 1012 - 200 + 120, 1 + 1 + 3), (partner, 32, 2), (half_partner, 16, 1)]
        )
        names = {c["name"] for c in rec["comms"]}
        assert "halves" in names
        assert rec["io"]["write"]["bytes"] == 1000


def expected_f08(r):
    return {
        "MPI_Isend": (1, 12, 0, {4: 1}),
        "MPI_Irecv": (1, 0, 12, {4: 1}),
        "MPI_Waitall": (1, 0, 0, {}),
        "MPI_Allreduce": (1, 80, 80, {7: 1}),
        "MPI_Gather": (1, 8, 32, {6: 1}) if r == 0 else (1, 8, 0, {4: 1}),
        "MPI_Sendrecv": (1, 16, 16, {5: 2}),
        "MPI_Recv": (1, 0, 0, {}),  # from MPI_PROC_NULL
        "MPI_Comm_size": (1, 0, 0, {}),
        "MPI_Comm_rank": (2, 0, 0, {}),
        "MPI_Comm_split": (1, 0, 0, {}),
        "MPI_Comm_free": (1, 0, 0, {}),
        "MPI_Comm_set_name": (1, 0, 0, {}),
    }


@pytest.mark.parametrize("stack", [s for s in STACKS if s.mpifort], ids=lambda s: s.id)
def test_fortran_2008_bindings(stack, tmp_path):
    """use mpi_f08: Open MPI's mpi_x_f08_ and MPICH's mpi_x_f08ts_ (descriptors) both call PMPI_
    directly; only the profiler's f08 wrappers see these calls."""
    profile = profile_of(stack, "prof_test_f08", tmp_path)
    for r, rec in enumerate(profile.ranks):
        assert figures(rec) == expected_f08(r), f"rank {r}"
        assert all(c["lang"] == {"c": 0, "fortran": c["calls"]} for c in rec["calls"].values())
        assert {c["name"] for c in rec["comms"]} >= {"MPI_COMM_WORLD", "halves"}


def test_histogram_bucket_edges():
    """Bucket 0: 0 bytes; bucket k: [2^(k-1), 2^k) (docs/profile-format.md)."""
    from esmperf.profile.summary import bucket_label

    assert [bucket_label(k) for k in (0, 1, 2, 3, 11, 13)] == [
        "0 B",
        "1 B",
        "2-3 B",
        "4-7 B",
        "[1, 2) KiB",
        "[4, 8) KiB",
    ]


@pytest.mark.parametrize("stack", STACKS[:1], ids=lambda s: s.id)
def test_a_run_that_dies_leaves_the_running_marker(stack, tmp_path):
    """prof_test_c calls MPI_Abort when not run on 4 ranks: the file stays a clear marker, and the
    ranks the launcher then stops with SIGTERM leave partial profiles beside it."""
    out = tmp_path / "died.jsonl"
    command = [
        str(ESMPERF),
        "profile",
        "--out",
        str(out),
        "--",
        str(stack.mpirun),
        "-n",
        "3",
        str(build_dir(stack) / "tests" / "prof_test_c"),
        str(tmp_path),
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode != 0
    assert "died before MPI_Finalize" in run.stdout + run.stderr
    from esmperf.profile.read import ProfileError, partial_dir

    if not any(partial_dir(out).glob("*.jsonl")):
        with pytest.raises(ProfileError, match="did not reach MPI_Finalize"):
            read_profile(out)
        return
    profile = read_profile(out)
    assert profile.header["state"] == "running"
    reasons, missing = profile.partial["reasons"], profile.partial["missing"]
    assert sorted([*reasons, *missing]) == [0, 1, 2]
    assert set(reasons.values()) <= {"SIGTERM", "SIGINT", "SIGUSR1"}
