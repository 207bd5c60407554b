"""No profile lost in a study: `esmperf run --profile` interrupted during its profiled repetition
(a user's Ctrl-C: SIGINT to esmperf's process group; `kill PID`: SIGTERM to esmperf alone) asks
the ranks for their partial profiles before it ends the run, as `esmperf profile` does
(profile/interrupt.py), and commits that repetition to the store as `interrupted` with every
rank's partial profile; the configuration stays pending for a resumed study. The program is
native/tests/prof_interrupted.c: `done` in the measured repetition, `wait` (every rank in MPI_Recv
for a message no one sends) when profiled. The signal is sent once the ranks' snapshots say they
are in MPI_Recv (causality, never a sleep)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from conftest import as_terminal_job
from esmperf.mpi.build import build_dir
from esmperf.mpi.stacks import discover_stacks

ESMPERF = Path(sys.executable).parent / "esmperf"
OPENMPI = [s for s in discover_stacks().stacks if s.id == "openmpi"]


def in_recv(partial: Path) -> bool:
    """Whether both ranks' snapshots in `partial` say they are in MPI_Recv."""
    functions = []
    for rank in (0, 1):
        try:
            line = json.loads((partial / f"{rank}.jsonl").read_text())
        except (OSError, ValueError):
            return False
        functions += [call["function"] for call in line.get("in_call", [])]
    return functions == ["MPI_Recv", "MPI_Recv"]


@pytest.mark.skipif(not OPENMPI, reason="Open MPI is not built here: make build")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=str)
def test_interrupted_profiled_repetition_is_kept_with_its_profile(sig, tmp_path):
    program = build_dir(OPENMPI[0]) / "tests" / "prof_interrupted"
    if not program.is_file():
        pytest.skip(f"{program} is not built: make build")
    mode = 'if [ -n "$ESMPROF_OUT" ]; then m=wait; else m=done; fi'
    command = f"sh -c '{mode}; exec {program} $m 3'"
    store = tmp_path / "study.duckdb"
    run = subprocess.Popen(
        [str(ESMPERF), "run", "--command", command, "--name", "waits", "--ranks", "2"]
        + ["--stack", "openmpi", "--profile", "--repeats", "1", "--warmup", "0"]
        + ["--timeout", "300", "--out", str(store)],
        cwd=tmp_path,
        env={**os.environ, "ESMPROF_SNAPSHOT_SECONDS": "0.1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
        preexec_fn=as_terminal_job,
    )
    deadline = time.monotonic() + 240
    while not any(in_recv(p) for p in tmp_path.rglob("*.jsonl.partial")):
        assert run.poll() is None, run.communicate()[0]
        if time.monotonic() > deadline:
            os.killpg(run.pid, signal.SIGKILL)
            pytest.fail("the profiled repetition never got into MPI_Recv")
        time.sleep(0.1)
    if sig == signal.SIGINT:
        os.killpg(run.pid, sig)  # the terminal's Ctrl-C reaches the whole foreground group
    else:
        os.kill(run.pid, sig)
    output = " ".join(run.communicate(timeout=120)[0].split())
    assert run.returncode == 130, output
    assert "asking the 2 ranks here for their partial profiles" in output
    assert "2 of 2 ranks here wrote theirs" in output
    assert f"interrupted by {sig.name}; its profile kept (2 of 2 ranks)" in output
    with duckdb.connect(str(store), read_only=True) as con:
        reps = con.execute("SELECT rep, kind, status, fom FROM repetition ORDER BY rep").fetchall()
        [key] = con.execute("SELECT run_key FROM run").fetchall()
        [(status,)] = con.execute("SELECT status FROM run").fetchall()
        ranks = con.execute(
            "SELECT rank, mpi_time > 0 FROM profile_rank WHERE rep = 2 ORDER BY rank"
        ).fetchall()
        allreduce = con.execute(
            "SELECT rank, calls FROM profile_function WHERE rep = 2 AND function = 'MPI_Allreduce' "
            "ORDER BY rank"
        ).fetchall()
    assert key and status == "pending"  # measured again when the study is resumed
    assert reps == [(1, "measure", "ok", reps[0][3]), (2, "profile", "interrupted", None)]
    assert ranks == [(0, True), (1, True)]  # the time in MPI_Recv so far counts as MPI time
    assert allreduce == [(0, 3), (1, 3)]
