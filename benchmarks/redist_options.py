"""Which run options are fastest: the seed's route options study (Figures 1-3) plus the modern
ones, on the 512x1024x16 bundle (lower is better).

    .venv/bin/python benchmarks/redist_options.py [--stack openmpi] [--ranks 2,4] [--repeats 3] [--steps 10] [--tcp]

The defaults (async, pet, bundle on, local direct, single copy on, fields in node-shared memory),
private fields, the local overlap through MPI, then single copy off (what peers on other nodes
get) with each comm, pack and bundle option changed in turn. Each configuration is
one redist-bench run without peers; printed: the run time, median [min..max] over the repeats,
the copy bound measured in the same run and the ratio to it (the figure that survives the
machine's drift between runs), and the ratio to the defaults' run time. The defaults
(esm_route_options_default) are the fastest measured here (docs/redist.md).
"""

import argparse

from redist_common import load, run_bench, span, stacks

# (name, options, fewer runs): node peers with single copy ignore comm, pack and bundle, so those
# are varied with single copy off (the path peers on other nodes take). One message per row
# (pack none) takes seconds per run: it gets 2 runs and 1 repeat.
VARIANTS = [
    ("defaults: single copy, node-shared fields", [], False),
    ("single copy, private fields (cross-memory attach)", ["--memory", "private"], False),
    ("local mpi", ["--local", "mpi"], False),
    ("single copy off: async, pet, bundle", ["--single-copy", "off"], False),
    ("single copy off, pack xp", ["--single-copy", "off", "--pack", "xp"], False),
    ("single copy off, pack none", ["--single-copy", "off", "--pack", "none"], True),
    ("single copy off, pack datatype", ["--single-copy", "off", "--pack", "datatype"], False),
    ("single copy off, comm sync", ["--single-copy", "off", "--comm", "sync"], False),
    ("single copy off, comm persistent", ["--single-copy", "off", "--comm", "persistent"], False),
    ("single copy off, bundle off", ["--single-copy", "off", "--bundle", "off"], False),
]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--stack", default="openmpi")
    parser.add_argument("--ranks", default="2,4")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--size", default="M")
    parser.add_argument(
        "--tcp",
        action="store_true",
        help="MPI over TCP loopback, single copy off only: what peers on other nodes get",
    )
    args = parser.parse_args()
    stack = stacks(args.stack)[0]
    print(f"{load()}; stack {stack.id}{' over TCP loopback' if args.tcp else ''}")
    for ranks in map(int, args.ranks.split(",")):
        print(
            f"\n{ranks} ranks\n\n| options | run (ms) | copy bound (ms) | ratio to copy bound | ratio to defaults | "
            "messages per run | load |"
        )
        print("|---|---|---|---|---|---|---|")
        base = None
        for name, options, slow in VARIANTS:
            if args.tcp and "--single-copy" not in options:
                continue
            repeats, steps = (1, 2) if slow else (args.repeats, args.steps)
            r = run_bench(
                stack,
                ranks,
                "--size",
                args.size,
                "--repeats",
                str(repeats),
                "--steps",
                str(steps),
                "--peers",
                "none",
                *options,
                tcp=args.tcp,
            )
            run = r["redist"]["run_s"]
            base = base or run["median"]
            over = " (oversubscribed)" if r["machine"]["oversubscribed"] else ""
            print(
                f"| {name}{over} | {span(run, 1e3)} | {span(r['redist']['copy_s'], 1e3)} | "
                f"{r['redist']['copy_ratio']:.2f} | {run['median'] / base:.2f} | {r['model']['messages_per_run']} | "
                f"{r['machine']['load_1min']:.2f} |",
                flush=True,
            )
    transport = " (MPI over TCP loopback)" if args.tcp else ""
    print(
        f"\n(lower is better) command: redist-bench --size {args.size} --repeats {args.repeats} --steps "
        f"{args.steps} --peers none <options>{transport}; {load()}"
    )


if __name__ == "__main__":
    main()
