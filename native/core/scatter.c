/* VecScatter-style ghost updates: persistent receives started with MPI_Startall, sends
 * started one by one with MPI_Start as each buffer is packed, unpacking on MPI_Waitany. */
#include <stdlib.h>
#include <string.h>
#include "esm_internal.h"
#include "esm_scatter.h"

typedef struct {
    long *index;
    int count, capacity;
} index_list;

typedef struct {
    int rank;
    index_list send, recv;
} spec_peer;

struct esm_scatter_spec {
    spec_peer *peers; /* ascending rank */
    int npeers;
};

typedef struct {
    int rank;
    long *index; /* blocks packed from x (sends) or unpacked into y (receives) */
    int count;
    double *buffer;
} message;

struct esm_scatter {
    int block;
    message *sends, *recvs;
    int nsends, nrecvs;
    MPI_Request *send_requests, *recv_requests;
};

static esm_scatter_counts counts;

esm_scatter_counts esm_scatter_counts_mine(void) { return counts; }

/* ---- specs ---------------------------------------------------------------------------- */

esm_scatter_spec *esm_scatter_spec_new(void)
{
    return esm_calloc(1, sizeof(esm_scatter_spec));
}

static spec_peer *peer_of(esm_scatter_spec *s, int rank)
{
    int p = 0;
    while (p < s->npeers && s->peers[p].rank < rank)
        p++;
    if (p < s->npeers && s->peers[p].rank == rank)
        return &s->peers[p];
    s->peers = esm_realloc(s->peers, (s->npeers + 1) * sizeof *s->peers);
    memmove(&s->peers[p + 1], &s->peers[p], (s->npeers - p) * sizeof *s->peers);
    s->npeers++;
    s->peers[p] = (spec_peer){.rank = rank};
    return &s->peers[p];
}

static void append(index_list *list, const long *index, int n)
{
    if (list->count + n > list->capacity) {
        list->capacity = 2 * (list->count + n);
        list->index = esm_realloc(list->index, list->capacity * sizeof *list->index);
    }
    memcpy(list->index + list->count, index, n * sizeof *index);
    list->count += n;
}

void esm_scatter_spec_send(esm_scatter_spec *s, int rank, const long *index, int n)
{
    if (n > 0)
        append(&peer_of(s, rank)->send, index, n);
}

void esm_scatter_spec_recv(esm_scatter_spec *s, int rank, const long *index, int n)
{
    if (n > 0)
        append(&peer_of(s, rank)->recv, index, n);
}

/* ---- plans ---------------------------------------------------------------------------- */

esm_scatter *esm_scatter_create(esm_scatter_spec *s, int block)
{
    static int next_tag = 30000; /* apart from the halo plans' tags; same order on every rank */
    int tag = next_tag++;
    esm_scatter *sc = esm_calloc(1, sizeof *sc);
    sc->block = block;
    sc->sends = esm_calloc(s->npeers + 1, sizeof *sc->sends);
    sc->recvs = esm_calloc(s->npeers + 1, sizeof *sc->recvs);
    sc->send_requests = esm_calloc(s->npeers + 1, sizeof *sc->send_requests);
    sc->recv_requests = esm_calloc(s->npeers + 1, sizeof *sc->recv_requests);
    esm_counts *c = esm_counts_writable();
    for (int p = 0; p < s->npeers; p++) {
        spec_peer *q = &s->peers[p];
        if (q->recv.count) {
            message *m = &sc->recvs[sc->nrecvs];
            *m = (message){q->rank, q->recv.index, q->recv.count,
                           esm_calloc((size_t)q->recv.count * block, sizeof(double))};
            MPI_Recv_init(m->buffer, m->count * block, MPI_DOUBLE, m->rank, tag, esm_world(),
                          &sc->recv_requests[sc->nrecvs++]);
            c->recv_init++;
        } else {
            free(q->recv.index);
        }
        if (q->send.count) {
            message *m = &sc->sends[sc->nsends];
            *m = (message){q->rank, q->send.index, q->send.count,
                           esm_calloc((size_t)q->send.count * block, sizeof(double))};
            MPI_Send_init(m->buffer, m->count * block, MPI_DOUBLE, m->rank, tag, esm_world(),
                          &sc->send_requests[sc->nsends++]);
            c->send_init++;
        } else {
            free(q->send.index);
        }
    }
    free(s->peers);
    free(s);
    return sc;
}

void esm_scatter_begin(esm_scatter *sc, const double *x)
{
    esm_counts *c = esm_counts_writable();
    c->halo_updates++;
    if (sc->nrecvs) {
        MPI_Startall(sc->nrecvs, sc->recv_requests);
        c->startall++;
    }
    const int b = sc->block;
    for (int p = 0; p < sc->nsends; p++) { /* pack one message, send it, then the next */
        message *m = &sc->sends[p];
        double *out = m->buffer;
        for (int i = 0; i < m->count; i++)
            memcpy(out + (long)i * b, x + m->index[i] * b, b * sizeof(double));
        MPI_Start(&sc->send_requests[p]);
        counts.start++;
        c->bytes_sent += (long)m->count * b * (long)sizeof(double);
    }
}

void esm_scatter_end(esm_scatter *sc, double *y)
{
    const int b = sc->block;
    for (int left = sc->nrecvs; left > 0; left--) {
        int p;
        MPI_Waitany(sc->nrecvs, sc->recv_requests, &p, MPI_STATUS_IGNORE);
        counts.waitany++;
        const message *m = &sc->recvs[p];
        for (int i = 0; i < m->count; i++)
            memcpy(y + m->index[i] * b, m->buffer + (long)i * b, b * sizeof(double));
    }
    if (sc->nsends) {
        MPI_Waitall(sc->nsends, sc->send_requests, MPI_STATUSES_IGNORE);
        esm_counts_writable()->waitall++;
    }
}

void esm_scatter_update(esm_scatter *sc, const double *x, double *y)
{
    esm_scatter_begin(sc, x);
    esm_scatter_end(sc, y);
}

int esm_scatter_peers(const esm_scatter *sc) { return sc->nsends; }

long esm_scatter_bytes(const esm_scatter *sc)
{
    long bytes = 0;
    for (int p = 0; p < sc->nsends; p++)
        bytes += (long)sc->sends[p].count * sc->block * (long)sizeof(double);
    return bytes;
}

long esm_scatter_largest(const esm_scatter *sc)
{
    long largest = 0;
    for (int p = 0; p < sc->nsends; p++) {
        long bytes = (long)sc->sends[p].count * sc->block * (long)sizeof(double);
        largest = bytes > largest ? bytes : largest;
    }
    return largest;
}

void esm_scatter_free(esm_scatter *sc)
{
    if (!sc)
        return;
    for (int p = 0; p < sc->nsends; p++) {
        MPI_Request_free(&sc->send_requests[p]);
        free(sc->sends[p].index);
        free(sc->sends[p].buffer);
    }
    for (int p = 0; p < sc->nrecvs; p++) {
        MPI_Request_free(&sc->recv_requests[p]);
        free(sc->recvs[p].index);
        free(sc->recvs[p].buffer);
    }
    free(sc->sends);
    free(sc->recvs);
    free(sc->send_requests);
    free(sc->recv_requests);
    free(sc);
}

/* ---- dot products --------------------------------------------------------------------- */

void esm_global_dots(double *values, int n)
{
    double local[64];
    double *in = n <= 64 ? local : esm_calloc(n, sizeof *in);
    memcpy(in, values, n * sizeof *values);
    esm_allreduce(in, values, n, MPI_DOUBLE, MPI_SUM);
    if (n > 64)
        free(in);
}
