"""How closely a run's replay on its own platform (`esmperf trace FILE --replay own`) reproduces
the run's measured time (docs/profiler.md "Replaying a run", the tolerance tests/test_replay.py
checks).

    .venv/bin/python benchmarks/replay_own.py [--stack openmpi] [--ranks 2] [--repeats 8]

Per repeat: tests/replay_mix.c under `esmperf profile --trace`, then `esmperf trace --replay
own`. Printed per run: the measured time (first MPI_Init to last MPI_Finalize), the simulated
time, their ratio, the shortfall (measured - simulated) and the time the ranks waited for a
CPU inside their MPI calls (replay_mix.c reads Linux's run delay around each call): the part
of the run a replay, which gives each rank a core, does not have. Then the load average.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from esmperf.mpi.stacks import discover_stacks  # noqa: E402
from esmperf.profile.replay import measured_time  # noqa: E402
from esmperf.profile.trace import read_trace  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ESMPERF = Path(sys.executable).parent / "esmperf"


def one_run(stack, binary: Path, ranks: int, folder: Path) -> tuple[float, float, float]:
    """(measured, simulated, seconds waited for a CPU inside MPI calls) of one traced run."""
    profile = [str(ESMPERF), "profile", "--trace", "--out", "p.jsonl", "--"]
    run = subprocess.run(
        [*profile, str(stack.mpirun), "-n", str(ranks), str(binary)],
        capture_output=True,
        text=True,
        check=True,
        cwd=folder,
    )
    waited = sum(int(n) for n in re.findall(r"mpi_run_delay_ns (\d+)", run.stdout)) * 1e-9
    replayed = subprocess.run(
        [str(ESMPERF), "trace", "p.jsonl", "--replay", "own"],
        capture_output=True,
        text=True,
        check=True,
        cwd=folder,
        env=os.environ | {"COLUMNS": "400"},
    )
    simulated = float(re.search(r"simulated (\S+) s", replayed.stdout).group(1))
    return measured_time(read_trace(folder / "p.jsonl")), simulated, waited


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", default="openmpi")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=8)
    args = parser.parse_args()
    stack = next(s for s in discover_stacks().stacks if s.id == args.stack)
    with tempfile.TemporaryDirectory(prefix="replay-own-") as tmp:
        folder = Path(tmp)
        binary = folder / "replay_mix"
        source = ROOT / "tests" / "replay_mix.c"
        subprocess.run([str(stack.mpicc), "-O2", "-o", str(binary), str(source)], check=True)
        print("| measured s | replay s | replay / measured | shortfall s | waited for a CPU s |")
        print("| --- | --- | --- | --- | --- |")
        for _ in range(args.repeats):
            measured, simulated, waited = one_run(stack, binary, args.ranks, folder)
            print(
                f"| {measured:.4f} | {simulated:.4f} | {simulated / measured:.4f} | "
                f"{measured - simulated:.4f} | {waited:.4f} |"
            )
    print(f"load average: {Path('/proc/loadavg').read_text().split()[:3]}")


if __name__ == "__main__":
    main()
