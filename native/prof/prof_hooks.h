/* Start and end of profiling, shared by the C and Fortran MPI_Init/MPI_Finalize entry points. */
#ifndef PROF_HOOKS_H
#define PROF_HOOKS_H

#include "esmprof.h"

typedef struct esm_fortran_check {
    int bindings_loaded;        /* the library's Fortran layer is in the process */
    int wrappers_reached;       /* a Fortran call lands in the profiler's Fortran wrappers */
    int library_calls_c_layer;  /* the library's Fortran layer calls the C MPI_ symbols (MPICH) */
} esm_fortran_check;

void esm_init_hook(void);
void esm_finalize_hook(void);
void esm_fortran_selfcheck(esm_fortran_check *out);

/* prof_output.c */
typedef struct esm_run {
    int thread_level;
    int appnum;                 /* MPI_APPNUM: the program's place in an MPMD command, or -1 */
    double init_epoch;          /* wall clock at the end of MPI_Init */
    uint64_t init_ticks, final_ticks;
    double init_mono, final_mono;
    double ns_per_call;         /* calibrated cost of one wrapped call */
    esm_fortran_check fortran;
    char out_path[4096];
    int spawned;                /* started by MPI_Comm_spawn */
    char parent_path[4096];     /* then: the parent job's profile */
} esm_run;

#ifdef ESM_SIMULATED
esm_run *esm_run_info_mine(void); /* each simulated rank's own (esm_rank_state.h) */
#define esm_run_info (*esm_run_info_mine())
#else
extern esm_run esm_run_info;
#endif
void esm_output_path(void);
void esm_write_running_marker(void);

/* prof_spawn.c */
void esm_spawn_setup(MPI_Comm world);
void esm_spawn_header(void (*put_str)(void *, const char *), void (*put_raw)(void *, const char *),
                      void *b);
void esm_write_profile(MPI_Comm comm);
char *esm_rank_line(const char *partial, size_t *len);

/* prof_signal.c */
void esm_signals_start(void);
void esm_signals_finished(void);
void esm_partial_write(const char *reason); /* this rank's partial line now, and the snapshots' */
void esm_partial_close(void);                /* the complete profile is being written */

#endif
