"""Run time of the seed's bundle redistribution (512x1024x16, 8 double fields) against the copy
bound and the peers, as in ESMF_BundleRedist() (lower is better).

    .venv/bin/python benchmarks/redist_run.py [--stacks openmpi,mpich] [--ranks 4,2]
                                              [--repeats 10] [--steps 50] [--memory shared,private]

Each configuration is one redist-bench run: per repeat, the route store (max over ranks), then 50
runs (each the max over ranks after a barrier; every destination value checked after every run)
whose mean is the repeat's run time; the copy bound (every rank memcpy's its destination bundle's
bytes, concurrently) and the peers (MPI_Alltoallw with subarray types; PETSc VecScatter where
built) timed the same way in the same repeat. Printed: median [min..max] over the repeats, the
ratio to the copy bound (target <= 2.5 on 4 ranks) and each peer's time as a ratio to ours
(> 1: ours is faster). More ranks than cores are oversubscribed: their timings say so.
"""

import argparse

from redist_common import load, run_bench, span, stacks


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
    parser.add_argument(
        "--extra", default="", help="more redist-bench options, e.g. '--single-copy off'"
    )
    args = parser.parse_args()
    print(load())
    print(
        "\n| stack | ranks | memory | run (ms) | copy bound (ms) | ratio to copy | GB/s | "
        "Alltoallw (ms) | ratio to ours | PETSc (ms) | ratio to ours | store (us) | Alltoallw set-up (us) | "
        "PETSc set-up (s) | check | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
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
                    *args.extra.split(),
                )
                red, peers = r["redist"], r["peers"]

                def peer(name: str, peers: dict = peers) -> tuple[str, str]:
                    p = peers.get(name, {})
                    if not p.get("available"):
                        return "-", "-"
                    return span(p["run_s"], 1e3), f"{p['ratio_to_ours']:.2f}"

                a_ms, a_ratio = peer("alltoallw")
                p_ms, p_ratio = peer("petsc")
                a_store = (
                    span(peers["alltoallw"]["store_s"], 1e6, 0)
                    if peers.get("alltoallw", {}).get("available")
                    else "-"
                )
                p_store = (
                    span(peers["petsc"]["store_s"], 1, 2)
                    if peers.get("petsc", {}).get("available")
                    else "-"
                )
                over = " (oversubscribed)" if r["machine"]["oversubscribed"] else ""
                print(
                    f"| {stack.id} | {ranks}{over} | {memory} | {span(red['run_s'], 1e3)} | "
                    f"{span(red['copy_s'], 1e3)} | {red['copy_ratio']:.2f} | {red['bandwidth_GBps']:.2f} | "
                    f"{a_ms} | {a_ratio} | {p_ms} | {p_ratio} | {span(red['store_s'], 1e6, 0)} | {a_store} | "
                    f"{p_store} | {'PASS' if r['verification']['passed'] else 'FAIL'} | {r['machine']['load_1min']:.2f} |",
                    flush=True,
                )
    print(
        f"\n(lower is better; ratios to ours > 1: ours faster) command: redist-bench --size {args.size} "
        f"--repeats {args.repeats} --steps {args.steps} --memory <memory> {args.extra}; {load()}"
    )


if __name__ == "__main__":
    main()
