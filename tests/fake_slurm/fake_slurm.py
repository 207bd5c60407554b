"""A TEST DOUBLE for Slurm's sbatch, squeue, sacct and scancel (tests/test_slurm.py), not Slurm.

It answers in the real commands' output formats for the options esmperf uses, and runs a
submitted batch script on this machine, in the background, as a job on one node called
`fakenode01`. State lives in $FAKE_SLURM_DIR (jobs/<id>.*, calls.log: every invocation).
Knobs for the tests:
  FAKE_SLURM_BAD_PARTITIONS  comma-separated partitions sbatch rejects as real sbatch does
  FAKE_SLURM_TIME_LIMIT      seconds after which a job is killed and ends TIMEOUT
  FAKE_SLURM_OUTCOME=CANCELLED  jobs never run and end "CANCELLED by <uid>"
"""

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
        print(f"sbatch: error: invalid partition specified: {partition}\n"
              "sbatch: error: Batch job submission failed: Invalid partition name specified",
              file=sys.stderr)
        return 1
    JOBS.mkdir(parents=True, exist_ok=True)
    counter = STATE / "next_id"
    job_id = int(counter.read_text()) if counter.exists() else 1000
    counter.write_text(str(job_id + 1))
    output = options.get("output", f"slurm-{job_id}.out").replace("%j", str(job_id))
    info = {"job_id": job_id, "script": str(script), "submitted": time.time(),
            "name": options.get("job-name", script.name)}
    (JOBS / f"{job_id}.json").write_text(json.dumps(info))
    if os.environ.get("FAKE_SLURM_OUTCOME") == "CANCELLED":
        (JOBS / f"{job_id}.end").write_text(f"CANCELLED by {os.getuid()}|0:0")
    else:
        env = dict(os.environ, SLURM_JOB_ID=str(job_id), SLURM_JOB_NODELIST=NODE,
                   SLURM_JOB_NUM_NODES=options.get("nodes", "1"), SLURM_CPUS_ON_NODE="2",
                   SLURM_NTASKS=options.get("ntasks", "1"))
        limit = os.environ.get("FAKE_SLURM_TIME_LIMIT", "")
        runner = (f"timeout -s KILL {limit} bash {script!s}" if limit else f"bash {script!s}")
        # the job: the script, then how it ended (exit code, or TIMEOUT when the limit hit)
        wrapper = (f"{runner} > {output} 2>&1; code=$?; "
                   f"if [ -n '{limit}' ] && [ $code = 137 ]; then state=TIMEOUT; code=0; "
                   f"elif [ $code = 0 ]; then state=COMPLETED; else state=FAILED; fi; "
                   f"echo \"$state|$code:0\" > {JOBS}/{job_id}.end.part; "
                   f"mv {JOBS}/{job_id}.end.part {JOBS}/{job_id}.end")
        subprocess.Popen(["sh", "-c", wrapper], env=env, cwd=script.parent,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    print(job_id if "--parsable" in args else f"Submitted batch job {job_id}")
    return 0


def _jobs() -> list[int]:
    return sorted(int(p.stem) for p in JOBS.glob("*.json")) if JOBS.exists() else []


def _end(job_id: int) -> tuple[str, str] | None:
    path = JOBS / f"{job_id}.end"
    if not path.exists():
        return None
    state, code = path.read_text().strip().split("|")
    return state, code


def squeue(args: list[str]) -> int:  # squeue -h -u USER -o "%i|%T"
    for job_id in _jobs():
        if _end(job_id) is None:
            print(f"{job_id}|RUNNING")
    return 0


FIELDS = {"jobidraw", "state", "exitcode", "elapsed", "nodelist", "reason"}


def sacct(args: list[str]) -> int:  # sacct -n -P -X -j IDS --format=...
    wanted = args[args.index("-j") + 1].split(",")
    fmt = next(a.split("=", 1)[1] for a in args if a.startswith("--format="))
    fields = [f.lower() for f in fmt.split(",")]
    unknown = [f for f in fields if f not in FIELDS]
    if unknown:
        print(f"sacct: error: Invalid field requested: \"{unknown[0]}\"", file=sys.stderr)
        return 1
    for job_id in _jobs():
        if str(job_id) not in wanted:
            continue
        info = json.loads((JOBS / f"{job_id}.json").read_text())
        end = _end(job_id)
        state, code = end if end else ("RUNNING", "0:0")
        seconds = int(time.time() - info["submitted"])
        values = {"jobidraw": str(job_id), "state": state, "exitcode": code,
                  "elapsed": time.strftime("%H:%M:%S", time.gmtime(seconds)),
                  "nodelist": "None assigned" if state.startswith("CANCELLED") else NODE,
                  "reason": "None"}
        print("|".join(values[f] for f in fields))
    return 0


def scancel(args: list[str]) -> int:
    for job_id in args:
        (JOBS / f"{job_id}.end").write_text(f"CANCELLED by {os.getuid()}|0:15")
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
