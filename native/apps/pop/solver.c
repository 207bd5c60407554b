/* The barotropic solvers of POP: preconditioned conjugate gradients (PCG), Chronopoulos-Gear
 * CG (ChronGear: one halo update and ONE fused 2-scalar global sum per iteration), and the
 * preconditioned classical Stiefel iteration (P-CSI, Hu et al. SC15: a Chebyshev-type
 * iteration needing no global sum except for convergence checks, with spectrum bounds from
 * Lanczos at set-up). Diagonal preconditioner. Every `check_every` iterations the true
 * residual r = b - A x is formed and |r| <= tolerance |b| tested (one more halo update and
 * global sum), as POP does. With a fixed iteration count (`iterations`: a folded run, whose
 * values mean nothing, or --iterations) the checks are still made, as communication, but
 * never stop the solve. A sampled solve (`sample`, folded runs only) simulates its first
 * `sample` iterations, a multiple of check_every, and charges the others at the simulated
 * time per iteration they took on this rank (esm_fold_skip): the iterations are identical,
 * one halo update and one global sum each (two for PCG) and a check every check_every. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "barotropic.h"

/* ---- vector kernels (over all n slots; halo/ghost slots hold finite values) ------------ */

ESM_SIMD static void scaled_product(long n, double scale, const double *restrict d,
                                    const double *restrict r, double *restrict z)
{
    for (long p = 0; p < n; p++)
        z[p] = scale * d[p] * r[p];
}

/* The vector kernels, for folding (esm_fold.h): vector_begin starts the compute timer and
 * says whether to run the body (folded: only on its first calls), which then ends with
 * vector_end. `doubles`: reads and writes per slot (the byte model); flops per slot, counted
 * from each loop, in the declarations. */
static const esm_kernel k_precondition = {.name = "pop.barotropic.precondition", .flops = 2},
                        k_residual = {.name = "pop.barotropic.residual", .flops = 1},
                        k_chrongear = {.name = "pop.barotropic.chrongear_update", .flops = 8},
                        k_pcg_update = {.name = "pop.barotropic.pcg_update", .flops = 4},
                        k_pcg_direction = {.name = "pop.barotropic.pcg_direction", .flops = 2},
                        k_pcsi_start = {.name = "pop.barotropic.pcsi_start", .flops = 1},
                        k_pcsi_update = {.name = "pop.barotropic.pcsi_update", .flops = 7};

static bool vector_begin(space *s, const esm_kernel *k, double doubles)
{
    double bytes = doubles * sizeof(double) * s->n;
    s->bytes += bytes;
    esm_timer_start(&s->compute);
    if (esm_kernel_begin(k, (double)s->n, bytes))
        return true;
    esm_timer_stop(&s->compute);
    return false;
}

static void vector_end(space *s, const esm_kernel *k)
{
    esm_kernel_end(k);
    esm_timer_stop(&s->compute);
}

static void precondition(space *s, double scale, const double *r, double *z)
{
    if (vector_begin(s, &k_precondition, 3.0)) {
        scaled_product(s->n, scale, s->dinv, r, z);
        vector_end(s, &k_precondition);
    }
}

static void residual(space *s, const double *b, double *x, double *ax, double *r)
{
    s->halo(s, x);
    s->apply(s, x, ax);
    if (vector_begin(s, &k_residual, 3.0)) {
        for (long p = 0; p < s->n; p++)
            r[p] = b[p] - ax[p];
        vector_end(s, &k_residual);
    }
}

static double dot(space *s, const double *a, const double *b)
{
    double out;
    s->dots(s, 1, &a, &b, &out);
    return out;
}

solver *solver_create(solver_kind kind, space *s, double tolerance, int max_iterations,
                      int check_every, int iterations, int sample)
{
    solver *sv = esm_calloc(1, sizeof *sv);
    *sv = (solver){.kind = kind,
                   .tolerance = tolerance,
                   .max_iterations = max_iterations,
                   .check_every = check_every,
                   .iterations = iterations,
                   .sample = iterations > sample ? sample : 0,
                   .lanczos_steps = 0};
    if (iterations)
        sv->max_iterations = iterations;
    double **work[] = {&sv->r, &sv->z, &sv->s, &sv->q, &sv->az, &sv->dx};
    for (int w = 0; w < 6; w++) /* folded: shared between ranks */
        *work[w] = esm_field_alloc(s->n * sizeof(double));
    return sv;
}

void solver_fix_iterations(solver *sv, int iterations, int sample)
{
    sv->iterations = sv->max_iterations = iterations;
    sv->sample = iterations > sample ? sample : 0;
}

/* Start: r = b - A x, and whether x already solves it. */
static int start(solver *sv, space *s, const double *b, double *x, double *bb, solve_stats *st)
{
    residual(s, b, x, sv->az, sv->r);
    double sums[2];
    s->dots(s, 2, (const double *[]){b, sv->r}, (const double *[]){b, sv->r}, sums);
    *bb = sums[0];
    st->residual = *bb > 0 ? sqrt(sums[1] / *bb) : 0;
    st->converged = sums[1] <= sv->tolerance * sv->tolerance * *bb;
    st->started = esm_wtime();
    return st->converged && !sv->iterations; /* a fixed count runs whatever the residual */
}

/* The end of iteration m of a sampled solve: after `sample` of them, charge the others at
 * this rank's simulated time per iteration so far, count them, and stop. */
static int skip_rest(solver *sv, int m, solve_stats *st)
{
    if (!sv->sample || m < sv->sample)
        return 0;
    esm_fold_skip((esm_wtime() - st->started) / m * (sv->iterations - m));
    st->checks += (sv->iterations - m) / sv->check_every;
    st->iterations = sv->iterations;
    return 1;
}

/* Every check_every iterations: the true residual, and is it small enough? */
static int check(solver *sv, space *s, const double *b, double *x, double bb, int m,
                 solve_stats *st)
{
    if (m % sv->check_every)
        return 0;
    st->checks++;
    residual(s, b, x, sv->az, sv->r);
    double rr = dot(s, sv->r, sv->r);
    st->residual = sqrt(rr / bb);
    st->converged = rr <= sv->tolerance * sv->tolerance * bb;
    return st->converged && !sv->iterations;
}

/* s = z + beta s (search direction), q = Az + beta q (= A s), x += alpha s, r -= alpha q:
 * one pass (restrict: the vectors never overlap, so it runs in vector lanes). */
ESM_SIMD static void chrongear_update(long n, double alpha, double beta, const double *restrict z,
                                      const double *restrict az, double *restrict s,
                                      double *restrict q, double *restrict x, double *restrict r)
{
    for (long p = 0; p < n; p++) {
        s[p] = z[p] + beta * s[p];
        q[p] = az[p] + beta * q[p];
        x[p] += alpha * s[p];
        r[p] -= alpha * q[p];
    }
}

static solve_stats chrongear(solver *sv, space *s, const double *b, double *x)
{
    solve_stats st = {0};
    double bb, rho_old = 1, sigma = 0;
    if (start(sv, s, b, x, &bb, &st))
        return st;
    memset(sv->s, 0, s->n * sizeof(double));
    memset(sv->q, 0, s->n * sizeof(double));
    for (int m = 1; m <= sv->max_iterations; m++) {
        st.iterations = st.simulated = m;
        precondition(s, 1.0, sv->r, sv->z);                /* z = M^-1 r */
        s->halo(s, sv->z);
        s->apply(s, sv->z, sv->az);                        /* A z */
        double sums[2];                                    /* rho = r.z, delta = Az.z: fused */
        s->dots(s, 2, (const double *[]){sv->r, sv->az}, (const double *[]){sv->z, sv->z}, sums);
        double rho = sums[0], delta = sums[1];
        double beta = m == 1 ? 0.0 : rho / rho_old;
        sigma = delta - beta * beta * sigma;
        double alpha = rho / sigma;
        rho_old = rho;
        if (vector_begin(s, &k_chrongear, 10.0)) {
            chrongear_update(s->n, alpha, beta, sv->z, sv->az, sv->s, sv->q, x, sv->r);
            vector_end(s, &k_chrongear);
        }
        if (check(sv, s, b, x, bb, m, &st) || skip_rest(sv, m, &st))
            break;
    }
    return st;
}

static solve_stats pcg(solver *sv, space *s, const double *b, double *x)
{
    solve_stats st = {0};
    double bb;
    if (start(sv, s, b, x, &bb, &st))
        return st;
    precondition(s, 1.0, sv->r, sv->z);
    double rho = dot(s, sv->r, sv->z);
    memcpy(sv->s, sv->z, s->n * sizeof(double));           /* p = z */
    for (int m = 1; m <= sv->max_iterations; m++) {
        st.iterations = st.simulated = m;
        s->halo(s, sv->s);
        s->apply(s, sv->s, sv->q);                         /* q = A p */
        double alpha = rho / dot(s, sv->s, sv->q);
        if (vector_begin(s, &k_pcg_update, 6.0)) {
            for (long p = 0; p < s->n; p++) {
                x[p] += alpha * sv->s[p];
                sv->r[p] -= alpha * sv->q[p];
            }
            vector_end(s, &k_pcg_update);
        }
        if (check(sv, s, b, x, bb, m, &st))
            break;
        precondition(s, 1.0, sv->r, sv->z);
        double rho_new = dot(s, sv->r, sv->z), beta = rho_new / rho;
        rho = rho_new;
        if (vector_begin(s, &k_pcg_direction, 3.0)) {
            for (long p = 0; p < s->n; p++)
                sv->s[p] = sv->z[p] + beta * sv->s[p];
            vector_end(s, &k_pcg_direction);
        }
        if (skip_rest(sv, m, &st))
            break;
    }
    return st;
}

static solve_stats pcsi(solver *sv, space *s, const double *b, double *x)
{
    solve_stats st = {0};
    double bb;
    if (start(sv, s, b, x, &bb, &st))
        return st;
    double gamma = 0.5 * (sv->mu + sv->nu), alpha = 2.0 / (sv->mu - sv->nu);
    double omega = 2.0 / gamma;
    precondition(s, 1.0 / gamma, sv->r, sv->dx);           /* dx = M^-1 r / gamma */
    if (vector_begin(s, &k_pcsi_start, 3.0)) {
        for (long p = 0; p < s->n; p++)
            x[p] += sv->dx[p];
        vector_end(s, &k_pcsi_start);
    }
    for (int m = 1; m <= sv->max_iterations; m++) {
        st.iterations = st.simulated = m;
        residual(s, b, x, sv->az, sv->r);                  /* the only halo update */
        if (m % sv->check_every == 0) {
            st.checks++;
            double rr = dot(s, sv->r, sv->r);
            st.residual = sqrt(rr / bb);
            if ((st.converged = rr <= sv->tolerance * sv->tolerance * bb) && !sv->iterations)
                break;
        }
        omega = 1.0 / (gamma - omega / (4.0 * alpha * alpha));
        if (vector_begin(s, &k_pcsi_update, 6.0)) {
            for (long p = 0; p < s->n; p++) {
                sv->dx[p] = omega * s->dinv[p] * sv->r[p] + (gamma * omega - 1.0) * sv->dx[p];
                x[p] += sv->dx[p];
            }
            vector_end(s, &k_pcsi_update);
        }
        if (skip_rest(sv, m, &st))
            break;
    }
    return st;
}

solve_stats solver_solve(solver *sv, space *s, const double *b, double *x)
{
    switch (sv->kind) {
    case SOLVER_PCG:
        return pcg(sv, s, b, x);
    case SOLVER_PCSI:
        return pcsi(sv, s, b, x);
    default:
        return chrongear(sv, s, b, x);
    }
}

/* Eigenvalues of the symmetric tridiagonal (a, b) below x: Sturm sequence count. */
static int below(const double *a, const double *b, int m, double x)
{
    int count = 0;
    double q = 1;
    for (int i = 0; i < m; i++) {
        q = a[i] - x - (i ? b[i - 1] * b[i - 1] / q : 0.0);
        if (q == 0)
            q = 1e-300;
        count += q < 0;
    }
    return count;
}

static double eigenvalue(const double *a, const double *b, int m, int index)
{
    double lo = INFINITY, hi = -INFINITY; /* Gershgorin */
    for (int i = 0; i < m; i++) {
        double radius = (i ? fabs(b[i - 1]) : 0) + (i < m - 1 ? fabs(b[i]) : 0);
        lo = fmin(lo, a[i] - radius);
        hi = fmax(hi, a[i] + radius);
    }
    for (int it = 0; it < 200; it++) {
        double mid = 0.5 * (lo + hi);
        if (below(a, b, m, mid) > index)
            hi = mid;
        else
            lo = mid;
    }
    return 0.5 * (lo + hi);
}

/* Lanczos on D^-1/2 A D^-1/2 (similar to M^-1 A) from `start`: its extreme Ritz values. */
void solver_bounds(solver *sv, space *s, int steps, const double *start_vector)
{
    double *u = sv->z, *u_prev = sv->s, *w = sv->q, *t = sv->az, *root = sv->dx;
    double *alpha = esm_calloc(steps, sizeof *alpha), *beta = esm_calloc(steps, sizeof *beta);
    for (long p = 0; p < s->n; p++)
        root[p] = sqrt(s->dinv[p]);
    double norm = sqrt(dot(s, start_vector, start_vector));
    for (long p = 0; p < s->n; p++) {
        u[p] = start_vector[p] / norm;
        u_prev[p] = 0;
    }
    int m = 0;
    for (; m < steps; m++) {
        for (long p = 0; p < s->n; p++)
            t[p] = root[p] * u[p];
        s->halo(s, t);
        s->apply(s, t, w);
        for (long p = 0; p < s->n; p++)
            w[p] *= root[p];
        alpha[m] = dot(s, u, w);
        for (long p = 0; p < s->n; p++)
            w[p] -= alpha[m] * u[p] + (m ? beta[m - 1] : 0.0) * u_prev[p];
        beta[m] = sqrt(dot(s, w, w));
        if (!(beta[m] > 1e-14 * fabs(alpha[m])) && !esm_folded()) { /* invariant subspace */
            m++;
            break;
        }
        for (long p = 0; p < s->n; p++) {
            u_prev[p] = u[p];
            u[p] = w[p] / beta[m];
        }
    }
    sv->lanczos_steps = m;
    sv->nu = eigenvalue(alpha, beta, m, 0);
    sv->mu = 1.05 * eigenvalue(alpha, beta, m, m - 1); /* Ritz values lie inside: stretch up */
    free(alpha);
    free(beta);
}
