/* MCT-style rearrangement between index-list decompositions: Irecv, Isend, Wait per receive,
 * Waitall on the sends. */
#include <stdlib.h>
#include <string.h>
#include "esm_internal.h"
#include "esm_rearrange.h"
#include "esm_rank_state.h"

/* The plan is an exchange spec (esm_internal.h, shared with the halo and scatter engines):
 * per peer, runs of source offsets to send and runs of destination offsets to receive into;
 * copies from source to destination offsets within the rank. Runs of consecutive elements
 * merge, so a block-to-block rearrangement packs whole rows. */
struct esm_rearranger {
    esm_halo_spec s;
    MPI_Comm comm;
    int tag, nfields, nsend, nrecv;
    double **send_buffer, **recv_buffer; /* per peer of the spec (NULL: nothing that way) */
    MPI_Request *requests;               /* receives, then sends, in ascending peer rank */
};

/* This rank's next rearranger's tag (apart from halo and scatter tags; rearrangers are made in
 * the same order on every rank) and its MPI calls. */
typedef struct {
    int next_tag;
    esm_rearrange_counts counts;
} rearrange_state;
ESM_RANK_STATE(rearrange_state, rearranges, .next_tag = 20000)

esm_rearrange_counts esm_rearrange_counts_mine(void)
{
    return rearranges()->counts;
}

/* Every rank's list, one after another: displacements in `at`. */
static long *gather_lists(long n, const long *mine, const long *sizes, int ranks, long **at)
{
    long total = 0;
    *at = esm_calloc(ranks + 1, sizeof **at);
    for (int r = 0; r < ranks; r++) {
        (*at)[r] = total;
        total += sizes[r];
    }
    (*at)[ranks] = total;
    if (total > 2147483647L)
        esm_fail("a rearrangement of %ld elements is beyond MPI's int counts: use fewer points",
                 total);
    int *counts_int = esm_calloc(ranks, sizeof *counts_int),
        *displs = esm_calloc(ranks, sizeof *displs);
    for (int r = 0; r < ranks; r++) {
        counts_int[r] = (int)sizes[r];
        displs[r] = (int)(*at)[r];
    }
    long *all = esm_calloc(total ? total : 1, sizeof *all);
    MPI_Allgatherv(mine, (int)n, MPI_LONG, all, counts_int, displs, MPI_LONG, esm_comm_current());
    rearranges()->counts.allgatherv++;
    free(counts_int);
    free(displs);
    return all;
}

esm_rearranger *esm_rearranger_create(long npoints, long nsrc, const long *src_global, long ndst,
                                      const long *dst_global, int nfields)
{
    int me = esm_rank(), ranks = esm_ranks();
    esm_rearranger *r = esm_calloc(1, sizeof *r);
    r->comm = esm_comm_current();
    r->tag = rearranges()->next_tag++;
    r->nfields = nfields;

    long mine[2] = {nsrc, ndst}, *sizes = esm_calloc(2 * (size_t)ranks, sizeof *sizes);
    MPI_Allgather(mine, 2, MPI_LONG, sizes, 2, MPI_LONG, r->comm);
    rearranges()->counts.allgather++;
    long *nsrc_of = esm_calloc(ranks, sizeof *nsrc_of),
         *ndst_of = esm_calloc(ranks, sizeof *ndst_of);
    for (int p = 0; p < ranks; p++) {
        nsrc_of[p] = sizes[2 * p];
        ndst_of[p] = sizes[2 * p + 1];
    }
    long *src_at, *dst_at;
    long *src_all = gather_lists(nsrc, src_global, nsrc_of, ranks, &src_at);
    long *dst_all = gather_lists(ndst, dst_global, ndst_of, ranks, &dst_at);

    /* Who holds each global index, and where. Every rank sees the same lists: same verdict. */
    int *owner = esm_calloc(npoints ? npoints : 1, sizeof *owner);
    long *where = esm_calloc(npoints ? npoints : 1, sizeof *where);
    for (long g = 0; g < npoints; g++)
        owner[g] = -1;
    for (int p = 0; p < ranks; p++)
        for (long q = src_at[p]; q < src_at[p + 1]; q++) {
            long g = src_all[q];
            if (g < 0 || g >= npoints)
                esm_fail("rearrangement: rank %d holds index %ld outside 0..%ld", p, g,
                         npoints - 1);
            if (owner[g] >= 0)
                esm_fail("rearrangement: index %ld is held by ranks %d and %d", g, owner[g], p);
            owner[g] = p;
            where[g] = q - src_at[p];
        }
    for (long q = 0; q < dst_at[ranks]; q++) {
        long g = dst_all[q];
        if (g < 0 || g >= npoints || owner[g] < 0)
            esm_fail("rearrangement: index %ld is wanted but held by no rank", g);
    }

    /* Sends: per destination rank, in its order. Receives and copies: in my order. */
    esm_halo_spec *spec = esm_halo_spec_new();
    for (int p = 0; p < ranks; p++)
        for (long q = dst_at[p]; p != me && q < dst_at[p + 1]; q++)
            if (owner[dst_all[q]] == me)
                esm_halo_spec_send(spec, p, where[dst_all[q]], 1);
    for (long q = 0; q < ndst; q++) {
        long g = dst_global[q];
        if (owner[g] == me)
            esm_halo_spec_copy(spec, where[g], q, 1);
        else
            esm_halo_spec_recv(spec, owner[g], q, 1);
    }
    r->s = *spec;
    free(spec);
    int n = r->s.npeers;
    r->send_buffer = esm_calloc(n + 1, sizeof *r->send_buffer);
    r->recv_buffer = esm_calloc(n + 1, sizeof *r->recv_buffer);
    for (int p = 0; p < n; p++) {
        const esm_spec_peer *q = &r->s.peers[p];
        if (q->send.doubles) {
            r->send_buffer[p] = esm_calloc(q->send.doubles * nfields, sizeof(double));
            r->nsend++;
        }
        if (q->recv.doubles) {
            r->recv_buffer[p] = esm_calloc(q->recv.doubles * nfields, sizeof(double));
            r->nrecv++;
        }
    }
    r->requests = esm_calloc(r->nrecv + r->nsend + 1, sizeof(MPI_Request));
    free(owner);
    free(where);
    free(src_all);
    free(dst_all);
    free(src_at);
    free(dst_at);
    free(sizes);
    free(nsrc_of);
    free(ndst_of);
    return r;
}

void esm_rearrange(esm_rearranger *r, const double *const src[], double *const dst[])
{
    esm_counts *c = esm_counts_writable();
    esm_rearrange_counts *counts = &rearranges()->counts;
    const int nf = r->nfields, n = r->s.npeers;
    counts->rearranges++;
    MPI_Request *receive = r->requests, *send = r->requests + r->nrecv;
    for (int p = 0; p < n; p++)
        if (r->recv_buffer[p]) {
            const esm_spec_peer *q = &r->s.peers[p];
            MPI_Irecv(r->recv_buffer[p], (int)(q->recv.doubles * nf), MPI_DOUBLE, q->rank, r->tag,
                      r->comm, receive++);
        }
    for (int p = 0; p < n; p++)
        if (r->send_buffer[p]) { /* all fields for one peer in one message */
            const esm_spec_peer *q = &r->s.peers[p];
            for (int f = 0; f < nf; f++)
                esm_runs_pack(&q->send, r->send_buffer[p] + f * q->send.doubles, src[f]);
            MPI_Isend(r->send_buffer[p], (int)(q->send.doubles * nf), MPI_DOUBLE, q->rank, r->tag,
                      r->comm, send++);
            counts->bytes_sent += q->send.doubles * nf * (long)sizeof(double);
        }
    c->irecv += r->nrecv;
    c->isend += r->nsend;
    counts->messages += r->nsend;
    for (int f = 0; f < nf; f++) /* what stays on this rank, while messages are in flight */
        for (int k = 0; k < r->s.copies.count; k++) {
            const esm_copy *m = &r->s.copies.at[k];
            memcpy(dst[f] + m->to, src[f] + m->from, m->length * sizeof(double));
        }
    receive = r->requests;
    for (int p = 0; p < n; p++)
        if (r->recv_buffer[p]) { /* each receive completed with its own MPI_Wait, as MCT */
            const esm_spec_peer *q = &r->s.peers[p];
            MPI_Wait(receive++, MPI_STATUS_IGNORE);
            for (int f = 0; f < nf; f++)
                esm_runs_unpack(&q->recv, r->recv_buffer[p] + f * q->recv.doubles, dst[f]);
        }
    counts->wait += r->nrecv;
    if (r->nsend) {
        MPI_Waitall(r->nsend, r->requests + r->nrecv, MPI_STATUSES_IGNORE);
        c->waitall++;
    }
}

int esm_rearranger_send_peers(const esm_rearranger *r)
{
    return r->nsend;
}
int esm_rearranger_recv_peers(const esm_rearranger *r)
{
    return r->nrecv;
}

long esm_rearranger_bytes(const esm_rearranger *r)
{
    return esm_spec_send_doubles(&r->s) * r->nfields * (long)sizeof(double);
}

void esm_rearranger_free(esm_rearranger *r)
{
    for (int p = 0; p < r->s.npeers; p++) {
        free(r->send_buffer[p]);
        free(r->recv_buffer[p]);
    }
    esm_spec_free_lists(&r->s);
    free(r->send_buffer);
    free(r->recv_buffer);
    free(r->requests);
    free(r);
}
