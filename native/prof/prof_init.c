/* MPI_Init / MPI_Finalize (C) and the hooks that start and end profiling. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "prof_bind.h"
#include "esm_rank_state.h"
#include "prof_hooks.h"
#include "prof_state.h"
#include "prof_trace.h"

#ifdef ESM_SIMULATED
ESM_RANK_STATE(esm_run, run_info)
esm_run *esm_run_info_mine(void)
{
    return run_info();
}
#else
esm_run esm_run_info;
#endif
typedef struct {
    int hooked;
    MPI_Comm private_comm; /* a dup of MPI_COMM_WORLD while profiling */
} init_state;
ESM_RANK_STATE(init_state, init)

static double mono_seconds(void)
{
#ifdef ESM_SIMULATED
    return simgrid_get_clock();
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Ticks of esm_now() per second, over a 2 ms spin; refined over the whole run at finalize. */
static void calibrate_clock(void)
{
#ifdef ESM_SIMULATED
    esm_ticks_per_second = 1e9;     /* esm_now() is the simulated clock in ns */
    return;
#endif
    double m0 = mono_seconds(), m1;
    uint64_t t0 = esm_now();
    do
        m1 = mono_seconds();
    while (m1 - m0 < 0.002);
    esm_ticks_per_second = (double)(esm_now() - t0) / (m1 - m0);
}

/* A monotonic clock reading and esm_now() taken together: the ticks read between two clock
 * reads, the closest pair of up to 50 tries (a preemption in between would skew the pair). The
 * ranks of one host share the monotonic clock, so a trace's times line up across ranks (exact
 * late-sender time, src/esmperf/profile/late_sender.py). */
static void clock_pair(double *mono, uint64_t *ticks)
{
    double best = 1e9;
    for (int i = 0; i < 50 && best > 1e-6; i++) {
        double m0 = mono_seconds();
        uint64_t t = esm_now();
        double m1 = mono_seconds();
        if (m1 - m0 < best) {
            best = m1 - m0;
            *mono = 0.5 * (m0 + m1);
            *ticks = t;
        }
    }
}

/* Cost of one wrapped call without its PMPI call (timers, lookups, recording): the cheapest of
 * 20 batches, so a preempted batch on a busy node does not inflate it. */
static double calibrate_overhead(void)
{
#ifdef ESM_SIMULATED
    return 0;                       /* the simulated clock does not see the profiler */
#endif
    enum { BATCHES = 20, N = 200 };
    uint64_t best = UINT64_MAX;
    esm_on = 1;
    for (int batch = 0; batch < BATCHES; batch++) {
        uint64_t start = esm_now();
        for (int i = 0; i < N; i++) {
            if (!esm_enter())
                continue;
            esm_call c = esm_call_begin(ESM_FN_SELF, ESM_LANG_C);
            esm_call_end(&c);
            c.comm = esm_comm_of(MPI_COMM_WORLD);
            esm_leave(&c);
        }
        uint64_t spent = esm_now() - start;
        best = spent < best ? spent : best;
    }
    esm_on = 0;
    return 1e9 * (double)best / N / esm_ticks_per_second;
}

static void reset_thread(esm_thread *t)
{
    memset(t->f, 0, sizeof t->f);
    memset(t->bins, 0, sizeof t->bins);
    memset(t->io, 0, sizeof t->io);
    t->bin_start = t->bin_end = 0;      /* recomputed against the new esm_t0 */
    t->bin_ticks = esm_base_bin_ticks;
    if (t->comms)
        memset(t->comms, 0, sizeof *t->comms * (size_t)t->comm_cap);
}

void esm_init_hook(void)
{
#ifdef ESM_SIMULATED
    if (!getenv("ESMPROF_OUT"))     /* on when asked for */
        return;
#endif
    if (init()->hooked)
        return;
    init()->hooked = 1;
    const char *disable = getenv("ESMPROF_DISABLE");
    if (disable && *disable == '1')
        return;
    esm_bind_mpi();                 /* Fortran entry points come here first */
    PMPI_Comm_rank(MPI_COMM_WORLD, &esm_world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &esm_world_size);
    PMPI_Query_thread(&esm_run_info.thread_level);
    int *appnum = NULL, has_appnum = 0; /* MPMD: which program of the command line, from 0 */
    PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &has_appnum);
    esm_run_info.appnum = has_appnum && appnum ? *appnum : -1;
    esm_scan_unwrapped();
    esm_report_unwrapped();
    PMPI_Comm_dup(MPI_COMM_WORLD, &init()->private_comm);
    esm_output_path();
    esm_spawn_setup(
        init()->private_comm);  /* first: a spawned job's name is what its parent waits for */
    calibrate_clock();
    const char *bin = getenv("ESMPROF_BIN_SECONDS");
    double bin_seconds = bin ? atof(bin) : 1.0;
    esm_base_bin_ticks = (uint64_t)((bin_seconds > 0 ? bin_seconds : 1.0) * esm_ticks_per_second);
    if (!esm_base_bin_ticks)
        esm_base_bin_ticks = 1;
    esm_comm_register_world();
    esm_fortran_selfcheck(&esm_run_info.fortran);
    esm_run_info.ns_per_call = calibrate_overhead();
    for (esm_thread *t = esm_threads; t; t = t->next)
        reset_thread(t);
    esm_run_info.init_epoch = wall_seconds();
    clock_pair(&esm_run_info.init_mono, &esm_run_info.init_ticks);
    esm_t0 = esm_run_info.init_ticks;
    esm_modes_start();              /* traces, call sites (prof_trace.c) */
    esm_write_running_marker();
    esm_signals_start();
    PMPI_Barrier(
        init()->private_comm); /* no rank leaves MPI_Init (and can die) before the marker exists */
    esm_on = 1;
}

/* The profile's collectives (prof_output.c) would block for ever on a peer that hangs or died:
 * first every rank waits, in a non-blocking barrier it tests, for all to reach MPI_Finalize. Past
 * ESMPROF_FINALIZE_WAIT seconds (default 5) it writes its partial line, which names MPI_Finalize
 * as the call it is in, and waits on: the line survives the kill that ends a hung run. */
static void wait_for_all_ranks(void)
{
#ifdef ESM_SIMULATED
    return; /* the simulated clock does not pass while a rank sleeps: the collectives as before */
#endif
    esm_in_call *in = &esm_self()->in_call;
    in->t0 = esm_run_info.final_ticks;
    in->fid1 = ESM_FN_FINALIZE + 1;
    const char *wait = getenv("ESMPROF_FINALIZE_WAIT");
    double bound = wait ? atof(wait) : 5.0, start = mono_seconds();
    MPI_Request all_here;
    PMPI_Ibarrier(init()->private_comm, &all_here);
    const struct timespec nap = {0, 200000};
    for (int done = 0, written = 0;;) {
        PMPI_Test(&all_here, &done, MPI_STATUS_IGNORE);
        if (done)
            break;
        if (!written && mono_seconds() - start >= bound) {
            esm_partial_write("finalize");
            written = 1;
        }
        nanosleep(&nap, NULL);
    }
    esm_partial_close();
    in->fid1 = 0;
}

void esm_finalize_hook(void)
{
    if (!esm_on)
        return;
    esm_on = 0;
    clock_pair(&esm_run_info.final_mono, &esm_run_info.final_ticks);
    double span = esm_run_info.final_mono - esm_run_info.init_mono;
    if (span > 0.05) /* the run's own rate: pairs within 1 us give it to 2e-5 or better */
        esm_ticks_per_second = (double)(esm_run_info.final_ticks - esm_run_info.init_ticks) / span;
    wait_for_all_ranks();
    esm_write_profile(init()->private_comm);
    esm_trace_write(NULL);
    esm_signals_finished();
    PMPI_Comm_free(&init()->private_comm);
}

int MPI_Init(int *argc, char ***argv)
{
    esm_bind_mpi();
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS && esm_depth == 0)
        esm_init_hook();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    esm_bind_mpi();
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS && esm_depth == 0)
        esm_init_hook();
    return rc;
}

int MPI_Finalize(void)
{
    if (esm_depth == 0)
        esm_finalize_hook();
    return PMPI_Finalize();
}
