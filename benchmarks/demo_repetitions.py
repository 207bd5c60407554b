"""How many repetitions the demo needs to detect a 20 % change on this machine: the pooled
run-to-run spread of log figures of merit over a demo store's configurations that do not
oversubscribe the cores, and the repetitions per side at which a two-sided Mann-Whitney test
at alpha 0.05 has 80 % power for that change (stats.repetitions_to_detect).

    .venv/bin/python benchmarks/demo_repetitions.py [build/demo/demo.duckdb] [--change 0.2]

studies/demo.toml's `repeats` quotes this script's answer for the store it was measured on.
It also estimates how long `make demo` takes with N repetitions (3 for 4-rank runs), the
finalize grace instead of a hang's timeout, and redist-bench at a third of its time per run
(3 internal repeats instead of 10: 1.5 s of CPU instead of 4.5 s), from the store's own
elapsed times per repetition and the gaps between them."""

import argparse
import os
import statistics
import sys
from pathlib import Path

from esmperf import stats
from esmperf.store.database import Store
from esmperf.store.results import load_results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", nargs="?", default="build/demo/demo.duckdb", type=Path)
    parser.add_argument("--change", type=float, default=0.2)
    args = parser.parse_args()
    if not args.store.exists():
        sys.exit(f"{args.store}: no such store; run `make demo` first or give a store")
    with Store(args.store, read_only=True) as store:
        results = load_results(store)
        sessions = store.rows("SELECT load_at_start FROM session")
    samples = [r.values for r in results if not r.oversubscribed and len(r.values) > 1]
    spreads = [stats.log_spread(values) for values in samples]
    pooled = stats.log_spread(*samples)
    needed = stats.repetitions_to_detect(args.change, pooled)
    loads = [s["load_at_start"] for s in sessions if s["load_at_start"] is not None]
    print(
        f"store: {args.store} ({len(samples)} configurations not oversubscribed; load at the "
        f"study's start {', '.join(f'{x:.2f}' for x in loads)}; load now "
        f"{os.getloadavg()[0]:.2f})"
    )
    print(
        f"spread of log values per configuration: median {statistics.median(spreads):.3f} "
        f"[{min(spreads):.3f}..{max(spreads):.3f}]; pooled {pooled:.3f}"
    )
    print(
        f"repetitions per side to detect a {args.change:.0%} change (Mann-Whitney, alpha "
        f"0.05, {stats.POWER:.0%} power): {needed}; the power of {needed - 1}: "
        f"{stats.power(needed - 1, args.change, pooled):.2f}, of {needed}: "
        f"{stats.power(needed, args.change, pooled):.2f}"
    )
    print(
        f"make demo with {needed} repetitions: about {estimate(args.store, needed):.0f} s "
        f"(this store's study took {study_seconds(args.store):.0f} s)"
    )
    return 0


def study_seconds(path: Path) -> float:
    with Store(path, read_only=True) as store:
        [row] = store.rows("SELECT max(finished) - min(started) AS span FROM session")
    return row["span"].total_seconds()


def estimate(path: Path, repetitions: int, grace: float = 3.0, redist: float = 0.3) -> float:
    """Seconds for the demo from a demo store: each configuration's mean elapsed time per
    measured repetition (a hang after the result: its run time plus the grace), its profiled
    repetition, and the mean gap between repetitions; redist-bench run with its default 10
    internal repeats is scaled to 3."""
    with Store(path, read_only=True) as store:
        reps = store.rows("SELECT run_key, kind, elapsed, killed_after_result FROM repetition")
        runs = {r["run_key"]: r for r in store.runs()}
    gap = (study_seconds(path) - sum(r["elapsed"] for r in reps)) / len(reps)
    total = 0.0
    for key, run in runs.items():
        mine = [r for r in reps if r["run_key"] == key]
        measured = [r["elapsed"] for r in mine if r["kind"] == "measure"]
        profiled = [r["elapsed"] for r in mine if r["kind"] == "profile"]
        if not measured:
            continue
        hung = [r for r in mine if r["killed_after_result"]]
        each = 1.3 + grace if hung else statistics.mean(measured)  # 1.3 s: its clean runs
        if run["workload"] == "redist" and "repeats" not in (run["options"] or ""):
            each = 0.5 + (each - 0.5) * redist  # 0.5 s: mpirun's start
            profiled = [0.5 + (x - 0.5) * redist for x in profiled]
        count = 3 if run["ranks"] == 4 else repetitions
        total += count * each + sum(profiled) + gap * (count + len(profiled))
    return total


if __name__ == "__main__":
    raise SystemExit(main())
