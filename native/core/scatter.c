/* VecScatter-style ghost updates in PETSc's two eras (esm_scatter.h): <= 3.12 starts each
 * send with MPI_Start and unpacks on MPI_Waitany; 3.13+ (PetscSF) starts all receives and all
 * sends with one MPI_Startall each and completes them with MPI_Waitall, with its bookkeeping
 * calls. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "esm_halo.h"
#include "esm_internal.h"
#include "esm_scatter.h"
#include "esm_rank_state.h"

typedef struct {
    int rank;
    const esm_runs *runs; /* packed from x (sends) or unpacked into y (receives) */
    double *buffer;
} message;

struct esm_scatter {
    esm_halo_spec s;
    esm_scatter_era era;
    int tag;
    message *sends, *recvs;
    int nsends, nrecvs;
    MPI_Request *send_requests, *recv_requests;
    /* sf only */
    bool sends_made, recvs_made; /* persistent requests made (lazily, at the first scatter) */
    bool direct;                 /* this rank's sends are one contiguous stretch of x */
    const double *sent_from;     /* direct: the x the persistent sends were made on */
    bool local_part;             /* a DM's: exists, and keeps its bookkeeping, without peers */
    MPI_Datatype unit, link_unit; /* the block unit (block > 1) and the link's duplicate */
};

/* This rank's next scatter's tag (apart from the halo plans' tags; scatters are made in the
 * same order on every rank) and its MPI calls. */
typedef struct {
    int next_tag;
    esm_scatter_counts counts;
} scatter_state;
ESM_RANK_STATE(scatter_state, scatters, .next_tag = 30000)

esm_scatter_counts esm_scatter_counts_mine(void)
{
    return scatters()->counts;
}

static message message_of(int rank, const esm_runs *runs)
{
    return (message){rank, runs, esm_calloc(runs->doubles, sizeof(double))};
}

/* PETSc's rootcontig: the runs sent to all peers, in peer order, are one stretch of x. */
static bool sends_contiguous(const esm_scatter *sc)
{
    long next = -1;
    for (int p = 0; p < sc->nsends; p++)
        for (int r = 0; r < sc->sends[p].runs->count; r++) {
            const esm_run *run = &sc->sends[p].runs->at[r];
            if (next >= 0 && run->offset != next)
                return false;
            next = run->offset + run->length;
        }
    return sc->nsends > 0;
}

static void make_recv(esm_scatter *sc, int p)
{
    const message *m = &sc->recvs[p];
    MPI_Recv_init(m->buffer, (int)m->runs->doubles, MPI_DOUBLE, m->rank, sc->tag,
                  esm_comm_current(), &sc->recv_requests[p]);
    esm_counts_writable()->recv_init++;
}

static void make_send(esm_scatter *sc, int p, const double *from)
{
    const message *m = &sc->sends[p];
    MPI_Send_init(from, (int)m->runs->doubles, MPI_DOUBLE, m->rank, sc->tag, esm_comm_current(),
                  &sc->send_requests[p]);
    esm_counts_writable()->send_init++;
}

esm_scatter *esm_scatter_create(esm_halo_spec *spec, esm_scatter_kind kind)
{
    if (spec->copies.count || spec->zero.count)
        esm_fail("esm_scatter_create: a scatter moves x to y between ranks only; list local "
                 "copies and zero runs in a halo plan (esm_halo_create) instead");
    esm_scatter *sc = esm_calloc(1, sizeof *sc);
    sc->s = *spec;
    free(spec);
    sc->era = kind.era;
    sc->local_part = kind.local_part;
    sc->tag = scatters()->next_tag++;
    int n = sc->s.npeers;
    sc->sends = esm_calloc(n + 1, sizeof *sc->sends);
    sc->recvs = esm_calloc(n + 1, sizeof *sc->recvs);
    sc->send_requests = esm_calloc(n + 1, sizeof *sc->send_requests);
    sc->recv_requests = esm_calloc(n + 1, sizeof *sc->recv_requests);
    for (int p = 0; p < n; p++) {
        const esm_spec_peer *q = &sc->s.peers[p];
        if (q->recv.doubles)
            sc->recvs[sc->nrecvs++] = message_of(q->rank, &q->recv);
        if (q->send.doubles)
            sc->sends[sc->nsends++] = message_of(q->rank, &q->send);
    }
    sc->unit = sc->link_unit = MPI_DATATYPE_NULL;
    if (kind.era == ESM_SCATTER_VPSCAT) { /* requests made with the plan */
        for (int p = 0; p < sc->nrecvs; p++)
            make_recv(sc, p);
        for (int p = 0; p < sc->nsends; p++)
            make_send(sc, p, sc->sends[p].buffer);
        return sc;
    }
    sc->direct = sends_contiguous(sc);
    if (kind.block > 1 && (n || kind.local_part)) { /* VecScatterCreate: a bs-scalar unit */
        MPI_Type_contiguous(kind.block, MPI_DOUBLE, &sc->unit);
        MPI_Type_commit(&sc->unit);
    }
    return sc;
}

/* ---- PETSc <= 3.12: VecScatter (vpscat.c) ------------------------------------------- */

static void vpscat_begin(esm_scatter *sc, const double *x)
{
    esm_counts *c = esm_counts_writable();
    esm_scatter_counts *counts = &scatters()->counts;
    if (sc->nrecvs) {
        MPI_Startall(sc->nrecvs, sc->recv_requests);
        c->startall++;
    }
    for (int p = 0; p < sc->nsends; p++) { /* pack one message, send it, then the next */
        const message *m = &sc->sends[p];
        esm_runs_pack(m->runs, m->buffer, x);
        MPI_Start(&sc->send_requests[p]);
        counts->start++;
    }
}

static void vpscat_end(esm_scatter *sc, double *y)
{
    esm_scatter_counts *counts = &scatters()->counts;
    for (int left = sc->nrecvs; left > 0; left--) {
        int p;
        MPI_Waitany(sc->nrecvs, sc->recv_requests, &p, MPI_STATUS_IGNORE);
        counts->waitany++;
        esm_runs_unpack(sc->recvs[p].runs, sc->recvs[p].buffer, y);
    }
    if (sc->nsends) {
        MPI_Waitall(sc->nsends, sc->send_requests, MPI_STATUSES_IGNORE);
        esm_counts_writable()->waitall++;
    }
}

/* ---- PETSc 3.13+: PetscSF basic (vscat.c, sfbasic.c, sfmpi.c, sfpack.c, sftype.c) ---- */

/* VecScatterBegin/End_Internal ask the communicator's size on every call. */
static void sf_comm_size(void)
{
    int size;
    MPI_Comm_size(esm_comm_current(), &size);
    scatters()->counts.comm_size++;
}

/* The link lookup: MPIPetsc_Type_compare(unit, link unit). The link's unit is a duplicate
 * (MPI_Type_dup, made when the first link is set up); unwrapping it hands back, through
 * MPI_Type_get_contents, a handle to the original that the compare frees. A one-double
 * unit is MPI_DOUBLE itself: compared equal, no call. */
static void sf_link_lookup(esm_scatter *sc)
{
    if (sc->unit == MPI_DATATYPE_NULL)
        return;
    if (sc->link_unit == MPI_DATATYPE_NULL) { /* the first link (PetscSFLinkSetUp_Host) */
        MPI_Type_dup(sc->unit, &sc->link_unit);
        return;
    }
    int no_ints[1];
    MPI_Aint no_addresses[1];
    MPI_Datatype original;
    MPI_Type_get_contents(sc->link_unit, 0, 0, 1, no_ints, no_addresses, &original);
    MPI_Type_free(&original);
    scatters()->counts.type_free++;
}

static void sf_begin(esm_scatter *sc, const double *x)
{
    esm_counts *c = esm_counts_writable();
    sf_comm_size();
    sf_link_lookup(sc);
    if (sc->direct && sc->sends_made && sc->sent_from != x) { /* PetscSFLinkCreate_MPI */
        for (int p = 0; p < sc->nsends; p++)
            MPI_Request_free(&sc->send_requests[p]);
        scatters()->counts.request_free += sc->nsends;
        sc->sends_made = false;
    }
    for (int p = 0; p < sc->nsends && !sc->direct; p++)
        esm_runs_pack(sc->sends[p].runs, sc->sends[p].buffer, x);
    if (!sc->recvs_made) {
        for (int p = 0; p < sc->nrecvs; p++)
            make_recv(sc, p);
        sc->recvs_made = true;
    }
    if (sc->nrecvs) {
        MPI_Startall(sc->nrecvs, sc->recv_requests);
        c->startall++;
    }
    if (!sc->sends_made) {
        for (int p = 0; p < sc->nsends; p++)
            make_send(sc, p,
                      sc->direct ? x + sc->sends[p].runs->at[0].offset : sc->sends[p].buffer);
        sc->sends_made = true;
        sc->sent_from = x;
    }
    if (sc->nsends) {
        MPI_Startall(sc->nsends, sc->send_requests);
        c->startall++;
    }
}

static void sf_end(esm_scatter *sc, double *y)
{
    esm_counts *c = esm_counts_writable();
    sf_comm_size();
    sf_link_lookup(sc);
    MPI_Waitall(sc->nsends, sc->send_requests, MPI_STATUSES_IGNORE);
    MPI_Waitall(sc->nrecvs, sc->recv_requests, MPI_STATUSES_IGNORE);
    c->waitall += 2;
    for (int p = 0; p < sc->nrecvs; p++)
        esm_runs_unpack(sc->recvs[p].runs, sc->recvs[p].buffer, y);
}

/* ---- either era ----------------------------------------------------------------------- */

/* Does this scatter call MPI at all on this rank? */
static bool calls_mpi(const esm_scatter *sc)
{
    return sc->s.npeers || (sc->era == ESM_SCATTER_SF && sc->local_part);
}

void esm_scatter_begin(esm_scatter *sc, const double *x)
{
    esm_counts *c = esm_counts_writable();
    c->halo_updates++;
    if (!calls_mpi(sc))
        return;
    if (sc->era == ESM_SCATTER_SF)
        sf_begin(sc, x);
    else
        vpscat_begin(sc, x);
    c->messages += sc->nsends;
    c->bytes_sent += esm_scatter_bytes(sc);
}

void esm_scatter_end(esm_scatter *sc, double *y)
{
    if (!calls_mpi(sc))
        return;
    if (sc->era == ESM_SCATTER_SF)
        sf_end(sc, y);
    else
        vpscat_end(sc, y);
}

void esm_scatter_update(esm_scatter *sc, const double *x, double *y)
{
    esm_scatter_begin(sc, x);
    esm_scatter_end(sc, y);
}

int esm_scatter_peers(const esm_scatter *sc)
{
    return sc->nsends;
}

long esm_scatter_bytes(const esm_scatter *sc)
{
    long bytes = 0;
    for (int p = 0; p < sc->nsends; p++)
        bytes += sc->sends[p].runs->doubles * (long)sizeof(double);
    return bytes;
}

long esm_scatter_largest(const esm_scatter *sc)
{
    long largest = 0;
    for (int p = 0; p < sc->nsends; p++) {
        long bytes = sc->sends[p].runs->doubles * (long)sizeof(double);
        largest = bytes > largest ? bytes : largest;
    }
    return largest;
}

void esm_scatter_free(esm_scatter *sc)
{
    if (!sc)
        return;
    bool made[2] = {sc->era == ESM_SCATTER_VPSCAT || sc->sends_made,
                    sc->era == ESM_SCATTER_VPSCAT || sc->recvs_made};
    for (int p = 0; p < sc->nsends; p++) {
        if (made[0])
            MPI_Request_free(&sc->send_requests[p]);
        free(sc->sends[p].buffer);
    }
    for (int p = 0; p < sc->nrecvs; p++) {
        if (made[1])
            MPI_Request_free(&sc->recv_requests[p]);
        free(sc->recvs[p].buffer);
    }
    MPI_Datatype *units[2] = {&sc->link_unit, &sc->unit}; /* PetscSFLinkDestroy, PetscSFReset */
    for (int u = 0; u < 2; u++)
        if (*units[u] != MPI_DATATYPE_NULL) {
            MPI_Type_free(units[u]);
            scatters()->counts.type_free++;
        }
    free(sc->sends);
    free(sc->recvs);
    free(sc->send_requests);
    free(sc->recv_requests);
    esm_spec_free_lists(&sc->s);
    free(sc);
}

/* ---- dot products --------------------------------------------------------------------- */

void esm_global_dots(double *values, int n, esm_scatter_era era)
{
    if (era == ESM_SCATTER_SF) {
        if (esm_ranks() == 1) /* sequential vectors: VecDot_Seq */
            return;
        int size; /* petsclog.h's MPI_Allreduce: PetscMPIParallelComm asks the size */
        MPI_Comm_size(esm_comm_current(), &size);
        scatters()->counts.comm_size++;
    }
    double local[64];
    double *in = n <= 64 ? local : esm_calloc(n, sizeof *in);
    memcpy(in, values, n * sizeof *values);
    esm_allreduce(in, values, n, MPI_DOUBLE, MPI_SUM);
    if (n > 64)
        free(in);
}
