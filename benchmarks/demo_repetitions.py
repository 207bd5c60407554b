"""How many repetitions the demo needs to detect a 20 % change on this machine: the pooled
run-to-run spread of log figures of merit over a demo store's configurations that do not
oversubscribe the cores, and the repetitions per side at which a two-sided Mann-Whitney test
at alpha 0.05 has 80 % power for that change (stats.repetitions_to_detect).

    .venv/bin/python benchmarks/demo_repetitions.py [build/demo/demo.duckdb] [--change 0.2]

studies/demo.toml's `repeats` quotes this script's answer for the store it was measured on."""

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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
