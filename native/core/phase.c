/* Phases: regions of the profile through MPI_Pcontrol (esm_phase.h). SimGrid SMPI aborts on
 * MPI_Pcontrol ("Not yet implemented") and runs no profiler: phases are nothing there. */
#include <mpi.h>
#include "esm_phase.h"

#ifdef ESM_SMPI
void esm_phase_begin(const char *name) { (void)name; }
void esm_phase_end(const char *name) { (void)name; }
#else
void esm_phase_begin(const char *name) { MPI_Pcontrol(1, name); }
void esm_phase_end(const char *name) { MPI_Pcontrol(-1, name); }
#endif
void esm_timed_begin(void) { esm_phase_begin(ESM_TIMED_PHASE); }
void esm_timed_end(void) { esm_phase_end(ESM_TIMED_PHASE); }
