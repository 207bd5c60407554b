"""Run a study on a machine whose load rises during it, then print what its report says.

    python benchmarks/loaded_study.py studies/ectrans.toml --rise-after 90 [--out STORE]

One busy loop (`bash -c 'while :; do :; done'`) starts with the study, a second one
`--rise-after` seconds later (about halfway: a background load that rises during the study,
issue 26); both are stopped when the study ends. Then the report is written and its findings
printed as the report ranks them: the alarms atop the report, then the leading findings, then
the others. With interleaved rounds the rising load falls on every configuration alike, so a
transport compared at 1 rank (where it cannot act) must read as a quiet control, and the
comparisons must name the drift (docs/outside-codes.md holds one such run)."""

import argparse
import subprocess
import sys
import time
from pathlib import Path

from esmperf.report.analysis import build_groups
from esmperf.report.findings import all_findings
from esmperf.report.html import write_report
from esmperf.report.significance import ranked
from esmperf.store.database import Store
from esmperf.store.results import load_results

ESMPERF = Path(sys.executable).parent / "esmperf"
BUSY = ["bash", "-c", "while :; do :; done"]


def run_under_rising_load(study: Path, store: Path, rise_after: float) -> int:
    busy = [subprocess.Popen(BUSY)]
    started = time.monotonic()
    print(f"loaded_study: busy loop 1 started (pid {busy[0].pid})", flush=True)
    run = subprocess.Popen([str(ESMPERF), "study", str(study), "--out", str(store)])
    try:
        while run.poll() is None:
            if len(busy) == 1 and time.monotonic() - started >= rise_after:
                busy.append(subprocess.Popen(BUSY))
                print(
                    f"loaded_study: busy loop 2 started (pid {busy[1].pid}) after "
                    f"{time.monotonic() - started:.0f} s",
                    flush=True,
                )
            time.sleep(0.5)
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
    print(f"report: {page}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study", type=Path)
    parser.add_argument("--rise-after", type=float, required=True, help="seconds to load 2")
    parser.add_argument("--out", type=Path, help="the store (default: results/<study>-loaded)")
    args = parser.parse_args()
    store = args.out or Path("results") / f"{args.study.stem}-loaded.duckdb"
    status = run_under_rising_load(args.study, store, args.rise_after)
    print_findings(store)
    return status


if __name__ == "__main__":
    sys.exit(main())
