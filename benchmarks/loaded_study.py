"""Run a study on a machine whose load rises during it, then print what its report says.

    python benchmarks/loaded_study.py studies/ectrans.toml [--rise-at 0.5] [--out STORE]

One busy loop (`bash -c 'while :; do :; done'`) starts with the study, a second one when the
study has started `--rise-at` of its runs (default half: a background load that rises during the
study, issue 26; runs are counted as the launcher processes the study starts, found under its
process in /proc, against the plan's warm-ups + maximum repetitions + profiled runs); both are
stopped when the study ends. Then the report is written and its findings printed as the report
ranks them: the alarms atop the report, the leading findings, then the others, and the
conditions (rounds, load, drift) of every comparison, which the report gives only to some.
With interleaved rounds the rising load falls on every configuration alike, so a transport
compared at 1 rank (where it cannot act) must read as a quiet control, and the drift must be
named (docs/outside-codes.md holds such runs)."""

import argparse
import subprocess
import sys
import time
from pathlib import Path

from esmperf.report.analysis import build_groups, comparisons
from esmperf.report.conditions import conditions
from esmperf.report.findings import all_findings
from esmperf.report.html import write_report
from esmperf.report.significance import ranked
from esmperf.store.database import Store
from esmperf.store.results import load_results
from esmperf.study.file import load_study

ESMPERF = Path(sys.executable).parent / "esmperf"
BUSY = ["bash", "-c", "while :; do :; done"]


def planned_runs(study: Path) -> int:
    """Every run the study can start: warm-ups, the most repetitions, the profiled run."""
    total = 0
    for config in load_study(study).configurations:
        total += config.repeats.warmup + config.repeats.max + (config.profile == "once")
    return total


def children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as file:
            return [int(child) for child in file.read().split()]
    except OSError:
        return []


def launches(study_pid: int, seen: set[int]) -> None:
    """Add the study's runs started so far: its children that lead their own process group
    (each run starts in its own; helpers such as ldd or git stay in the study's)."""
    for child in children(study_pid):
        try:
            with open(f"/proc/{child}/stat", encoding="ascii") as file:
                fields = file.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == child:  # state, ppid, pgrp
            seen.add(child)


def run_under_rising_load(study: Path, store: Path, rise_at: float) -> int:
    total = planned_runs(study)
    busy = [subprocess.Popen(BUSY)]
    started = time.monotonic()
    print(f"loaded_study: busy loop 1 started (pid {busy[0].pid}); {total} runs planned")
    run = subprocess.Popen([str(ESMPERF), "study", str(study), "--out", str(store)])
    seen: set[int] = set()
    try:
        while run.poll() is None:
            launches(run.pid, seen)
            if len(busy) == 1 and len(seen) > rise_at * total:
                busy.append(subprocess.Popen(BUSY))
                print(
                    f"loaded_study: busy loop 2 started (pid {busy[1].pid}) at run {len(seen)} "
                    f"of {total}, after {time.monotonic() - started:.0f} s",
                    flush=True,
                )
            time.sleep(0.05)
    finally:
        for process in busy:
            process.terminate()
            process.wait()
        if run.poll() is None:
            run.terminate()
            run.wait()
    print(f"loaded_study: study took {time.monotonic() - started:.0f} s, load stopped")
    return run.returncode


def print_findings(store: Path) -> None:
    page = write_report(store)
    with Store(store, read_only=True) as opened:
        results = load_results(opened)
        groups = build_groups(results, opened.study_info().get("base_ranks"), opened)
    cores = min(int(r.run["cores"]) for r in results if r.run.get("cores"))
    found = all_findings(groups, results, cores)
    leading, rest = ranked(found)
    for finding in found:
        if finding.alarm:
            print(f"ALARM (atop the report): {finding.text}\n")
    for number, finding in enumerate(leading, 1):
        print(f"{number}. [{finding.topic}] {finding.text}\n")
    for finding in rest:
        print(f"- [{finding.topic}] {finding.text}\n")
    for group in groups:
        for c in comparisons(group):
            where = f"{c.what}={c.value} against {c.what}={c.baseline} at {c.ranks} rank(s)"
            print(f"conditions: {group.title}: {where}: {conditions(c.a, c.b).text()}")
    print(f"report: {page}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study", type=Path)
    parser.add_argument("--rise-at", type=float, default=0.5, help="fraction of runs (0.5)")
    parser.add_argument("--out", type=Path, help="the store (default: results/<study>-loaded)")
    args = parser.parse_args()
    store = args.out or Path("results") / f"{args.study.stem}-loaded.duckdb"
    status = run_under_rising_load(args.study, store, args.rise_at)
    print_findings(store)
    return status


if __name__ == "__main__":
    sys.exit(main())
