/* esmprof_api.h: mark regions of a program for the esmperf profiler (docs/profiler.md, "Regions").
 *
 *     #include "esmprof_api.h"
 *     esmprof_region_begin(ESMPROF_TIMED_REGION);    // the main loop: reports show it by default
 *     for (step...) {
 *         esmprof_region_begin("barotropic"); ...; esmprof_region_end("barotropic");
 *     }
 *     esmprof_region_end(ESMPROF_TIMED_REGION);
 *
 * The functions are MPI_Pcontrol(1, name) and MPI_Pcontrol(-1, name) (IPM's convention), so the
 * program needs nothing but its MPI library: with libesmprof linked or LD_PRELOADed the regions
 * are recorded, without it the library's MPI_Pcontrol does nothing. Call them between MPI_Init
 * and MPI_Finalize; names are 1..63 printable ASCII characters. Fortran: link libesmprof_api.a
 * (esmprof_api.c) and `call esmprof_region_begin('name')` / `call esmprof_region_end('name')`. */
#ifndef ESMPROF_API_H
#define ESMPROF_API_H
#include <mpi.h>

/* The region every esmperf workload wraps its timed loop in; reports default to it. */
#define ESMPROF_TIMED_REGION "timed"

static inline void esmprof_region_begin(const char *name)
{
    MPI_Pcontrol(1, name);
}
static inline void esmprof_region_end(const char *name)
{
    MPI_Pcontrol(-1, name);
}
#endif
