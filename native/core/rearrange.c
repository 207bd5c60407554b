/* MCT-style rearrangement between index-list decompositions: Irecv, Isend, Wait per receive,
 * Waitall on the sends. */
#include <stdlib.h>
#include <string.h>
#include "esm_internal.h"
#include "esm_rearrange.h"

typedef struct {
    int rank;
    long n;          /* elements per field */
    long *index;     /* send: source offsets; receive: destination offsets */
    double *buffer;  /* n * nfields */
} peer;

struct esm_rearranger {
    MPI_Comm comm;
    int tag, nfields, nsend, nrecv;
    peer *send, *recv;
    long nlocal, *local_from, *local_to; /* copies within the rank */
    MPI_Request *requests;               /* receives, then sends */
};

static esm_rearrange_counts counts;

esm_rearrange_counts esm_rearrange_counts_mine(void) { return counts; }

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
        esm_fail("a rearrangement of %ld elements is beyond MPI's int counts: use fewer points", total);
    int *counts_int = esm_calloc(ranks, sizeof *counts_int), *displs = esm_calloc(ranks, sizeof *displs);
    for (int r = 0; r < ranks; r++) {
        counts_int[r] = (int)sizes[r];
        displs[r] = (int)(*at)[r];
    }
    long *all = esm_calloc(total ? total : 1, sizeof *all);
    MPI_Allgatherv(mine, (int)n, MPI_LONG, all, counts_int, displs, MPI_LONG, esm_world());
    counts.allgatherv++;
    free(counts_int);
    free(displs);
    return all;
}

esm_rearranger *esm_rearranger_create(long npoints, long nsrc, const long *src_global, long ndst,
                                      const long *dst_global, int nfields)
{
    static int next_tag = 20000; /* apart from halo and scatter tags; same order on every rank */
    int me = esm_rank(), ranks = esm_ranks();
    esm_rearranger *r = esm_calloc(1, sizeof *r);
    r->comm = esm_world();
    r->tag = next_tag++;
    r->nfields = nfields;

    long mine[2] = {nsrc, ndst}, *sizes = esm_calloc(2 * (size_t)ranks, sizeof *sizes);
    MPI_Allgather(mine, 2, MPI_LONG, sizes, 2, MPI_LONG, r->comm);
    counts.allgather++;
    long *nsrc_of = esm_calloc(ranks, sizeof *nsrc_of), *ndst_of = esm_calloc(ranks, sizeof *ndst_of);
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
                esm_fail("rearrangement: rank %d holds index %ld outside 0..%ld", p, g, npoints - 1);
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

    /* Sends: per destination rank, in its order. Receives: per source rank, in my order. */
    long *count = esm_calloc(ranks, sizeof *count);
    r->send = esm_calloc(ranks, sizeof *r->send);
    r->recv = esm_calloc(ranks, sizeof *r->recv);
    for (int p = 0; p < ranks; p++) {
        if (p == me)
            continue;
        long n = 0;
        for (long q = dst_at[p]; q < dst_at[p + 1]; q++)
            n += owner[dst_all[q]] == me;
        if (!n)
            continue;
        peer *s = &r->send[r->nsend++];
        *s = (peer){.rank = p, .n = n, .index = esm_calloc(n, sizeof(long)),
                    .buffer = esm_calloc(n * (size_t)nfields, sizeof(double))};
        n = 0;
        for (long q = dst_at[p]; q < dst_at[p + 1]; q++)
            if (owner[dst_all[q]] == me)
                s->index[n++] = where[dst_all[q]];
    }
    for (long q = 0; q < ndst; q++)
        count[owner[dst_global[q]]]++;
    r->nlocal = count[me];
    r->local_from = esm_calloc(r->nlocal ? r->nlocal : 1, sizeof(long));
    r->local_to = esm_calloc(r->nlocal ? r->nlocal : 1, sizeof(long));
    int *slot = esm_calloc(ranks, sizeof *slot);
    for (int p = 0; p < ranks; p++) {
        slot[p] = -1;
        if (p == me || !count[p])
            continue;
        slot[p] = r->nrecv;
        peer *v = &r->recv[r->nrecv++];
        *v = (peer){.rank = p, .n = 0, .index = esm_calloc(count[p], sizeof(long)),
                    .buffer = esm_calloc(count[p] * (size_t)nfields, sizeof(double))};
    }
    long local = 0;
    for (long q = 0; q < ndst; q++) {
        long g = dst_global[q];
        int p = owner[g];
        if (p == me) {
            r->local_from[local] = where[g];
            r->local_to[local++] = q;
        } else {
            peer *v = &r->recv[slot[p]];
            v->index[v->n++] = q;
        }
    }
    r->requests = esm_calloc(r->nrecv + r->nsend + 1, sizeof(MPI_Request));
    free(slot);
    free(count);
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
    int nf = r->nfields;
    counts.rearranges++;
    for (int p = 0; p < r->nrecv; p++)
        MPI_Irecv(r->recv[p].buffer, (int)(r->recv[p].n * nf), MPI_DOUBLE, r->recv[p].rank, r->tag,
                  r->comm, &r->requests[p]);
    for (int p = 0; p < r->nsend; p++) {
        peer *s = &r->send[p];
        double *b = s->buffer;
        for (int f = 0; f < nf; f++)
            for (long k = 0; k < s->n; k++)
                *b++ = src[f][s->index[k]];
        MPI_Isend(s->buffer, (int)(s->n * nf), MPI_DOUBLE, s->rank, r->tag, r->comm,
                  &r->requests[r->nrecv + p]);
        counts.bytes_sent += s->n * nf * (long)sizeof(double);
    }
    c->irecv += r->nrecv;
    c->isend += r->nsend;
    counts.messages += r->nsend;
    for (int f = 0; f < nf; f++)
        for (long k = 0; k < r->nlocal; k++)
            dst[f][r->local_to[k]] = src[f][r->local_from[k]];
    for (int p = 0; p < r->nrecv; p++) {
        MPI_Wait(&r->requests[p], MPI_STATUS_IGNORE);
        const peer *v = &r->recv[p];
        const double *b = v->buffer;
        for (int f = 0; f < nf; f++)
            for (long k = 0; k < v->n; k++)
                dst[f][v->index[k]] = *b++;
    }
    counts.wait += r->nrecv;
    if (r->nsend) {
        MPI_Waitall(r->nsend, &r->requests[r->nrecv], MPI_STATUSES_IGNORE);
        c->waitall++;
    }
}

int esm_rearranger_send_peers(const esm_rearranger *r) { return r->nsend; }
int esm_rearranger_recv_peers(const esm_rearranger *r) { return r->nrecv; }

long esm_rearranger_bytes(const esm_rearranger *r)
{
    long bytes = 0;
    for (int p = 0; p < r->nsend; p++)
        bytes += r->send[p].n * r->nfields * (long)sizeof(double);
    return bytes;
}

void esm_rearranger_free(esm_rearranger *r)
{
    for (int p = 0; p < r->nsend; p++) {
        free(r->send[p].index);
        free(r->send[p].buffer);
    }
    for (int p = 0; p < r->nrecv; p++) {
        free(r->recv[p].index);
        free(r->recv[p].buffer);
    }
    free(r->send);
    free(r->recv);
    free(r->local_from);
    free(r->local_to);
    free(r->requests);
    free(r);
}
