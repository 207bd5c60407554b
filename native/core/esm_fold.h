/* esm_fold.h: folded simulation and the node model, for SimGrid SMPI runs at the seeds' scale
 * (docs/simulate.md, "Folding").
 *
 * A folded run keeps the communication of a full run, message for message and byte for byte,
 * and stops paying for what makes thousands of simulated ranks too big for one machine:
 *  - Fields: esm_field_alloc gives each rank memory of its real size, but the ranks share it:
 *    every rank's k-th field of n bytes, n rounded up to a power of two, is the same memory.
 *    Memory grows with the distinct sizes (within a factor 2), not with the rank count. The
 *    values are meaningless.
 *  - Replicated data (the global decomposition, geometry, masks every rank builds alike):
 *    esm_shared builds it once and hands the same read-only copy to every rank.
 *  - Kernels: esm_kernel_begin/esm_kernel_end time a kernel's first calls over all ranks
 *    (ESM_KERNEL_SAMPLES, keyed by the kernel's name), then charge its cost per point
 *    without running it. With the cost measured, each rank's own first call of a kernel runs
 *    too, unsampled: it warms that rank's arrays. Control flow that depends on values (a solver's convergence test) must not
 *    depend on them when folded: esm_folded() tells the workload to make the iteration
 *    counts a free-running run made (esm_fold_history below) or fixed ones.
 *
 * The node model (folded or not, SMPI only, when the launcher gives a node): a kernel's
 * simulated time is max(in-core time, bytes / (node bandwidth / ranks on the node)), the
 * ECM model's overlap of in-core work with memory traffic (docs/simulate.md, "The computation
 * model"). The in-core time is the measured time / core speed, or with the cost modelled the
 * kernel's flops / the core's flops per second (flops per cycle x clock): it scales with
 * 1/frequency, the memory term does not. Ranks sharing a node share its memory bandwidth, so a
 * memory-bound kernel slows as ranks per node grow.
 *
 * Set by the launcher in the environment (src/esmperf/ knobs of the smpi stack):
 *   ESM_FOLD=1                 fold this run (SMPI builds only; elsewhere an error)
 *   ESM_NODE_RANKS=N           ranks per node (block placement: rank r on node r / N)
 *   ESM_NODE_BANDWIDTH=B       a node's memory bandwidth, bytes/s (its STREAM triad)
 *   ESM_CORE_SPEED=S           a simulated core's speed relative to this machine's (1: same)
 *   ESM_CORE_FLOPS=F           a simulated core's peak flops/s at its clock (0: no in-core
 *                              term in the modelled cost)
 *   ESM_KERNEL_COST=measured   measured (default); model: charge the flops and bytes terms
 *                              only, so that simulated times are deterministic; off: charge
 *                              nothing (the smpi knob computation = off, the network alone)
 *   ESM_KERNEL_SAMPLES=K       calls timed per kernel before it is charged unrun (default 3)
 *   ESM_KERNEL_REPORT=1        each kernel's calls, work, flops and bytes over all ranks in
 *                              the result line ("fold.kernels.<name>")
 *
 * Everywhere else (real MPI builds; SMPI without folding or a node) esm_field_alloc is
 * esm_calloc, esm_shared builds a private copy, and kernels always run (a branch). */
#ifndef ESM_FOLD_H
#define ESM_FOLD_H
#include <stdbool.h>
#include <stddef.h>

/* Is this run folded? */
bool esm_folded(void);

/* Are kernels charged by their flops and bytes on a modelled node (SMPI, ESM_KERNEL_COST=model
 * with the core's flops and the node's bandwidth given: the smpi knob computation = model with
 * a machine)? A workload that states its kernels' cost as such work (not as code that runs)
 * needs it. */
bool esm_kernel_cost_modelled(void);

/* The shared file system (SMPI, ESM_FILE_SYSTEM_BANDWIDTH: the smpi knob file_system, bytes/s
 * one rank reads): is one modelled, and a read of `bytes` by this rank, charged as
 * bytes / rate of simulated time while the rank waits (the run fails when none is modelled).
 * For input a workload reads on a root and then sends (docs/simulate.md "The file system"). */
bool esm_file_system_modelled(void);
void esm_file_system_read(double bytes);

/* Zeroed, 64-byte aligned memory for a field of `bytes`; folded: shared between ranks by
 * (allocation order on this rank, bytes rounded up to a power of two). esm_field_free frees
 * it (folded: nothing). */
void *esm_field_alloc(size_t bytes);
void esm_field_free(void *field);

/* Data every rank builds alike, named `key` (include every parameter that changes it, e.g.
 * "homme.cube.ne120.ranks13824"): build(context) once and share the result between ranks when
 * folded; otherwise build(context) on each call. Shared results are never freed:
 * esm_shared_owned says whether the caller owns (and frees) what esm_shared returned. */
void *esm_shared(const char *key, void *(*build)(const void *context), const void *context);
bool esm_shared_owned(void);

/* A compute kernel, declared once per call site (static const), run as
 *     if (esm_kernel_begin(&k, points, bytes)) { ...body...; esm_kernel_end(&k); }
 * `points` is the work of this call (the cost model is linear in it), `bytes` the memory
 * traffic of this call by the workload's byte model (for the node model). `flops` is set in
 * the declaration, {.name = "pop.tracer", .flops = 62}: the floating-point operations (adds,
 * subtracts, multiplies, divides and libm calls each one) of one point of work, counted from
 * the kernel's code; 0 (not counted) gives the kernel no in-core term when its cost is
 * modelled. The declaration is read-only, one for all ranks: what a rank keeps of a kernel (its
 * calls, the cost model) the core keeps per rank, found by the declaration's address (which
 * must stay the kernel's as long as the run). */
typedef struct esm_kernel {
    const char *name; /* "pop.tracer": one cost model per name over all ranks */
    double flops;     /* per point of work */
} esm_kernel;

bool esm_kernel_begin(const esm_kernel *k, double points, double bytes);
/* The same for a kernel whose flops are not proportional to its points (a multi-vector dot
 * product over a varying number of vectors): `flops` of this call instead of k->flops x points. */
bool esm_kernel_begin_flops(const esm_kernel *k, double points, double bytes, double flops);
void esm_kernel_end(const esm_kernel *k);

/* Sampled loops (folded runs only): a loop of identical iterations whose count is fixed (a
 * folded solve) may run only its first iterations, with all their messages, and charge the
 * rest as simulated time it measured on them: esm_fold_skip(seconds) advances this rank's
 * simulated clock by `seconds` without sending anything. The skipped iterations' messages are
 * not in the run's counts (the workload reports how many iterations it simulated). */
void esm_fold_skip(double seconds);

/* A recorded history (docs/simulate.md, "Folded iteration counts"): the iteration counts a
 * free-running run of a deck made, step by step, for a folded run (which cannot test
 * convergence) to make the same solver work. `counts` is the text a run reports them in: steps
 * separated by '/', a step's counts by ' ' (PFLOTRAN: the Krylov iterations of each Newton
 * iteration, so as many counts as Newton iterations; POP: the barotropic solve's, one a step).
 * Recorded by scripts/fold_history.py into the workload's fold_history.c. */
typedef struct esm_fold_history {
    const char *deck;    /* recorded on this deck's own grid */
    const char *options; /* with these options beyond the deck's defaults ("" none; pflotran:
                            "--time-stepping deck") */
    int ranks;           /* at this rank count */
    int steps;          /* steps recorded */
    const char *counts; /* "12 10 9/8 7/..." */
} esm_fold_history;

/* Of the n histories, the one of `deck` recorded with `options` at the rank count nearest
 * `ranks` (by ratio; a tie: the lower), or NULL if `deck` has none with those options. */
const esm_fold_history *esm_fold_history_nearest(const esm_fold_history *histories, int n,
                                                 const char *deck, const char *options, int ranks);
/* Step `step`'s counts (0-based) into counts[0..max-1]; their number. A step past the recorded
 * ones repeats the last recorded step. */
int esm_fold_history_step(const esm_fold_history *h, long step, int *counts, int max);
/* Append a step's k counts to *text (NULL at first; the caller frees it) in that form. */
void esm_fold_history_append(char **text, const int *counts, int k);

/* What folding and the node model did on this rank, for the result line ("fold": calls run,
 * calls charged unrun, simulated seconds charged by the kernels and by skipped iterations,
 * flops of the kernels summed over ranks). */
typedef struct esm_fold_counts {
    long kernel_calls_run, kernel_calls_charged;
    double kernel_seconds, skipped_seconds;
    double kernel_flops; /* flops of every kernel call, run or charged (esm_kernel.flops) */
    double file_system_seconds, file_system_bytes; /* esm_file_system_read's */
    long field_bytes;      /* asked of esm_field_alloc */
    long field_bytes_held; /* allocated by this rank for it (folded: only new shared fields) */
} esm_fold_counts;
const esm_fold_counts *esm_fold_counts_mine(void);
#endif
