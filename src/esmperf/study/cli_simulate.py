"""`esmperf simulate`: a workload on simulated clusters (SimGrid SMPI), interconnects x node
counts, as a one-line study on the smpi stack (docs/simulate.md)."""

import argparse
import sys
from typing import Any

from esmperf.errors import EsmperfError
from esmperf.mpi.knobs import FOLD_AUTO_RANKS
from esmperf.mpi.machines import machine
from esmperf.mpi.platforms import check_topology, interconnect
from esmperf.mpi.stacks import SMPI, discover_stacks
from esmperf.study.cli_common import axis, run_options, run_study_command, split_list
from esmperf.study.file import study_from_dict


def add_simulate_command(commands: Any) -> None:
    simulate = commands.add_parser(
        "simulate",
        help="run a workload on simulated clusters (SimGrid SMPI): interconnects x node counts",
        description="Run a workload, unmodified, on simulated clusters of the given "
        "interconnects and node counts (SimGrid SMPI, docs/simulate.md): the one-line study "
        "of the smpi stack, with the same statistics, store and report as `esmperf study`. "
        "Times are simulated; computation is each rank's bursts as measured on this machine.",
        epilog="example: esmperf simulate hycom --platform gige,ib-qdr --nodes 1,2,4,8,16",
    )
    simulate.add_argument("workload", help="a workload (see `esmperf workloads`)")
    simulate.add_argument(
        "--platform",
        type=split_list,
        default=["gige", "ib-qdr"],
        help="interconnects, comma-separated (default: gige,ib-qdr; see "
        "`esmperf knobs --stack smpi`)",
    )
    simulate.add_argument(
        "--nodes",
        type=split_list,
        default=["1", "2", "4", "8"],
        help="node counts, comma-separated (default: 1,2,4,8)",
    )
    simulate.add_argument(
        "--ranks",
        type=split_list,
        metavar="504,2442",
        help="rank counts instead of --nodes: each on ceil(ranks / "
        "ranks-per-node) nodes, the last one partly filled (the seeds' 504 "
        "cores on 48-core nodes)",
    )
    simulate.add_argument(
        "--ranks-per-node",
        type=int,
        default=1,
        metavar="N",
        help="ranks (cores used) per node (default 1)",
    )
    simulate.add_argument(
        "--size",
        type=split_list,
        help="sizes, comma-separated (default: the workload's default size)",
    )
    simulate.add_argument("--steps", type=int, help="time steps (the workload's --steps)")
    simulate.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=V1,V2",
        help="a workload option axis, e.g. halo=persistent,isend",
    )
    for knob, metavar, what in KNOB_FLAGS:
        flag = "--" + knob.replace("_", "-")
        simulate.add_argument(flag, type=split_list, metavar=metavar, help=what)
    simulate.add_argument(
        "--knob",
        action="append",
        default=[],
        metavar="NAME=V1,V2",
        help="any other knob as an axis, e.g. allreduce_algorithm=default,recursive_doubling "
        "(see `esmperf knobs`)",
    )
    simulate.add_argument(
        "--profile",
        action="store_true",
        help="profile one run per configuration (simulated times, the "
        "profiler linked into the workload)",
    )
    simulate.add_argument(
        "--repeats",
        type=int,
        default=3,
        metavar="N",
        help="measured repetitions per configuration (default 3)",
    )
    simulate.add_argument("--timeout", type=float, default=600, help="seconds per run (600)")
    run_options(simulate)
    simulate.add_argument(
        "--dry-run",
        action="store_true",
        help="print the configurations and their smpirun commands; run nothing",
    )
    simulate.set_defaults(handler=_simulate)


# The knobs of the smpi stack as flags, in the order they vary (mpi/knobs.py has each knob's
# values and meaning; here: the flag's metavar and its help, with the command's defaults).
KNOB_FLAGS = (
    (
        "computation",
        "measured,off,model",
        "charge the measured compute bursts (measured, the default), none (off: network only, "
        "deterministic) or each kernel's flops at its core's peak overlapped with its bytes "
        "over its node's bandwidth share (model: the ECM model, deterministic, needs --machine)",
    ),
    (
        "topology",
        "crossbar,fat-tree-2to1,...",
        "how the nodes are wired: crossbar (the default), fat-tree-1to1, fat-tree-2to1, "
        "fat-tree-4to1 (leaves of 4 nodes, B:1 blocking), torus (3-D); comma-separated",
    ),
    (
        "network_model",
        "cm02,smpi,ns3,cm02-tcp",
        "SimGrid network model (default cm02: latency + n/bandwidth; ns3: TCP packet by packet "
        "through ns-3; cm02-tcp: cm02 with incast derived from ns-3; the last two gige and "
        "10gige)",
    ),
    (
        "switch_buffer",
        "low,high",
        "a switch port's buffer under --network-model ns3 or cm02-tcp: the band's ends "
        "(default low)",
    ),
    (
        "tcp_kernel",
        "none,1hz-per-bit",
        "the kernel's CPU cost of TCP between nodes (gige, 10gige; needs --machine; default none)",
    ),
    (
        "machine",
        "dell-r815,azure-hbv4,...",
        "the simulated node (default none: a core of this machine per rank): its memory "
        "bandwidth shared by the ranks on it and its core speed (`esmperf knobs --stack smpi`)",
    ),
    (
        "frequency",
        "nominal,1800,1400",
        "the cores' clock in MHz among the machine's settings (default nominal): a kernel's "
        "in-core time scales with 1/clock, its memory time does not (needs --machine)",
    ),
    (
        "fold",
        "auto,on,off",
        f"folded simulation for runs at scale (default auto: on from {FOLD_AUTO_RANKS} ranks "
        "for the workloads that fold)",
    ),
    (
        "noise",
        "none,linux-2007-high,...",
        "OS noise on every node: published timer-interrupt signatures that slow each node's "
        "computation (default none; `esmperf knobs --stack smpi`)",
    ),
    ("noise_seed", "0,1,...", "seeds (0-9) of the nodes' noise phases (default 0)"),
    (
        "file_system",
        "none,nfs-low,nfs-high",
        "the shared file system one rank reads input from: NFS over GigE at 60 or 120 MB/s, the "
        "published single-client band (default none; for workloads that read, cesm --input cesm)",
    ),
    (
        "offload",
        "none,fca,sharp",
        "Barrier, Bcast, Reduce, Allreduce, Allgather(v) in the switch tree (InfiniBand "
        "platforms; default none: SMPI's CPU algorithms)",
    ),
    (
        "eager_limit",
        "auto,simgrid,mpi",
        "sends below it eager, from it rendezvous (simgrid: SMPI's default below "
        f"{FOLD_AUTO_RANKS} ranks, every send a rendezvous from it; mpi: Open MPI's limit of "
        "the platform's transport at every scale; default auto: mpi where that limit is "
        "sourced, simgrid elsewhere)",
    ),
    (
        "host_overhead",
        "none,low,high",
        "the CPU time each eager message costs its sender and receiver (LogGP o): the ends of "
        "the published band (gige, 10gige, ib-qdr, ib-fdr, whose eager sends it needs; default none)",
    ),
    (
        "collectives",
        "simgrid,ompi,mpich",
        "which rules choose SMPI's collective algorithms: SimGrid's defaults (default), or Open "
        "MPI's or MPICH's decision rules as SimGrid transcribes them",
    ),
    (
        "bandwidth_end",
        "low,high",
        "the end of an interconnect's bandwidth range (an adapter's PCIe payload size, 128 or "
        "256 B; default low)",
    ),
    ("rails", "1,2", "adapters per node, striped as Open MPI does (default 1)"),
    (
        "node_channel",
        "per_pair,shared",
        "on-node messages: each pair its own loopback, or also the node's memory shared "
        "(needs --machine; default per_pair)",
    ),
)


def _simulate(args: argparse.Namespace) -> int:
    nodes = [_positive(text, "--nodes", "node counts", "1,2,4,8") for text in args.nodes]
    if not nodes:
        raise EsmperfError("--nodes is empty: give node counts, e.g. --nodes 1,2,4,8")
    ranks = [count * args.ranks_per_node for count in nodes]
    if args.ranks:
        ranks = [_positive(text, "--ranks", "rank counts", "48,96,504") for text in args.ranks]
    if args.ranks_per_node < 1:
        raise EsmperfError(
            f"--ranks-per-node {args.ranks_per_node}: give 1 or more ranks per "
            "node, e.g. --ranks-per-node 2"
        )
    if args.repeats < 1:
        raise EsmperfError(f"--repeats {args.repeats}: give 1 or more repetitions")
    for name in args.platform:
        interconnect(name)  # one clear error for an unknown platform
    for name in args.topology or []:
        check_topology(name)
    stacks = discover_stacks().stacks
    if not any(stack.simulated for stack in stacks):
        raise EsmperfError(
            "SimGrid SMPI is not installed here (no smpicc and smpirun on PATH): "
            "`make setup` installs Debian's libsimgrid-dev (as root), or put "
            "SimGrid's bin directory on PATH; then `esmperf build --stack smpi`"
        )
    for name in args.machine or []:
        if name != "none":
            machine(name)  # one clear error for an unknown machine
    knobs: dict[str, list[str]] = {"platform": args.platform}
    for knob, _, _ in KNOB_FLAGS:
        if getattr(args, knob):
            knobs[knob] = getattr(args, knob)
    for item in args.knob:
        name, values = axis(item, "--knob")
        if name in knobs or name in {knob for knob, _, _ in KNOB_FLAGS}:
            raise EsmperfError(
                f"--knob {item!r}: {name} has its own flag, --{name.replace('_', '-')}"
            )
        knobs[name] = values
    block: dict[str, Any] = {
        "workload": args.workload,
        "stack": [SMPI],
        "knobs": knobs,
        "ranks": ranks,
        "ranks_per_node": args.ranks_per_node,
        "repeats": {"warmup": 0, "min": args.repeats, "max": args.repeats},
        "timeout": args.timeout,
        "profile": args.profile,
    }
    if args.size:
        block["size"] = args.size
    if args.steps is not None:
        block["steps"] = args.steps
    for item in args.option:
        name, values = axis(item, "--option")
        block.setdefault("options", {})[name] = values
    command = " ".join(["esmperf", *sys.argv[1:]])
    data = {
        "name": f"simulate-{args.workload}",
        "title": f"esmperf simulate {args.workload}: {', '.join(args.platform)}"
        f"{' (' + ', '.join(args.topology) + ')' if args.topology else ''} on "
        + (
            f"{', '.join(map(str, ranks))} ranks, {args.ranks_per_node} per node"
            if args.ranks
            else f"{', '.join(map(str, nodes))} nodes x {args.ranks_per_node} ranks"
        ),
        "matrix": [block],
    }
    study = study_from_dict(data, "the command line", command, [SMPI])
    return run_study_command(study, args, stacks, command)


def _positive(text: str, flag: str, what: str, example: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise EsmperfError(f"{flag} {text!r}: {what} are positive integers, e.g. {flag} {example}")
    return value
