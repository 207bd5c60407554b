/* Newton's method as PETSc's SNES newtonls runs it for PFLOTRAN: full steps, the update
 * truncated as PFLOTRAN truncates it in the log formulation (each ln m changed by at most
 * max_log_change), PETSc's convergence tests (SNESConvergedDefault) atol, rtol on ||F|| and
 * stol on the update; the three norms of an iteration in one allreduce. Each Newton step assembles the Jacobian and solves
 * it by the run's Krylov solver (krylov.c) or PETSc's (petsc_ksp.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflotran.h"

/* PFLOTRAN's update truncation in the log formulation (pm_rt.F90 PMRTCheckUpdatePre): each
 * entry of the update of ln m is clipped to at most max_log_change (reaction%max_dlnC, 5) in
 * size, cell by cell, with no reduction. */
static void update_limit(const run *r)
{
    static const esm_kernel kernel = {.name = "pflotran.update_limit", .flops = 0}; /* min, max */
    const long n = r->g.ncells * NS;
    const double most = r->newton.max_log_change;
    if (esm_kernel_begin(&kernel, (double)n, 2.0 * 8 * n)) {
        for (long e = 0; e < n; e++)
            r->dx[e] = fmax(-most, fmin(most, r->dx[e]));
        esm_kernel_end(&kernel);
    }
}

/* norms[0..count-1] = ||F||^2, ||x||^2, ||dx||^2 over all ranks (one allreduce, as SNES). */
static void newton_norms(const run *r, double *norms, int count)
{
    static const esm_kernel kernel = {.name = "pflotran.newton_norms", .flops = 2};
    const long n = r->g.ncells * NS;
    norms[0] = norms[1] = norms[2] = 0;
    if (esm_kernel_begin(&kernel, (double)n * count, 8.0 * n * count)) {
        for (long e = 0; e < n; e++)
            norms[0] += r->f[e] * r->f[e];
        for (long e = 0; e < n && count == 3; e++) {
            norms[1] += r->x[e] * r->x[e];
            norms[2] += r->dx[e] * r->dx[e];
        }
        esm_kernel_end(&kernel);
    }
    esm_global_dots(norms, count, r->g.era);
}

/* The linear system's right-hand side: rhs = -F. */
static void newton_rhs(run *r)
{
    static const esm_kernel kernel = {.name = "pflotran.newton_rhs", .flops = 0};
    const long n = r->g.ncells * NS;
    if (esm_kernel_begin(&kernel, (double)n, 2.0 * 8 * n)) {
        for (long e = 0; e < n; e++)
            r->rhs[e] = -r->f[e];
        esm_kernel_end(&kernel);
    }
}

/* The update: x += dx. */
static void newton_update(run *r)
{
    static const esm_kernel kernel = {.name = "pflotran.newton_update", .flops = 1};
    const long n = r->g.ncells * NS;
    if (esm_kernel_begin(&kernel, (double)n, 3.0 * 8 * n)) {
        for (long e = 0; e < n; e++)
            r->x[e] += r->dx[e];
        esm_kernel_end(&kernel);
    }
}

/* With fixed_iterations (a folded run) exactly that many iterations and no test on the
 * values, so that the communication does not depend on them; the verdict is still taken. */
newton_outcome newton_solve(run *r)
{
    const newton_settings *s = &r->newton;
    const int fixed = s->fixed_iterations;
    newton_outcome out = {.reason = fixed ? "fixed" : "max_it"};
    esm_timer_start(&r->residual);
    transport_residual(&r->t, r->f);
    esm_timer_stop(&r->residual);
    double norms[3]; /* ||F||, ||x||, ||dx|| */
    newton_norms(r, norms, 1);
    double fnorm0 = sqrt(norms[0]), fnorm = fnorm0;
    out.residual[0] = fnorm;
    for (;;) {
        bool small = fnorm <= s->atol || fnorm <= s->rtol * fnorm0;
        if (fixed ? out.iterations >= fixed : small) {
            out.converged |= small;
            if (!fixed)
                out.reason = fnorm <= s->atol ? "atol" : "rtol";
            break;
        }
        if (!fixed && out.iterations >= s->max_iterations)
            break;
        esm_timer_start(&r->jacobian);
        transport_jacobian(&r->t, &r->A);
        esm_timer_stop(&r->jacobian);
        newton_rhs(r);
        if (r->krylov_counts)
            krylov_fix_iterations(r->ksp, r->krylov_counts[out.iterations]);
        esm_timer_start(&r->linear);
        esm_phase_begin("krylov");
        krylov_outcome linear;
        if (r->petsc) {
            linear = petsc_solve(r->petsc, &r->A, r->rhs, r->dx);
        } else {
            preconditioner_setup(&r->A, r->pc);
            linear = krylov_solve(r->ksp, &r->A, r->rhs, r->dx);
        }
        esm_phase_end("krylov");
        esm_timer_stop(&r->linear);
        out.linear_iterations += linear.iterations;
        out.linear[out.iterations < HISTORY ? out.iterations : HISTORY - 1] = linear.iterations;
        out.linear_failed |= !linear.converged;
        update_limit(r);
        newton_update(r);
        out.iterations++;
        transport_update(&r->t, r->x);
        esm_timer_start(&r->residual);
        transport_residual(&r->t, r->f);
        esm_timer_stop(&r->residual);
        newton_norms(r, norms, 3); /* the three norms in one reduction, as SNES does */
        fnorm = sqrt(norms[0]);
        if (out.iterations < HISTORY)
            out.residual[out.iterations] = fnorm;
        bool small_now = fnorm <= s->atol || fnorm <= s->rtol * fnorm0; /* tested first */
        if (!small_now && sqrt(norms[2]) <= s->stol * sqrt(norms[1])) {
            out.converged = true;
            if (!fixed) {
                out.reason = "stol";
                break;
            }
        }
    }
    return out;
}

/* The order of convergence the residuals show: log(r_k+1 / r_k) / log(r_k / r_k-1) at the
 * last k whose r_k+1 is still well above round-off (floor), or 0 when too few iterations. */
double convergence_order(const double *residual, int iterations, double floor)
{
    double order = 0;
    for (int k = 1; k < iterations && k + 1 < HISTORY; k++) {
        double before = residual[k - 1], now = residual[k], after = residual[k + 1];
        if (after > floor && now < before && after < now)
            order = log(after / now) / log(now / before);
    }
    return order;
}
