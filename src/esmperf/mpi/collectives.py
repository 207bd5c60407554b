"""Each MPI library's collective algorithms by portable name: the values of the
<op>_algorithm knobs (knobs.py) and what each library calls them (library_knobs.py for Open MPI
and MPICH, smpi_knobs.py for SimGrid SMPI)."""

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
