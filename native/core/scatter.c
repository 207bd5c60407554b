/* VecScatter-style ghost updates: persistent receives started with MPI_Startall, sends
 * started one by one with MPI_Start as each buffer is packed, unpacking on MPI_Waitany. */
#include <stdlib.h>
#include <string.h>
#include "esm_halo.h"
#include "esm_internal.h"
#include "esm_scatter.h"

typedef struct {
    int rank;
    const esm_runs *runs; /* packed from x (sends) or unpacked into y (receives) */
    double *buffer;
} message;

struct esm_scatter {
    esm_halo_spec s;
    message *sends, *recvs;
    int nsends, nrecvs;
    MPI_Request *send_requests, *recv_requests;
};

static esm_scatter_counts counts;

esm_scatter_counts esm_scatter_counts_mine(void)
{
    return counts;
}

static message message_of(int rank, const esm_runs *runs)
{
    return (message){rank, runs, esm_calloc(runs->doubles, sizeof(double))};
}

esm_scatter *esm_scatter_create(esm_halo_spec *spec)
{
    static int next_tag = 30000; /* apart from the halo plans' tags; same order on every rank */
    int tag = next_tag++;
    if (spec->copies.count || spec->zero.count)
        esm_fail("esm_scatter_create: a scatter moves x to y between ranks only; list local "
                 "copies and zero runs in a halo plan (esm_halo_create) instead");
    esm_scatter *sc = esm_calloc(1, sizeof *sc);
    sc->s = *spec;
    free(spec);
    int n = sc->s.npeers;
    sc->sends = esm_calloc(n + 1, sizeof *sc->sends);
    sc->recvs = esm_calloc(n + 1, sizeof *sc->recvs);
    sc->send_requests = esm_calloc(n + 1, sizeof *sc->send_requests);
    sc->recv_requests = esm_calloc(n + 1, sizeof *sc->recv_requests);
    esm_counts *c = esm_counts_writable();
    for (int p = 0; p < n; p++) {
        const esm_spec_peer *q = &sc->s.peers[p];
        if (q->recv.doubles) {
            message *m = &sc->recvs[sc->nrecvs];
            *m = message_of(q->rank, &q->recv);
            MPI_Recv_init(m->buffer, (int)q->recv.doubles, MPI_DOUBLE, m->rank, tag,
                          esm_comm_current(), &sc->recv_requests[sc->nrecvs++]);
            c->recv_init++;
        }
        if (q->send.doubles) {
            message *m = &sc->sends[sc->nsends];
            *m = message_of(q->rank, &q->send);
            MPI_Send_init(m->buffer, (int)q->send.doubles, MPI_DOUBLE, m->rank, tag,
                          esm_comm_current(), &sc->send_requests[sc->nsends++]);
            c->send_init++;
        }
    }
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
    for (int p = 0; p < sc->nsends; p++) { /* pack one message, send it, then the next */
        const message *m = &sc->sends[p];
        esm_runs_pack(m->runs, m->buffer, x);
        MPI_Start(&sc->send_requests[p]);
        counts.start++;
        c->messages++;
        c->bytes_sent += m->runs->doubles * (long)sizeof(double);
    }
}

void esm_scatter_end(esm_scatter *sc, double *y)
{
    for (int left = sc->nrecvs; left > 0; left--) {
        int p;
        MPI_Waitany(sc->nrecvs, sc->recv_requests, &p, MPI_STATUS_IGNORE);
        counts.waitany++;
        esm_runs_unpack(sc->recvs[p].runs, sc->recvs[p].buffer, y);
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
    for (int p = 0; p < sc->nsends; p++) {
        MPI_Request_free(&sc->send_requests[p]);
        free(sc->sends[p].buffer);
    }
    for (int p = 0; p < sc->nrecvs; p++) {
        MPI_Request_free(&sc->recv_requests[p]);
        free(sc->recvs[p].buffer);
    }
    free(sc->sends);
    free(sc->recvs);
    free(sc->send_requests);
    free(sc->recv_requests);
    esm_spec_free_lists(&sc->s);
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
