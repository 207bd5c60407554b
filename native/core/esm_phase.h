/* esm_phase.h: phases of a workload, as regions of the profile (docs/profiler.md, "Regions").
 *
 *     esm_timed_begin();                  every workload: its timed loop, the region "timed"
 *     for (step...) {
 *         esm_phase_begin("baroclinic"); ... esm_phase_end("baroclinic");
 *         esm_phase_begin("barotropic"); ... esm_phase_end("barotropic");
 *     }
 *     esm_timed_end();
 *
 * A timer with .phase = true (esm_timer.h) is also a phase named like the timer. Phases nest;
 * each begin needs its end on the same rank. They are MPI_Pcontrol(1, name) and
 * MPI_Pcontrol(-1, name) (IPM's convention): without the profiler they cost next to nothing;
 * under SimGrid SMPI they reach the profiler linked into the core (SMPI's own would abort). */
#ifndef ESM_PHASE_H
#define ESM_PHASE_H

/* The one name of every workload's timed loop; reports and findings show it by default. */
#define ESM_TIMED_PHASE "timed"

void esm_phase_begin(const char *name);
void esm_phase_end(const char *name);
void esm_timed_begin(void);
void esm_timed_end(void);
#endif
