"""The finalize grace inside a batch job, run beside each repetition by the job's script
(slurm/batch_script.py, run_rep): the same grace as a local run's, decided by the same code
(study/execute.py FinalizeGrace, on the verified result line of study/outcome.py). Once the
repetition has printed its verified result line and has not exited SECONDS later, the marker
file ENDED is written into its directory and its timeout(1) is sent SIGTERM, which ends the
whole run as its own timeout would; esmperf then counts the repetition (job_files.py reads the
marker). Without a result line it does nothing: the timeout stays the timeout.

    python -m esmperf.slurm.finalize_watch SECONDS PID REP_DIR
"""

import math
import os
import signal
import sys
import time
from pathlib import Path

from esmperf.study.classify import verified_result_line
from esmperf.study.execute import FinalizeGrace

ENDED = "ended_after_result"  # the marker file, in the repetition's directory


def watch(pid: int, rep_dir: Path, seconds: float) -> bool:
    """Watch `rep_dir`/stdout while `pid` (the repetition's timeout process) runs; end it
    `seconds` after its verified result line. Whether it was ended so."""
    stdout = rep_dir / "stdout"
    pause = 0.001
    while _alive(pid) and not stdout.exists():  # the shell opens it as the run starts
        pause = _pause(pause)
    with open(stdout, "rb") if stdout.exists() else open(os.devnull, "rb") as out:
        grace = FinalizeGrace(out.fileno(), verified_result_line, seconds)
        while _alive(pid):
            if time.monotonic() >= grace.deadline(math.inf):
                return _end(pid, rep_dir, seconds)
            pause = _pause(pause)
    return False


def _end(pid: int, rep_dir: Path, seconds: float) -> bool:
    """Mark the repetition ended by the grace, then end it (its timeout forwards SIGTERM to
    the whole run, and SIGKILL after its --kill-after)."""
    marker = rep_dir / ENDED
    marker.write_text(f"{seconds:g}\n")
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:  # it exited by itself just now
        marker.unlink(missing_ok=True)
        return False
    return True


def _pause(seconds: float) -> float:
    time.sleep(seconds)
    return min(seconds * 2, 0.05)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def main(argv: list[str]) -> int:
    seconds, pid, rep_dir = float(argv[0]), int(argv[1]), Path(argv[2])
    watch(pid, rep_dir, seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
