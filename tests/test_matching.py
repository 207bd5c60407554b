"""MPI's matching rules with thousands of receives pending at one rank, under both SimGrids
(docs/simulate.md, "Matching by source"; issue 27). esmperf's patch to SimGrid 4.1
(native/simnet/simgrid-4.1-smpi-matching.patch) indexes each mailbox's pending messages and
receives by source, where SimGrid scans them all in order: it must change no match and no
simulated time. bench/matching posts receives by source and tag, by source with MPI_ANY_TAG
and by MPI_ANY_SOURCE with a tag, before and after the messages arrive, checks every receive's
source, tag and data and the order of each sender's messages, and prints the simulated time and
a hash of which receive got which message: Debian's 3.32 (SimGrid's own scan) and the patched
4.1 print the same line. The program itself is checked on Open MPI. Skipped without SimGrid
4.1 (`make test` builds it)."""

import subprocess
from pathlib import Path

import pytest

from conftest import run_simulated
from esmperf.mpi.build import build_dir
from esmperf.mpi.stacks import discover_stacks
from test_simgrid41 import PREFIX, on_simgrid, smpi_stack

COUNT = 240  # messages from each sender: 8 senders, 1,920 receives pending at rank 0


def matching_line(prefix: Path | None, tmp_path: Path, late: bool, eager_limit: str) -> str:
    """bench/matching's line on 9 simulated ranks under PATH's SimGrid (None) or `prefix`'s."""
    with on_simgrid(prefix):
        stack = smpi_stack(prefix)
        program = build_dir(stack) / "bench" / "matching"
        if not program.is_file():
            pytest.skip(f"bench/matching is not built for {stack.version}: make build-simgrid")
        knobs = {"platform": "ib-qdr", "computation": "off", "eager_limit": eager_limit}
        out = run_simulated(
            stack, tmp_path, [str(program), str(COUNT), "2", str(int(late))], 9, knobs
        )
    (line,) = [line for line in out.splitlines() if line.startswith("matching:")]
    return line


@pytest.mark.parametrize("late", [False, True], ids=["posted-first", "posted-late"])
@pytest.mark.parametrize("eager_limit", ["simgrid", "mpi"])
def test_the_indexed_mailboxes_match_as_simgrids_scan(
    tmp_path: Path, late: bool, eager_limit: str
) -> None:
    if not (PREFIX / "bin" / "smpirun").is_file():
        pytest.skip("SimGrid 4.1 is not installed: make setup-simgrid")
    scanned = matching_line(None, tmp_path / "3.32", late, eager_limit)
    indexed = matching_line(PREFIX, tmp_path / "4.1", late, eager_limit)
    assert scanned.endswith(", 0 bad")
    assert f"9 ranks, {8 * COUNT} receives pending, 2 rounds" in scanned
    assert indexed == scanned  # the same matches (the hash) and simulated time, to the bit


def test_the_program_checks_matching_on_a_real_mpi(tmp_path: Path) -> None:
    stack = discover_stacks().by_id("openmpi")
    if stack is None or not (build_dir(stack) / "bench" / "matching").is_file():
        pytest.skip("the openmpi stack is not built: esmperf build --stack openmpi")
    from esmperf.launch.mpirun import mpirun_command, run_environment

    program = [str(build_dir(stack) / "bench" / "matching"), "64", "2", "1"]
    command = mpirun_command(stack, 3, program)
    done = subprocess.run(
        command,
        env=run_environment(stack),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "3 ranks, 128 receives pending, 2 rounds, posted late" in done.stdout
    assert done.stdout.rstrip().endswith(", 0 bad")
