"""The simulated MPI's eager limit (the `eager_limit` knob of the smpi stack): below it a send
is eager (the data leaves at once, MPI_Send returns without waiting for the receiver), from it
a rendezvous (the sender waits for the matching receive).

`auto`, the default, is `mpi` on the platforms whose MPI's limit is sourced and `simgrid` on the
others. `simgrid` keeps SMPI's own choice: SimGrid 3.32's default smpi/send-is-detached-thresh
(65536) below FOLD_AUTO_RANKS ranks and 0 from it (smpi_knobs.SMPI_AT_SCALE: every send a
rendezvous). `mpi` is the limit of the MPI the platform's seeds ran, Open MPI's ob1 over the
platform's BTL, at every scale (docs/simulate.md, "Eager and rendezvous sends"). SimGrid 4.1
(`make setup-simgrid`) keeps detached sends in a set, not 3.32's list: the same simulated times,
`mpi` at +24 % of the CPU at 1,024 ranks and +57 % at 3,456 instead of x2.8 (docs/simulate.md,
"SimGrid 4.1").

What is not modelled: Open MPI sends eagerly a message of at most the limit less its match
header (`size <= btl_eager_limit - sizeof(mca_pml_ob1_hdr_t)`, ompi/mca/pml/ob1/
pml_ob1_sendreq.h), SimGrid one of fewer bytes than the threshold: the two differ only for
sizes within a header's length below the limit. And SimGrid has one threshold for every pair,
so messages inside a node use the interconnect's limit, not the shared-memory BTL's (4 KiB,
btl_sm_eager_limit, ompi/mca/btl/sm/btl_sm_component.c, v1.4.5).
"""

from dataclasses import dataclass

from esmperf.mpi.knobs import Unsupported


@dataclass(frozen=True)
class EagerLimit:
    limit: int  # bytes: a message of fewer bytes is sent eagerly
    source: str


# Open MPI's TCP BTL: btl_tcp_eager_limit = 64 KiB, set in mca_btl_tcp_component_open
# (ompi/mca/btl/tcp/btl_tcp_component.c, `btl_eager_limit = 64*1024`) in v1.4.5 and v1.5.4, the
# seeds' releases, and unchanged in v5.0.9 (opal/mca/btl/tcp/btl_tcp_component.c).
TCP_BTL = EagerLimit(
    64 * 1024,
    "Open MPI btl_tcp_eager_limit, 64 KiB: ompi/mca/btl/tcp/btl_tcp_component.c at v1.4.5 and "
    "v1.5.4 (unchanged at v5.0.9, opal/mca/btl/tcp/btl_tcp_component.c)",
)
# Open MPI's OpenFabrics BTL: btl_openib_eager_limit = 12 KiB, set in btl_openib_register_mca_
# params (ompi/mca/btl/openib/btl_openib_mca.c, `btl_eager_limit = 12 * 1024`) from v1.4.5 to
# v4.1.6; the device file mca-btl-openib-device-params.ini does not override it for ConnectX.
OPENIB_BTL = EagerLimit(
    12 * 1024,
    "Open MPI btl_openib_eager_limit, 12 KiB: ompi/mca/btl/openib/btl_openib_mca.c at v1.4.5 "
    "and v1.5.4 (unchanged to v4.1.6; not overridden for ConnectX in "
    "mca-btl-openib-device-params.ini)",
)
EAGER_LIMITS = {
    "gige": TCP_BTL,
    "10gige": TCP_BTL,
    "ib-qdr": OPENIB_BTL,
    "ib-fdr": OPENIB_BTL,
}
# Today's presets run Open MPI 5 over UCX or libfabric (or Cray MPICH over libfabric on
# Slingshot), whose rendezvous thresholds are chosen at run time (UCX_RNDV_THRESH=auto):
# no published default figure to set.
NO_SOURCED_LIMIT = (
    "today's MPIs over UCX or libfabric choose their rendezvous threshold at run time "
    "(UCX_RNDV_THRESH=auto): no sourced figure"
)


def resolved(value: str, platform: str) -> str:
    """The knob's value as run: `auto` (the default) is `mpi` where the platform's MPI limit is
    sourced, `simgrid` elsewhere."""
    if value == "auto":
        return "mpi" if platform in EAGER_LIMITS else "simgrid"
    return value


def eager_limit(platform: str) -> EagerLimit:
    """The eager limit of the MPI the platform's clusters ran; Unsupported where none is
    sourced."""
    found = EAGER_LIMITS.get(platform)
    if found is None:
        raise Unsupported(
            f"eager_limit = mpi on {platform}: {NO_SOURCED_LIMIT}; choose eager_limit = simgrid "
            f"or a platform with a sourced limit ({', '.join(EAGER_LIMITS)})"
        )
    return found


def eager_options(limit: int) -> tuple[str, ...]:
    """smpirun's options for eager sends below `limit` bytes: detached (MPI_Send returns at
    once) and asynchronous (the data leaves without waiting for the receive; SimGrid requires
    it not above the detached threshold)."""
    return (
        f"--cfg=smpi/send-is-detached-thresh:{limit}",
        f"--cfg=smpi/async-small-thresh:{limit}",
    )
