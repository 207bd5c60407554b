"""Interrupted runs keep every rank's partial profile: `esmperf profile -- mpirun -n RANKS
prof_interrupted loop` (native/tests/prof_interrupted.c: MPI_Allreduce and MPI_Sendrecv in a
ring, for ever), interrupted TRIES times with each signal, per Debian stack.

    .venv/bin/python benchmarks/interrupted_runs.py [--tries 10] [--ranks 2]
                                                    [--signals INT,TERM] [--stacks openmpi,mpich]

Each try starts esmperf in a process group of its own, as a terminal's foreground job, waits
until every rank has printed that it loops, waits a further random 0-1 s (seeded per try), and
sends the signal to that group, as Ctrl-C and `timeout -s INT` do. A try keeps the profile when
esmperf exits with 128 + the signal and the profile reads back with every rank's partial line,
each written at that signal. Prints one row per stack and signal; exits 1 if a try lost a rank.
(Issue 26: before, SIGINT kept nothing in 4 of 4 tries and SIGTERM lost a rank in 4 of 7.)
"""

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from esmperf.mpi.build import build_dir  # noqa: E402
from esmperf.mpi.stacks import discover_stacks  # noqa: E402
from esmperf.profile.read import ProfileError, read_profile  # noqa: E402

ESMPERF = Path(sys.executable).parent / "esmperf"


def one_try(stack, ranks: int, sig: signal.Signals, seed: int, folder: Path) -> str | None:
    """None when every rank's partial profile was kept, else what went wrong."""
    out = folder / "p.jsonl"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    binary = build_dir(stack) / "tests" / "prof_interrupted"
    command = [str(ESMPERF), "profile", "--out", str(out), "--stack", stack.id, "--"]
    command += [str(stack.mpirun), "-n", str(ranks), str(binary), "loop"]
    run = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    ready, output = 0, []
    while ready < ranks:
        line = run.stdout.readline()
        if not line:
            return f"the run ended before its ranks looped: {''.join(output)[-300:]}"
        output.append(line)
        ready += line.startswith("rank ") and line.rstrip().endswith(" ready")
    time.sleep(random.Random(seed).uniform(0.0, 1.0))  # the interrupt at a random point
    os.killpg(run.pid, sig)
    rest, _ = run.communicate(timeout=120)
    if run.returncode != 128 + sig:
        return f"exit status {run.returncode}, not {128 + sig}: {rest[-300:]}"
    try:
        profile = read_profile(out)
    except ProfileError as error:
        return str(error)
    if profile.partial is None:
        return "the profile is complete: the program was not interrupted"
    reasons = profile.partial["reasons"]
    if profile.partial["missing"] or set(reasons.values()) != {sig.name}:
        return f"ranks missing {profile.partial['missing']}, reasons {reasons}"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tries", type=int, default=10)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--signals", default="INT,TERM")
    parser.add_argument("--stacks", default="openmpi,mpich")
    args = parser.parse_args()
    stacks = [s for s in discover_stacks().stacks if s.id in args.stacks.split(",")]
    failed = 0
    with tempfile.TemporaryDirectory(prefix="esmperf-interrupted-") as tmp:
        for stack in stacks:
            for name in args.signals.split(","):
                sig = signal.Signals[f"SIG{name}"]
                problems = []
                for attempt in range(args.tries):
                    problem = one_try(stack, args.ranks, sig, attempt, Path(tmp) / "run")
                    if problem:
                        problems.append(f"try {attempt + 1}: {problem}")
                kept = args.tries - len(problems)
                print(
                    f"{stack.id:8} {sig.name:7} every rank's partial profile kept in "
                    f"{kept} of {args.tries} tries"
                )
                for problem in problems:
                    print(f"    {problem}")
                failed += len(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
