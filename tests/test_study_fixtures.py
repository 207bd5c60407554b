"""Helpers for the study, store, report and compare tests (no tests here): synthetic stores
with known values and profiles, written through the same code the runner uses."""

import datetime
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conftest import call, header, rank_record, write_profile
from esmperf.profile.read import read_profile
from esmperf.store.database import Store
from esmperf.study.configuration import Configuration, FomSpec, RepeatPolicy
from esmperf.study.plan import PlannedRun

HUNG = "hung after its result (in MPI_Finalize or teardown): killed at the 600 s timeout"
STARTED = datetime.datetime(2026, 11, 22, 12, 0, 0)
ENVIRONMENT = {
    "started": STARTED,
    "command": "test",
    "hostname": "node0",
    "cpu_model": "Test CPU",
    "cores": 2,
    "usable_cores": 2,
    "memory_gib": 24.0,
    "kernel": "6.1",
    "os": "Linux",
    "python": "3.11",
    "esmperf_version": "0.1.0",
    "git_commit": "abc123",
    "git_dirty": False,
    "load_at_start": 0.1,
}


@dataclass
class FakeRun:
    ranks: int
    values: list[float]
    stack: str = "openmpi"
    workload: str = "pop"
    size: str = "S"
    knobs: dict[str, str] = field(default_factory=dict)
    unit: str = "steps/s"
    higher_is_better: bool = True
    status: str = "complete"
    profile: bool = False
    regions: bool = False  # the profile has the regions `timed` and `timed/halo` (profile_regions)
    failure: str | None = None  # a failed repetition's stderr
    killed_after_result: int = 0  # how many of the values' repetitions hung after their result
    rounds: bool = False  # measured in interleaved rounds: value i in round i + 1, load 0.2 + i


def configuration(run: FakeRun) -> Configuration:
    return Configuration(
        workload=run.workload,
        kind="workload",
        ranks=run.ranks,
        stack=run.stack,
        size=run.size,
        knobs=tuple(sorted(run.knobs.items())),
        fom=FomSpec("json", run.unit, run.higher_is_better),
        repeats=RepeatPolicy(warmup=0, min=3, max=10),
    )


def profile_ranks(ranks: int) -> list[dict[str, Any]]:
    """Per rank: wall 10 s; MPI time 1 s x ranks (grows with ranks), 3/4 of it in
    MPI_Allreduce; 100 Isends of 1 KiB to the right neighbour; 200 B written by rank 0."""
    records = []
    for rank in range(ranks):
        mpi = 1.0 * ranks
        calls = {
            "MPI_Allreduce": call(10, 0.75 * mpi, sent=80, recv=80, hist=[[4, 10]]),
            "MPI_Isend": call(100, 0.05 * mpi, sent=102400, hist=[[11, 100]]),
            "MPI_Waitall": call(100, 0.2 * mpi),
        }
        record = rank_record(rank, wall=10.0, mpi_time=mpi, calls=calls)
        record["peers"] = {"sent": {str((rank + 1) % ranks): [102400, 100]}, "recv": {}}
        record["io"]["write"] = {"calls": 1, "bytes": 200 if rank == 0 else 0, "time": 0.001}
        records.append(record)
    return records


def profile_regions(ranks: int) -> list[dict[str, Any]]:
    """The regions of profile_ranks(ranks)'s ranks: `timed` (8 s, entered once) holds every MPI
    call; `timed/halo` (2 s, entered 10 times) the Isends and the Waitalls."""
    mpi = 1.0 * ranks
    halo = {"MPI_Isend": [100, 0.05 * mpi, 102400, 0], "MPI_Waitall": [100, 0.2 * mpi, 0, 0]}
    timed = {"MPI_Allreduce": [10, 0.75 * mpi, 80, 80], **halo}

    def region(path: list[str], enters: int, wall: float, functions: dict[str, list[Any]]):
        return {
            "name": path[-1],
            "path": path,
            "enters": enters,
            "open": 0,
            "wall": wall,
            "mpi_time": sum(f[1] for f in functions.values()),
            "calls": sum(f[0] for f in functions.values()),
            "sent": sum(f[2] for f in functions.values()),
            "recv": sum(f[3] for f in functions.values()),
            "functions": functions,
            "recv_wait": {},
            "hist": [],
        }

    return [region(["timed"], 1, 8.0, timed), region(["timed", "halo"], 10, 2.0, halo)]


def make_store(path: Path, runs: list[FakeRun], name: str = "fake") -> Path:
    with Store(path) as store:
        session = store.begin_session(
            ENVIRONMENT,
            {
                "name": name,
                "title": f"{name} study",
                "description": "synthetic",
                "seed": "",
                "base_ranks": 1,
                "metric": "fom",
                "source": "test",
                "text": "name = 'fake'",
            },
        )
        for position, run in enumerate(runs):
            config = configuration(run)
            planned = PlannedRun(
                config,
                position,
                argv=["mpirun", "-n", str(run.ranks), "pop"],
                cores=2,
                mpi_library=f"{run.stack} library",
            )
            store.save_run(
                planned.run_row(
                    run.status, None if run.status == "complete" else "it failed", session
                )
            )
            rep = 0
            for value in run.values:
                rep += 1
                row = _repetition(config.key, rep, "measure", session, value, run)
                if run.rounds:
                    row.update(
                        round_number=rep, load_before=0.2 + rep - 1, busy_cores_before=0.1 * rep
                    )
                if rep <= run.killed_after_result:
                    row.update(killed_after_result=HUNG, exit_code=None)
                store.add_repetition(row, {"fom.value": value})
            if run.failure is not None:
                rep += 1
                row = _repetition(config.key, rep, "measure", session, None, run)
                row.update(status="failed", exit_code=1, stderr=run.failure)
                store.add_repetition(row, {})
            if run.profile:
                rep += 1
                records = profile_ranks(run.ranks)
                for record in records if run.regions else []:
                    record["regions"] = profile_regions(run.ranks)
                profile_file = write_profile(
                    path.parent / f"{config.key}.jsonl", header(run.ranks), records
                )
                store.add_repetition(
                    _repetition(config.key, rep, "profile", session, 1.0, run),
                    {},
                    read_profile(profile_file),
                )
    return path


def _repetition(
    key: str, rep: int, kind: str, session: int, value: float | None, run: FakeRun
) -> dict[str, Any]:
    return {
        "run_key": key,
        "rep": rep,
        "kind": kind,
        "session_id": session,
        "started": STARTED,
        "elapsed": 1.0,
        "wall": 1.0,
        "fom": value,
        "fom_unit": run.unit,
        "status": "ok",
        "exit_code": 0,
        "load_before": 0.2,
        "busy_cores_before": 0.1,
        "load_after": 0.3,
        "oversubscribed": run.ranks > 2,
        "stdout": "",
        "stderr": "",
    }
