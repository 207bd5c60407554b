/* What one rank accumulates: per-thread blocks, merged only when the profile is written. */
#ifndef PROF_STATE_H
#define PROF_STATE_H

#include "esmprof.h"

typedef struct esm_fstat {
    uint64_t calls, calls_fortran, ticks, tmin, tmax, sent, recv;
    uint64_t hist[ESM_HIST_BUCKETS];
    uint64_t recv_wait_calls, recv_wait_ticks;  /* calls that completed a receive, their time */
} esm_fstat;

typedef struct esm_peer {
    int rank;                       /* world rank, -1 for an empty slot */
    uint64_t sent, sent_msgs, recv, recv_msgs;
} esm_peer;

typedef struct esm_bin {
    uint64_t mpi_ticks, calls, sent, recv, io_write, io_read, io_ticks;
} esm_bin;

typedef struct esm_commstat {
    uint64_t calls, ticks, bytes;
} esm_commstat;

typedef struct esm_iostat {
    uint64_t calls, bytes, ticks;
} esm_iostat;

enum { ESM_IO_WRITE, ESM_IO_READ };

typedef struct esm_thread {
    esm_fstat f[ESM_NFUNC + 1];     /* the extra slot times the profiler itself */
    esm_peer *peers;
    size_t peer_cap, peer_count;
    esm_commstat *comms;
    int comm_cap;
    esm_bin bins[ESM_MAX_BINS];
    uint64_t bin_ticks;             /* width of this thread's bins; doubles when they run out */
    uint64_t bin_start, bin_end;    /* the current bin, so most calls need no division */
    int bin_index;
    esm_in_call in_call;            /* the call in progress (esmprof.h), by the bin fields */
    esm_iostat io[2];
    /* A wrapped call's temporaries (esm_tmp: statuses the caller ignores, copies of request
     * arrays), reused by every call of the thread (one wrapped call at a time); past it, heap */
    size_t tmp_used;
    _Alignas(16) char tmp_arena[2048];
    struct esm_thread *next;
} esm_thread;

#define ESM_FN_SELF ESM_NFUNC      /* calibration slot */

#ifndef ESM_SIMULATED /* else fields of the rank's esm_rank_globals (esmprof.h) */
extern uint64_t esm_t0;                 /* ticks at the end of MPI_Init */
extern double esm_ticks_per_second;
extern uint64_t esm_base_bin_ticks;
extern esm_thread *esm_threads;         /* every thread that recorded something */
#endif

esm_thread *esm_self(void);
esm_bin *esm_bin_at(esm_thread *t, uint64_t now);
void *esm_xcalloc(size_t n, size_t size); /* calloc, or the profiler's message and abort */

/* Recording what a request's start needs (prof_core.c, for prof_requests.c): a persistent send
 * to `rank` of comm; a persistent collective's bytes, as if it ran once more. */
void esm_record_sent(esm_call *c, esm_comm *comm, int rank, uint64_t bytes);
void esm_coll_started(esm_call *c, esm_comm *comm, uint64_t sent, uint64_t recv);
void esm_io_record(int kind, uint64_t bytes, uint64_t t0, uint64_t t1);

/* communicator table, for output */
struct esm_json;
void esm_comms_json(struct esm_json *b, double ticks_per_second);
int esm_comm_count(void);
esm_comm *esm_comm_get(int id);
void esm_comm_register_world(void);

#endif
