"""MPI_Waitall in one pass under the simulator (native/simcount/waitall.cpp; docs/simulate.md,
"What a simulation costs"): the preloaded PMPI_Waitall waits on each request once, where SMPI's
own completes n requests with n waitany calls over all of them. It must change no simulated time
and no status: bench/waitall (thousands of requests, receives completed out of their posting
order, statuses checked by the program) gives the same simulated time to the last digit with and
without it, under rendezvous and eager sends; SMPI's time-independent trace shows which waitall
ran. Skipped without SimGrid SMPI."""

from pathlib import Path

import pytest

from conftest import run_simulated
from esmperf.mpi.build import build_dir
from esmperf.mpi.stacks import Stack
from ocean_smpi import smpi_built

NETWORK_ONLY = {"platform": "ib-qdr", "computation": "off"}


@pytest.fixture(scope="module")
def smpi() -> Stack:
    return smpi_built(Path("bench") / "waitall")


def waitall_line(
    smpi: Stack, tmp_path: Path, ranks: int, count: int, plugins: bool, **knobs: str
) -> str:
    tmp_path.mkdir()
    program = [str(build_dir(smpi) / "bench" / "waitall"), str(count), "2"]
    out = run_simulated(smpi, tmp_path, program, ranks, NETWORK_ONLY | knobs, plugins=plugins)
    (line,) = [line for line in out.splitlines() if line.startswith("waitall:")]
    return line


@pytest.mark.parametrize("eager_limit", ["simgrid", "mpi"])
def test_one_pass_waitall_keeps_every_simulated_time_and_status(
    smpi: Stack, tmp_path: Path, eager_limit: str
) -> None:
    # 8 ranks below FOLD_AUTO_RANKS (SMPI's detached sends) and 32 at it (rendezvous, or eager)
    for ranks, count in ((8, 300), (32, 80)):
        lines = [
            waitall_line(smpi, tmp_path / f"{ranks}-{p}", ranks, count, p, eager_limit=eager_limit)
            for p in (False, True)
        ]
        assert lines[0] == lines[1]
        assert lines[1].startswith(f"waitall: {ranks} ranks, {2 * count} requests, 2 rounds: ")
        assert lines[1].endswith(" s, 0 bad statuses")


def test_the_simulator_runs_the_one_pass_waitall(smpi: Stack, tmp_path: Path) -> None:
    """SMPI's time-independent trace records one waitall action where SMPI's own ran, and one
    wait per request where the preloaded one did: 2 rounds of 2 x 3 requests on each rank."""
    for plugins, expected in ((False, ["waitall 6"] * 2), (True, ["wait"] * 12)):
        work = tmp_path / str(plugins)
        work.mkdir()
        trace = ["--cfg=tracing:yes", "--cfg=tracing/smpi:yes", "--cfg=tracing/smpi/format:TI"]
        trace.append(f"--cfg=tracing/filename:{work / 'ti.txt'}")
        program = [str(build_dir(smpi) / "bench" / "waitall"), "3", "2"]
        run_simulated(smpi, work, program, 4, NETWORK_ONLY, plugins=plugins, options=tuple(trace))
        (rank1,) = (work / "ti.txt_files").glob("*rank-1.txt")
        waits = [
            line.split(maxsplit=1)[1] for line in rank1.read_text().splitlines() if " wait" in line
        ]
        assert [w if w.startswith("waitall") else "wait" for w in waits] == expected
