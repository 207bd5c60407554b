"""Route store time per rank, the seed's Figure 8 / Table 2 done again (lower is better).

    .venv/bin/python benchmarks/redist_store.py [--stack openmpi] [--repeats 10]

1. Store scaling, one process: redist-bench --mode store-scaling stores, for each n = 4 ... 65,536
   and every rank of the seed's layout of n ranks in turn, the route that rank would store (block
   routes need no communication). Per rank: the least of R stores; printed: median and max over
   ranks (targets: <= 50 us at n = 2048, <= 1 ms at n = 65,536; ESMF 3.0.1: 55 ms at 2048).
2. The real store on 2 and 4 ranks (the seed's 512x1024x16 grid), through MPI: that adds the one
   small allreduce that makes every error reach every rank. Max over ranks, R repeats.
"""

import argparse

from redist_common import load, run_bench, span, stacks

SEED_MS_AT = {
    32: 0.132084,
    64: 0.230073,
    128: 0.458205,
    256: 1.232135,
    512: 3.7798,
    1024: 13.862,
    2048: 55.3349,
}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--stack", default="openmpi")
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    stack = stacks(args.stack)[0]
    print(f"{load()}; stack {stack.id}")
    result = run_bench(stack, 1, "--mode", "store-scaling", "--repeats", str(args.repeats))
    print(
        "\n| ranks n | src -> dst | bytes moved | store per rank, median (us) | max over ranks (us) | "
        "median per repeat [min..max] (us) | peers | route bytes | ESMF 3.0.1 (Table 2, us) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for row in result["store_scaling"]:
        seed = SEED_MS_AT.get(row["n"])
        print(
            f"| {row['n']} | {row['src_parts']} -> {row['dst_parts']} | {row['bytes_moved']:,} | "
            f"{row['store_us']['median_rank']:.2f} | {row['store_us']['max_rank']:.2f} | "
            f"{span(row['store_us_median_rank_repeats'], digits=2)} | {row['peers_max']} | "
            f"{row['route_bytes_max']} | {f'{seed * 1000:,.0f}' if seed else '-'} |"
        )
    print(
        f"\n(lower is better) command: redist-bench --mode store-scaling --repeats {args.repeats}"
    )
    print(
        "\n| ranks | store through MPI, max over ranks (us), median [min..max] of repeats | oversubscribed |"
    )
    print("|---|---|---|")
    for ranks in (2, 4):
        r = run_bench(stack, ranks, "--mode", "store", "--repeats", str(args.repeats))
        print(
            f"| {ranks} | {span(r['redist']['store_s'], 1e6)} | {r['machine']['oversubscribed']} |"
        )
    print(
        f"\n(lower is better) command: mpirun -n 2|4 redist-bench --mode store --repeats {args.repeats}; {load()}"
    )


if __name__ == "__main__":
    main()
