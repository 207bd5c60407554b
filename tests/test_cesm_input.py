"""CESM 1.0.3's start-up input (`--input cesm`, native/apps/cesm/input.c; docs/cesm.md "Start-up
input"): what its coupler and components read on one rank and broadcast, from the file system the
smpi knob `file_system` models (mpi/file_system.py). Exact figures: the bytes the roots read and
the broadcasts and barriers the profile sees, from the code's array dimensions; the roots' time in
the file system at the band's low end; the payload checked on every receiver; bad input refused
with the fix named."""

import json
import math
import os
import subprocess
from pathlib import Path

import pytest

from esmperf.launch.mpirun import mpirun_command, run_environment
from esmperf.mpi.build import build_dir
from esmperf.mpi.file_system import READ_RATES
from esmperf.mpi.knob_setting import knob_setting, write_files
from esmperf.mpi.stacks import Stack
from esmperf.profile.read import read_profile
from ocean_smpi import smpi_stack

RANKS = 4
# What CESM 1.0.3 f09_g16 reads on a root and broadcasts (input.c, from the code's dimensions)
RADAE = 7 * [8 * 10 * 10 * 25 * 21 * 7]  # radae.F90: 7 tables
TRACERS = 2 * (14 * [8 * 144 * 96 * 26] + 14 * [8 * 144 * 96])  # 13 aerosols + ozone; deposition
RTM = 3 * [8 * 720 * 360]  # RtmMod.F90
PIO_READS = RADAE + TRACERS + RTM  # through PIO: a barrier each
CICE = 2 * [8 * 320 * 384]  # ice_grid.F90: ULAT, KMT
POP = [4 * 320 * 384]  # grid.F90: KMT_G
LFRAC = 8 * 288 * 192  # broadcast, not read
RUNOFF = 17089010  # map_r05_to_gx1v6's weights
CHUNK = 100000  # shr_mct_mod.F90 rbuf_size


@pytest.fixture(scope="module")
def smpi() -> Stack:
    return smpi_stack("cesm")


def simulate(
    stack: Stack, tmp_path: Path, *options: str, file_system: str = "nfs-low"
) -> subprocess.CompletedProcess:
    tmp_path.mkdir(parents=True, exist_ok=True)
    knobs = {"machine": "dell-m610", "computation": "model", "platform": "ib-qdr"}
    knobs["file_system"] = file_system
    setting = knob_setting(stack, knobs, RANKS, 2, 2, tmp_path / "platforms")
    write_files(setting)
    program = [str(build_dir(stack) / "apps" / "cesm" / "cesm"), "--steps", "1", "--warmup", "0"]
    program += ["--output", "off", *options]
    command = mpirun_command(stack, RANKS, program, setting.launcher_args)
    env = run_environment(stack, os.environ) | setting.env | {"TMPDIR": str(tmp_path)}
    env["ESMPROF_OUT"] = str(tmp_path / "profile.jsonl")
    return subprocess.run(
        command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )


def result_of(done: subprocess.CompletedProcess) -> dict:
    assert done.returncode == 0, done.stderr[-2000:]
    line = [text for text in done.stdout.splitlines() if text.startswith('{"workload"')][-1]
    return json.loads(line)


def test_the_roots_read_cesm_s_start_up_input_and_broadcast_it(smpi, tmp_path):
    result = result_of(simulate(smpi, tmp_path, "--size", "1deg", "--input", "cesm"))
    weights = result["input"]["map_weights"]
    assert weights == result["model"]["map_nonzeros"] // 2  # the a2o map's (o2a: the same)
    maps = 8 * [weights] + [RUNOFF]
    read = sum(PIO_READS) + sum(CICE) + sum(POP) + 16 * sum(maps)
    assert result["input"]["bytes_read"] == read
    # the busiest root's time in the file system: PIO's I/O root (rank 1) or the masters (0)
    rank_1, rank_0 = sum(PIO_READS), sum(CICE) + sum(POP) + 16 * sum(maps)
    seconds = max(rank_0, rank_1) / READ_RATES["nfs-low"]
    assert result["input"]["file_system_seconds_max"] == pytest.approx(seconds, rel=1e-12)
    chunks = sum(math.ceil(n / CHUNK) for n in maps)
    broadcasts = len(PIO_READS) + 1 + len(CICE) + len(POP) + 3 * chunks  # + the land fraction
    assert result["input"]["broadcasts"] == RANKS * broadcasts
    # the profile's timed region holds the start-up: its broadcasts and PIO's barriers besides
    # the driver's interval (4 infodata broadcasts, 14 timing barriers), on every rank
    ranks = read_profile(tmp_path / "profile.jsonl").ranks
    for rank in ranks:
        assert rank["calls"]["MPI_Bcast"]["calls"] == broadcasts + 4
        assert rank["calls"]["MPI_Barrier"]["calls"] == len(PIO_READS) + 14 + 1


def test_the_file_system_band_moves_only_the_reads(smpi, tmp_path):
    low = result_of(simulate(smpi, tmp_path / "low", "--size", "1deg", "--input", "cesm"))
    high = result_of(
        simulate(
            smpi, tmp_path / "high", "--size", "1deg", "--input", "cesm", file_system="nfs-high"
        )
    )
    assert high["input"]["file_system_seconds_max"] * 2 == pytest.approx(
        low["input"]["file_system_seconds_max"], rel=1e-12
    )
    # the figure of merit times the intervals alone (CESM's Run Time), to the clock's rounding
    assert high["fom"]["value"] == pytest.approx(low["fom"]["value"], rel=1e-9)


def test_a_broadcast_changed_on_arrival_fails_the_run(smpi, tmp_path):
    done = simulate(smpi, tmp_path, "--size", "1deg", "--input", "cesm", "--fault", "input")
    assert done.returncode != 0
    assert "the start-up input's broadcasts arrived changed on 1 ranks" in done.stderr


def test_start_up_input_refusals_name_the_fix(smpi, tmp_path):
    done = simulate(smpi, tmp_path, "--size", "S", "--input", "cesm")
    assert done.returncode != 0
    assert "--input cesm reads CESM 1.0.3's start-up input of f09_g16" in done.stderr
    assert "run --size 1deg on the smpi stack" in done.stderr
    done = simulate(smpi, tmp_path, "--size", "1deg", "--input", "cesm", file_system="none")
    assert done.returncode != 0 and "--file-system nfs-low" in done.stderr
