/* The result line's performance part: steps per second, the solver's work (Newton and
 * Krylov iterations), the communication (ghost updates, allreduces, message sizes), the
 * parameters, the timers, and the matrix kernels' bandwidth against the STREAM triad. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflotran.h"

/* Performance, solver work, communication, and the kernels against STREAM. */
void report(run *r, const options *o, const record *h, esm_stream stream, esm_result *result)
{
    const grid *g = &r->g;
    long cells = (long)g->nx * g->ny * g->nz, steps = h->steps;
    esm_result_wall(result, h->wall);
    esm_result_fom(result, steps / h->wall, "steps/s", true);
    esm_result_int(result, "model.cells", cells);
    esm_result_real(result, "model.bytes_per_point", block_matrix_product_bytes());
    esm_result_real(result, "model.matrix_bytes_per_cell",
                    (double)BLOCKS * BLOCK_SIZE * sizeof(double));
    esm_result_real(result, "model.newton_iterations_per_step", (double)h->newton / steps);
    esm_result_real(result, "model.linear_iterations_per_step", (double)h->linear / steps);
    esm_result_real(result, "model.linear_iterations_per_newton",
                    h->newton ? (double)h->linear / h->newton : 0);
    esm_result_real(result, "model.dt_first", h->clock.dt_first);
    esm_result_real(result, "model.dt_last", h->clock.dt_last);
    esm_result_real(result, "model.dt_largest", h->clock.dt_largest);
    esm_result_real(result, "model.time_reached", h->clock.time);
    esm_scatter_counts scatter = esm_scatter_counts_mine();
    esm_report_counts(result, &h->before, &h->after, steps); /* means per rank */
    esm_sum comm[6];
    memset(comm, 0, sizeof comm);
    esm_sum_add(&comm[0], (double)scatter.start);
    esm_sum_add(&comm[1], (double)scatter.waitany);
    esm_sum_add(&comm[2], (double)esm_scatter_bytes(g->scatter));
    esm_sum_add(&comm[3], (double)scatter.comm_size);
    esm_sum_add(&comm[4], (double)scatter.type_free);
    esm_sum_add(&comm[5], (double)scatter.request_free);
    double total[6], largest = (double)esm_scatter_largest(g->scatter);
    esm_global_sums(comm, 6, total);
    esm_global_max(&largest, 1);
    esm_result_int(result, "model.largest_message_bytes", (long)largest);
    esm_result_int(result, "model.ghost_bytes_per_update", (long)total[2]);

    esm_result_text(result, "params.case", o->case_name);
    esm_result_text(result, "params.solver", o->solver);
    esm_result_text(result, "params.pc", o->pc);
    esm_result_text(result, "params.library", o->library);
    esm_result_text(result, "params.petsc", o->petsc);
    esm_result_text(result, "params.time_stepping", o->time_stepping);
    esm_report_grid(result, g->nx, g->ny, g->nz, 0, 0);
    char rank_grid[64];
    snprintf(rank_grid, sizeof rank_grid, "%dx%dx%d", g->px, g->py, g->pz);
    esm_result_text(result, "params.rank_grid", rank_grid);
    esm_result_real(result, "params.dt", o->dt);
    esm_result_real(result, "params.rate_constant", o->rate_constant);
    esm_result_real(result, "params.ksp_rtol", o->ksp.rtol);
    esm_result_real(result, "params.newton_rtol", o->newton.rtol);
    esm_result_int(result, "params.newton_iterations", o->newton.fixed_iterations);
    esm_result_int(result, "params.krylov_iterations", o->ksp.fixed_iterations);
    esm_result_text(result, "params.iterations_from", o->iterations_from);
    if (o->history) {
        char from[128]; /* the history's time stepping is the run's (history_for) */
        snprintf(from, sizeof from, "%s at %d ranks, %d steps, %s time stepping", o->history->deck,
                 o->history->ranks, o->history->steps, o->time_stepping);
        esm_result_text(result, "params.history", from);
    }

    esm_result_int(result, "newton.iterations", h->newton);
    esm_result_int(result, "newton.most_in_a_step", h->newton_most);
    esm_result_int(result, "newton.failed_steps", h->failed_steps);
    esm_result_int(result, "newton.time_step_cuts", h->clock.cuts);
    esm_result_int(result, "newton.linear_iterations", h->linear);
    esm_result_int(result, "newton.linear_failures", h->linear_failures);
    char history[HISTORY * 26] = "";
    for (int k = 0, used = 0; k <= h->first.iterations && k < HISTORY; k++)
        used += snprintf(history + used, sizeof history - used, "%s%.6e", k ? "," : "",
                         h->first.residual[k]);
    esm_result_text(result, "newton.first_step_residuals", history);
    esm_result_text(result, "newton.iteration_history",
                    h->iteration_history ? h->iteration_history : "");

    esm_timer *timers[] = {&r->step,   &r->residual, &r->jacobian,     &r->factor,
                           &r->linear, &r->product,  &r->precondition, &r->dots};
    esm_result_timers(result, timers, sizeof timers / sizeof timers[0]);
    double kernel_time[2] = {r->product.total, r->precondition.total};
    esm_global_max(kernel_time, 2);
    const char *kernel[2] = {"matvec", "pc_apply"};
    double bytes[2] = {(double)r->product.count * cells * block_matrix_product_bytes(),
                       (double)r->precondition.count * cells *
                           preconditioner_apply_bytes(o->ksp.pc)};
    long calls[2] = {r->product.count, r->precondition.count};
    for (int k = 0; k < 2; k++) {
        char path[64];
        snprintf(path, sizeof path, "kernels.%s.calls", kernel[k]);
        esm_result_int(result, path, calls[k]);
        esm_report_kernel(result, kernel[k],
                          kernel_time[k] > 0 ? bytes[k] / kernel_time[k] / 1e9 : 0, stream);
    }
    esm_report_stream(result, stream);
    esm_result_int(result, "comm.start", (long)total[0]);
    esm_result_int(result, "comm.waitany", (long)total[1]);
    esm_result_int(result, "comm.comm_size", (long)total[3]); /* sf's bookkeeping so far */
    esm_result_int(result, "comm.type_free", (long)total[4]);
    esm_result_int(result, "comm.request_free", (long)total[5]);
}
