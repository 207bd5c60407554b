/* Call sites (ESMPROF_CALLSITES=N, mpiP's idea): MPI calls, time and bytes per function and
 * per stack of the N return addresses above the MPI call (N=1: the line that called MPI). For
 * N=1 the site is the C wrapper's own return address (esm_call_begin); deeper stacks, and calls
 * through a Fortran entry point's stub, come from backtrace() (the unwinder: no frame pointers
 * needed; microseconds a call), the profiler's own frames skipped. Addresses are written as object + offset (dladdr at output, no lookup on the
 * hot path); src/esmperf/profile/callsites.py names them (function, file, line: addr2line). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prof_json.h"
#include "esm_rank_state.h"
#include "prof_state.h"
#include "prof_trace.h"

#define MAX_DEPTH 8
#define MAX_FRAMES 48

typedef struct site {
    uint64_t hash;              /* 0: empty slot */
    int fid;
    void *pc[MAX_DEPTH];
    uint64_t calls, ticks, sent, recv;
} site;

typedef struct sites {
    site *s;
    size_t cap, count;
    struct sites *next;
} sites;

/* the profiler's own code: the same in every rank */
static uintptr_t own_lo ESM_RANK_INVARIANT, own_hi ESM_RANK_INVARIANT;
typedef struct {
    int depth;
    pthread_mutex_t lock;
    sites *all;
} callsite_state;
ESM_RANK_STATE(callsite_state, callsites, .depth = 1, .lock = PTHREAD_MUTEX_INITIALIZER)
typedef struct {
    sites *mine;
} callsite_thread_state;
ESM_THREAD_STATE(callsite_thread_state, callsite_thread)

static int find_own(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    uintptr_t self = (uintptr_t)data;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + p->p_vaddr;
        lo = a < lo ? a : lo;
        hi = a + p->p_memsz > hi ? a + p->p_memsz : hi;
    }
    if (self >= lo && self < hi) {
        own_lo = lo;
        own_hi = hi;
        return 1;
    }
    return 0;
}

void esm_callsites_start(int n)
{
    callsites()->depth = n < 1 ? 1 : n > MAX_DEPTH ? MAX_DEPTH : n;
    dl_iterate_phdr(find_own, (void *)(uintptr_t)&esm_callsites_start);
    void *warm[4];
    backtrace(warm, 4);         /* the first call loads libgcc_s: not inside a wrapped call */
}

static uint64_t hash_of(int fid, void *const *pc)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)fid;
    for (int i = 0; i < callsites()->depth; i++)
        h = (h ^ (uint64_t)(uintptr_t)pc[i]) * 0xff51afd7ed558ccdull;
    return h ? h : 1;
}

static site *slot_for(sites *t, uint64_t h, int fid, void *const *pc)
{
    size_t i = (size_t)(h >> 7) & (t->cap - 1);
    for (;; i = (i + 1) & (t->cap - 1)) {
        site *s = &t->s[i];
        if (!s->hash || (s->hash == h && s->fid == fid && !memcmp(s->pc, pc, sizeof s->pc)))
            return s;
    }
}

static sites *self_sites(void)
{
    if (callsite_thread()->mine)
        return callsite_thread()->mine;
    sites *t = calloc(1, sizeof *t);
    t->cap = 256;
    t->s = calloc(t->cap, sizeof(site));
    pthread_mutex_lock(&callsites()->lock);
    t->next = callsites()->all;
    callsites()->all = t;
    pthread_mutex_unlock(&callsites()->lock);
    return callsite_thread()->mine = t;
}

static void grow(sites *t)
{
    sites bigger = {calloc(2 * t->cap, sizeof(site)), 2 * t->cap, 0, NULL};
    for (size_t i = 0; i < t->cap; i++)
        if (t->s[i].hash)
            *slot_for(&bigger, t->s[i].hash, t->s[i].fid, t->s[i].pc) = t->s[i];
    t->s = bigger.s;            /* the old table is retired, not freed: a snapshot may read it */
    __atomic_store_n(&t->cap, bigger.cap, __ATOMIC_RELEASE);
}

static int own(const void *pc)
{
    return (uintptr_t)pc >= own_lo && (uintptr_t)pc < own_hi;
}

void esm_callsite_record(esm_call *c)
{
    void *frames[MAX_FRAMES], *pc[MAX_DEPTH] = {0};
    if (callsites()->depth == 1 && esm_tc.caller && !own(esm_tc.caller)) {
        pc[0] = esm_tc.caller;      /* the C wrapper's return address: no unwinding */
    } else {                        /* deeper, or a Fortran entry point's stub in between */
        int n = backtrace(frames, callsites()->depth + 8 < MAX_FRAMES ? callsites()->depth + 8
                                                                      : MAX_FRAMES),
            first = 0;
        while (first < n && own(frames[first]))
            first++;
        for (int i = 0; i < callsites()->depth && first + i < n; i++)
            pc[i] = frames[first + i];
    }
    sites *t = self_sites();
    if (2 * (t->count + 1) > t->cap)
        grow(t);
    uint64_t h = hash_of(c->fid, pc);
    site *s = slot_for(t, h, c->fid, pc);
    if (!s->hash) {
        s->fid = c->fid;
        memcpy(s->pc, pc, sizeof s->pc);
        __atomic_store_n(&s->hash, h, __ATOMIC_RELEASE);
        t->count++;
    }
    s->calls++;
    s->ticks += c->t1 - c->t0;
    s->sent += c->sent;
    s->recv += c->recv;
}

void esm_callsites_reset(void)
{
    for (sites *t = callsites()->all; t; t = t->next) {
        memset(t->s, 0, t->cap * sizeof(site));
        t->count = 0;
    }
}

/* ------------------------------------------------------------ output */

#define MAX_OBJECTS 256

typedef struct objects {
    const void *base[MAX_OBJECTS];
    const char *path[MAX_OBJECTS];
    int n;
} objects;

static int object_of(objects *o, const void *pc, uintptr_t *offset)
{
    Dl_info info;
    if (!pc || !dladdr(pc, &info) || !info.dli_fname) {
        *offset = (uintptr_t)pc;
        return -1;
    }
    *offset = (uintptr_t)pc - (uintptr_t)info.dli_fbase;
    for (int i = 0; i < o->n; i++)
        if (o->base[i] == info.dli_fbase)
            return i;
    if (o->n == MAX_OBJECTS)
        return -1;
    o->base[o->n] = info.dli_fbase;
    o->path[o->n] = info.dli_fname;
    return o->n++;
}

/* {"depth": N, "objects": [{"path", "base"}], "sites": [{"function", "frames": [[object,
 * offset]], "calls", "time", "sent", "recv"}]}: threads merged; object -1 when the address
 * belongs to no loaded object (offset is then the address). Paths are as the loader names them
 * ("" for the main program on some systems: /proc/self/exe is written instead). */
char *esm_callsites_json(void)
{
    if (!(esm_trace_modes & ESM_MODE_CALLSITES))
        return NULL;
    sites merged = {calloc(256, sizeof(site)), 256, 0, NULL};
    for (sites *t = callsites()->all; t; t = t->next) {
        size_t cap = __atomic_load_n(&t->cap, __ATOMIC_ACQUIRE);
        site *s = t->s;
        for (size_t i = 0; i < cap; i++) {
            if (!__atomic_load_n(&s[i].hash, __ATOMIC_ACQUIRE))
                continue;
            if (2 * (merged.count + 1) > merged.cap)
                grow(&merged);
            site *m = slot_for(&merged, s[i].hash, s[i].fid, s[i].pc);
            if (!m->hash) {
                *m = s[i];
                merged.count++;
            } else {
                m->calls += s[i].calls;
                m->ticks += s[i].ticks;
                m->sent += s[i].sent;
                m->recv += s[i].recv;
            }
        }
    }
    objects objs = {0};
    esm_json b = {0};
    esm_json_put(&b, "{\"depth\":%d,\"ns_per_call\":%.3f,\"sites\":[", callsites()->depth,
                 esm_callsite_ns_per_call);
    int first = 1;
    for (size_t i = 0; i < merged.cap; i++) {
        const site *s = &merged.s[i];
        if (!s->hash)
            continue;
        esm_json_put(&b, "%s{\"function\":\"%s\",\"frames\":[", first ? "" : ",",
                     esm_function_names[s->fid]);
        for (int k = 0; k < callsites()->depth && s->pc[k]; k++) {
            uintptr_t offset;
            int obj = object_of(&objs, s->pc[k], &offset);
            esm_json_put(&b, "%s[%d,%llu]", k ? "," : "", obj, (unsigned long long)offset);
        }
        esm_json_put(&b, "],\"calls\":%llu,\"time\":%.9g,\"sent\":%llu,\"recv\":%llu}",
                     (unsigned long long)s->calls, (double)s->ticks / esm_ticks_per_second,
                     (unsigned long long)s->sent, (unsigned long long)s->recv);
        first = 0;
    }
    esm_json_put(&b, "],\"objects\":[");
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    for (int i = 0; i < objs.n; i++) {
        esm_json_put(&b, "%s{\"path\":", i ? "," : "");
        esm_json_string(&b, objs.path[i][0] ? objs.path[i] : exe);
        esm_json_put(&b, ",\"base\":%llu}", (unsigned long long)(uintptr_t)objs.base[i]);
    }
    esm_json_put(&b, "]}");
    free(merged.s);
    return b.p;
}
