/* Regions (docs/profiler.md, "Regions"): IPM's convention, MPI_Pcontrol(1, "name") enters the
 * region `name`, MPI_Pcontrol(-1, "name") leaves it.
 *
 * Regions nest, one stack per thread: a region is known by its path (its name under the regions
 * open around it when it was entered), so "timed/barotropic" and a warm-up's "barotropic" are
 * apart. A wrapped MPI call is recorded (one hook in esm_leave) against the innermost region of
 * the thread making it; the profile gives each region its figures inclusive of the regions
 * nested in it. Outside every region the hook costs one thread-local load and a branch. */
#ifndef PROF_REGION_H
#define PROF_REGION_H

#include "esmprof.h"

#define ESM_MAX_REGIONS 256         /* distinct paths per rank; more go to "(other regions)" */
#define ESM_MAX_REGION_DEPTH 32
#define ESM_REGION_NAME 64          /* bytes, with the terminating NUL */

typedef struct esm_region_fstat {
    uint64_t calls, ticks, sent, recv;
    uint64_t recv_wait_calls, recv_wait_ticks; /* calls that completed a receive, their time */
} esm_region_fstat;

/* What one thread recorded while a region was its innermost one. */
typedef struct esm_region_stat {
    uint64_t enters, wall_ticks;        /* wall: from each enter to its leave */
    uint64_t hist[ESM_HIST_BUCKETS];    /* message sizes, all functions (as a function's hist) */
    esm_region_fstat f[ESM_NFUNC + 1];  /* per MPI function (+1: the calibration slot) */
} esm_region_stat;

#ifndef ESM_SIMULATED /* else a field of the rank's esm_rank_globals (esmprof.h) */
extern ESM_TLS esm_region_stat *esm_region_here;   /* NULL outside every region */
#else
#define esm_region_here (esm_rank_globals_mine()->region_here)
#endif

/* The hook of esm_leave: a call of `fid` that took `ticks` and moved sent/recv bytes; a
 * collective (`coll`) is one message of its larger side; a call that completed a point-to-point
 * receive (`recv_done`) adds its time to the region's receive wait. */
static inline void esm_region_count(int fid, uint64_t ticks, uint64_t sent, uint64_t recv, int coll,
                                    int recv_done)
{
    esm_region_stat *r = esm_region_here;
    if (r) {
        esm_region_fstat *f = &r->f[fid];
        f->calls++;
        f->ticks += ticks;
        f->sent += sent;
        f->recv += recv;
        if (coll)
            r->hist[esm_bucket(sent > recv ? sent : recv)]++;
        if (recv_done) {
            f->recv_wait_calls++;
            f->recv_wait_ticks += ticks;
        }
    }
}

/* A point-to-point message (or a persistent collective's start) of `bytes`. */
static inline void esm_region_message(uint64_t bytes)
{
    if (esm_region_here)
        esm_region_here->hist[esm_bucket(bytes)]++;
}

/* Bytes received by a request posted by `fid` and completed now (Wait, Test): they go to the
 * innermost region of the completing call, under the posting function. */
static inline void esm_region_recv(int fid, uint64_t recv)
{
    if (esm_region_here)
        esm_region_here->f[fid].recv += recv;
}

/* The "regions" member of a rank line (prof_output.c): `put_raw` appends JSON text. Makes no
 * MPI call (the signal helper thread writes partial profiles with it). */
void esm_region_json(void (*put_raw)(void *, const char *), void *b, uint64_t now);

#endif
