/* The deck's time stepping (--time-stepping deck): the step sizes PFLOTRAN's reactive-transport
 * time stepper takes on the calcite deck, written from a reading of PFLOTRAN's source (upstream
 * master 980d8d569da5, 2023-04-06; none of it copied):
 *
 *   - the first step is the deck's INITIAL_TIMESTEP_SIZE, no step exceeds MAXIMUM_TIMESTEP_SIZE
 *     (timestepper_base.F90, TimestepperBaseSetTargetTime: dt = min(dt, the waypoint's dt_max));
 *   - a step that would pass, or come within a tenth of a step of (time_step_tolerance 0.1), the
 *     next waypoint is cut or stretched to end on it: the deck's waypoints are the output times
 *     (OUTPUT PERIODIC TIME 1 y) and FINAL_TIME, each forcing a match (waypoint.F90,
 *     WaypointForceMatchToTime); unless that step would exceed dt_max by more than 1 s. After a
 *     step so matched, the next starts from the step size held before the match ("revert_dt");
 *   - after each converged step the size is scaled by a factor chosen from that step's Newton
 *     iterations n (pm_rt.F90, PMRTUpdateTimestep, its "original implementation" branch, which
 *     applies when no VOLUME_FRACTION_CHANGE_GOVERNOR is set, as in the deck): n <= the
 *     acceleration index (TS_ACCELERATION, 8 in the deck) takes the n-th entry of the
 *     timestepper's default table (timestepper_SNES.F90, TimestepperSNESInit: 2 for 1 to 5
 *     iterations, then 1.8, 1.6, 1.4, 1.2, 1 ...), more iterations halve the step; growth at most
 *     time_step_max_growth_factor (2), the result kept within [dt_min, dt_max];
 *   - a Newton solve that fails cuts the step by time_step_reduction_factor (0.5) and solves it
 *     again, at most max_time_step_cuts (16) times (TimestepperBaseCutDT); the step after a cut
 *     and the next constant_time_step_threshold (5) - 1 keep their size
 *     (TimestepperSNESUpdateDT's num_constant_time_steps);
 *   - the run ends on FINAL_TIME or after MAX_STEPS (the proxy's --steps), whichever comes first.
 * The deck has no flow, so no CFL limit applies (RealizationLimitDTByCFL needs a governor). */
#include <math.h>
#include "pflotran.h"

/* The deck's TIME and OUTPUT blocks and TS_ACCELERATION, PFLOTRAN's defaults for the rest. A
 * year is 365 days (pflotran_constants.F90, DAYS_PER_YEAR). */
enum { DECK_ACCELERATION = 8, MAX_CUTS = 16, CONSTANT_AFTER_CUT = 5 };
static const double year = 365.0 * 24 * 3600;
static const double growth_table[] = {2.0, 2.0, 2.0, 2.0, 2.0, 1.8, 1.6,
                                      1.4, 1.2, 1.0, 1.0, 1.0, 1.0}; /* tfac(1..13) */
enum { GROWTH_ENTRIES = sizeof growth_table / sizeof growth_table[0] };
static const double growth_most = 2.0, reduction = 0.5, dt_least = 1e-20, tolerance = 0.1;

time_stepper time_stepper_deck(void)
{
    return (time_stepper){.dt = 1e-6 * year,
                          .dt_max = 1.0 * year,
                          .output_period = 1.0 * year,
                          .final_time = 10.0 * year,
                          .acceleration = DECK_ACCELERATION};
}

/* The first waypoint after `time`: the next output time, or the final time. */
static double next_waypoint(const time_stepper *s)
{
    double k = floor(s->time / s->output_period * (1 + 1e-12)) + 1;
    return fmin(k * s->output_period, s->final_time);
}

double time_stepper_begin(time_stepper *s)
{
    if (s->cut) /* a cut step's size stands (TimestepperBaseSetTargetTime's first branch) */
        s->cut = false;
    else if (s->revert)
        s->dt = fmin(s->dt_before_match, s->dt_max);
    s->revert = false;
    s->dt_before_match = s->dt;
    s->dt = fmin(s->dt, s->dt_max);
    double waypoint = next_waypoint(s);
    if (s->time + s->dt + tolerance * s->dt >= waypoint) {
        double to_waypoint = waypoint - s->time;
        if (to_waypoint > s->dt_max && to_waypoint - s->dt_max > 1.0) {
            s->dt = s->dt_max;
        } else {
            s->dt = to_waypoint;
            s->revert = true;
        }
    }
    return s->dt;
}

bool time_stepper_cut(time_stepper *s)
{
    if (++s->cuts_this_step > MAX_CUTS || s->dt < dt_least)
        return false;
    s->dt *= reduction;
    s->cut = true;
    s->cuts++;
    return true;
}

void time_stepper_end(time_stepper *s, int newton_iterations)
{
    s->time += s->dt;
    s->steps++;
    s->dt_first = s->steps == 1 ? s->dt : s->dt_first;
    s->dt_last = s->dt;
    s->dt_largest = fmax(s->dt_largest, s->dt);
    s->cuts_this_step = 0;
    bool grow = true;
    if (s->cut)
        s->constant_steps = 1;
    else if (s->constant_steps > 0)
        s->constant_steps++;
    if (s->constant_steps > CONSTANT_AFTER_CUT)
        s->constant_steps = 0;
    else if (s->constant_steps > 0)
        grow = false;
    if (!grow || s->acceleration == 0) /* 0: no growth (PMRTUpdateTimestep), fixed steps */
        return;
    int n = newton_iterations < 1 ? 1 : newton_iterations;
    double factor = n > s->acceleration ? 0.5 : n > GROWTH_ENTRIES ? 0.5 : growth_table[n - 1];
    double dt = fmin(growth_most * s->dt, factor * s->dt);
    s->dt = fmax(fmin(dt, s->dt_max), dt_least);
}

bool time_stepper_done(const time_stepper *s)
{
    return s->time >= s->final_time * (1 - 1e-12);
}
