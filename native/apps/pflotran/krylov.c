/* Krylov solvers as PETSc runs them by default, left preconditioned, the convergence test on
 * the preconditioned residual norm against rtol times its first value (under --pc none, B = I:
 * the true residual's):
 *
 *   GMRES(30)  classical Gram-Schmidt without refinement: per iteration one product, one
 *              preconditioner solve, one allreduce for all the projections (VecMDot) and one
 *              for the new vector's norm (VecNormalize); a restart recomputes B(b - Ax).
 *   BiCGStab   per iteration two products, two preconditioner solves and four allreduces
 *              (rho, (v, r~), (s, t) with (t, t) fused, and the residual norm).
 *
 * Every dot product and norm is one MPI_Allreduce through esm_global_dots (none on one rank
 * under PETSc 3.13+'s era, whose vectors there are sequential).
 *
 * With fixed_iterations set (a folded run, whose values mean nothing: esm_fold.h) a solve
 * makes exactly that many iterations and tests neither convergence nor breakdown, so its
 * communication is the same whatever the values. Every loop over the vectors is a kernel
 * (esm_fold.h), charged by the doubles it reads and writes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "pflotran.h"

struct krylov {
    long n;
    krylov_settings settings;
    esm_timer *dots_timer;
    double **v;        /* GMRES basis (restart + 1) or BiCGStab's vectors */
    int nvectors;
    double *work;
    double *hessenberg, *cosine, *sine, *g, *y;
};

krylov *krylov_create(long n, krylov_settings settings, esm_timer *dots_timer)
{
    krylov *k = esm_calloc(1, sizeof *k);
    k->n = n;
    k->settings = settings;
    k->dots_timer = dots_timer;
    int m = settings.restart;
    k->nvectors = settings.method == SOLVER_GMRES ? m + 1 : 6;
    k->v = esm_calloc(k->nvectors, sizeof *k->v);
    for (int i = 0; i < k->nvectors; i++)
        k->v[i] = esm_field_alloc((n + 1) * sizeof(double));
    k->work = esm_field_alloc((n + 1) * sizeof(double));
    k->hessenberg = esm_calloc((size_t)(m + 1) * m + 1, sizeof(double));
    k->cosine = esm_calloc(m + 1, sizeof(double));
    k->sine = esm_calloc(m + 1, sizeof(double));
    k->g = esm_calloc(m + 2, sizeof(double));
    k->y = esm_calloc(m + 1, sizeof(double));
    return k;
}

void krylov_fix_iterations(krylov *k, int iterations)
{
    k->settings.fixed_iterations = iterations;
}

void krylov_free(krylov *k)
{
    for (int i = 0; i < k->nvectors; i++)
        esm_field_free(k->v[i]);
    free(k->v);
    esm_field_free(k->work);
    free(k->hessenberg);
    free(k->cosine);
    free(k->sine);
    free(k->g);
    free(k->y);
    free(k);
}

/* ---- vector operations (VecDot, VecMDot, VecNorm, VecAXPY, ...) ------------------------ */

/* Start a kernel over n elements of `vectors` vectors (8 bytes each read or written) doing
 * `flops` per element (counted from its loop): its work and bytes are n times `vectors`. */
static bool vectors_begin(const esm_kernel *kernel, long n, int vectors, double flops)
{
    return esm_kernel_begin_flops(kernel, (double)n * vectors, 8.0 * vectors * n, flops * n);
}

static double local_dot(const double *a, const double *b, long n)
{
    double sum = 0;
    for (long i = 0; i < n; i++)
        sum += a[i] * b[i];
    return sum;
}

/* out[k] = (a_k, b) over all ranks, k < count: one allreduce. */
static void global_dots(krylov *k, double *const a[], const double *const b[], int count,
                        double *out)
{
    static const esm_kernel kernel = {.name = "pflotran.dot"};
    esm_timer_start(k->dots_timer);
    if (vectors_begin(&kernel, k->n, 2 * count, 2.0 * count)) {
        for (int i = 0; i < count; i++)
            out[i] = local_dot(a[i], b[i], k->n);
        esm_kernel_end(&kernel);
    }
    esm_global_dots(out, count, k->settings.era);
    esm_timer_stop(k->dots_timer);
}

static double global_dot(krylov *k, const double *a, const double *b)
{
    double out;
    global_dots(k, (double *const[]){(double *)a}, (const double *const[]){b}, 1, &out);
    return out;
}

static double global_norm(krylov *k, const double *a)
{
    return sqrt(global_dot(k, a, a));
}

/* out[i] = (v_i, w) for i < count, four vectors per sweep of w like VecMDot_Seq. */
static void local_mdot(krylov *k, int count, const double *w, double *out)
{
    long n = k->n;
    int i = 0;
    for (; i + 4 <= count; i += 4) {
        const double *a = k->v[i], *b = k->v[i + 1], *c = k->v[i + 2], *d = k->v[i + 3];
        double sa = 0, sb = 0, sc = 0, sd = 0;
        for (long e = 0; e < n; e++) {
            sa += a[e] * w[e], sb += b[e] * w[e], sc += c[e] * w[e], sd += d[e] * w[e];
        }
        out[i] = sa, out[i + 1] = sb, out[i + 2] = sc, out[i + 3] = sd;
    }
    for (; i < count; i++)
        out[i] = local_dot(k->v[i], w, n);
}

/* The same over all ranks: one allreduce. */
static void global_mdot(krylov *k, int count, const double *w, double *out)
{
    static const esm_kernel kernel = {.name = "pflotran.mdot"};
    esm_timer_start(k->dots_timer);
    if (vectors_begin(&kernel, k->n, count + 1, 2.0 * count)) {
        local_mdot(k, count, w, out);
        esm_kernel_end(&kernel);
    }
    esm_global_dots(out, count, k->settings.era);
    esm_timer_stop(k->dots_timer);
}

/* w -= sum of h_i v_i (VecMAXPY), four at a time. */
static void maxpy(krylov *k, int count, const double *h, double *w)
{
    static const esm_kernel kernel = {.name = "pflotran.maxpy"};
    if (!vectors_begin(&kernel, k->n, count + 2, 2.0 * count))
        return;
    long n = k->n;
    int i = 0;
    for (; i + 4 <= count; i += 4) {
        const double *a = k->v[i], *b = k->v[i + 1], *c = k->v[i + 2], *d = k->v[i + 3];
        double ha = h[i], hb = h[i + 1], hc = h[i + 2], hd = h[i + 3];
        for (long e = 0; e < n; e++)
            w[e] -= ha * a[e] + hb * b[e] + hc * c[e] + hd * d[e];
    }
    for (; i < count; i++)
        for (long e = 0; e < n; e++)
            w[e] -= h[i] * k->v[i][e];
    esm_kernel_end(&kernel);
}

/* z = B A x */
static void apply_preconditioned(krylov *k, block_matrix *A, const double *x, double *z)
{
    block_matrix_multiply(A, x, k->work);
    preconditioner_apply(A, k->settings.pc, k->work, z);
}

static bool converged(const krylov_settings *s, double rnorm, double rnorm0, krylov_outcome *out)
{
    out->rnorm = rnorm;
    if (!isfinite(rnorm)) {
        out->reason = "breakdown";
        return true;
    }
    if (rnorm <= s->atol) {
        out->converged = true;
        out->reason = "atol";
        return true;
    }
    if (rnorm <= s->rtol * rnorm0) {
        out->converged = true;
        out->reason = "rtol";
        return true;
    }
    if (rnorm >= s->dtol * rnorm0) {
        out->reason = "diverged";
        return true;
    }
    return false;
}

/* ---- GMRES ------------------------------------------------------------------------------ */

/* x = 0 */
static void vector_zero(long n, double *x)
{
    static const esm_kernel kernel = {.name = "pflotran.vec_zero"};
    if (vectors_begin(&kernel, n, 1, 0)) {
        memset(x, 0, n * sizeof *x);
        esm_kernel_end(&kernel);
    }
}

/* x /= a */
static void vector_divide(long n, double a, double *x)
{
    static const esm_kernel kernel = {.name = "pflotran.vec_divide"};
    if (vectors_begin(&kernel, n, 2, 1)) {
        for (long e = 0; e < n; e++)
            x[e] /= a;
        esm_kernel_end(&kernel);
    }
}

static krylov_outcome gmres(krylov *k, block_matrix *A, const double *b, double *x)
{
    static const esm_kernel update = {.name = "pflotran.gmres_update"};
    static const esm_kernel residual = {.name = "pflotran.gmres_residual"};
    const krylov_settings *s = &k->settings;
    const int m = s->restart, fixed = s->fixed_iterations;
    const long n = k->n;
    krylov_outcome out = {.reason = fixed ? "fixed" : "max_it"};
    double *H = k->hessenberg; /* column j holds h(0..j+1, j) at H[j (m+1) + i] */
    vector_zero(n, x);
    preconditioner_apply(A, s->pc, b, k->v[0]); /* B (b - A 0) */
    for (;;) {
        double beta = global_norm(k, k->v[0]);
        if (out.iterations == 0)
            out.rnorm0 = beta;
        if (!fixed && (beta == 0.0 || converged(s, beta, out.rnorm0, &out))) {
            if (beta == 0.0) {
                out.converged = true;
                out.reason = "atol";
                out.rnorm = 0;
            }
            return out;
        }
        vector_divide(n, beta, k->v[0]);
        memset(k->g, 0, (m + 2) * sizeof *k->g);
        k->g[0] = beta;
        int j = 0;
        bool done = false;
        for (; j < m && !done; j++) {
            double *h = H + (size_t)j * (m + 1), *w = k->v[j + 1];
            apply_preconditioned(k, A, k->v[j], w);
            global_mdot(k, j + 1, w, h);            /* classical Gram-Schmidt */
            maxpy(k, j + 1, h, w);
            double norm = global_norm(k, w);         /* VecNormalize */
            h[j + 1] = norm;
            if (fixed || norm > 0.0)
                vector_divide(n, norm, w);
            for (int i = 0; i < j; i++) {           /* earlier rotations on the new column */
                double a = h[i], c = h[i + 1];
                h[i] = k->cosine[i] * a + k->sine[i] * c;
                h[i + 1] = -k->sine[i] * a + k->cosine[i] * c;
            }
            double r = hypot(h[j], h[j + 1]);
            k->cosine[j] = r > 0 ? h[j] / r : 1.0;
            k->sine[j] = r > 0 ? h[j + 1] / r : 0.0;
            h[j] = r;
            h[j + 1] = 0.0;
            k->g[j + 1] = -k->sine[j] * k->g[j];
            k->g[j] = k->cosine[j] * k->g[j];
            out.iterations++;
            double rnorm = fabs(k->g[j + 1]);
            if (fixed) {
                done = out.iterations >= fixed;
                if (done)
                    converged(s, rnorm, out.rnorm0, &out); /* the verdict, not a test */
                continue;
            }
            done = converged(s, rnorm, out.rnorm0, &out) || norm == 0.0 ||
                   out.iterations >= s->max_iterations;
            if (norm == 0.0 && !out.converged) { /* happy breakdown: the solution is exact */
                out.converged = true;
                out.reason = "atol";
            }
        }
        for (int i = j - 1; i >= 0; i--) {         /* H y = g, upper triangular */
            double sum = k->g[i];
            for (int l = i + 1; l < j; l++)
                sum -= H[(size_t)l * (m + 1) + i] * k->y[l];
            k->y[i] = sum / H[(size_t)i * (m + 1) + i];
        }
        if (vectors_begin(&update, n, 2 * j + 1, 2.0 * j)) {
            for (int i = 0; i < j; i++)
                for (long e = 0; e < n; e++)
                    x[e] += k->y[i] * k->v[i][e];
            esm_kernel_end(&update);
        }
        if (done) {
            if (fixed)
                out.reason = "fixed";
            return out;
        }
        block_matrix_multiply(A, x, k->work);      /* restart: B (b - A x) */
        if (vectors_begin(&residual, n, 3, 1)) {
            for (long e = 0; e < n; e++)
                k->work[e] = b[e] - k->work[e];
            esm_kernel_end(&residual);
        }
        preconditioner_apply(A, s->pc, k->work, k->v[0]);
    }
}

/* ---- BiCGStab --------------------------------------------------------------------------- */

static krylov_outcome bicgstab(krylov *k, block_matrix *A, const double *b, double *x)
{
    static const esm_kernel start = {.name = "pflotran.bicgstab_start"};
    static const esm_kernel direction = {.name = "pflotran.bicgstab_p"};
    static const esm_kernel half = {.name = "pflotran.bicgstab_s"};
    static const esm_kernel update = {.name = "pflotran.bicgstab_update"};
    const krylov_settings *s = &k->settings;
    const int fixed = s->fixed_iterations;
    const long n = k->n;
    krylov_outcome out = {.reason = fixed ? "fixed" : "max_it"};
    double *r = k->v[0], *r_tilde = k->v[1], *p = k->v[2], *v = k->v[3], *sv = k->v[4];
    double *t = k->v[5];
    vector_zero(n, x);
    vector_zero(n, p);
    vector_zero(n, v);
    preconditioner_apply(A, s->pc, b, r);
    if (vectors_begin(&start, n, 2, 0)) {
        memcpy(r_tilde, r, n * sizeof *r);
        esm_kernel_end(&start);
    }
    double dp = global_norm(k, r);
    out.rnorm0 = dp;
    if (!fixed && dp == 0.0) {
        out.converged = true;
        out.reason = "atol";
        return out;
    }
    if (!fixed && converged(s, dp, out.rnorm0, &out))
        return out;
    double rho_old = 1.0, alpha = 1.0, omega_old = 1.0;
    while (out.iterations < (fixed ? fixed : s->max_iterations)) {
        double rho = global_dot(k, r, r_tilde);
        if (!fixed && rho == 0.0) {
            out.reason = "breakdown";
            return out;
        }
        double beta = (rho / rho_old) * (alpha / omega_old);
        if (vectors_begin(&direction, n, 4, 4)) {
            for (long e = 0; e < n; e++)
                p[e] = r[e] + beta * (p[e] - omega_old * v[e]);
            esm_kernel_end(&direction);
        }
        apply_preconditioned(k, A, p, v);
        double d1 = global_dot(k, v, r_tilde);
        if (!fixed && d1 == 0.0) {
            out.reason = "breakdown";
            return out;
        }
        alpha = rho / d1;
        if (vectors_begin(&half, n, 3, 2)) {
            for (long e = 0; e < n; e++)
                sv[e] = r[e] - alpha * v[e];
            esm_kernel_end(&half);
        }
        apply_preconditioned(k, A, sv, t);
        double st_tt[2];
        global_dots(k, (double *const[]){sv, t}, (const double *const[]){t, t}, 2, st_tt);
        out.iterations++;
        if (!fixed && st_tt[1] == 0.0) { /* t = 0: s is the residual, x + alpha p the solution */
            for (long e = 0; e < n; e++)
                x[e] += alpha * p[e];
            converged(s, global_norm(k, sv), out.rnorm0, &out);
            return out;
        }
        double omega = st_tt[0] / st_tt[1];
        if (vectors_begin(&update, n, 6, 6)) {
            for (long e = 0; e < n; e++) {
                x[e] += alpha * p[e] + omega * sv[e];
                r[e] = sv[e] - omega * t[e];
            }
            esm_kernel_end(&update);
        }
        dp = global_norm(k, r);
        if (!fixed && converged(s, dp, out.rnorm0, &out))
            return out;
        rho_old = rho;
        omega_old = omega;
    }
    if (fixed) {
        converged(s, dp, out.rnorm0, &out); /* the verdict, not a test */
        out.reason = "fixed";
    }
    return out;
}

krylov_outcome krylov_solve(krylov *k, block_matrix *A, const double *b, double *x)
{
    return k->settings.method == SOLVER_GMRES ? gmres(k, A, b, x) : bicgstab(k, A, b, x);
}
