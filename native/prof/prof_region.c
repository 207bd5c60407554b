/* Regions: MPI_Pcontrol as IPM reads it, one stack of open regions per thread, the region tree
 * of the rank, and its part of the profile (docs/profile-format.md, "regions").
 *
 *   MPI_Pcontrol(level > 0, "name")   enter `name` under the thread's innermost open region
 *   MPI_Pcontrol(level < 0, "name")   leave `name`: the innermost region when it is `name`; when
 *                                     `name` is open further out, the regions inside it are
 *                                     closed with it ("end_not_innermost"); when it is not open
 *                                     at all, nothing changes ("end_without_begin")
 *   MPI_Pcontrol(level < 0)           without a name: leave the innermost region
 *   MPI_Pcontrol(0), (level > 0) without a name: counted ("pcontrol_ignored"), nothing else; the
 *                                     profiler always records (the standard lets it ignore levels)
 *
 * The name is read from the variadic argument only after checking it is readable memory holding
 * a short printable string: MPI_Pcontrol(1) without a name leaves garbage there, and a program
 * using the standard's levels (mpi4py's MPI.Pcontrol(1), mpiP users) must never crash. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "prof_bind.h"
#include "esm_rank_state.h"
#include "prof_region.h"
#include "prof_state.h"
#include "prof_trace.h"

#ifndef ESM_SIMULATED /* else the rank's esm_rank_globals (esmprof.h) */
ESM_TLS esm_region_stat *esm_region_here;
#endif

/* The region tree of this rank: node 0 is the root (outside every region); nodes are appended,
 * never moved, so readers need no lock; appending takes one. */
typedef struct node {
    int parent;
    char name[ESM_REGION_NAME];
} node;

#define OTHER_NODE ESM_MAX_REGIONS

/* One thread: its open regions and what it recorded per node. */
typedef struct region_thread {
    esm_region_stat *stat[ESM_MAX_REGIONS + 1];
    int stack[ESM_MAX_REGION_DEPTH + 1];        /* stack[0] = 0, the root */
    uint64_t entered[ESM_MAX_REGION_DEPTH + 1];
    int depth;
    int too_deep;                               /* enters past the deepest level, not yet left */
    const esm_in_call *in_call;                 /* the thread's call in progress (esmprof.h) */
    struct region_thread *next;
} region_thread;

/* What went wrong, per rank: kind and region name, counted (few distinct entries expected). */
enum { MAX_PROBLEMS = 32 };
typedef struct problem {
    const char *kind;
    char name[ESM_REGION_NAME];
    uint64_t count;
} problem;
/* What this rank keeps: its region tree, its threads, what went wrong */
typedef struct {
    node nodes[ESM_MAX_REGIONS + 1]; /* the last: "(other regions)", past the table */
    volatile int nnodes;
    pthread_mutex_t lock;
    region_thread *threads;
    problem problems[MAX_PROBLEMS];
    int nproblems;
    uint64_t problems_dropped;
} regions_state;
ESM_RANK_STATE(regions_state, regions, .nodes = {[ESM_MAX_REGIONS] = {0, "(other regions)"}},
               .nnodes = 1, .lock = PTHREAD_MUTEX_INITIALIZER)
typedef struct {
    region_thread *self;
} regions_thread_state;
ESM_THREAD_STATE(regions_thread_state, regions_thread)

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p) {
        fprintf(stderr, "esmprof: out of memory\n");
        abort();
    }
    return p;
}

static void report(const char *kind, const char *name)
{
    pthread_mutex_lock(&regions()->lock);
    int i = 0;
    while (i < regions()->nproblems &&
           (regions()->problems[i].kind != kind || strcmp(regions()->problems[i].name, name)))
        i++;
    if (i == regions()->nproblems && regions()->nproblems < MAX_PROBLEMS) {
        regions()->problems[i].kind = kind;
        snprintf(regions()->problems[i].name, sizeof regions()->problems[i].name, "%s", name);
        regions()->nproblems++;
    }
    if (i < regions()->nproblems)
        regions()->problems[i].count++;
    else
        regions()->problems_dropped++;
    pthread_mutex_unlock(&regions()->lock);
}

static region_thread *me(void)
{
    if (regions_thread()->self)
        return regions_thread()->self;
    region_thread *t = xcalloc(1, sizeof *t);
    t->in_call = &esm_self()->in_call;
    pthread_mutex_lock(&regions()->lock);
    t->next = regions()->threads;
    regions()->threads = t;
    pthread_mutex_unlock(&regions()->lock);
    return regions_thread()->self = t;
}

static esm_region_stat *stat_of(region_thread *t, int id)
{
    if (!t->stat[id])
        __atomic_store_n(&t->stat[id], xcalloc(1, sizeof(esm_region_stat)), __ATOMIC_RELEASE);
    return t->stat[id];
}

static int child_of(int parent, const char *name)
{
    int n = __atomic_load_n(&regions()->nnodes, __ATOMIC_ACQUIRE);
    for (int i = 1; i < n; i++)
        if (regions()->nodes[i].parent == parent && strcmp(regions()->nodes[i].name, name) == 0)
            return i;
    pthread_mutex_lock(&regions()->lock);
    int id = OTHER_NODE;
    for (int i = n; i < regions()->nnodes; i++) /* appended meanwhile by another thread */
        if (regions()->nodes[i].parent == parent && strcmp(regions()->nodes[i].name, name) == 0)
            id = i;
    if (id == OTHER_NODE && regions()->nnodes < ESM_MAX_REGIONS) {
        id = regions()->nnodes;
        regions()->nodes[id].parent = parent;
        snprintf(regions()->nodes[id].name, sizeof regions()->nodes[id].name, "%s", name);
        __atomic_store_n(&regions()->nnodes, id + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&regions()->lock);
    if (id == OTHER_NODE)
        report("too_many_regions", name);
    return id;
}

static void enter(const char *name)
{
    region_thread *t = me();
    if (t->depth == ESM_MAX_REGION_DEPTH || t->too_deep) {
        t->too_deep++;
        report("too_deep", name);
        return;
    }
    int id = child_of(t->stack[t->depth], name);
    esm_region_stat *s = stat_of(t, id);
    s->enters++;
    t->depth++;
    t->stack[t->depth] = id;
    t->entered[t->depth] = esm_now();
    esm_region_here = s;
}

/* Close the regions open down to depth `to` (exclusive), at time `now`. */
static void close_to(region_thread *t, int to, uint64_t now)
{
    for (; t->depth > to; t->depth--)
        t->stat[t->stack[t->depth]]->wall_ticks += now - t->entered[t->depth];
    esm_region_here = t->depth ? t->stat[t->stack[t->depth]] : NULL;
}

static void leave(const char *name)
{
    region_thread *t = me();
    uint64_t now = esm_now();
    if (t->too_deep) { /* the enters that were not recorded leave first */
        t->too_deep--;
        return;
    }
    if (!name) {
        if (t->depth == 0)
            report("end_without_begin", "");
        else
            close_to(t, t->depth - 1, now);
        return;
    }
    int d = t->depth;
    while (d > 0 && strcmp(regions()->nodes[t->stack[d]].name, name) != 0)
        d--;
    if (d == 0) {
        report("end_without_begin", name);
        return;
    }
    if (d != t->depth)
        report("end_not_innermost", name);
    close_to(t, d - 1, now);
}

/* Copy `len` bytes at `p` into `buf` if they are readable, without touching them from user
 * space: process_vm_readv on this process, or where that fails for another reason than EFAULT
 * (a sandbox: EPERM, ENOSYS; SimGrid SMPI's own getpid()), a write into a pipe (EFAULT when
 * unreadable). */
static int copy_if_readable(const char *p, char *buf, size_t len)
{
    /* the same in every rank: the process's pipe, its choice of the way */
    static int use_pipe ESM_RANK_INVARIANT, fds[2] ESM_RANK_INVARIANT = {-1, -1};
    if (!use_pipe) {
        struct iovec local = {buf, len}, remote = {(void *)p, len};
        if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len)
            return 1;
        if (errno == EFAULT)
            return 0;
        use_pipe = 1; /* EPERM, ENOSYS; ESRCH under SMPI, whose getpid() is not the process's */
    }
    pthread_mutex_lock(&regions()->lock);
    if (fds[0] < 0 && pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
        fds[0] = fds[1] = -1;
    int ok = fds[0] >= 0 && write(fds[1], p, len) == (ssize_t)len &&
             read(fds[0], buf, len) == (ssize_t)len;
    pthread_mutex_unlock(&regions()->lock);
    return ok;
}

/* A name from MPI_Pcontrol's variadic argument, copied into `out` when it is readable memory
 * holding 1..63 printable characters and a NUL; else 0. */
static int readable_name(const char *p, char *out)
{
    if (!p || (uintptr_t)p < 4096)
        return 0;
    char buf[ESM_REGION_NAME];
    size_t got = sizeof buf;
    if (!copy_if_readable(p, buf, got)) {
        /* a read across the end of a mapping fails whole: read up to the page end alone */
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        got = page - ((uintptr_t)p % page);
        if (got >= sizeof buf || !copy_if_readable(p, buf, got))
            return 0;
    }
    for (size_t i = 0; i < got; i++) {
        unsigned char ch = (unsigned char)buf[i];
        if (ch == 0) {
            if (i == 0)
                return 0;
            memcpy(out, buf, i + 1);
            return 1;
        }
        if (ch < 0x20 || ch > 0x7e)
            return 0;
    }
    return 0;
}

static void ignored_level(int level)
{
    char text[24];
    snprintf(text, sizeof text, "%d", level);
    report("pcontrol_ignored", text);
}

/* A region mark with its name already checked (NULL: none), then the library's MPI_Pcontrol. */
static int pcontrol(int level, const char *name)
{
    if (esm_on && esm_depth == 0) {
#ifdef ESM_SIMULATED
        smpi_bench_end(); /* the computation so far reaches the simulated clock */
        smpi_bench_begin();
#endif
        if (level > 0 && name)
            enter(name);
        else if (level < 0)
            leave(name);
        else
            ignored_level(level);
        if (name) /* the timeline trace's region marks (prof_trace.c) */
            esm_trace_region(level > 0 ? 1 : -1, name);
    }
#ifdef ESM_SIMULATED
    return MPI_SUCCESS; /* SMPI's PMPI_Pcontrol aborts ("Not yet implemented") */
#else
    if (!esm_mpi_binding.bound)     /* before MPI_Init a locally loaded PMPI_ may not bind */
        return MPI_SUCCESS;
    return name ? PMPI_Pcontrol(level, name) : PMPI_Pcontrol(level);
#endif
}

int MPI_Pcontrol(const int level, ...)
{
    va_list ap;
    va_start(ap, level);
    const char *arg = level != 0 ? va_arg(ap, const char *) : NULL;
    va_end(ap);
    char name[ESM_REGION_NAME];
    int named = level != 0 && readable_name(arg, name);
    return pcontrol(level, named ? name : NULL);
}

#ifndef ESM_SIMULATED
/* Fortran: `call MPI_PCONTROL(level)` (the standard's binding: no ierror) or, IPM's convention,
 * `call MPI_PCONTROL(1, 'name')` (mpif.h; MPICH's `use mpi`; Open MPI's `use mpi` and every
 * `use mpi_f08` refuse a second argument when compiling: esmprof_region_begin is the way there).
 * Open MPI's Fortran layer calls PMPI_Pcontrol, which C wrappers never see, so the profiler
 * takes the Fortran entry point itself (the library's Fortran MPI_PCONTROL does nothing but call
 * its C one). A level alone leaves garbage where the name and its hidden length would be: a name
 * is taken only when that length is 1..63 and its characters are readable and printable
 * (trailing blanks dropped), as MPI_Pcontrol checks its variadic name. */
void mpi_pcontrol_(const MPI_Fint *level, const char *name, size_t len)
{
    char buf[ESM_REGION_NAME];
    int named = *level != 0 && name && (uintptr_t)name >= 4096 && len >= 1 && len < sizeof buf &&
                copy_if_readable(name, buf, len);
    for (size_t i = 0; named && i < len; i++)
        named = buf[i] >= 0x20 && buf[i] <= 0x7e;
    while (named && len > 0 && buf[len - 1] == ' ')
        len--;
    buf[named ? len : 0] = 0;
    pcontrol(*level, named && len ? buf : NULL);
}
void mpi_pcontrol(const MPI_Fint *, const char *, size_t) __attribute__((alias("mpi_pcontrol_")));
void mpi_pcontrol__(const MPI_Fint *, const char *, size_t) __attribute__((alias("mpi_pcontrol_")));
void MPI_PCONTROL(const MPI_Fint *, const char *, size_t) __attribute__((alias("mpi_pcontrol_")));
#endif

/* ---------------------------------------------------------------- output */

typedef struct region_total {
    uint64_t enters, wall_ticks, open;
    uint64_t hist[ESM_HIST_BUCKETS];
    esm_region_fstat *f; /* per function, inclusive of the regions inside */
} region_total;

static double seconds(uint64_t ticks)
{
    return (double)ticks / esm_ticks_per_second;
}

/* Names are 1..63 printable ASCII characters (readable_name): only '"' and '\' need escaping. */
static void put_name(void (*put_raw)(void *, const char *), void *b, const char *name)
{
    char text[2 * ESM_REGION_NAME + 3], *o = text;
    *o++ = '"';
    for (const char *s = name; *s; s++) {
        if (*s == '"' || *s == '\\')
            *o++ = '\\';
        *o++ = *s;
    }
    *o++ = '"';
    *o = 0;
    put_raw(b, text);
}

/* Problems recorded so far, and the regions still open now ("open_at_end"). */
static void put_problems(void (*put_raw)(void *, const char *), void *b, const region_total *total)
{
    char text[128];
    int first = 1;
    put_raw(b, ",\"region_problems\":[");
    pthread_mutex_lock(&regions()->lock);
    for (int i = 0; i <= regions()->nproblems; i++) {
        const char *kind = i < regions()->nproblems ? regions()->problems[i].kind : "more";
        uint64_t count =
            i < regions()->nproblems ? regions()->problems[i].count : regions()->problems_dropped;
        if (!count)
            continue;
        snprintf(text, sizeof text, "%s{\"kind\":\"%s\",\"count\":%llu,\"name\":", first ? "" : ",",
                 kind, (unsigned long long)count);
        put_raw(b, text);
        put_name(put_raw, b, i < regions()->nproblems ? regions()->problems[i].name : "");
        put_raw(b, "}");
        first = 0;
    }
    pthread_mutex_unlock(&regions()->lock);
    for (int id = 1; id <= ESM_MAX_REGIONS; id++) {
        if (!total[id].open)
            continue;
        snprintf(text, sizeof text,
                 "%s{\"kind\":\"open_at_end\",\"count\":%llu,\"name\":", first ? "" : ",",
                 (unsigned long long)total[id].open);
        put_raw(b, text);
        put_name(put_raw, b, regions()->nodes[id].name);
        put_raw(b, "}");
        first = 0;
    }
    put_raw(b, "]");
}

static void put_region(void (*put_raw)(void *, const char *), void *b, int id,
                       const region_total *r)
{
    char text[256];
    put_raw(b, "{\"name\":");
    put_name(put_raw, b, regions()->nodes[id].name);
    put_raw(b, ",\"path\":[");
    int chain[ESM_MAX_REGION_DEPTH + 2], depth = 0;
    for (int p = id; p > 0 && depth <= ESM_MAX_REGION_DEPTH; p = regions()->nodes[p].parent)
        chain[depth++] = p;
    for (int k = depth - 1; k >= 0; k--) {
        put_raw(b, k == depth - 1 ? "" : ",");
        put_name(put_raw, b, regions()->nodes[chain[k]].name);
    }
    esm_region_fstat sum = {0};
    for (int fid = 0; fid < ESM_NFUNC; fid++) {
        sum.calls += r->f[fid].calls;
        sum.ticks += r->f[fid].ticks;
        sum.sent += r->f[fid].sent;
        sum.recv += r->f[fid].recv;
    }
    snprintf(text, sizeof text,
             "],\"enters\":%llu,\"open\":%llu,\"wall\":%.9g,\"mpi_time\":%.9g,"
             "\"calls\":%llu,\"sent\":%llu,\"recv\":%llu,\"functions\":{",
             (unsigned long long)r->enters, (unsigned long long)r->open, seconds(r->wall_ticks),
             seconds(sum.ticks), (unsigned long long)sum.calls, (unsigned long long)sum.sent,
             (unsigned long long)sum.recv);
    put_raw(b, text);
    for (int fid = 0, first = 1; fid < ESM_NFUNC; fid++) {
        const esm_region_fstat *f = &r->f[fid];
        if (!f->calls && !f->recv)
            continue;
        snprintf(text, sizeof text, "%s\"%s\":[%llu,%.9g,%llu,%llu]", first ? "" : ",",
                 esm_function_names[fid], (unsigned long long)f->calls, seconds(f->ticks),
                 (unsigned long long)f->sent, (unsigned long long)f->recv);
        put_raw(b, text);
        first = 0;
    }
    put_raw(b, "},\"recv_wait\":{"); /* as a rank's calls' recv_wait: [calls, seconds] */
    for (int fid = 0, first = 1; fid < ESM_NFUNC; fid++) {
        const esm_region_fstat *f = &r->f[fid];
        if (!f->recv_wait_calls)
            continue;
        snprintf(text, sizeof text, "%s\"%s\":[%llu,%.9g]", first ? "" : ",",
                 esm_function_names[fid], (unsigned long long)f->recv_wait_calls,
                 seconds(f->recv_wait_ticks));
        put_raw(b, text);
        first = 0;
    }
    put_raw(b, "},\"hist\":[");
    for (int k = 0, first = 1; k < ESM_HIST_BUCKETS; k++) {
        if (!r->hist[k])
            continue;
        snprintf(text, sizeof text, "%s[%d,%llu]", first ? "" : ",", k,
                 (unsigned long long)r->hist[k]);
        put_raw(b, text);
        first = 0;
    }
    put_raw(b, "]}");
}

void esm_region_json(void (*put_raw)(void *, const char *), void *b, uint64_t now)
{
    int n = __atomic_load_n(&regions()->nnodes, __ATOMIC_ACQUIRE);
    region_total *total = xcalloc((size_t)ESM_MAX_REGIONS + 1, sizeof *total);
    for (int id = 1; id <= ESM_MAX_REGIONS; id++)
        if (id < n || id == OTHER_NODE)
            total[id].f = xcalloc(ESM_NFUNC, sizeof(esm_region_fstat));
    for (region_thread *t = regions()->threads; t; t = t->next) {
        for (int id = 1; id <= ESM_MAX_REGIONS; id++) {
            esm_region_stat *s = __atomic_load_n(&t->stat[id], __ATOMIC_ACQUIRE);
            if (!s)
                continue;
            region_total *r = &total[id];
            r->enters += s->enters;
            r->wall_ticks += s->wall_ticks;
            for (int k = 0; k < ESM_HIST_BUCKETS; k++)
                r->hist[k] += s->hist[k];
            for (int fid = 0; fid < ESM_NFUNC; fid++) {
                r->f[fid].calls += s->f[fid].calls;
                r->f[fid].ticks += s->f[fid].ticks;
                r->f[fid].sent += s->f[fid].sent;
                r->f[fid].recv += s->f[fid].recv;
                r->f[fid].recv_wait_calls += s->f[fid].recv_wait_calls;
                r->f[fid].recv_wait_ticks += s->f[fid].recv_wait_ticks;
            }
        }
        for (int d = 1; d <= t->depth; d++) { /* open now: timed up to `now` */
            region_total *r = &total[t->stack[d]];
            r->wall_ticks += now - t->entered[d];
            r->open++;
        }
        int fid1 = t->in_call->fid1; /* a call in progress: MPI time of the innermost region */
        uint64_t t0 = t->in_call->t0;
        if (t->depth > 0 && fid1 > 0 && fid1 <= ESM_NFUNC && t0 <= now)
            total[t->stack[t->depth]].f[fid1 - 1].ticks += now - t0;
    }
    /* Inclusive: a node comes after its parent in `nodes`, so adding each node into its parent
     * from the last node back adds up every subtree. */
    for (int id = n - 1; id >= 1; id--) {
        int p = regions()->nodes[id].parent;
        for (int k = 0; p > 0 && k < ESM_HIST_BUCKETS; k++)
            total[p].hist[k] += total[id].hist[k];
        for (int fid = 0; p > 0 && fid < ESM_NFUNC; fid++) {
            total[p].f[fid].calls += total[id].f[fid].calls;
            total[p].f[fid].ticks += total[id].f[fid].ticks;
            total[p].f[fid].sent += total[id].f[fid].sent;
            total[p].f[fid].recv += total[id].f[fid].recv;
            total[p].f[fid].recv_wait_calls += total[id].f[fid].recv_wait_calls;
            total[p].f[fid].recv_wait_ticks += total[id].f[fid].recv_wait_ticks;
        }
    }
    put_raw(b, "\"regions\":[");
    for (int id = 1, first = 1; id <= ESM_MAX_REGIONS; id++) {
        if ((id >= n && id != OTHER_NODE) || (!total[id].enters && !total[id].open))
            continue;
        put_raw(b, first ? "" : ",");
        put_region(put_raw, b, id, &total[id]);
        first = 0;
    }
    put_raw(b, "]");
    put_problems(put_raw, b, total);
    for (int id = 0; id <= ESM_MAX_REGIONS; id++)
        free(total[id].f);
    free(total);
}
