/* esm_timer.h: wall-clock timers (MPI_Wtime) that accumulate over start/stop pairs.
 *
 *     esm_timer solve = {.name = "barotropic"};
 *     esm_timer_start(&solve); ... esm_timer_stop(&solve);
 *
 * esm_result_timers reports each timer's maximum over ranks. A timer with .phase = true is also a
 * phase of the profile named like the timer (esm_phase.h): start enters it, stop leaves it. */
#ifndef ESM_TIMER_H
#define ESM_TIMER_H

typedef struct esm_timer {
    const char *name;
    double total;   /* seconds accumulated */
    double started; /* when running */
    long count;     /* start/stop pairs */
    int phase;      /* also a region of the profile */
} esm_timer;

double esm_wtime(void);
void esm_timer_start(esm_timer *t);
void esm_timer_stop(esm_timer *t);
void esm_timer_reset(esm_timer *t);
#endif
