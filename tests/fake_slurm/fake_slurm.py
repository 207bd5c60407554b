"""A TEST DOUBLE for Slurm's sbatch, squeue, sacct and scancel (tests/test_slurm.py), not Slurm.

It answers as Slurm 22.05 does (measured against the real one, docs/slurm.md) for the options
esmperf uses, and runs a submitted batch script on this machine, in the background, as a job
on one node called `fakenode01`. A job asking for --exclusive waits (PENDING, reason
Resources) while another exclusive job holds the node. Its final states, reasons, exit codes
and node lists are Slurm's: COMPLETED (reason None), FAILED (NonZeroExitCode, exit code N:0),
TIMEOUT (sacct: exit code 0:0, reason None; squeue: reason TimeLimit), CANCELLED by UID (sacct
exit code 0:0; NodeList "None assigned" when it never started). State lives in
$FAKE_SLURM_DIR (jobs/<id>.*, calls.log: every invocation).
Knobs for the tests:
  FAKE_SLURM_BAD_PARTITIONS  comma-separated partitions sbatch rejects as real sbatch does
  FAKE_SLURM_TIME_LIMIT      seconds after which a job is killed and ends TIMEOUT
  FAKE_SLURM_OUTCOME=CANCELLED  jobs never run and end "CANCELLED by <uid>"
  FAKE_SLURM_ACCOUNTING=off  sacct says "Slurm accounting storage is disabled" (exit 1), as
                             on a cluster with AccountingStorageType=accounting_storage/none
  FAKE_SLURM_MIN_JOB_AGE=0   squeue forgets ended jobs at once (Slurm: after MinJobAge, 300 s)
"""

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

STATE = Path(os.environ["FAKE_SLURM_DIR"])
JOBS = STATE / "jobs"
NODE = "fakenode01"


def sbatch(args: list[str]) -> int:
    script = Path([a for a in args if not a.startswith("-")][-1])
    options = dict(re.findall(r"^#SBATCH --([\w-]+)(?:=(.*))?$", script.read_text(), re.M))
    partition = options.get("partition", "")
    bad = [p for p in os.environ.get("FAKE_SLURM_BAD_PARTITIONS", "").split(",") if p]
    if partition in bad:
        print(
            f"sbatch: error: invalid partition specified: {partition}\n"
            "sbatch: error: Batch job submission failed: Invalid partition name specified",
            file=sys.stderr,
        )
        return 1
    JOBS.mkdir(parents=True, exist_ok=True)
    counter = STATE / "next_id"
    job_id = int(counter.read_text()) if counter.exists() else 1000
    counter.write_text(str(job_id + 1))
    output = options.get("output", f"slurm-{job_id}.out").replace("%j", str(job_id))
    info = {
        "job_id": job_id,
        "script": str(script),
        "submitted": time.time(),
        "name": options.get("job-name", script.name),
    }
    (JOBS / f"{job_id}.json").write_text(json.dumps(info))
    if os.environ.get("FAKE_SLURM_OUTCOME") == "CANCELLED":
        _finish(job_id, f"CANCELLED by {os.getuid()}", "0:0", "Priority", "None assigned")
    else:
        env = dict(
            os.environ,
            SLURM_JOB_ID=str(job_id),
            SLURM_JOB_NODELIST=NODE,
            SLURM_JOB_NUM_NODES=options.get("nodes", "1"),
            SLURM_CPUS_ON_NODE="2",
            SLURM_NTASKS=options.get("ntasks", "1"),
        )
        limit = os.environ.get("FAKE_SLURM_TIME_LIMIT", "")
        runner = f"timeout -s KILL {limit} bash {script!s}" if limit else f"bash {script!s}"
        # the job: wait for the node if exclusive, run the script, then how it ended (exit
        # code, or TIMEOUT when the limit hit), unless scancel ended it first
        lock = f"flock {JOBS}/node.lock " if "exclusive" in options else ""
        end = f"{JOBS}/{job_id}.end"
        wrapper = (
            f"{lock}sh -c 'touch {JOBS}/{job_id}.started; {runner} > {output} 2>&1'; "
            f"code=$?; "
            f"if [ -n '{limit}' ] && [ $code = 137 ]; then end='TIMEOUT|0:0|TimeLimit'; "
            f"elif [ $code = 0 ]; then end='COMPLETED|0:0|None'; "
            f'else end="FAILED|$code:0|NonZeroExitCode"; fi; '
            f'echo "$end|{NODE}" > {end}.part; '
            f"[ -e {end} ] || mv {end}.part {end}"
        )
        process = subprocess.Popen(
            ["sh", "-c", wrapper],
            env=env,
            cwd=script.parent,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        info["process_group"] = process.pid
        (JOBS / f"{job_id}.json").write_text(json.dumps(info))
    print(job_id if "--parsable" in args else f"Submitted batch job {job_id}")
    return 0


def _jobs() -> list[int]:
    return sorted(int(p.stem) for p in JOBS.glob("*.json")) if JOBS.exists() else []


def _finish(job_id: int, state: str, code: str, reason: str, node_list: str) -> None:
    (JOBS / f"{job_id}.end").write_text(f"{state}|{code}|{reason}|{node_list}")


def _end(job_id: int) -> list[str] | None:
    """state, exit code, reason, node list of an ended job."""
    path = JOBS / f"{job_id}.end"
    if not path.exists():
        return None
    return path.read_text().strip().split("|")


def _now(job_id: int) -> list[str]:
    """What squeue says of a job that has not ended: state, reason."""
    if (JOBS / f"{job_id}.started").exists():
        return ["RUNNING", "None"]
    return ["PENDING", "Resources"]


def squeue(args: list[str]) -> int:  # squeue -h -t all -j IDS -o "%i|%T|%r"
    assert args[:3] == ["-h", "-t", "all"] and args[5:] == ["-o", "%i|%T|%r"], args
    wanted = args[args.index("-j") + 1].split(",")
    forget = os.environ.get("FAKE_SLURM_MIN_JOB_AGE") == "0"
    lines = []
    for job_id in _jobs():
        end = _end(job_id)
        if str(job_id) not in wanted or (end and forget):
            continue
        state, reason = (end[0].split()[0], _squeue_reason(end)) if end else _now(job_id)
        lines.append(f"{job_id}|{state}|{reason}")
    if not lines:  # every id purged (or never known): squeue refuses the list
        print("slurm_load_jobs error: Invalid job id specified", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


def _squeue_reason(end: list[str]) -> str:
    return "TimeLimit" if end[0] == "TIMEOUT" else end[2]


FIELDS = {"jobidraw", "state", "exitcode", "elapsed", "nodelist", "reason"}


def sacct(args: list[str]) -> int:  # sacct -n -P -X -j IDS --format=...
    if os.environ.get("FAKE_SLURM_ACCOUNTING") == "off":
        print("Slurm accounting storage is disabled", file=sys.stderr)
        return 1
    wanted = args[args.index("-j") + 1].split(",")
    fmt = next(a.split("=", 1)[1] for a in args if a.startswith("--format="))
    fields = [f.lower() for f in fmt.split(",")]
    unknown = [f for f in fields if f not in FIELDS]
    if unknown:
        print(f'sacct: error: Invalid field requested: "{unknown[0]}"', file=sys.stderr)
        return 1
    for job_id in _jobs():
        if str(job_id) not in wanted:
            continue
        info = json.loads((JOBS / f"{job_id}.json").read_text())
        end = _end(job_id)
        if end:
            state, code, reason, node_list = end
            reason = "None" if state == "TIMEOUT" else reason  # sacct's, unlike squeue's
        else:
            state, reason = _now(job_id)
            code, node_list = "0:0", NODE if state == "RUNNING" else "None assigned"
        seconds = int(time.time() - info["submitted"]) if node_list != "None assigned" else 0
        values = {
            "jobidraw": str(job_id),
            "state": state,
            "exitcode": code,
            "elapsed": time.strftime("%H:%M:%S", time.gmtime(seconds)),
            "nodelist": node_list,
            "reason": reason,
        }
        print("|".join(values[f] for f in fields))
    return 0


def scancel(args: list[str]) -> int:
    for job_id in args:
        if _end(int(job_id)):
            continue
        info = json.loads((JOBS / f"{job_id}.json").read_text())
        started = (JOBS / f"{job_id}.started").exists()
        _finish(
            int(job_id),
            f"CANCELLED by {os.getuid()}",
            "0:0",
            "None",
            NODE if started else "None assigned",
        )
        with contextlib.suppress(KeyError, ProcessLookupError, PermissionError):
            os.killpg(info["process_group"], signal.SIGTERM)
    return 0


def main() -> int:
    command, args = sys.argv[1], sys.argv[2:]
    STATE.mkdir(parents=True, exist_ok=True)
    with open(STATE / "calls.log", "a") as log:
        log.write(" ".join([command, *args]) + "\n")
    return {"sbatch": sbatch, "squeue": squeue, "sacct": sacct, "scancel": scancel}[command](args)


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
