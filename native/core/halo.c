/* Halo exchange: plans of runs, and the Isend/Irecv and persistent engines. */
#include <stdlib.h>
#include <string.h>
#include "esm_halo.h"
#include "esm_internal.h"
#include "esm_rank_state.h"

/* The tag of this rank's next plan (plans are made in the same order on every rank). */
typedef struct {
    int next_tag;
} halo_state;
ESM_RANK_STATE(halo_state, halos, .next_tag = 100)

/* Per peer of the spec, the packed message buffers (all fields one after another). */
typedef struct {
    double *send, *recv;
} buffers;

struct esm_halo {
    esm_halo_spec s;
    buffers *buffer;       /* per peer */
    MPI_Comm comm;         /* the communicator current when the plan was made */
    int nfields, width, tag;
    esm_halo_engine engine;
    MPI_Request *requests; /* receives, then sends */
};

/* ---- layouts -------------------------------------------------------------------------- */

esm_layout esm_layout_levels_outer(const esm_decomp *d, int halo, int nz)
{
    esm_layout l = {.halo = halo, .sx = d->bx + 2 * halo, .sy = d->by + 2 * halo, .nz = nz};
    l.stride_j = l.sx;
    l.stride_k = (long)l.sx * l.sy;
    l.block_size = l.stride_k * nz;
    return l;
}

esm_layout esm_layout_levels_inner(const esm_decomp *d, int halo, int nz)
{
    esm_layout l = {.halo = halo, .sx = d->bx + 2 * halo, .sy = d->by + 2 * halo, .nz = nz};
    l.stride_k = l.sx;
    l.stride_j = (long)l.sx * nz;
    l.block_size = l.stride_j * l.sy;
    return l;
}

long esm_layout_doubles(const esm_layout *l, int nlocal)
{
    return l->block_size * (nlocal ? nlocal : 1);
}

esm_halo_engine esm_halo_engine_named(const char *name)
{
    return strcmp(name, "persistent") == 0 ? ESM_HALO_PERSISTENT : ESM_HALO_ISEND;
}

/* ---- plans from blocks ---------------------------------------------------------------- */

/* The halo strip of block b facing direction dir (as runs, all levels), or the interior strip
 * of b that fills the halo of its neighbour on the other side. */
typedef enum { HALO_STRIP, INTERIOR_STRIP } strip_kind;

static void strip(const esm_layout *l, const esm_block *b, int lb, int dir, int width,
                  strip_kind kind, void (*add)(void *, long, int), void *target)
{
    int dx = esm_dir_x[dir], dy = esm_dir_y[dir], i0, i1, j0, j1;
    if (kind == HALO_STRIP) { /* b's own halo, towards dir */
        i0 = dx < 0 ? -width : dx == 0 ? 0 : b->ni;
        i1 = dx < 0 ? -1 : dx == 0 ? b->ni - 1 : b->ni + width - 1;
        j0 = dy < 0 ? -width : dy == 0 ? 0 : b->nj;
        j1 = dy < 0 ? -1 : dy == 0 ? b->nj - 1 : b->nj + width - 1;
    } else { /* b is the neighbour at dir of the receiving block: its edge facing back */
        i0 = dx < 0 ? b->ni - width : 0;
        i1 = dx < 0 ? b->ni - 1 : dx == 0 ? b->ni - 1 : width - 1;
        j0 = dy < 0 ? b->nj - width : 0;
        j1 = dy < 0 ? b->nj - 1 : dy == 0 ? b->nj - 1 : width - 1;
    }
    for (int k = 0; k < l->nz; k++)
        for (int j = j0; j <= j1; j++)
            add(target, esm_at(l, lb, i0, j, k), i1 - i0 + 1);
}

typedef struct {
    esm_halo_spec *s;
    int rank;
} peer_target;
static void add_send(void *t, long o, int n)
{
    peer_target *p = t;
    esm_halo_spec_send(p->s, p->rank, o, n);
}
static void add_recv(void *t, long o, int n)
{
    peer_target *p = t;
    esm_halo_spec_recv(p->s, p->rank, o, n);
}
static void add_zero(void *t, long o, int n)
{
    esm_halo_spec_zero(t, o, n);
}
static void add_run(void *t, long o, int n)
{
    esm_runs_add_unmerged(t, o, n);
}

esm_halo *esm_halo_blocks(const esm_decomp *d, const esm_layout *l, int nfields, int width,
                          esm_halo_engine engine)
{
    if (width < 1 || width > l->halo)
        esm_fail("halo width %d is outside 1..%d (the halo allocated): use --halo-width 1..%d",
                 width, l->halo, l->halo);
    for (int b = 0; b < d->nblocks; b++)
        if (d->block[b].ni < width || d->block[b].nj < width)
            esm_fail("halo width %d is wider than block %d (%dx%d points at %d,%d): use a "
                     "larger --block or a smaller --halo-width",
                     width, b, d->block[b].ni, d->block[b].nj, d->block[b].i0, d->block[b].j0);
    esm_halo_spec *s = esm_halo_spec_new();
    /* Every rank walks every (block, direction) in the same order, so the runs a sender packs
     * for a peer line up with the runs that peer unpacks. */
    for (int g = 0; g < d->nblocks; g++) {
        const esm_block *b = &d->block[g];
        for (int dir = 0; dir < ESM_DIRECTIONS; dir++) {
            int n = b->neighbour[dir];
            const esm_block *nb = n >= 0 ? &d->block[n] : NULL;
            if (b->owner == d->rank) {
                if (!nb) {
                    strip(l, b, b->local, dir, width, HALO_STRIP, add_zero, s);
                } else if (nb->owner == d->rank) {
                    esm_runs from = {0}, to = {0};
                    strip(l, nb, nb->local, dir, width, INTERIOR_STRIP, add_run, &from);
                    strip(l, b, b->local, dir, width, HALO_STRIP, add_run, &to);
                    for (int r = 0; r < from.count; r++) /* same shape: run for run */
                        esm_halo_spec_copy(s, from.at[r].offset, to.at[r].offset,
                                           from.at[r].length);
                    free(from.at);
                    free(to.at);
                } else {
                    peer_target t = {s, nb->owner};
                    strip(l, b, b->local, dir, width, HALO_STRIP, add_recv, &t);
                }
            } else if (nb && nb->owner == d->rank) {
                peer_target t = {s, b->owner};
                strip(l, nb, nb->local, dir, width, INTERIOR_STRIP, add_send, &t);
            }
        }
    }
    return esm_halo_create(s, nfields, width, engine);
}

/* ---- plans and engines ---------------------------------------------------------------- */

esm_halo *esm_halo_create(esm_halo_spec *spec, int nfields, int width, esm_halo_engine engine)
{
    esm_halo *h = esm_calloc(1, sizeof *h);
    h->s = *spec;
    free(spec);
    h->nfields = nfields;
    h->width = width;
    h->engine = engine;
    h->tag = halos()->next_tag++;
    h->comm = esm_comm_current();
    h->requests = esm_calloc(2 * h->s.npeers + 1, sizeof *h->requests);
    h->buffer = esm_calloc(h->s.npeers + 1, sizeof *h->buffer);
    esm_counts *c = esm_counts_writable();
    for (int p = 0; p < h->s.npeers; p++) {
        const esm_spec_peer *q = &h->s.peers[p];
        buffers *b = &h->buffer[p];
        b->send = esm_calloc(q->send.doubles * nfields + 1, sizeof(double));
        b->recv = esm_calloc(q->recv.doubles * nfields + 1, sizeof(double));
        if (engine == ESM_HALO_PERSISTENT) {
            MPI_Recv_init(b->recv, (int)(q->recv.doubles * nfields), MPI_DOUBLE, q->rank, h->tag,
                          h->comm, &h->requests[p]);
            MPI_Send_init(b->send, (int)(q->send.doubles * nfields), MPI_DOUBLE, q->rank, h->tag,
                          h->comm, &h->requests[h->s.npeers + p]);
            c->recv_init++;
            c->send_init++;
        }
    }
    return h;
}

static void pack(const esm_runs *list, double *buffer, double *const fields[], int nfields)
{
    for (int f = 0; f < nfields; f++, buffer += list->doubles)
        esm_runs_pack(list, buffer, fields[f]);
}

static void unpack(const esm_runs *list, const double *buffer, double *const fields[], int nfields)
{
    for (int f = 0; f < nfields; f++, buffer += list->doubles)
        esm_runs_unpack(list, buffer, fields[f]);
}

void esm_halo_begin(esm_halo *h, double *const fields[])
{
    esm_counts *c = esm_counts_writable();
    int n = h->s.npeers;
    c->halo_updates++;
    if (h->engine == ESM_HALO_ISEND) {
        for (int p = 0; p < n; p++) {
            const esm_spec_peer *q = &h->s.peers[p];
            MPI_Irecv(h->buffer[p].recv, (int)(q->recv.doubles * h->nfields), MPI_DOUBLE, q->rank,
                      h->tag, h->comm, &h->requests[p]);
        }
        for (int p = 0; p < n; p++) {
            const esm_spec_peer *q = &h->s.peers[p];
            pack(&q->send, h->buffer[p].send, fields, h->nfields);
            MPI_Isend(h->buffer[p].send, (int)(q->send.doubles * h->nfields), MPI_DOUBLE, q->rank,
                      h->tag, h->comm, &h->requests[n + p]);
        }
        c->irecv += n;
        c->isend += n;
    } else if (n) {
        for (int p = 0; p < n; p++)
            pack(&h->s.peers[p].send, h->buffer[p].send, fields, h->nfields);
        MPI_Startall(2 * n, h->requests);
        c->startall++;
    }
    c->messages += n;
    for (int p = 0; p < n; p++)
        c->bytes_sent += h->s.peers[p].send.doubles * h->nfields * (long)sizeof(double);
    /* Between this rank's own blocks, and towards land, while messages are in flight. */
    for (int f = 0; f < h->nfields; f++) {
        double *field = fields[f];
        for (int r = 0; r < h->s.copies.count; r++)
            memcpy(field + h->s.copies.at[r].to, field + h->s.copies.at[r].from,
                   h->s.copies.at[r].length * sizeof(double));
        for (int r = 0; r < h->s.zero.count; r++)
            memset(field + h->s.zero.at[r].offset, 0, h->s.zero.at[r].length * sizeof(double));
    }
}

void esm_halo_end(esm_halo *h, double *const fields[])
{
    int n = h->s.npeers;
    if (!n)
        return;
    MPI_Waitall(2 * n, h->requests, MPI_STATUSES_IGNORE);
    esm_counts_writable()->waitall++;
    for (int p = 0; p < n; p++)
        unpack(&h->s.peers[p].recv, h->buffer[p].recv, fields, h->nfields);
}

void esm_halo_update(esm_halo *h, double *const fields[])
{
    esm_halo_begin(h, fields);
    esm_halo_end(h, fields);
}

int esm_halo_width(const esm_halo *h)
{
    return h->width;
}
int esm_halo_peers(const esm_halo *h)
{
    return h->s.npeers;
}

long esm_halo_bytes(const esm_halo *h)
{
    return esm_spec_send_doubles(&h->s) * h->nfields * (long)sizeof(double);
}

void esm_halo_free(esm_halo *h)
{
    if (!h)
        return;
    for (int p = 0; p < h->s.npeers; p++) {
        if (h->engine == ESM_HALO_PERSISTENT) {
            MPI_Request_free(&h->requests[p]);
            MPI_Request_free(&h->requests[h->s.npeers + p]);
        }
        free(h->buffer[p].send);
        free(h->buffer[p].recv);
    }
    esm_spec_free_lists(&h->s);
    free(h->buffer);
    free(h->requests);
    free(h);
}
