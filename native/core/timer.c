/* Wall-clock timers. */
#include <mpi.h>
#include "esm_phase.h"
#include "esm_timer.h"

double esm_wtime(void)
{
    return MPI_Wtime();
}

void esm_timer_start(esm_timer *t)
{
    if (t->phase)
        esm_phase_begin(t->name);
    t->started = MPI_Wtime();
}

void esm_timer_stop(esm_timer *t)
{
    t->total += MPI_Wtime() - t->started;
    if (t->phase)
        esm_phase_end(t->name);
    t->count++;
}

void esm_timer_reset(esm_timer *t)
{
    t->total = 0;
    t->count = 0;
}
