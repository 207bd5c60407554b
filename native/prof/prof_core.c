/* Recording: per-thread statistics (calls, time, bytes, histograms), peers, time bins. The
 * shared tables: requests and probed messages (prof_requests.c), communicators
 * (prof_comms.c), both keyed by handle (prof_handles.c). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "esm_rank_state.h"
#include "prof_region.h"
#include "prof_state.h"
#include "prof_trace.h"

#ifdef ESM_SIMULATED
ESM_RANK_STATE(esm_rank_globals, rank_globals, .ticks_per_second = 1e9,
               .base_bin_ticks = 1000000000)
esm_rank_globals *esm_rank_globals_mine(void)
{
    esm_rank_globals *g = rank_globals();
    if (!g->in_call_slot)
        g->in_call_slot = &g->in_call_scratch;
    return g;
}
#else
volatile int esm_on;
ESM_TLS int esm_depth;
int esm_world_rank, esm_world_size;
uint64_t esm_t0;
double esm_ticks_per_second = 1e9;
uint64_t esm_base_bin_ticks = 1000000000;
esm_thread *esm_threads;
static esm_in_call in_call_scratch;
ESM_TLS esm_in_call *esm_in_call_slot = &in_call_scratch;
#endif

typedef struct {
    pthread_mutex_t lock; /* of esm_threads */
} core_state;
ESM_RANK_STATE(core_state, core, .lock = PTHREAD_MUTEX_INITIALIZER)
typedef struct {
    esm_thread *self;
} core_thread_state;
ESM_THREAD_STATE(core_thread_state, core_thread)

uint64_t esm_now_portable(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void *esm_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p) {
        fprintf(stderr, "esmprof: out of memory\n");
        abort();
    }
    return p;
}

esm_thread *esm_self(void)
{
    if (core_thread()->self)
        return core_thread()->self;
    esm_thread *t = esm_xcalloc(1, sizeof *t);
    t->bin_ticks = esm_base_bin_ticks;
    pthread_mutex_lock(&core()->lock);
    t->next = esm_threads;
    esm_threads = t;
    pthread_mutex_unlock(&core()->lock);
    esm_in_call_slot = &t->in_call;
    return core_thread()->self = t;
}

/* ---------------------------------------------------------------- time bins */

static esm_bin *bin_slow(esm_thread *t, uint64_t now)
{
    uint64_t i = now > esm_t0 ? (now - esm_t0) / t->bin_ticks : 0;
    while (i >= ESM_MAX_BINS) {                 /* merge neighbours, double the width */
        for (int k = 0; k < ESM_MAX_BINS; k++) {
            esm_bin *to = &t->bins[k / 2], *from = &t->bins[k];
            if (k % 2 == 0) {
                *to = *from;
            } else {
                to->mpi_ticks += from->mpi_ticks;
                to->calls += from->calls;
                to->sent += from->sent;
                to->recv += from->recv;
                to->io_write += from->io_write;
                to->io_read += from->io_read;
                to->io_ticks += from->io_ticks;
            }
        }
        memset(&t->bins[ESM_MAX_BINS / 2], 0, sizeof(esm_bin) * (ESM_MAX_BINS / 2));
        t->bin_ticks *= 2;
        i /= 2;
    }
    t->bin_index = (int)i;
    t->bin_start = now > esm_t0 ? esm_t0 + i * t->bin_ticks : 0;
    t->bin_end = esm_t0 + (i + 1) * t->bin_ticks;
    return &t->bins[i];
}

esm_bin *esm_bin_at(esm_thread *t, uint64_t now)
{
    if (now >= t->bin_start && now < t->bin_end)
        return &t->bins[t->bin_index];
    return bin_slow(t, now);
}

/* ---------------------------------------------------------------- calls */

static esm_commstat *comm_stat(esm_thread *t, const esm_comm *comm)
{
    if (comm->id >= t->comm_cap) {
        int cap = t->comm_cap ? t->comm_cap : 16;
        while (cap <= comm->id)
            cap *= 2;
        esm_commstat *grown = esm_xcalloc((size_t)cap, sizeof *grown);
        if (t->comms)
            memcpy(grown, t->comms, sizeof *grown * (size_t)t->comm_cap);
        t->comms = grown;       /* the old array is retired, not freed: a snapshot may read it */
        __atomic_store_n(&t->comm_cap, cap, __ATOMIC_RELEASE);
    }
    return &t->comms[comm->id];
}

unsigned esm_bucket(uint64_t bytes)
{
    unsigned b = bytes ? 64u - (unsigned)__builtin_clzll(bytes) : 0u;
    return b < ESM_HIST_BUCKETS ? b : ESM_HIST_BUCKETS - 1;
}

void esm_leave(esm_call *c)
{
    if (esm_trace_modes)            /* traces, call sites: off by default (prof_trace.c) */
        esm_modes_leave(c);
    esm_thread *t = esm_self();
    t->in_call.fid1 = 0;
    uint64_t d = c->t1 - c->t0;
    esm_fstat *f = &t->f[c->fid];
    if (f->calls == 0 || d < f->tmin)
        f->tmin = d;
    if (d > f->tmax)
        f->tmax = d;
    f->calls++;
    f->calls_fortran += (uint64_t)c->lang;
    f->ticks += d;
    f->sent += c->sent;
    f->recv += c->recv;
    esm_region_count(c->fid, d, c->sent, c->recv, c->coll, c->recv_done);
    if (c->coll)
        f->hist[esm_bucket(c->sent > c->recv ? c->sent : c->recv)]++;
    if (c->recv_done) {
        f->recv_wait_calls++;
        f->recv_wait_ticks += d;
    }
    if (c->comm) {
        esm_commstat *cs = comm_stat(t, c->comm);
        cs->calls++;
        cs->ticks += d;
        if (c->coll)
            cs->bytes += c->sent + c->recv;
    }
    esm_bin *b = esm_bin_at(t, c->t1);
    b->mpi_ticks += d;
    b->calls++;
    if (esm_function_is_file[c->fid]) {
        b->io_write += c->sent;
        b->io_read += c->recv;
    } else {
        b->sent += c->sent;
        b->recv += c->recv;
    }
    t->tmp_used = 0;
    for (int i = 0; i < c->ntmp; i++)
        free(c->tmp[i]);
    esm_depth--;
}

/* One communicator: the call's, counted by esm_leave. Several: each counts the call once and
 * its share of the time by request count. */
void esm_completed_charge(esm_call *c, const esm_completed *done)
{
    if (done->n == 1)
        c->comm = done->comm[0];
    if (done->n <= 1)
        return;
    uint64_t requests = 0, d = c->t1 - c->t0;
    for (int i = 0; i < done->n; i++)
        requests += done->requests[i];
    esm_thread *t = esm_self();
    for (int i = 0; i < done->n; i++) {
        esm_commstat *cs = comm_stat(t, done->comm[i]);
        cs->calls++;
        cs->ticks += (uint64_t)((double)d * (double)done->requests[i] / (double)requests);
    }
}

void *esm_tmp(esm_call *c, size_t bytes)
{
    esm_thread *t = esm_self();
    size_t rounded = (bytes + 15) & ~(size_t)15;
    if (rounded <= sizeof t->tmp_arena - t->tmp_used) { /* most calls: no allocation */
        void *p = t->tmp_arena + t->tmp_used;
        t->tmp_used += rounded;
        return memset(p, 0, bytes);
    }
    if (c->ntmp == ESM_MAX_TMP) {
        fprintf(stderr, "esmprof: internal error: too many temporaries in %s\n",
                esm_function_names[c->fid]);
        abort();
    }
    return c->tmp[c->ntmp++] = esm_xcalloc(1, bytes ? bytes : 1);
}

void *esm_copy(esm_call *c, const void *src, size_t bytes)
{
    return memcpy(esm_tmp(c, bytes), src, bytes);
}

/* ---------------------------------------------------------------- peers */

static esm_peer *peer_at(esm_thread *t, int rank)
{
    if (2 * (t->peer_count + 1) > t->peer_cap) {
        size_t cap = t->peer_cap ? 2 * t->peer_cap : 64;
        esm_peer *grown = esm_xcalloc(cap, sizeof *grown);
        for (size_t i = 0; i < cap; i++)
            grown[i].rank = -1;
        for (size_t i = 0; i < t->peer_cap; i++) {
            if (t->peers[i].rank < 0)
                continue;
            size_t j = (size_t)t->peers[i].rank & (cap - 1);
            while (grown[j].rank >= 0)
                j = (j + 1) & (cap - 1);
            grown[j] = t->peers[i];
        }
        t->peers = grown;       /* the old table is retired, not freed: a snapshot may read it */
        __atomic_store_n(&t->peer_cap, cap, __ATOMIC_RELEASE);
    }
    size_t j = (size_t)rank & (t->peer_cap - 1);
    while (t->peers[j].rank >= 0 && t->peers[j].rank != rank)
        j = (j + 1) & (t->peer_cap - 1);
    if (t->peers[j].rank < 0) {
        t->peers[j].rank = rank;
        t->peer_count++;
    }
    return &t->peers[j];
}

/* World rank of `rank` in c's window group or in comm (identity when comm is unknown);
 * negative when there is none (MPI_UNDEFINED, MPI_PROC_NULL). */
static int world_of(esm_call *c, const esm_comm *comm, int rank)
{
    if (rank < 0)
        return -1;
    if (c->win != MPI_WIN_NULL) {
        MPI_Group g, world;
        int w = -1;
        PMPI_Win_get_group(c->win, &g);
        PMPI_Comm_group(MPI_COMM_WORLD, &world);
        PMPI_Group_translate_ranks(g, 1, &rank, world, &w);
        PMPI_Group_free(&g);
        PMPI_Group_free(&world);
        return w;
    }
    if (!comm || !comm->world)
        return rank;
    return rank < comm->nworld ? comm->world[rank] : -1;
}

void esm_record_sent(esm_call *c, esm_comm *comm, int rank, uint64_t bytes)
{
    esm_thread *t = esm_self();
    c->sent += bytes;
    t->f[c->fid].hist[esm_bucket(bytes)]++;
    esm_region_message(bytes);
    int world = world_of(c, comm, rank);
    if (world >= 0) {
        esm_tc.peer1 = world + 1;
        esm_peer *p = peer_at(t, world);
        p->sent += bytes;
        p->sent_msgs++;
    }
    if (comm)
        comm_stat(t, comm)->bytes += bytes;
}

static void record_recv(esm_call *c, int fid, esm_comm *comm, int rank, uint64_t bytes)
{
    esm_thread *t = esm_self();
    if (fid == c->fid) {
        c->recv += bytes;
    } else {                        /* completed elsewhere: the posting call gets the bytes */
        t->f[fid].recv += bytes;
        esm_bin_at(t, c->t1)->recv += bytes;
        esm_region_recv(fid, bytes);
    }
    t->f[fid].hist[esm_bucket(bytes)]++;
    esm_region_message(bytes);
    int world = world_of(c, comm, rank);
    if (world >= 0) {
        esm_tc.src1 = world + 1;
        esm_peer *p = peer_at(t, world);
        p->recv += bytes;
        p->recv_msgs++;
    }
    if (comm)
        comm_stat(t, comm)->bytes += bytes;
}

void esm_msg_to(esm_call *c, int rank, uint64_t bytes)
{
    if (rank != MPI_PROC_NULL)
        esm_record_sent(c, c->comm, rank, bytes);
}

void esm_msg_from(esm_call *c, int rank, uint64_t bytes)
{
    if (rank != MPI_PROC_NULL)
        record_recv(c, c->fid, c->comm, rank, bytes);
}

void esm_use_win(esm_call *c, MPI_Win win)
{
    c->win = win;
}

void esm_recv_status(esm_call *c, int post_fid, esm_comm *comm, const MPI_Status *status)
{
    int count = 0;
    if (status->MPI_SOURCE < 0)     /* MPI_PROC_NULL, or an empty status */
        return;
    c->recv_done = 1;
    PMPI_Get_count(status, MPI_BYTE, &count);
    if (count == MPI_UNDEFINED)
        count = 0;
    record_recv(c, post_fid, comm, status->MPI_SOURCE, (uint64_t)count);
    if (esm_trace_modes & ESM_MODE_TRACE)
        esm_trace_received(c, comm, world_of(c, comm, status->MPI_SOURCE), status->MPI_TAG,
                           (uint64_t)count);
}
/* A persistent collective started (MPI_Start): its bytes as if the collective ran once more. */
void esm_coll_started(esm_call *c, esm_comm *comm, uint64_t sent, uint64_t recv)
{
    esm_thread *t = esm_self();
    c->sent += sent;
    c->recv += recv;
    t->f[c->fid].hist[esm_bucket(sent > recv ? sent : recv)]++;
    esm_region_message(sent > recv ? sent : recv);
    if (comm)
        comm_stat(t, comm)->bytes += sent + recv;
}
