"""Knobs: one name and a few portable values for each MPI tuning the seeds study, mapped to
each MPI library's own variables or launcher options. Every run records the knobs it asked for
and the exact variables and options that implement them.

The analogs on one node (see docs/studies.md):
- transport    shm | tcp             interconnect (InfiniBand vs Ethernet): shared memory vs TCP
                                     loopback, forced onto `lo`
- single_copy  on | off              KNEM: Open MPI's CMA single copy (MPICH 4.2+ CMA)
- connections  on_demand | eager     ParaStation's PSP_ONDEMAND: Open MPI `mpi_preconnect_mpi`
- binding      none | core | socket  process binding (the decks' --bind-to-core)
- <op>_algorithm (allreduce, bcast, barrier, reduce, allgather, alltoall): collective algorithm
  selection, the FCA analog: Open MPI `coll_tuned_*`, MPICH `MPIR_CVAR_*_INTRA_ALGORITHM`.

Knobs of the simulated stack `smpi` (SimGrid SMPI, docs/simulate.md), unsupported elsewhere:
- platform       gige | 10gige | ib-qdr | ib-fdr | ib-hdr   the simulated interconnect; the node
                 count is ranks / ranks_per_node (the study's axis; 1 rank per node if unset)
- topology       crossbar | fat-tree-1to1 | fat-tree-2to1 | fat-tree-4to1 | torus   how the
                 nodes are wired: one non-blocking switch, a 2-level fat-tree blocking B:1 at
                 its leaves, or a 3-D torus (mpi/platforms.py)
- network_model  cm02 | smpi     SimGrid's analytic latency + n/bandwidth, or its piecewise
                                 model calibrated on a TCP cluster
- computation    measured | off | model   charge each rank's measured compute bursts, nothing
                 (the network alone), or only each kernel's bytes over its node's bandwidth
                 share (deterministic; needs a machine)
- machine        none | dell-m610 | dell-r815 | juropa   the simulated node (mpi/machines.py): its
                 memory bandwidth shared by the ranks on it, its core speed relative to here
- fold           auto | on | off  folded simulation (esm_fold.h): fields and replicated data
                 shared between simulated ranks, kernels sampled then charged; auto folds from
                 FOLD_AUTO_RANKS ranks up, for the workloads that fold

A value a library cannot honour is `Unsupported` with the reason: the runner skips those runs
and says so; it never runs them with the knob silently ignored.

Over 400 lines: the knobs, their mapping to each library and to SimGrid's flags are one table
read together; splitting them would put a knob's values and its implementation apart.
"""

import re
from dataclasses import dataclass, field
from pathlib import Path

from esmperf.mpi import machines, platforms
from esmperf.mpi.stacks import SMPI, Stack
from esmperf.paths import build_root

# fold = auto folds a simulated run of a workload that folds from this many ranks up. A full
# simulation runs every rank's computation one after another here, so a seed-size problem costs
# its whole computation whatever the rank count: pflotran 100_100_100 unfolded on 48-192
# simulated ranks took 15-25 minutes a run, folded 2-9 s of CPU for 2 steps (docs/pflotran.md).
# The seeds' smallest runs are one 48-core node: folding starts below it.
FOLD_AUTO_RANKS = 32


@dataclass(frozen=True)
class Knob:
    name: str
    values: tuple[str, ...]
    baseline: str  # the library default, against which gains are measured
    analog: str  # what it stands for in the seeds
    description: str


@dataclass(frozen=True)
class Implementation:
    """Which MPI library a stack is, for the knob tables: family, major version, details."""

    name: str  # "openmpi", "mpich", "impi"
    version: tuple[int, ...]
    netmods: tuple[str, ...] = ()  # MPICH ch4 network modules ("ucx", "ofi")

    @property
    def major(self) -> int:
        return self.version[0] if self.version else 0


@dataclass(frozen=True)
class KnobSetting:
    """What implements a set of knobs for one stack: variables and launcher options."""

    env: dict[str, str] = field(default_factory=dict)
    launcher_args: tuple[str, ...] = ()
    files: tuple[tuple[Path, str], ...] = ()  # (path, text) to write before the run (SMPI)


class Unsupported(Exception):
    """The stack cannot honour this knob value; the message says why."""


COLLECTIVES = ("allreduce", "bcast", "barrier", "reduce", "allgather", "alltoall")

# Open MPI coll_tuned algorithm numbers (ompi_info --param coll tuned --level 9; identical in
# 4.1 and 5.0 except sparbit, added in 5.0).
OPENMPI_ALGORITHMS: dict[str, dict[str, int]] = {
    "allreduce": {
        "linear": 1,
        "nonoverlapping": 2,
        "recursive_doubling": 3,
        "ring": 4,
        "segmented_ring": 5,
        "rabenseifner": 6,
    },
    "bcast": {
        "linear": 1,
        "chain": 2,
        "pipeline": 3,
        "split_binary_tree": 4,
        "binary_tree": 5,
        "binomial": 6,
        "knomial": 7,
        "scatter_allgather": 8,
        "scatter_allgather_ring": 9,
    },
    "barrier": {
        "linear": 1,
        "double_ring": 2,
        "recursive_doubling": 3,
        "dissemination": 4,
        "two_proc": 5,
        "tree": 6,
    },
    "reduce": {
        "linear": 1,
        "chain": 2,
        "pipeline": 3,
        "binary": 4,
        "binomial": 5,
        "in_order_binary": 6,
        "rabenseifner": 7,
    },
    "allgather": {
        "linear": 1,
        "bruck": 2,
        "recursive_doubling": 3,
        "ring": 4,
        "neighbor": 5,
        "two_proc": 6,
        "sparbit": 7,
    },
    "alltoall": {"linear": 1, "pairwise": 2, "bruck": 3, "linear_sync": 4, "two_proc": 5},
}
OPENMPI_5_ONLY = {("allgather", "sparbit")}

# MPICH MPIR_CVAR_<OP>_INTRA_ALGORITHM values by portable name (mpivars of 4.0.2 and 5.0.2).
MPICH_ALGORITHMS: dict[str, dict[str, str]] = {
    "allreduce": {
        "recursive_doubling": "recursive_doubling",
        "rabenseifner": "reduce_scatter_allgather",
        "smp": "smp",
        "nb": "nb",
        "tree": "tree",
        "recexch": "recexch",
        "recursive_multiplying": "recursive_multiplying",
    },
    "bcast": {
        "binomial": "binomial",
        "scatter_allgather": "scatter_recursive_doubling_allgather",
        "scatter_allgather_ring": "scatter_ring_allgather",
        "smp": "smp",
        "nb": "nb",
        "tree": "tree",
        "pipeline": "pipelined_tree",
    },
    "barrier": {"dissemination": "dissemination", "smp": "smp", "nb": "nb", "recexch": "recexch"},
    "reduce": {
        "binomial": "binomial",
        "rabenseifner": "reduce_scatter_gather",
        "smp": "smp",
        "nb": "nb",
    },
    "allgather": {
        "bruck": "brucks",
        "recursive_doubling": "recursive_doubling",
        "ring": "ring",
        "nb": "nb",
        "k_bruck": "k_brucks",
        "recexch_doubling": "recexch_doubling",
        "recexch_halving": "recexch_halving",
    },
    "alltoall": {
        "bruck": "brucks",
        "pairwise": "pairwise",
        "pairwise_sendrecv_replace": "pairwise_sendrecv_replace",
        "scattered": "scattered",
        "nb": "nb",
        "k_bruck": "k_brucks",
    },
}
# Values that only MPICH 5 knows; the high-radix dissemination barrier is renamed there.
MPICH_5_ONLY = {
    ("allreduce", "tree"),
    ("allreduce", "recexch"),
    ("allreduce", "recursive_multiplying"),
    ("bcast", "tree"),
    ("bcast", "pipeline"),
    ("barrier", "recexch"),
    ("allgather", "k_bruck"),
    ("allgather", "recexch_doubling"),
    ("allgather", "recexch_halving"),
    ("alltoall", "k_bruck"),
}
MPICH_5_RENAMED = {("barrier", "dissemination"): "k_dissemination"}

# SimGrid SMPI's own collective algorithms (--cfg=smpi/<op>:<name>) by portable name, from
# the list SMPI 3.32 prints for an unknown one (`--cfg=smpi/bcast:help`); each is the same
# algorithm as the Open MPI coll_tuned one of that name (most are ports of it, `ompi_*`).
SMPI_ALGORITHMS: dict[str, dict[str, str]] = {
    "allreduce": {
        "recursive_doubling": "rdb",
        "ring": "lr",
        "rabenseifner": "rab",
        "segmented_ring": "ompi_ring_segmented",
    },
    "bcast": {
        "linear": "flattree",
        "binomial": "binomial_tree",
        "pipeline": "ompi_pipeline",
        "split_binary_tree": "ompi_split_bintree",
        "scatter_allgather": "scatter_rdb_allgather",
        "scatter_allgather_ring": "scatter_LR_allgather",
    },
    "barrier": {
        "linear": "ompi_basic_linear",
        "double_ring": "ompi_doublering",
        "recursive_doubling": "ompi_recursivedoubling",
        "dissemination": "ompi_bruck",
        "two_proc": "ompi_two_procs",
        "tree": "ompi_tree",
    },
    "reduce": {
        "linear": "ompi_basic_linear",
        "chain": "ompi_chain",
        "pipeline": "ompi_pipeline",
        "binary": "ompi_binary",
        "binomial": "ompi_binomial",
        "in_order_binary": "ompi_in_order_binary",
        "rabenseifner": "rab",
    },
    "allgather": {
        "bruck": "bruck",
        "recursive_doubling": "rdb",
        "ring": "ring",
        "neighbor": "ompi_neighborexchange",
    },
    "alltoall": {"linear": "basic_linear", "pairwise": "pair", "bruck": "bruck"},
}


def _algorithm_knob(op: str) -> Knob:
    names = sorted({*OPENMPI_ALGORITHMS[op], *MPICH_ALGORITHMS[op]})
    return Knob(
        name=f"{op}_algorithm",
        values=("default", *names),
        baseline="default",
        analog="collective offload (Mellanox FCA)",
        description=f"MPI_{op.capitalize()} algorithm: default = the library's own choice",
    )


KNOBS: dict[str, Knob] = {
    knob.name: knob
    for knob in (
        Knob(
            "transport",
            ("shm", "tcp"),
            "shm",
            "interconnect (InfiniBand vs Ethernet)",
            "how ranks on this node talk: shared memory, or TCP forced onto loopback",
        ),
        Knob(
            "single_copy",
            ("on", "off"),
            "on",
            "KNEM",
            "single-copy (CMA) transfers of large messages within a node",
        ),
        Knob(
            "connections",
            ("on_demand", "eager"),
            "on_demand",
            "PSP_ONDEMAND",
            "connection set-up: lazily at the first message, or all at MPI_Init",
        ),
        Knob("binding", ("none", "core", "socket"), "none", "--bind-to-core", "process binding"),
        *(_algorithm_knob(op) for op in COLLECTIVES),
        Knob(
            "platform",
            tuple(platforms.INTERCONNECTS),
            "gige",
            "interconnect (1GigE vs IB)",
            "simulated cluster interconnect (smpi stack only; docs/simulate.md)",
        ),
        Knob(
            "topology",
            platforms.TOPOLOGIES,
            "crossbar",
            "cluster size and blocking",
            "simulated cluster wiring: one non-blocking switch, a 2-level fat-tree (leaves of "
            f"{platforms.LEAF_NODES} nodes, B:1 blocking) or a 3-D torus (smpi stack only)",
        ),
        Knob(
            "network_model",
            ("cm02", "smpi"),
            "cm02",
            "simulation model",
            "SimGrid network model: cm02 = latency + n/bandwidth exactly, smpi = SimGrid's "
            "piecewise model calibrated on a TCP cluster (smpi stack only)",
        ),
        Knob(
            "computation",
            ("measured", "off", "model"),
            "measured",
            "simulation model",
            "simulated compute: each rank's bursts as measured on this machine's core, none "
            "(network only, deterministic), or each kernel's bytes over the node's bandwidth "
            "share (deterministic; needs a machine; smpi stack only)",
        ),
        Knob(
            "machine",
            machines.MACHINE_NAMES,
            "none",
            "cluster node",
            "simulated node: none = a core of this machine per rank, no shared memory "
            "bandwidth; or a seed's node (cores, memory bandwidth, core speed; smpi stack only)",
        ),
        Knob(
            "fold",
            ("auto", "on", "off"),
            "auto",
            "simulation at scale",
            "folded simulation: fields shared between simulated ranks, kernels timed on their "
            f"first calls then charged; auto = on from {FOLD_AUTO_RANKS} ranks for workloads "
            "that fold (smpi stack only)",
        ),
    )
}
SIMULATION_KNOBS = ("platform", "topology", "network_model", "computation", "machine", "fold")


def implementation_of(stack: Stack) -> Implementation:
    """The library behind a stack, from its MPI_Get_library_version string."""
    text = stack.version
    match = re.search(r"Open MPI v(\d+)\.(\d+)(?:\.(\d+))?", text)
    if match:
        return Implementation("openmpi", tuple(int(g) for g in match.groups() if g))
    match = re.search(r"Intel\(R\) MPI Library (\d+)(?:\.(\d+))?", text)
    if match:
        return Implementation("impi", tuple(int(g) for g in match.groups() if g))
    match = re.search(r"SimGrid SMPI (\d+)\.(\d+)(?:\.(\d+))?", text)
    if match:
        return Implementation(SMPI, tuple(int(g) for g in match.groups() if g))
    match = re.search(r"MPICH Version:\s*(\d+)\.(\d+)(?:\.(\d+))?", text)
    if match:
        device = re.search(r"MPICH Device:\s*(.*)", text)
        netmods = tuple(re.findall(r"ucx|ofi", device.group(1))) if device else ()
        return Implementation("mpich", tuple(int(g) for g in match.groups() if g), netmods)
    return Implementation(stack.family, ())


def check_knob(name: str, value: str) -> None:
    """ValueError with a clear message for an unknown knob or value."""
    knob = KNOBS.get(name)
    if knob is None:
        raise ValueError(f"unknown knob {name!r} (knobs: {', '.join(KNOBS)}; see `esmperf knobs`)")
    if value not in knob.values:
        raise ValueError(f"knob {name} has no value {value!r} (values: {', '.join(knob.values)})")


def knob_setting(
    stack: Stack,
    knobs: dict[str, str],
    ranks: int,
    cores: int,
    ranks_per_node: int | None = None,
    platform_dir: Path | None = None,
) -> KnobSetting:
    """The variables and launcher options implementing `knobs` on `stack`; Unsupported with
    the reason when the library cannot honour one of them. On the smpi stack they include the
    platform file and hostfile of the run (written to `platform_dir` by the runner)."""
    impl = implementation_of(stack)
    if stack.simulated:
        return smpi_setting(
            knobs, ranks, ranks_per_node or 1, platform_dir or build_root() / SMPI / "platforms"
        )
    env: dict[str, str] = {}
    args: list[str] = []
    for name, value in sorted(knobs.items()):
        check_knob(name, value)
        if name in SIMULATION_KNOBS:
            raise Unsupported(
                f"{name} is a knob of the simulated cluster: it needs the smpi "
                "stack (SimGrid SMPI, `esmperf simulate`; docs/simulate.md)"
            )
        mapper = _MAPPERS.get(impl.name)
        if mapper is None:
            raise Unsupported(f"no knob mapping for {stack.id} ({impl.name}): {name} unsupported")
        part = mapper(impl, name, value, ranks, cores)
        env.update(part.env)
        args.extend(part.launcher_args)
    return KnobSetting(env, tuple(args))


def _openmpi(impl: Implementation, name: str, value: str, ranks: int, cores: int) -> KnobSetting:
    shm_btl = "vader" if impl.major < 5 else "sm"
    if name == "transport":
        if value == "shm":
            return KnobSetting({"OMPI_MCA_pml": "ob1", "OMPI_MCA_btl": f"self,{shm_btl}"})
        return KnobSetting(
            {"OMPI_MCA_pml": "ob1", "OMPI_MCA_btl": "self,tcp", "OMPI_MCA_btl_tcp_if_include": "lo"}
        )
    if name == "single_copy":
        if impl.major < 5:
            mechanism = "cma" if value == "on" else "none"
            return KnobSetting({"OMPI_MCA_btl_vader_single_copy_mechanism": mechanism})
        return KnobSetting({"OMPI_MCA_smsc": "cma" if value == "on" else "^cma"})
    if name == "connections":
        return KnobSetting({"OMPI_MCA_mpi_preconnect_mpi": "1" if value == "eager" else "0"})
    if name == "binding":
        policy = value
        if value != "none" and ranks > cores:
            policy += ":overload-allowed"  # otherwise Open MPI refuses more ranks than cores
        return KnobSetting({}, ("--bind-to", policy))
    op = name.removesuffix("_algorithm")
    if value == "default":
        return KnobSetting()
    number = OPENMPI_ALGORITHMS[op].get(value)
    if number is None:
        raise Unsupported(
            f"Open MPI has no {value} algorithm for MPI_{op.capitalize()} "
            f"(it has: {', '.join(OPENMPI_ALGORITHMS[op])})"
        )
    if (op, value) in OPENMPI_5_ONLY and impl.major < 5:
        raise Unsupported(f"the {value} {op} algorithm needs Open MPI 5")
    return KnobSetting(
        {
            "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
            f"OMPI_MCA_coll_tuned_{op}_algorithm": str(number),
        }
    )


def _mpich(impl: Implementation, name: str, value: str, ranks: int, cores: int) -> KnobSetting:
    if name == "transport":
        if value == "shm":
            return KnobSetting({"MPIR_CVAR_NOLOCAL": "0"})
        if "ofi" in impl.netmods:  # the PyPI wheel: its bundled UCX fails on lo, OFI works
            return KnobSetting(
                {
                    "MPIR_CVAR_NOLOCAL": "1",
                    "MPIR_CVAR_CH4_NETMOD": "ofi",
                    "FI_PROVIDER": "tcp",
                    "FI_TCP_IFACE": "lo",
                }
            )
        if "ucx" in impl.netmods:  # Debian's ch4:ucx
            return KnobSetting(
                {"MPIR_CVAR_NOLOCAL": "1", "UCX_TLS": "tcp,self", "UCX_NET_DEVICES": "lo"}
            )
        return KnobSetting({"MPIR_CVAR_NOLOCAL": "1"})  # ch3: nemesis' TCP netmod
    if name == "single_copy":
        if impl.version < (4, 2):
            raise Unsupported(
                f"MPICH {'.'.join(map(str, impl.version))} has no CMA single copy (only XPMEM, "
                "which needs the xpmem kernel module): single_copy needs MPICH 4.2 or later"
            )
        return KnobSetting({"MPIR_CVAR_CH4_CMA_ENABLE": "1" if value == "on" else "0"})
    if name == "connections":
        raise Unsupported("MPICH has no switch for connection set-up (eager or on demand)")
    if name == "binding":
        return KnobSetting({}, ("-bind-to", value))
    op = name.removesuffix("_algorithm")
    if value == "default":
        return KnobSetting()
    algorithm = MPICH_ALGORITHMS[op].get(value)
    if algorithm is None:
        raise Unsupported(
            f"MPICH has no {value} algorithm for MPI_{op.capitalize()} "
            f"(it has: {', '.join(MPICH_ALGORITHMS[op])})"
        )
    if (op, value) in MPICH_5_ONLY and impl.major < 5:
        raise Unsupported(f"the {value} {op} algorithm needs MPICH 5")
    if impl.major >= 5:
        algorithm = MPICH_5_RENAMED.get((op, value), algorithm)
    # DEVICE_COLLECTIVES=none: the ch4 device must not override the algorithm asked for.
    return KnobSetting(
        {
            "MPIR_CVAR_DEVICE_COLLECTIVES": "none",
            f"MPIR_CVAR_{op.upper()}_INTRA_ALGORITHM": algorithm,
        }
    )


def _impi(impl: Implementation, name: str, value: str, ranks: int, cores: int) -> KnobSetting:
    if name == "transport":
        if value == "shm":
            return KnobSetting({"I_MPI_FABRICS": "shm:ofi"})
        return KnobSetting({"I_MPI_FABRICS": "ofi", "FI_PROVIDER": "tcp", "FI_TCP_IFACE": "lo"})
    if name == "connections":
        return KnobSetting({"I_MPI_DYNAMIC_CONNECTION": "0" if value == "eager" else "1"})
    if name == "binding":
        return KnobSetting(
            {
                "I_MPI_PIN": "0" if value == "none" else "1",
                **({} if value == "none" else {"I_MPI_PIN_DOMAIN": value}),
            }
        )
    raise Unsupported(f"{name} is not mapped for Intel MPI yet")


_MAPPERS = {"openmpi": _openmpi, "mpich": _mpich, "impi": _impi}

# The smpirun options of every simulated run: SMPI's reference speed equal to the hosts' (a
# measured burst costs what it cost here), the simulated time printed at the end (stderr),
# SimGrid's configuration chatter silenced.
SMPI_ALWAYS = (
    f"--cfg=smpi/host-speed:{platforms.HOST_SPEED:.0f}f",
    "--cfg=smpi/display-timing:yes",
    "--log=xbt_cfg.thres:warning",
)
# SimGrid tuned for thousands of simulated ranks, from FOLD_AUTO_RANKS ranks up (measured on
# homme ne120 folded, docs/simulate.md "What a simulation costs"): each rank's globals copied by
# mmap, not one dlopen of the program per rank (317 -> 201 MB at 1,024 ranks; dlopen would
# pass Linux's 65,530 memory maps near 13,824 ranks); no detached small sends (SimGrid 3.32
# removes a finished detached send from a list by scanning it: quadratic in the messages in
# flight; homme 1,024 ranks 148 -> 63 s); the solver's precision 1e-8 instead of smpirun's
# 1e-9 (half the CPU time, simulated time within 0.02 %).
SMPI_AT_SCALE = (
    "--cfg=smpi/privatization:mmap",
    "--cfg=smpi/send-is-detached-thresh:0",
    "--cfg=surf/precision:1e-8",
)
# And the collectives the seeds' MPI libraries run at scale where SimGrid's default is none of
# theirs and ruins the simulator: SMPI's default MPI_Allgather(v) posts a send and a receive
# between every pair of ranks at once (ranks^2 flows in the network model); MPICH uses Bruck's
# algorithm for short allgathers and a ring for long ones (CESM's rearranger plans allgatherv
# their index lists: 1deg on 384 ranks finished in 252 s of CPU with these, the default was
# stopped unfinished). MPI_Allreduce keeps SMPI's default (a linear reduce and a binomial
# broadcast) although the seeds' MPIs use recursive doubling for short vectors: with `rdb`
# PFLOTRAN 100^3 on 384 ranks was stopped after 12.5 min of CPU (143 s before), so recursive
# doubling is the allreduce_algorithm knob's choice, not the default. From FOLD_AUTO_RANKS
# ranks, unless the knob of the collective chooses another (docs/simulate.md, "What a
# simulation costs").
SMPI_COLLECTIVES_AT_SCALE = {"allgather": "bruck", "allgatherv": "mpich_ring"}
SMPI_NETWORK_MODELS = {
    "cm02": ("--cfg=network/model:CM02", "--cfg=network/crosstraffic:0"),
    "smpi": ("--cfg=network/model:SMPI",),
}
SMPI_NOT_SIMULATED = {
    "transport": "the smpi stack simulates its interconnect: choose it with the platform knob "
    f"({', '.join(platforms.INTERCONNECTS)})",
    "single_copy": "single copy (CMA/KNEM) is not simulated by SimGrid SMPI",
    "connections": "connection set-up is not simulated by SimGrid SMPI",
    "binding": "process binding has no meaning on a simulated cluster (each rank has a core)",
}


def smpi_setting(
    knobs: dict[str, str], ranks: int, ranks_per_node: int, platform_dir: Path
) -> KnobSetting:
    """smpirun options for `knobs` on a simulated cluster of ceil(ranks / ranks_per_node)
    nodes, with the platform file and hostfile to write."""
    chosen = {knob.name: knob.baseline for knob in KNOBS.values() if knob.name in SIMULATION_KNOBS}
    for name, value in sorted(knobs.items()):
        check_knob(name, value)
        if name in SMPI_NOT_SIMULATED:
            raise Unsupported(SMPI_NOT_SIMULATED[name])
        chosen[name] = value
    collectives = []
    for name, value in sorted(chosen.items()):
        op = name.removesuffix("_algorithm")
        if op == name or value == "default":
            continue
        algorithm = SMPI_ALGORITHMS[op].get(value)
        if algorithm is None:
            raise Unsupported(
                f"SimGrid SMPI has no {value} algorithm for MPI_{op.capitalize()} "
                f"(it has: {', '.join(SMPI_ALGORITHMS[op])})"
            )
        collectives.append(f"--cfg=smpi/{op}:{algorithm}")
    if ranks >= FOLD_AUTO_RANKS:
        collectives.extend(
            f"--cfg=smpi/{op}:{algorithm}"
            for op, algorithm in SMPI_COLLECTIVES_AT_SCALE.items()
            if chosen.get(f"{op}_algorithm", "default") == "default"
        )
    platforms.check_shape(platforms.nodes_for(ranks, ranks_per_node), ranks_per_node)
    net = platforms.interconnect(chosen["platform"])
    nodes = platforms.nodes_for(ranks, ranks_per_node)
    topology = chosen["topology"]
    stem = platforms.platform_name(net, nodes, ranks_per_node, topology)
    xml = platform_dir / f"{stem}.xml"
    hosts = platform_dir / f"{stem}-{ranks}ranks.hosts"
    args = [
        "-platform",
        str(xml),
        "-hostfile",
        str(hosts),
        *SMPI_ALWAYS,
        *SMPI_NETWORK_MODELS[chosen["network_model"]],
        *collectives,
    ]
    env = node_environment(chosen, ranks, ranks_per_node)
    if chosen["computation"] != "measured":
        args.append("--cfg=smpi/simulate-computation:no")
    if ranks >= FOLD_AUTO_RANKS:
        args.extend(SMPI_AT_SCALE)
    files = (
        (xml, platforms.platform_xml(net, nodes, ranks_per_node, topology)),
        (hosts, platforms.hostfile(ranks, ranks_per_node)),
    )
    return KnobSetting(env, tuple(args), files)


def node_environment(chosen: dict[str, str], ranks: int, ranks_per_node: int) -> dict[str, str]:
    """What the workload core reads for the machine, computation and fold knobs (esm_fold.h)."""
    env: dict[str, str] = {}
    if chosen["machine"] != "none":
        node = machines.machine(chosen["machine"])
        if ranks_per_node > node.cores:
            raise Unsupported(
                f"{node.name} has {node.cores} cores per node: at most {node.cores} ranks per node"
            )
        env.update(node.environment(ranks_per_node))
    if chosen["computation"] == "model":
        if chosen["machine"] == "none":
            raise Unsupported(
                "computation = model charges each kernel's bytes over its node's "
                "memory bandwidth: choose a machine "
                f"({', '.join(machines.MACHINES)})"
            )
        env["ESM_KERNEL_COST"] = "model"
    elif chosen["computation"] == "off":
        env["ESM_KERNEL_COST"] = "off"
    if chosen["fold"] == "on" or (chosen["fold"] == "auto" and ranks >= FOLD_AUTO_RANKS):
        env["ESM_FOLD"] = "1"
    return env


def write_files(setting: KnobSetting) -> None:
    """Write the files a setting needs (the same text is not rewritten)."""
    for path, text in setting.files:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)


def knob_table(stack: Stack, ranks: int = 2, cores: int = 2) -> list[tuple[str, str, str]]:
    """(knob, value, what implements it or why not) for every knob value: `esmperf knobs`."""
    rows = []
    # a simulated run's options shared by every value (platform file, hostfile...) are not shown
    common = set(knob_setting(stack, {}, ranks, cores).launcher_args) if stack.simulated else set()
    for knob in KNOBS.values():
        for value in knob.values:
            try:
                setting = knob_setting(stack, {knob.name: value}, ranks, cores)
            except Unsupported as reason:
                rows.append((knob.name, value, f"unsupported: {reason}"))
                continue
            parts = [f"{key}={val}" for key, val in setting.env.items()]
            args = [arg for arg in setting.launcher_args if arg not in common]
            if stack.simulated and knob.name == "platform":
                net = platforms.interconnect(value)
                args = [
                    f"{net.title}: {net.bandwidth / 1e9:.4g} GB/s, {net.latency * 1e6:.3g} us "
                    "between nodes (-platform <generated>.xml)"
                ]
            if stack.simulated and knob.name == "topology":
                args = [f"{platforms.describe_topology(value)} (-platform <generated>.xml)"]
            parts += [" ".join(args)] if args else []
            rows.append((knob.name, value, " ".join(parts) or "(library default)"))
    return rows
