/* esm_comm.h: starting and stopping the parallel run, who this rank is, and ending cleanly.
 *
 * Exit statuses follow docs/workloads.md: 0 success, 1 bad input (a clear message on rank 0,
 * every rank exits, never a hang), 2 verification failed.
 *
 * The core counts every MPI operation it issues (esm_counts); the result line reports the
 * totals so a profile of the run can be checked against them call for call. */
#ifndef ESM_COMM_H
#define ESM_COMM_H
#include <stdbool.h>
#include <stddef.h>

enum { ESM_EXIT_OK = 0, ESM_EXIT_BAD_INPUT = 1, ESM_EXIT_VERIFY_FAILED = 2 };

/* MPI operations issued by the core on one rank (or summed over ranks). */
typedef struct esm_counts {
    long isend, irecv, send_init, recv_init, startall, waitall, allreduce, barrier;
    long halo_updates; /* halo exchanges, whatever the engine */
    long messages;     /* halo messages sent to other ranks, whatever the engine */
    long bytes_sent;   /* halo payload bytes sent to other ranks */
} esm_counts;

/* Start MPI; `program` names the workload in messages ("pop: error: ..."). */
void esm_init(int *argc, char ***argv, const char *program);
/* This rank and the rank count of the communicator the core works on: the whole run, or the
 * processor set entered with esm_group_enter (esm_group.h). The calls below that communicate
 * (esm_fail, esm_fail_if_any, esm_barrier) work on that communicator too. */
int esm_rank(void);
int esm_ranks(void);
const char *esm_program(void);

/* Finalize MPI and exit this rank with `status`. */
_Noreturn void esm_exit(int status);

/* Bad input seen alike by every rank (command line, decomposition): rank 0 prints
 * "<program>: error: <message>" on stderr, every rank exits with status 1. Collective. */
_Noreturn void esm_fail(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* An error only some ranks may see (`bad` true there): if any rank has it, the lowest such
 * rank prints its message and every rank exits with status 1. Collective; returns when no
 * rank is bad. */
void esm_fail_if_any(bool bad, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* Print on rank 0 only (stdout), like HYCOM's lp unit. */
void esm_say(const char *format, ...) __attribute__((format(printf, 1, 2)));

void esm_barrier(void);

/* This rank's counts so far, and the counts summed over ranks (collective: one allreduce,
 * itself included in the totals). */
const esm_counts *esm_counts_mine(void);
esm_counts esm_counts_total(void);

/* Zeroed, 64-byte aligned memory; on failure the run ends with a message naming the fix. */
void *esm_calloc(size_t count, size_t size);
void *esm_alloc(size_t bytes);
void *esm_realloc(void *pointer, size_t bytes);
#endif
