/* libesmprof internals: what the generated wrappers (wrappers.c) and the hand-written parts share.
 *
 * A wrapped call runs:   if (!esm_enter()) pass through;
 *                        c = esm_call_begin(fid, lang); PMPI call; esm_call_end(&c);
 *                        acct_<call>(&c, ...);   (clauses of mpi.spec: bytes, peers, requests)
 *                        esm_leave(&c);          (records calls, time, bytes, comm time, bins)
 * Everything a thread records goes to its own esm_thread block (no locks on the hot path); the
 * request and communicator tables are shared and take a lock. */
#ifndef ESMPROF_H
#define ESMPROF_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "esm_weak.h"
#include "esm_functions.h"

#define ESM_LANG_C 0
#define ESM_LANG_FORTRAN 1
#define ESM_HIST_BUCKETS 48
#define ESM_MAX_BINS 1024
#define ESM_MAX_TMP 6

#ifdef MPI_F_STATUS_SIZE
#define ESM_F_STATUS_SIZE MPI_F_STATUS_SIZE
#else
#define ESM_F_STATUS_SIZE ((int)(sizeof(MPI_Status) / sizeof(MPI_Fint)))
#endif

#ifdef ESM_SIMULATED
/* Under SimGrid SMPI every simulated rank runs in one OS thread: the profiler is linked into the
 * program and its state is per rank (esm_rank_state.h: what is thread-local under a real MPI is
 * the rank's under SMPI). Time is the simulated clock. */
#define ESM_TLS
double simgrid_get_clock(void);
void smpi_bench_begin(void);
void smpi_bench_end(void);
/* Collectives the `offload` knob runs in the network (prof_offload.c; mpi.spec `offload`) */
#define ESM_OFFLOADED(name) esm_offload_##name
int esm_offload_MPI_Barrier(MPI_Comm comm);
int esm_offload_MPI_Bcast(void *buffer, int count, MPI_Datatype type, int root, MPI_Comm comm);
int esm_offload_MPI_Reduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                           int root, MPI_Comm comm);
int esm_offload_MPI_Allreduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                              MPI_Comm comm);
int esm_offload_MPI_Allgather(const void *send, int send_count, MPI_Datatype send_type, void *recv,
                              int recv_count, MPI_Datatype recv_type, MPI_Comm comm);
int esm_offload_MPI_Allgatherv(const void *send, int send_count, MPI_Datatype send_type, void *recv,
                               const int counts[], const int displs[], MPI_Datatype recv_type,
                               MPI_Comm comm);
#else
#define ESM_OFFLOADED(name) P##name
#define ESM_TLS __thread __attribute__((tls_model("initial-exec")))
#endif

typedef void (*esm_fptr)();

/* A communicator seen by the profiler. Entries are never freed (ids stay valid for output). */
typedef struct esm_comm {
    int id;             /* creation order on this rank */
    int size;           /* local group size */
    int inter;          /* intercommunicator: ranks name the remote group */
    int *world;         /* world rank of each peer rank, NULL when identical to world */
    int nworld;         /* entries in world */
    int *local, nlocal; /* intercommunicator: the local group's world ranks */
    int created_by;     /* ESM_* function id, or ESM_CREATED_* below */
    char name[64];
} esm_comm;

#define ESM_CREATED_WORLD (-1)
#define ESM_CREATED_SELF (-2)
#define ESM_CREATED_UNKNOWN (-3)

typedef struct esm_call {
    int fid, lang;
    uint64_t t0, t1;
    esm_comm *comm;
    uint64_t sent, recv;
    int coll;           /* a collective: one histogram entry of max(sent, recv) */
    int recv_done;      /* completed a point-to-point receive: its time is receive wait */
    MPI_Win win;        /* RMA: peers are ranks of this window's group */
    int ntmp;
    void *tmp[ESM_MAX_TMP];
} esm_call;

/* What a trace event records beyond esm_call (prof_trace.c), per thread (a thread is in one
 * wrapped call at a time): set while the call runs, recorded and cleared when it ends. Kept out
 * of esm_call, whose size decides how cheaply the wrappers build it. */
typedef struct esm_trace_call {
    int peer1, src1;    /* a send's destination or the source a receive names; the source a
                         * completed receive came from (world rank + 1; 0 none) */
    int tag;            /* the tag of a send, or the one a receive names */
    uint64_t req;       /* the request posted or completed (esm_req_key) */
    uint64_t cpu0;      /* ESMPROF_TRACE=cpu: the thread's CPU time (ns) at entry */
    void *caller;       /* the wrapper's return address: the call site (ESMPROF_CALLSITES=1) */
} esm_trace_call;

/* The call a thread is in, for a partial profile written while it has not returned (a rank that
 * hangs): its function id + 1 (0: none) and its entry time, set when the call starts, cleared by
 * esm_leave. The slot is in the thread's esm_thread block, where the signal helper reads it; until
 * the thread's first call has ended it is a scratch slot no one reads. */
typedef struct esm_in_call {
    volatile int fid1;
    volatile uint64_t t0;
} esm_in_call;
#define ESM_FN_FINALIZE (ESM_NFUNC + 1) /* MPI_Finalize, hand-written: in a slot, never counted */

/* ---- state (prof_core.c, prof_trace.c) ---- */
#ifndef ESM_SIMULATED
extern ESM_TLS esm_trace_call esm_tc;
extern ESM_TLS esm_in_call *esm_in_call_slot;
extern volatile int esm_on;                  /* between the init hook and the finalize hook */
extern ESM_TLS int esm_depth; /* >0 inside a wrapper: nested MPI calls pass through */
extern int esm_world_rank, esm_world_size;
extern int esm_trace_modes; /* traces, call sites (prof_trace.c) */
extern int esm_trace_cpu; /* ESMPROF_TRACE=cpu (prof_trace.c) */
#else
/* Under SMPI each simulated rank has its own (esm_rank_state.h): the names above, and those of
 * prof_state.h and prof_trace.h, are its fields, so that the program keeps no mutable global. */
typedef struct esm_rank_globals {
    esm_trace_call tc;
    esm_in_call *in_call_slot, in_call_scratch;
    volatile int on;
    int depth, world_rank, world_size, trace_modes, trace_cpu;
    uint64_t t0, base_bin_ticks;
    double ticks_per_second, trace_ns_per_event, callsite_ns_per_call;
    struct esm_thread *threads;
    struct esm_region_stat *region_here; /* prof_region.h */
} esm_rank_globals;
esm_rank_globals *esm_rank_globals_mine(void); /* prof_core.c */
#define esm_tc (esm_rank_globals_mine()->tc)
#define esm_in_call_slot (esm_rank_globals_mine()->in_call_slot)
#define esm_on (esm_rank_globals_mine()->on)
#define esm_depth (esm_rank_globals_mine()->depth)
#define esm_world_rank (esm_rank_globals_mine()->world_rank)
#define esm_world_size (esm_rank_globals_mine()->world_size)
#define esm_trace_modes (esm_rank_globals_mine()->trace_modes)
#define esm_trace_cpu (esm_rank_globals_mine()->trace_cpu)
#define esm_t0 (esm_rank_globals_mine()->t0)
#define esm_base_bin_ticks (esm_rank_globals_mine()->base_bin_ticks)
#define esm_ticks_per_second (esm_rank_globals_mine()->ticks_per_second)
#define esm_trace_ns_per_event (esm_rank_globals_mine()->trace_ns_per_event)
#define esm_callsite_ns_per_call (esm_rank_globals_mine()->callsite_ns_per_call)
#define esm_threads (esm_rank_globals_mine()->threads)
#endif
uint64_t esm_thread_cpu_ns(void);

static inline uint64_t esm_now(void)
{
#if defined(ESM_SIMULATED)
    return (uint64_t)(simgrid_get_clock() * 1e9 + 0.5);
#elif defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#else
    extern uint64_t esm_now_portable(void);
    return esm_now_portable();
#endif
}

static inline int esm_enter(void)
{
    return esm_on && esm_depth == 0;
}

/* Always inlined: __builtin_return_address(0) is then the wrapper's, the MPI call's site. */
static inline __attribute__((always_inline)) esm_call esm_call_begin(int fid, int lang)
{
    esm_call c = {0};
    c.fid = fid;
    c.lang = lang;
    c.win = MPI_WIN_NULL;
    esm_depth++;
#ifdef ESM_SIMULATED
    smpi_bench_end(); /* the program's computation since the last call reaches the clock */
    smpi_bench_begin();
#endif
    if (esm_trace_modes) { /* traces, call sites (prof_trace.h): off by default */
        esm_tc.caller = __builtin_return_address(0);
        if (esm_trace_cpu)
            esm_tc.cpu0 = esm_thread_cpu_ns();
    }
    c.t0 = esm_now();
    esm_in_call *in = esm_in_call_slot; /* the call in progress: its start, then its id */
    in->t0 = c.t0;
    in->fid1 = fid + 1;
    return c;
}

static inline void esm_call_end(esm_call *c)
{
    c->t1 = esm_now();
}

void esm_leave(esm_call *c);
void *esm_tmp(esm_call *c, size_t bytes);
void *esm_copy(esm_call *c, const void *src, size_t bytes);

/* ---- messages and peers ---- */
void esm_msg_to(esm_call *c, int rank, uint64_t bytes);
void esm_msg_from(esm_call *c, int rank, uint64_t bytes);
void esm_recv_status(esm_call *c, int post_fid, esm_comm *comm, const MPI_Status *status);
void esm_use_win(esm_call *c, MPI_Win win);

/* ---- requests ---- */
/* ESM_REQ_NONBLOCKING: a non-blocking send or collective, kept for its communicator only. */
enum {
    ESM_REQ_RECV = 1,
    ESM_REQ_PRECV,
    ESM_REQ_PSEND,
    ESM_REQ_MESSAGE,
    ESM_REQ_PCOLL,
    ESM_REQ_NONBLOCKING
};
void esm_req_post(esm_call *c, MPI_Request req, int kind, uint64_t bytes, int rank);
void esm_req_post_coll(esm_call *c, MPI_Request req, uint64_t sent, uint64_t recv);
void esm_req_start(esm_call *c, MPI_Request req);
/* Returns the communicator of the completed request (NULL: unknown). */
esm_comm *esm_req_complete(esm_call *c, MPI_Request req, const MPI_Status *status);

/* The communicators of the requests one completion call completed (Waitall, Testall, Waitsome,
 * Testsome): its time goes to their communicator, shared by request count when several. */
#define ESM_MAX_COMPLETED_COMMS 8
typedef struct esm_completed {
    int n;
    esm_comm *comm[ESM_MAX_COMPLETED_COMMS];
    uint64_t requests[ESM_MAX_COMPLETED_COMMS];
} esm_completed;
static inline void esm_completed_add(esm_completed *done, esm_comm *comm)
{
    if (!comm)
        return;
    for (int i = 0; i < done->n; i++) {
        if (done->comm[i] == comm) {
            done->requests[i]++;
            return;
        }
    }
    if (done->n < ESM_MAX_COMPLETED_COMMS) { /* beyond: the others share its time */
        done->comm[done->n] = comm;
        done->requests[done->n++] = 1;
    }
}
void esm_completed_charge(esm_call *c, const esm_completed *done);
void esm_req_free(MPI_Request req);
void esm_msg_probed(esm_call *c, MPI_Message msg);
void esm_msg_received(esm_call *c, MPI_Message msg, const MPI_Status *status);
void esm_msg_ireceived(esm_call *c, MPI_Message msg, MPI_Request req);

/* ---- communicators ---- */
esm_comm *esm_comm_of(MPI_Comm comm);
void esm_comm_created(esm_call *c, MPI_Comm comm);
void esm_comm_freed(esm_call *c, MPI_Comm comm); /* comm: the freed handle, not used */
void esm_comm_named(MPI_Comm comm, const char *name);
void esm_spawned(esm_call *c); /* MPI_Comm_spawn(_multiple) returned (prof_spawn.c) */

/* ---- bytes of a call (prof_bytes.c) ---- */
uint64_t esm_bytes(MPI_Count count, MPI_Datatype type);
void esm_types_changed(void); /* after MPI_Type_free: cached type sizes are stale */
uint64_t esm_root_bytes(int root, MPI_Comm comm, MPI_Count count, MPI_Datatype type);
uint64_t esm_nonroot_bytes(int root, MPI_Comm comm, MPI_Count count, MPI_Datatype type);
uint64_t esm_inplace_or(const void *buf, MPI_Count count, MPI_Datatype type, MPI_Count ipcount,
                        MPI_Datatype iptype);
uint64_t esm_gather_recv(MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm);
uint64_t esm_all_bytes(MPI_Comm comm, MPI_Count count, MPI_Datatype type);
MPI_Count esm_inplace_count(const void *sendbuf, MPI_Count sendcount, MPI_Count recvcount);
MPI_Datatype esm_inplace_type(const void *sendbuf, MPI_Datatype sendtype, MPI_Datatype recvtype);
/* Helpers over count arrays: int counts (MPI-3.1) or MPI_Count counts (MPI-4 `_c` calls). */
#define ESM_COUNT_ARRAY_DECLS(SUFFIX, T)                                                           \
    uint64_t esm_vbytes##SUFFIX(const T *counts, int n, MPI_Datatype type);                        \
    uint64_t esm_wbytes##SUFFIX(const T *counts, const MPI_Datatype *types, int n);                \
    uint64_t esm_wbytes_inplace##SUFFIX(const void *sendbuf, const T *sendcounts,                  \
                                        const MPI_Datatype *sendtypes, const T *recvcounts,        \
                                        const MPI_Datatype *recvtypes, int n);                     \
    uint64_t esm_gatherv_recv##SUFFIX(const T *counts, MPI_Datatype type, int root,                \
                                      MPI_Comm comm);                                              \
    uint64_t esm_gatherv_send##SUFFIX(const void *sendbuf, MPI_Count sendcount,                    \
                                      MPI_Datatype sendtype, const T *ipcounts,                    \
                                      MPI_Datatype iptype, int root, MPI_Comm comm);               \
    const T *esm_inplace_counts##SUFFIX(const void *sendbuf, const T *sendcounts,                  \
                                        const T *recvcounts);                                      \
    void esm_trace_alltoallv##SUFFIX(esm_call *c, const void *sendbuf, const T *sendcounts,        \
                                     MPI_Datatype sendtype, const T *recvcounts,                   \
                                     MPI_Datatype recvtype);
ESM_COUNT_ARRAY_DECLS(_int, int)
ESM_COUNT_ARRAY_DECLS(_count, MPI_Count)
#define ESM_BY_COUNTS(name, counts)                                                                \
    _Generic((counts),                                                                             \
        const MPI_Count *: name##_count,                                                           \
        MPI_Count *: name##_count,                                                                 \
        default: name##_int)
#define esm_vbytes(counts, ...) ESM_BY_COUNTS(esm_vbytes, counts)(counts, __VA_ARGS__)
#define esm_wbytes(counts, ...) ESM_BY_COUNTS(esm_wbytes, counts)(counts, __VA_ARGS__)
#define esm_wbytes_inplace(buf, counts, ...)                                                       \
    ESM_BY_COUNTS(esm_wbytes_inplace, counts)(buf, counts, __VA_ARGS__)
#define esm_gatherv_recv(counts, ...) ESM_BY_COUNTS(esm_gatherv_recv, counts)(counts, __VA_ARGS__)
#define esm_gatherv_send(buf, count, type, ipcounts, ...)                                          \
    ESM_BY_COUNTS(esm_gatherv_send, ipcounts)(buf, count, type, ipcounts, __VA_ARGS__)
#define esm_inplace_counts(buf, counts, ...)                                                       \
    ESM_BY_COUNTS(esm_inplace_counts, counts)(buf, counts, __VA_ARGS__)
#define esm_trace_alltoallv(c, buf, counts, ...)                                                   \
    ESM_BY_COUNTS(esm_trace_alltoallv, counts)(c, buf, counts, __VA_ARGS__)
uint64_t esm_out_bytes(MPI_Comm comm, MPI_Count count, MPI_Datatype type);
uint64_t esm_in_bytes(MPI_Comm comm, MPI_Count count, MPI_Datatype type);
int esm_comm_size(MPI_Comm comm); /* remote size for intercommunicators */
int esm_comm_rank(MPI_Comm comm);
int esm_indegree(MPI_Comm comm);
int esm_outdegree(MPI_Comm comm);
unsigned esm_bucket(uint64_t bytes);

/* ---- Fortran (prof_fortran.c) ---- */
esm_fptr esm_fsym(const char *name);
const void *esm_fbuf(const void *fbuf, int descriptor);
int esm_fstatus_ignored(const MPI_Fint *f);
int esm_fstatuses_ignored(const MPI_Fint *f);
MPI_Status *esm_fstatuses(esm_call *c, const MPI_Fint *f, int n);
int *esm_findices(esm_call *c, const MPI_Fint *f, int n);
char *esm_fstr(esm_call *c, const char *f, size_t len);

#endif
