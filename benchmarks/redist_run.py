"""Run time of the seed's bundle redistribution (512x1024x16, 8 double fields) against the copy
bound and the peers, as in ESMF_BundleRedist() (lower is better).

    .venv/bin/python benchmarks/redist_run.py [--stacks openmpi,mpich] [--ranks 4,2]
                                              [--repeats 10] [--steps 50] [--memory shared,private]
                                              [--peers all|alltoallw,mct|...]

Each configuration is one redist-bench run: per repeat, the route store (max over ranks), then 50
runs (each the max over ranks after a barrier; every destination value checked after every run)
whose mean is the repeat's run time; the copy bound (every rank memcpy's its destination bundle's
bytes, concurrently) and the peers (MPI_Alltoallw with subarray types; PETSc VecScatter and MCT's
Rearranger where built) timed the same way in the same repeat. Printed: median [min..max] over
the repeats, the ratio to the copy bound (target <= 2.5 on 4 ranks), each peer's time as a ratio
to ours (> 1: ours is faster), MCT's run time over MPI_Alltoallw's in the same repeat (the
anchor; median [min..max] of the repeats' ratios), and each peer's store (set-up). More ranks than cores are oversubscribed: their timings
say so.
"""

import argparse
import statistics

from redist_common import load, run_bench, span, stacks

PEERS = {"alltoallw": "Alltoallw", "petsc": "PETSc", "mct": "MCT"}


def peer_columns(peers: dict) -> tuple[list[str], list[str]]:
    """Per peer its run (ms) and ratio to ours, then MCT / Alltoallw (the anchor); per peer its
    store (ms). A peer not run or not available: "-"."""
    available = {name: p for name, p in peers.items() if p.get("available")}
    runs, stores = [], []
    for name in PEERS:
        p = available.get(name)
        runs += [span(p["run_s"], 1e3), f"{p['ratio_to_ours']:.2f}"] if p else ["-", "-"]
        stores.append(span(p["store_s"], 1e3, 3) if p else "-")
    a, m = available.get("alltoallw"), available.get("mct")
    if a and m:  # within each repeat, so that the machine's drift between repeats cancels
        ratios = [t / u for t, u in zip(m["run_s_repeats"], a["run_s_repeats"], strict=True)]
        runs.append(span(median_spread(ratios), 1, 2))
    else:
        runs.append("-")
    return runs, stores


def median_spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--stacks", default="openmpi,mpich")
    parser.add_argument("--ranks", default="4,2")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--memory", default="shared,private")
    parser.add_argument("--size", default="M")
    parser.add_argument("--peers", default="all", help="all, none, or e.g. alltoallw,mct")
    parser.add_argument(
        "--extra", default="", help="more redist-bench options, e.g. '--single-copy off'"
    )
    args = parser.parse_args()
    print(load())
    names = list(PEERS.values())
    header = [
        "stack", "ranks", "memory", "run (ms)", "copy bound (ms)", "ratio to copy", "GB/s",
        *(f"{n}{what}" for n in names for what in (" (ms)", " / ours")),
        "MCT / Alltoallw", "store (ms)", *(f"{n} store (ms)" for n in names), "check", "load",
    ]  # fmt: skip
    print("\n| " + " | ".join(header) + " |\n" + "|---" * len(header) + "|")
    for stack in stacks(args.stacks):
        for ranks in map(int, args.ranks.split(",")):
            for memory in args.memory.split(","):
                r = run_bench(
                    stack,
                    ranks,
                    "--size",
                    args.size,
                    "--repeats",
                    str(args.repeats),
                    "--steps",
                    str(args.steps),
                    "--memory",
                    memory,
                    "--peers",
                    args.peers,
                    *args.extra.split(),
                )
                red = r["redist"]
                runs, stores = peer_columns(r["peers"])
                over = " (oversubscribed)" if r["machine"]["oversubscribed"] else ""
                cells = [
                    stack.id,
                    f"{ranks}{over}",
                    memory,
                    span(red["run_s"], 1e3),
                    span(red["copy_s"], 1e3),
                    f"{red['copy_ratio']:.2f}",
                    f"{red['bandwidth_GBps']:.2f}",
                    *runs,
                    span(red["store_s"], 1e3, 3),
                    *stores,
                    "PASS" if r["verification"]["passed"] else "FAIL",
                    f"{r['machine']['load_1min']:.2f}",
                ]
                print("| " + " | ".join(cells) + " |", flush=True)
    print(
        f"\n(lower is better; ratios to ours > 1: ours faster) command: redist-bench --size {args.size} "
        f"--repeats {args.repeats} --steps {args.steps} --memory <memory> --peers {args.peers} "
        f"{args.extra}; {load()}"
    )


if __name__ == "__main__":
    main()
