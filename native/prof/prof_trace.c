/* Timeline traces (ESMPROF_TRACE=1): every wrapped MPI call (enter and exit time, function,
 * peer, tag, communicator, bytes, request; with ESMPROF_TRACE=cpu also the thread's CPU time
 * between calls, two clock_gettime per call) and every MPI_Pcontrol region mark, per thread, in
 * a buffer of at most ESMPROF_TRACE_EVENTS events (default 1,048,576: 64 MiB of address space,
 * pages touched only as they fill). At the cap the trace STOPS: later events are counted as
 * lost, not kept (a ring would drop the run's start, which a replay cannot do without).
 * Written at MPI_Finalize, and on the partial-profile signals, to OUT.trace/RANK.bin: one JSON
 * header line, then the events as fixed 64-byte little-endian records (esm_event below);
 * src/esmperf/profile/trace.py reads them (docs/profile-format.md "Traces"). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "prof_bind.h"
#include "esm_rank_state.h"
#include "prof_hooks.h"
#include "prof_state.h"
#include "prof_trace.h"

#ifndef ESM_SIMULATED /* else the rank's esm_rank_globals (esmprof.h) */
int esm_trace_modes, esm_trace_cpu;
ESM_TLS esm_trace_call esm_tc;
double esm_trace_ns_per_event, esm_callsite_ns_per_call;
#endif

typedef struct __attribute__((packed)) esm_event {
    uint64_t t0, t1;            /* ticks; written as ns since this rank's end of MPI_Init */
    uint64_t sent, recv, req;   /* bytes; the request posted or completed (its handle's bits) */
    int32_t peer, src;          /* esm_tc's peer1 and src1 as world ranks, -1 for none */
    int32_t tag, comm;          /* tag; communicator id or -1 */
    uint16_t fid;               /* function id (esm_function_names), or a region name index */
    uint8_t thread, kind;       /* 0 call, 1 region enter, 2 region exit, 3 request started,
                                 * 4 receive completed, 5 bytes to and from one peer */
    float cpu_gap; /* ESMPROF_TRACE=cpu: thread CPU ns since the previous event's exit */
} esm_event;
_Static_assert(sizeof(esm_event) == 64, "trace records are 64 bytes");

enum { KIND_CALL, KIND_ENTER, KIND_EXIT, KIND_START, KIND_RECEIVED, KIND_PEER_BYTES };
#define MAX_REGIONS 4096

typedef struct tbuf {
    esm_event *ev;
    size_t n;
    uint64_t lost;
    int index;
    struct tbuf *next;
} tbuf;

typedef struct {
    pthread_mutex_t lock;
    tbuf *buffers;
    int nbuffers;
    size_t cap;
    char **regions; /* MAX_REGIONS, made at the first */
    int nregions;
} trace_state;
ESM_RANK_STATE(trace_state, traces, .lock = PTHREAD_MUTEX_INITIALIZER, .cap = 1u << 20)
typedef struct {
    tbuf *mine;
    uint64_t cpu_at_exit; /* ESMPROF_TRACE=cpu: this thread's, at its last event */
} trace_thread_state;
ESM_THREAD_STATE(trace_thread_state, trace_thread)

uint64_t esm_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t esm_req_key(MPI_Request req)
{
    uint64_t k = 0;
    memcpy(&k, &req, sizeof req < sizeof k ? sizeof req : sizeof k);
    return k;
}

static tbuf *self_buffer(void)
{
    if (trace_thread()->mine)
        return trace_thread()->mine;
    tbuf *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->ev = malloc(traces()->cap * sizeof(esm_event)); /* untouched pages cost no memory */
    pthread_mutex_lock(&traces()->lock);
    b->index = traces()->nbuffers++;
    b->next = traces()->buffers;
    traces()->buffers = b;
    pthread_mutex_unlock(&traces()->lock);
    return trace_thread()->mine = b;
}

static esm_event *next_event(void)
{
    tbuf *b = self_buffer();
    if (!b || !b->ev)
        return NULL;
    if (b->n == traces()->cap) {
        b->lost++;
        return NULL;
    }
    esm_event *e = &b->ev[b->n];
    e->thread = (uint8_t)b->index;
    return e;
}

/* The event is published (n incremented) after it is filled: a snapshot reads whole events. */
static void publish(void)
{
    __atomic_add_fetch(&trace_thread()->mine->n, 1, __ATOMIC_RELEASE);
}

static void trace_call(const esm_call *c)
{
    esm_event *e = next_event();
    if (!e)
        return;
    e->t0 = c->t0;
    e->t1 = c->t1;
    e->sent = c->sent;
    e->recv = c->recv;
    e->req = esm_tc.req;
    e->peer = esm_tc.peer1 - 1;
    e->src = esm_tc.src1 - 1;
    e->tag = esm_tc.tag;
    e->comm = c->comm ? c->comm->id : -1;
    e->fid = (uint16_t)c->fid;
    e->kind = KIND_CALL;
    e->cpu_gap = 0;
    if (esm_trace_cpu) {
        e->cpu_gap = esm_tc.cpu0 > trace_thread()->cpu_at_exit
                         ? (float)(esm_tc.cpu0 - trace_thread()->cpu_at_exit)
                         : 0.0f;
        trace_thread()->cpu_at_exit = esm_thread_cpu_ns();
    }
    publish();
}

void esm_modes_leave(esm_call *c)
{
    if (esm_trace_modes & ESM_MODE_TRACE)
        trace_call(c);
    if (esm_trace_modes & ESM_MODE_CALLSITES)
        esm_callsite_record(c);
    esm_tc = (esm_trace_call){0};
}

void esm_trace_started(esm_call *c, MPI_Request req, int kind, esm_comm *comm, int rank,
                       uint64_t bytes)
{
    if (!(esm_trace_modes & ESM_MODE_TRACE) || (kind != ESM_REQ_PSEND && kind != ESM_REQ_PRECV))
        return;
    esm_event *e = next_event();
    if (!e)
        return;
    memset(e, 0, offsetof(esm_event, thread));
    e->t0 = e->t1 = c->t1; /* right after the starting call's own event */
    e->req = esm_req_key(req);
    e->sent = kind == ESM_REQ_PSEND ? bytes : 0;
    e->peer = -1;
    if (kind == ESM_REQ_PSEND && rank >= 0)
        e->peer = comm && comm->world ? (rank < comm->nworld ? comm->world[rank] : -1) : rank;
    e->src = -1;
    e->comm = comm ? comm->id : -1;
    e->fid = (uint16_t)c->fid;
    e->kind = KIND_START;
    e->cpu_gap = 0;
    publish();
}

/* A point-to-point receive completed in the call c (MPI_Recv, MPI_Sendrecv, MPI_Mrecv, or the
 * Wait/Test that completed a receive request): one event per receive, with the source and tag
 * its status reports (MPI_ANY_SOURCE and MPI_ANY_TAG resolved), so that each receive can be
 * matched with its send after the run (late-sender time, src/esmperf/profile/late_sender.py). */
void esm_trace_received(esm_call *c, esm_comm *comm, int world_source, int tag, uint64_t bytes)
{
    esm_event *e = next_event();
    if (!e)
        return;
    memset(e, 0, offsetof(esm_event, thread));
    e->t0 = e->t1 = c->t1; /* right after the completing call's own event */
    e->recv = bytes;
    e->req = esm_tc.req;   /* the request completed, 0 for a blocking receive */
    e->peer = -1;
    e->src = world_source;
    e->tag = tag;
    e->comm = comm ? comm->id : -1;
    e->fid = (uint16_t)c->fid;
    e->kind = KIND_RECEIVED;
    e->cpu_gap = 0;
    publish();
}

/* An MPI_Alltoallv's bytes to and from one peer (esm_trace_alltoallv, prof_bytes.c): the
 * replay's per-peer counts, which the call's own event (totals) cannot hold. */
void esm_trace_peer_bytes(esm_call *c, int world_peer, uint64_t sent, uint64_t recv)
{
    if (world_peer < 0 || (!sent && !recv))
        return;
    esm_event *e = next_event();
    if (!e)
        return;
    memset(e, 0, offsetof(esm_event, thread));
    e->t0 = e->t1 = c->t1; /* the call's exit: its own event has the same t1 */
    e->sent = sent;
    e->recv = recv;
    e->peer = world_peer;
    e->src = -1;
    e->comm = c->comm ? c->comm->id : -1;
    e->fid = (uint16_t)c->fid;
    e->kind = KIND_PEER_BYTES;
    e->cpu_gap = 0;
    publish();
}

void esm_posted_from(esm_call *c, int source)
{
    const esm_comm *comm = c->comm;
    if (source < 0)
        return; /* MPI_ANY_SOURCE, MPI_PROC_NULL */
    int world = comm && comm->world ? (source < comm->nworld ? comm->world[source] : -1) : source;
    esm_tc.peer1 = world + 1;
}

static int region_index(const char *name)
{
    trace_state *t = traces();
    pthread_mutex_lock(&t->lock);
    if (!t->regions)
        t->regions = esm_xcalloc(MAX_REGIONS, sizeof *t->regions);
    int i = 0;
    while (i < t->nregions && strcmp(t->regions[i], name) != 0)
        i++;
    if (i == t->nregions && t->nregions < MAX_REGIONS)
        t->regions[t->nregions++] = strdup(name);
    pthread_mutex_unlock(&t->lock);
    return i < MAX_REGIONS ? i : MAX_REGIONS - 1;
}

void esm_trace_region(int level, const char *name)
{
    if (!(esm_trace_modes & ESM_MODE_TRACE) || !esm_on || (level != 1 && level != -1) || !name)
        return;
    esm_event *e = next_event();
    if (!e)
        return;
    memset(e, 0, offsetof(esm_event, thread));
    e->t0 = e->t1 = esm_now();
    e->peer = e->src = e->comm = -1;
    e->tag = level;
    e->fid = (uint16_t)region_index(name);
    e->kind = level == 1 ? KIND_ENTER : KIND_EXIT;
    e->cpu_gap = 0;
    publish();
}

/* IPM's convention: MPI_Pcontrol(1, "name") enters a region, MPI_Pcontrol(-1, "name") leaves it.
 * Weak: a profiler part that defines its own MPI_Pcontrol (regions) takes precedence and should
 * call esm_trace_region(level, name) for the trace to show regions. */
__attribute__((weak)) int MPI_Pcontrol(const int level, ...)
{
    const char *name = NULL;
    if (level == 1 || level == -1) {
        va_list ap;
        va_start(ap, level);
        name = va_arg(ap, const char *);
        va_end(ap);
    }
    esm_trace_region(level, name);
#ifdef ESM_SIMULATED
    return MPI_SUCCESS; /* SimGrid SMPI's own MPI_Pcontrol aborts (not implemented) */
#else
    if (!esm_mpi_binding.bound)     /* before MPI_Init a locally loaded PMPI_ may not bind */
        return MPI_SUCCESS;
    return PMPI_Pcontrol(level);
#endif
}

/* ------------------------------------------------------------ start */

static void trace_dir(char *out, size_t size)
{
    snprintf(out, size, "%s.trace", esm_run_info.out_path);
}

/* Rank 0, at MPI_Init (before the start-up barrier): an earlier run's trace files go. */
static void remove_old_traces(void)
{
    char dir[sizeof esm_run_info.out_path + 8], path[sizeof dir + 300];
    trace_dir(dir, sizeof dir);
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n > 4 && strcmp(e->d_name + n - 4, ".bin") == 0) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    }
    closedir(d);
}

/* What a mode adds to a wrapped call, like the profiler's own calibration (prof_init.c): the
 * cheapest of 20 batches of 200 recorded calls; what they recorded is then dropped. */
static double calibrate(int mode)
{
    enum { BATCHES = 20, N = 200 };
    uint64_t best = UINT64_MAX;
    esm_call c = {0};
    c.comm = esm_comm_of(MPI_COMM_WORLD);
    esm_trace_modes = mode;
    for (int batch = 0; batch < BATCHES; batch++) {
        uint64_t start = esm_now();
        for (int i = 0; i < N; i++) {
            c.t0 = c.t1 = esm_now();
            esm_tc.caller = (void *)&getpid; /* a site outside the library's code */
            esm_modes_leave(&c);
        }
        uint64_t spent = esm_now() - start;
        best = spent < best ? spent : best;
    }
    esm_trace_modes = 0;
    for (tbuf *b = traces()->buffers; b; b = b->next)
        b->n = b->lost = 0;
    esm_callsites_reset();
    return 1e9 * (double)best / N / esm_ticks_per_second;
}

void esm_modes_start(void)
{
    if (esm_world_rank == 0)
        remove_old_traces();
    const char *trace = getenv("ESMPROF_TRACE");
    const char *events = getenv("ESMPROF_TRACE_EVENTS");
    const char *sites = getenv("ESMPROF_CALLSITES");
    if (events && atoll(events) > 0)
        traces()->cap = (size_t)atoll(events);
    int modes = 0;
    if (trace && *trace && strcmp(trace, "0") != 0)
        modes |= ESM_MODE_TRACE;
    if (trace && strcmp(trace, "cpu") == 0) {
        esm_trace_cpu = 1;
        trace_thread()->cpu_at_exit = esm_thread_cpu_ns();
    }
#ifdef ESM_SIMULATED
    sites = NULL; /* linked into the program: its own code cannot be told from the program's */
#endif
    if (sites && atoi(sites) > 0)
        esm_callsites_start(atoi(sites));
    if (modes & ESM_MODE_TRACE)
        esm_trace_ns_per_event = calibrate(ESM_MODE_TRACE);
    if (sites && atoi(sites) > 0)
        esm_callsite_ns_per_call = calibrate(ESM_MODE_CALLSITES);
    esm_trace_modes = modes | (sites && atoi(sites) > 0 ? ESM_MODE_CALLSITES : 0);
}

/* ------------------------------------------------------------ output */

typedef struct obuf {
    int fd, ok;
    char buf[1 << 16];
    size_t len;
} obuf;

static void flush(obuf *o)
{
    for (size_t off = 0; o->ok && off < o->len;) {
        ssize_t w = write(o->fd, o->buf + off, o->len - off);
        if (w < 0 && errno == EINTR)
            continue;
        o->ok = w > 0;
        off += o->ok ? (size_t)w : 0;
    }
    o->len = 0;
}

static void out(obuf *o, const void *p, size_t n)
{
    if (o->len + n > sizeof o->buf)
        flush(o);
    memcpy(o->buf + o->len, p, n);
    o->len += n;
}

static void outf(obuf *o, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    out(o, line, n < (int)sizeof line ? (size_t)n : sizeof line - 1);
}

static void out_string(obuf *o, const char *s)
{
    out(o, "\"", 1);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            outf(o, "\\%c", ch);
        else if (ch < 0x20)
            outf(o, "\\u%04x", ch);
        else
            out(o, s, 1);
    }
    out(o, "\"", 1);
}

static void header(obuf *o, const char *partial, uint64_t events, uint64_t lost)
{
    uint64_t end = partial ? esm_now() : esm_run_info.final_ticks; /* as the rank line's */
    outf(o,
         "{\"format\":\"esmperf-trace\",\"version\":1,\"rank\":%d,\"ranks\":%d,\"pid\":%d,"
         "\"init_epoch\":%.6f,\"init_mono\":%.9f,\"wall\":%.9g,",
         esm_world_rank, esm_world_size, (int)getpid(), esm_run_info.init_epoch,
         esm_run_info.init_mono, (double)(end - esm_run_info.init_ticks) / esm_ticks_per_second);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    out(o, "\"host\":", 7);
    out_string(o, host);
    out(o, ",", 1);
    if (partial)
        outf(o, "\"partial\":\"%s\",", partial);
    outf(o, "\"ns_per_event\":%.3f,\"cpu\":%s,", esm_trace_ns_per_event,
         esm_trace_cpu ? "true" : "false");
    outf(
        o,
        "\"events\":%llu,\"lost\":%llu,\"cap_per_thread\":%llu,\"threads\":%d,\"record_bytes\":%d,",
        (unsigned long long)events, (unsigned long long)lost, (unsigned long long)traces()->cap,
        traces()->nbuffers, (int)sizeof(esm_event));
    out(o, "\"functions\":[", 13);
    for (int f = 0; f < ESM_NFUNC; f++) {
        out(o, f ? "," : "", f ? 1 : 0);
        out_string(o, esm_function_names[f]);
    }
    out(o, "],\"regions\":[", 13);
    for (int i = 0; i < traces()->nregions; i++) {
        out(o, i ? "," : "", i ? 1 : 0);
        out_string(o, traces()->regions[i]);
    }
    out(o, "],\"comms\":[", 11);
    for (int i = 0; i < esm_comm_count(); i++) {
        const esm_comm *c = esm_comm_get(i);
        int world = !c->inter && !c->world && c->size == esm_world_size;
        outf(o, "%s{\"id\":%d,\"size\":%d,\"world\":%s", i ? "," : "", c->id, c->size,
             world ? "true" : "false");
        if (!c->inter && c->world) { /* its ranks' world ranks: the replay's sub-communicators */
            out(o, ",\"members\":[", 12);
            for (int r = 0; r < c->nworld; r++)
                outf(o, "%s%d", r ? "," : "", c->world[r]);
            out(o, "]", 1);
        }
        out(o, "}", 1);
    }
    out(o, "]}\n", 3);
}

/* OUT.trace/RANK.bin (temporary name, then renamed). Makes no MPI call: the signal helper
 * writes a killed run's trace with it. */
void esm_trace_write(const char *partial)
{
    if (!(esm_trace_modes & ESM_MODE_TRACE))
        return;
    char dir[sizeof esm_run_info.out_path + 8], tmp[sizeof dir + 40], final[sizeof dir + 40];
    trace_dir(dir, sizeof dir);
    mkdir(dir, 0755);
    snprintf(tmp, sizeof tmp, "%s/%d.bin.tmp", dir, esm_world_rank);
    snprintf(final, sizeof final, "%s/%d.bin", dir, esm_world_rank);
    obuf *o = malloc(sizeof *o);
    if (!o)
        return;
    o->fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    o->ok = o->fd >= 0;
    o->len = 0;
    uint64_t events = 0, lost = 0;
    for (tbuf *b = traces()->buffers; b; b = b->next) {
        events += __atomic_load_n(&b->n, __ATOMIC_ACQUIRE);
        lost += b->lost;
    }
    header(o, partial, events, lost);
    double ns_per_tick = 1e9 / esm_ticks_per_second;
    for (tbuf *b = traces()->buffers; b; b = b->next) {
        size_t n = __atomic_load_n(&b->n, __ATOMIC_ACQUIRE);
        for (size_t i = 0; i < n && events; i++, events--) {
            esm_event e = b->ev[i];
            e.t0 = e.t0 > esm_t0 ? (uint64_t)((double)(e.t0 - esm_t0) * ns_per_tick) : 0;
            e.t1 = e.t1 > esm_t0 ? (uint64_t)((double)(e.t1 - esm_t0) * ns_per_tick) : 0;
            out(o, &e, sizeof e);
        }
    }
    flush(o);
    if (o->fd >= 0 && close(o->fd) != 0)
        o->ok = 0;
    if (o->ok)
        rename(tmp, final);
    else {
        fprintf(stderr, "esmprof: rank %d cannot write the trace %s: %s\n", esm_world_rank, tmp,
                strerror(errno));
        unlink(tmp);
    }
    free(o);
}
