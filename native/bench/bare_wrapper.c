/* The floor a profiler is held to (issue 26): a PMPI wrapper of the calls bench/latency times
 * that only counts each call and reads a clock before and after it, and nothing more: no
 * per-call record, no histogram, no request table. Built twice (bench/CMakeLists.txt):
 * libbarewrap_tsc.so reads the TSC (as esmprof.h's esm_now does), libbarewrap_monotonic.so
 * clock_gettime(CLOCK_MONOTONIC). Preloaded as libesmprof is (benchmarks/profiler_overhead.py
 * --bare): the difference is what libesmprof keeps beyond counting and timing.
 *
 * With BAREWRAP_REPORT set, each rank prints its counts at MPI_Finalize ("barewrap rank R:
 * MPI_Send N ..."), which tests/test_bare_wrapper.py checks. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { SEND, RECV, ALLREDUCE, ISEND, IRECV, WAITALL, FUNCTIONS };
static const char *const names[FUNCTIONS] = {"MPI_Send",  "MPI_Recv",  "MPI_Allreduce",
                                             "MPI_Isend", "MPI_Irecv", "MPI_Waitall"};
uint64_t barewrap_calls[FUNCTIONS], barewrap_ticks[FUNCTIONS];

static inline uint64_t now(void)
{
#if defined(BAREWRAP_CLOCK_tsc) && (defined(__x86_64__) || defined(__i386__))
    return __builtin_ia32_rdtsc();
#else
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
#endif
}

#define TIMED(fn, call)                                                                            \
    do {                                                                                           \
        barewrap_calls[fn]++;                                                                      \
        uint64_t t0 = now();                                                                       \
        int rc = call;                                                                             \
        barewrap_ticks[fn] += now() - t0;                                                          \
        return rc;                                                                                 \
    } while (0)

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    TIMED(SEND, PMPI_Send(buf, count, type, dest, tag, comm));
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    TIMED(RECV, PMPI_Recv(buf, count, type, source, tag, comm, status));
}

int MPI_Allreduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    TIMED(ALLREDUCE, PMPI_Allreduce(in, out, count, type, op, comm));
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    TIMED(ISEND, PMPI_Isend(buf, count, type, dest, tag, comm, request));
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    TIMED(IRECV, PMPI_Irecv(buf, count, type, source, tag, comm, request));
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    TIMED(WAITALL, PMPI_Waitall(count, requests, statuses));
}

int MPI_Finalize(void)
{
    if (getenv("BAREWRAP_REPORT")) {
        int rank;
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        char line[512];
        int n = snprintf(line, sizeof line, "barewrap rank %d:", rank);
        for (int f = 0; f < FUNCTIONS && n < (int)sizeof line; f++)
            n += snprintf(line + n, sizeof line - (size_t)n, " %s %llu", names[f],
                          (unsigned long long)barewrap_calls[f]);
        fprintf(stderr, "%s\n", line);
    }
    return PMPI_Finalize();
}
