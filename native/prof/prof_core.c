/* Recording: per-thread statistics, peers, time bins, and the shared request and
 * communicator tables. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prof_region.h"
#include "prof_state.h"
#include "prof_trace.h"

volatile int esm_on;
ESM_TLS int esm_depth;
int esm_world_rank, esm_world_size;
uint64_t esm_t0;
double esm_ticks_per_second = 1e9;
uint64_t esm_base_bin_ticks = 1000000000;
esm_thread *esm_threads;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static ESM_TLS esm_thread *self;

uint64_t esm_now_portable(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *xcalloc(size_t n, size_t size)
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
    if (self)
        return self;
    esm_thread *t = xcalloc(1, sizeof *t);
    t->bin_ticks = esm_base_bin_ticks;
    pthread_mutex_lock(&lock);
    t->next = esm_threads;
    esm_threads = t;
    pthread_mutex_unlock(&lock);
    return self = t;
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
        esm_commstat *grown = xcalloc((size_t)cap, sizeof *grown);
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
    for (int i = 0; i < c->ntmp; i++)
        free(c->tmp[i]);
    esm_depth--;
}

void *esm_tmp(esm_call *c, size_t bytes)
{
    if (c->ntmp == ESM_MAX_TMP) {
        fprintf(stderr, "esmprof: internal error: too many temporaries in %s\n",
                esm_function_names[c->fid]);
        abort();
    }
    return c->tmp[c->ntmp++] = xcalloc(1, bytes ? bytes : 1);
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
        esm_peer *grown = xcalloc(cap, sizeof *grown);
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

static void record_sent(esm_call *c, esm_comm *comm, int rank, uint64_t bytes)
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
        record_sent(c, c->comm, rank, bytes);
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

/* ---------------------------------------------------------------- handle tables */

/* Open addressing with linear probing and backward-shift deletion, keyed by a handle's bits. */
typedef struct slot {
    uint64_t key;                   /* 0: empty */
    int kind, post_fid, rank, active;
    uint64_t bytes, recv_bytes;     /* recv_bytes: persistent collectives */
    esm_comm *comm;
} slot;

typedef struct table {
    slot *s;
    size_t cap, count;
} table;

static uint64_t key_of(const void *handle, size_t size)
{
    uint64_t k = 0;
    memcpy(&k, handle, size < sizeof k ? size : sizeof k);
    return k ^ 0x9e3779b97f4a7c15ull;  /* never 0 for a real handle */
}

static size_t home(const table *t, uint64_t key)
{
    return (size_t)((key * 0xff51afd7ed558ccdull) >> 17) & (t->cap - 1);
}

static slot *table_find(table *t, uint64_t key)
{
    if (!t->cap)
        return NULL;
    for (size_t i = home(t, key);; i = (i + 1) & (t->cap - 1)) {
        if (t->s[i].key == key)
            return &t->s[i];
        if (!t->s[i].key)
            return NULL;
    }
}

static slot *table_insert(table *t, uint64_t key)
{
    slot *found = table_find(t, key);
    if (found)
        return found;
    if (2 * (t->count + 1) > t->cap) {
        table grown = {xcalloc(t->cap ? 2 * t->cap : 256, sizeof(slot)), t->cap ? 2 * t->cap : 256,
                       0};
        for (size_t i = 0; i < t->cap; i++)
            if (t->s[i].key)
                *table_insert(&grown, t->s[i].key) = t->s[i];
        free(t->s);
        *t = grown;
    }
    size_t i = home(t, key);
    while (t->s[i].key)
        i = (i + 1) & (t->cap - 1);
    memset(&t->s[i], 0, sizeof(slot));
    t->s[i].key = key;
    t->count++;
    return &t->s[i];
}

static void table_remove(table *t, slot *s)
{
    size_t i = (size_t)(s - t->s), j = i;
    t->count--;
    for (;;) {
        t->s[i].key = 0;
        for (;;) {
            j = (j + 1) & (t->cap - 1);
            if (!t->s[j].key)
                return;
            size_t h = home(t, t->s[j].key);
            if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j)))
                break;
        }
        t->s[i] = t->s[j];
        i = j;
    }
}

/* ---------------------------------------------------------------- requests */

static table requests;

void esm_req_post(esm_call *c, MPI_Request req, int kind, uint64_t bytes, int rank)
{
    if (req == MPI_REQUEST_NULL)
        return;
    pthread_mutex_lock(&lock);
    slot *s = table_insert(&requests, key_of(&req, sizeof req));
    s->kind = kind;
    s->post_fid = c->fid;
    s->comm = c->comm;
    s->bytes = bytes;
    s->rank = rank;
    s->active = kind == ESM_REQ_RECV;
    pthread_mutex_unlock(&lock);
}

void esm_req_post_coll(esm_call *c, MPI_Request req, uint64_t sent, uint64_t recv)
{
    if (req == MPI_REQUEST_NULL)
        return;
    pthread_mutex_lock(&lock);
    slot *s = table_insert(&requests, key_of(&req, sizeof req));
    s->kind = ESM_REQ_PCOLL;
    s->post_fid = c->fid;
    s->comm = c->comm;
    s->bytes = sent;
    s->recv_bytes = recv;
    pthread_mutex_unlock(&lock);
}

void esm_req_start(esm_call *c, MPI_Request req)
{
    pthread_mutex_lock(&lock);
    slot *s = table_find(&requests, key_of(&req, sizeof req));
    slot copy = s ? *s : (slot){0};
    if (s && s->kind == ESM_REQ_PRECV) {
        s->active = 1;
        s->post_fid = c->fid;
    }
    pthread_mutex_unlock(&lock);
    if (esm_trace_modes)
        esm_trace_started(c, req, copy.kind, copy.comm, copy.rank, copy.bytes);
    if (copy.kind == ESM_REQ_PSEND && copy.rank != MPI_PROC_NULL)
        record_sent(c, copy.comm, copy.rank, copy.bytes);
    if (copy.kind == ESM_REQ_PCOLL) {      /* a persistent collective runs once more */
        esm_thread *t = esm_self();
        c->sent += copy.bytes;
        c->recv += copy.recv_bytes;
        t->f[c->fid]
            .hist[esm_bucket(copy.bytes > copy.recv_bytes ? copy.bytes : copy.recv_bytes)]++;
        esm_region_message(copy.bytes > copy.recv_bytes ? copy.bytes : copy.recv_bytes);
        if (copy.comm)
            comm_stat(t, copy.comm)->bytes += copy.bytes + copy.recv_bytes;
    }
}

void esm_req_complete(esm_call *c, MPI_Request req, const MPI_Status *status)
{
    if (req == MPI_REQUEST_NULL)
        return;
    if (esm_trace_modes)
        esm_tc.req = esm_req_key(req);
    pthread_mutex_lock(&lock);
    slot *s = table_find(&requests, key_of(&req, sizeof req));
    slot copy = s ? *s : (slot){0};
    if (s && s->kind == ESM_REQ_RECV)
        table_remove(&requests, s);
    else if (s)
        s->active = 0;
    pthread_mutex_unlock(&lock);
    if ((copy.kind != ESM_REQ_RECV && copy.kind != ESM_REQ_PRECV) || !copy.active)
        return;
    int cancelled = 0;
    PMPI_Test_cancelled(status, &cancelled);
    if (!cancelled)
        esm_recv_status(c, copy.post_fid, copy.comm, status);
}

void esm_req_free(MPI_Request req)
{
    pthread_mutex_lock(&lock);
    slot *s = table_find(&requests, key_of(&req, sizeof req));
    if (s)
        table_remove(&requests, s);
    pthread_mutex_unlock(&lock);
}

void esm_msg_probed(esm_call *c, MPI_Message msg)
{
    if (msg == MPI_MESSAGE_NULL || msg == MPI_MESSAGE_NO_PROC)
        return;
    pthread_mutex_lock(&lock);
    slot *s = table_insert(&requests, key_of(&msg, sizeof msg));
    s->kind = ESM_REQ_MESSAGE;
    s->comm = c->comm;
    pthread_mutex_unlock(&lock);
}

static esm_comm *message_comm(MPI_Message msg)
{
    pthread_mutex_lock(&lock);
    slot *s = table_find(&requests, key_of(&msg, sizeof msg));
    esm_comm *comm = s ? s->comm : NULL;
    if (s)
        table_remove(&requests, s);
    pthread_mutex_unlock(&lock);
    return comm;
}

void esm_msg_received(esm_call *c, MPI_Message msg, const MPI_Status *status)
{
    esm_comm *comm = message_comm(msg);
    c->comm = comm;
    esm_recv_status(c, c->fid, comm, status);
}

void esm_msg_ireceived(esm_call *c, MPI_Message msg, MPI_Request req)
{
    c->comm = message_comm(msg);
    esm_req_post(c, req, ESM_REQ_RECV, 0, 0);
}

/* ---------------------------------------------------------------- communicators */

static table comm_table;                /* handle -> index into comms (in slot.rank) */
static esm_comm **comms;
static int ncomms, comms_cap;
static volatile unsigned comm_generation;
static ESM_TLS uint64_t cached_key;
static ESM_TLS unsigned cached_generation;
static ESM_TLS esm_comm *cached;

static esm_comm *comm_register(MPI_Comm comm, uint64_t key, int created_by)
{
    esm_comm *e = xcalloc(1, sizeof *e);
    MPI_Group group, world;
    int inter = 0, result;
    PMPI_Comm_test_inter(comm, &inter);
    e->inter = inter;
    if (inter) {
        PMPI_Comm_remote_size(comm, &e->size);
        PMPI_Comm_remote_group(comm, &group);
    } else {
        PMPI_Comm_size(comm, &e->size);
        PMPI_Comm_group(comm, &group);
    }
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    PMPI_Group_compare(group, world, &result);
    if (result != MPI_IDENT) {
        int *ranks = xcalloc((size_t)e->size, sizeof(int));
        e->world = xcalloc((size_t)e->size, sizeof(int));
        for (int i = 0; i < e->size; i++)
            ranks[i] = i;
        PMPI_Group_translate_ranks(group, e->size, ranks, world, e->world);
        free(ranks);
        e->nworld = e->size;
    }
    PMPI_Group_free(&group);
    PMPI_Group_free(&world);
    if (created_by == ESM_CREATED_UNKNOWN) {
        PMPI_Comm_compare(comm, MPI_COMM_WORLD, &result);
        if (result == MPI_IDENT)
            created_by = ESM_CREATED_WORLD;
        PMPI_Comm_compare(comm, MPI_COMM_SELF, &result);
        if (result == MPI_IDENT)
            created_by = ESM_CREATED_SELF;
    }
    e->created_by = created_by;
    int len = 0;
    char name[MPI_MAX_OBJECT_NAME] = "";
    PMPI_Comm_get_name(comm, name, &len);
    snprintf(e->name, sizeof e->name, "%s", name);
    if (ncomms == comms_cap) {
        comms_cap = comms_cap ? 2 * comms_cap : 16;
        esm_comm **grown = xcalloc((size_t)comms_cap, sizeof *grown);
        if (comms)
            memcpy(grown, comms, sizeof *grown * (size_t)ncomms);
        comms = grown;  /* the old array is retired, not freed: a snapshot may read it */
    }
    e->id = ncomms;
    comms[ncomms++] = e;
    table_insert(&comm_table, key)->rank = e->id;
    return e;
}

static esm_comm *comm_lookup(MPI_Comm comm, int created_by)
{
    uint64_t key = key_of(&comm, sizeof comm);
    pthread_mutex_lock(&lock);
    slot *s = table_find(&comm_table, key);
    esm_comm *e = s ? comms[s->rank] : comm_register(comm, key, created_by);
    pthread_mutex_unlock(&lock);
    return e;
}

esm_comm *esm_comm_of(MPI_Comm comm)
{
    if (comm == MPI_COMM_NULL)
        return NULL;
    uint64_t key = key_of(&comm, sizeof comm);
    if (cached && cached_key == key && cached_generation == comm_generation)
        return cached;
    esm_comm *e = comm_lookup(comm, ESM_CREATED_UNKNOWN);
    cached_key = key;
    cached_generation = comm_generation;
    return cached = e;
}

void esm_comm_created(esm_call *c, MPI_Comm comm)
{
    if (comm != MPI_COMM_NULL)
        comm_lookup(comm, c->fid);
}

/* The handle is already freed: look it up, never register it (that would query MPI with it). */
void esm_comm_freed(esm_call *c, MPI_Comm comm)
{
    pthread_mutex_lock(&lock);
    slot *s = table_find(&comm_table, key_of(&comm, sizeof comm));
    if (s) {
        c->comm = comms[s->rank];
        table_remove(&comm_table, s);
    }
    comm_generation++;
    pthread_mutex_unlock(&lock);
}

void esm_comm_named(MPI_Comm comm, const char *name)
{
    esm_comm *e = esm_comm_of(comm);
    if (e)
        snprintf(e->name, sizeof e->name, "%s", name);
}

void esm_comm_register_world(void)
{
    esm_comm_of(MPI_COMM_WORLD);
    esm_comm_of(MPI_COMM_SELF);
}

int esm_comm_count(void)
{
    return ncomms;
}
esm_comm *esm_comm_get(int id)
{
    return comms[id];
}
