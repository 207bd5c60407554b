/* Phases: regions of the profile through MPI_Pcontrol (esm_phase.h). On the smpi stack the
 * profiler is linked into the core, so MPI_Pcontrol is the profiler's (SMPI's own aborts). */
#include <mpi.h>
#include "esm_phase.h"

void esm_phase_begin(const char *name)
{
    MPI_Pcontrol(1, name);
}
void esm_phase_end(const char *name)
{
    MPI_Pcontrol(-1, name);
}
void esm_timed_begin(void)
{
    esm_phase_begin(ESM_TIMED_PHASE);
}
void esm_timed_end(void)
{
    esm_phase_end(ESM_TIMED_PHASE);
}
