/* pflotran: a proxy of PFLOTRAN's 100_100_100/calcite benchmark (HPC Advisory Council, 2011).
 *
 * What it solves. Diffusion and kinetic calcite reaction of 4 primary species (Ca++, H+,
 * HCO3-, Tracer) in the unit cube, finite volumes on an nx x ny x nz grid (7-point stencil),
 * D = 1e-9 m^2/s, zero-gradient boundaries:
 *
 *     phi dC_s/dt = div(phi D grad C_s) + nu_s R,    R = k A (1 - [Ca++][HCO3-] / (K [H+]))
 *
 * with k = 1e-8 mol/m^2/s (the deck's rate constant). A pulse of acidic water carrying the
 * tracer fills the centre cube 0.45-0.55 at t = 0; calcite dissolves there, and the products
 * diffuse out and precipitate. Fully implicit: each backward-Euler step is solved by Newton's
 * method, each Newton step by GMRES(30) or BiCGStab preconditioned by block Jacobi + block
 * ILU(0) on the 4x4 blocks of each cell (PETSc's SNES/KSP defaults, as PFLOTRAN ran them).
 *
 * How it communicates (what PETSc did): one box of cells per rank; every ghost update is a
 * VecScatter (esm_scatter: receives started with MPI_Startall, each send with MPI_Start,
 * unpacking on MPI_Waitany); every dot product and norm one MPI_Allreduce.
 *
 * How it is verified (--case): calcite conserves total calcium and carbon (dissolved + the
 * calcite reacted) to the Newton tolerance; tracer (no reaction) matches the analytic erf
 * solution of the diffusing cube; batch (uniform undersaturated water, no transport) matches
 * the ODE solution of the reaction. Newton's residual history shows its order of convergence. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflotran.h"

static const esm_deck decks[] = {
    {"S", 32, 32, 32, 0, 0, 50, "32^3 cells, the calcite deck shipped with PFLOTRAN"},
    {"M", 64, 64, 64, 0, 0, 50, "64^3 cells"},
    {"100_100_100", 100, 100, 100, 0, 0, 50, "100^3 cells, the seed's benchmark"},
    {"weak", 64, 64, 64, 0, 0, 50, "64^3 cells per rank, for weak scaling"},
};
enum { NDECKS = sizeof decks / sizeof decks[0] };

/* A folded run's fixed iteration counts (its values mean nothing, so it cannot test for
 * convergence): Newton iterations per step and BiCGStab iterations per Newton iteration of a
 * full 100_100_100 run, measured on one rank (docs/pflotran.md, "The folded defaults": steps
 * 5-12 of 50 made 2 and 15-15.5; steps 1-4 more Newton and fewer BiCGStab iterations). */
enum { FOLDED_NEWTON_ITERATIONS = 2, FOLDED_KRYLOV_ITERATIONS = 15 };

/* Under SimGrid SMPI the STREAM triad would time this machine, not the simulated node (whose
 * bandwidth the node model takes from the machine preset), with arrays held by every simulated
 * rank at once (3 x 64 MiB each): it is skipped unless asked for. */
#ifdef ESM_SMPI
static const bool simulated = true;
#else
static const bool simulated = false;
#endif

typedef enum { CASE_CALCITE, CASE_TRACER, CASE_BATCH } problem_case;
static const double default_dt[] = {2.5e6, 2e5, 20}; /* s */

enum { HISTORY = 64 };

typedef struct newton_settings {
    double rtol, atol, stol, max_log_change;
    int max_iterations;
    int fixed_iterations; /* > 0: exactly this many per step, no convergence test (folded) */
} newton_settings;

typedef struct newton_outcome {
    int iterations;
    long linear_iterations;
    bool converged, linear_failed;
    const char *reason;
    double residual[HISTORY]; /* ||F|| before each iteration, and after the last */
} newton_outcome;

/* Everything one run holds. */
typedef struct run {
    grid g;
    chemistry chem;
    transport t;
    block_matrix A;
    krylov *ksp;
    petsc_solver *petsc;
    newton_settings newton;
    double *x, *f, *dx, *rhs, *rate, *dissolved;
    esm_timer step, residual, jacobian, factor, product, precondition, dots, linear;
} run;

/* ---- initial state ------------------------------------------------------------------ */

/* Fraction of [a, b] inside the pulse's [0.45, 0.55]. */
static double pulse_fraction(double a, double b)
{
    double lo = fmax(a, 0.45), hi = fmin(b, 0.55);
    return hi > lo ? (hi - lo) / (b - a) : 0.0;
}

/* Each cell gets the volume average of the pulse water over the part of it inside the centre
 * cube and the background water elsewhere. */
static void initial_state(run *r, problem_case which)
{
    const grid *g = &r->g;
    water background = water_background(&r->chem), pulse = water_acidic_pulse(&r->chem);
    if (which == CASE_BATCH)
        pulse = water_batch(&r->chem);
    if (which == CASE_TRACER) { /* no acid: only the tracer differs */
        water tracer_only = background;
        tracer_only.c[TRACER] = pulse.c[TRACER];
        pulse = tracer_only;
    }
    for (int k = 0; k < g->mz; k++)
        for (int j = 0; j < g->my; j++)
            for (int i = 0; i < g->mx; i++) {
                double x0 = (g->i0 + i) * g->width[0], y0 = (g->j0 + j) * g->width[1];
                double z0 = (g->k0 + k) * g->width[2];
                double inside = which == CASE_BATCH ? 1.0
                                                    : pulse_fraction(x0, x0 + g->width[0]) *
                                                          pulse_fraction(y0, y0 + g->width[1]) *
                                                          pulse_fraction(z0, z0 + g->width[2]);
                double *u = r->x + NS * grid_cell(g, i, j, k);
                for (int s = 0; s < NS; s++)
                    u[s] = inside * pulse.c[s] + (1.0 - inside) * background.c[s];
                u[H] = log(u[H]);
            }
}

/* ---- Newton's method (PETSc SNES newtonls, full steps, PFLOTRAN's update truncation) ---- */

/* The largest fraction of the update dx that keeps Ca++ and HCO3- positive and changes
 * ln[H+] by at most max_log_change (one allreduce). */
static double update_limit(const run *r)
{
    static esm_kernel kernel = {.name = "pflotran.update_limit"};
    double limit = 1.0;
    if (esm_kernel_begin(&kernel, (double)r->g.ncells, 2.0 * NS * 8 * r->g.ncells)) {
        for (long c = 0; c < r->g.ncells; c++) {
            const double *u = r->x + NS * c, *d = r->dx + NS * c;
            for (int s = CA; s <= HCO3; s += 2)
                if (u[s] + d[s] <= 0.0)
                    limit = fmin(limit, 0.99 * u[s] / -d[s]);
            if (fabs(d[H]) > r->newton.max_log_change)
                limit = fmin(limit, r->newton.max_log_change / fabs(d[H]));
        }
        esm_kernel_end(&kernel);
    }
    esm_global_min(&limit, 1);
    return limit;
}

/* norms[0..count-1] = ||F||^2, ||x||^2, ||dx||^2 over all ranks (one allreduce, as SNES). */
static void newton_norms(const run *r, double *norms, int count)
{
    static esm_kernel kernel = {.name = "pflotran.newton_norms"};
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
    esm_global_dots(norms, count);
}

/* The linear system's right-hand side: rhs = -F. */
static void newton_rhs(run *r)
{
    static esm_kernel kernel = {.name = "pflotran.newton_rhs"};
    const long n = r->g.ncells * NS;
    if (esm_kernel_begin(&kernel, (double)n, 2.0 * 8 * n)) {
        for (long e = 0; e < n; e++)
            r->rhs[e] = -r->f[e];
        esm_kernel_end(&kernel);
    }
}

/* The update, cut back by `limit`: x += limit dx. */
static void newton_update(run *r, double limit)
{
    static esm_kernel kernel = {.name = "pflotran.newton_update"};
    const long n = r->g.ncells * NS;
    if (esm_kernel_begin(&kernel, (double)n, 3.0 * 8 * n)) {
        for (long e = 0; e < n; e++)
            r->x[e] += limit * r->dx[e];
        esm_kernel_end(&kernel);
    }
}

/* With fixed_iterations (a folded run) exactly that many iterations and no test on the
 * values, so that the communication does not depend on them; the verdict is still taken. */
static newton_outcome newton_solve(run *r)
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
        esm_timer_start(&r->linear);
        esm_phase_begin("krylov");
        krylov_outcome linear;
        if (r->petsc) {
            linear = petsc_solve(r->petsc, &r->A, r->rhs, r->dx);
        } else {
            block_ilu_factor(&r->A);
            linear = krylov_solve(r->ksp, &r->A, r->rhs, r->dx);
        }
        esm_phase_end("krylov");
        esm_timer_stop(&r->linear);
        out.linear_iterations += linear.iterations;
        out.linear_failed |= !linear.converged;
        double limit = update_limit(r);
        newton_update(r, limit);
        out.iterations++;
        transport_update(&r->t, r->x);
        esm_timer_start(&r->residual);
        transport_residual(&r->t, r->f);
        esm_timer_stop(&r->residual);
        newton_norms(r, norms, 3); /* the three norms in one reduction, as SNES does */
        fnorm = sqrt(norms[0]);
        if (out.iterations < HISTORY)
            out.residual[out.iterations] = fnorm;
        if (limit * sqrt(norms[2]) <= s->stol * sqrt(norms[1])) {
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
static double convergence_order(const double *residual, int iterations, double floor)
{
    double order = 0;
    for (int k = 1; k < iterations && k + 1 < HISTORY; k++) {
        double before = residual[k - 1], now = residual[k], after = residual[k + 1];
        if (after > floor && now < before && after < now)
            order = log(after / now) / log(now / before);
    }
    return order;
}

/* ---- verification ---------------------------------------------------------------------- */

/* The analytic tracer: a unit cube [0.45, 0.55]^3 diffusing in the unit cube with zero-flux
 * walls, i.e. the erf solution plus its mirror images, one factor per direction. */
static double erf_factor(double x, double t, double diffusion)
{
    double width = 2.0 * sqrt(diffusion * t), sum = 0;
    for (int m = -3; m <= 3; m++) /* images at 2m +- [a, b] */
        for (int mirror = -1; mirror <= 1; mirror += 2) {
            double a = 2 * m + mirror * 0.45, b = 2 * m + mirror * 0.55;
            if (a > b) {
                double swap = a;
                a = b;
                b = swap;
            }
            sum += 0.5 * (erf((x - a) / width) - erf((x - b) / width));
        }
    return sum;
}

typedef struct inventory {
    double calcium, carbon, protons, tracer; /* mol, dissolved + calcite reacted */
} inventory;

static inventory inventories(const run *r)
{
    const grid *g = &r->g;
    double volume = g->width[0] * g->width[1] * g->width[2], phi = r->chem.porosity;
    esm_sum sums[4];
    memset(sums, 0, sizeof sums);
    for (long c = 0; c < g->ncells; c++) {
        const double *u = r->t.conc + NS * c;
        double reacted = r->dissolved[c]; /* mol/m^3 rock */
        esm_sum_add(&sums[0], volume * (phi * u[CA] - reacted));
        esm_sum_add(&sums[1], volume * (phi * u[HCO3] - reacted));
        esm_sum_add(&sums[2], volume * (phi * u[H] + reacted));
        esm_sum_add(&sums[3], volume * phi * u[TRACER]);
    }
    double total[4];
    esm_global_sums(sums, 4, total);
    return (inventory){total[0], total[1], total[2], total[3]};
}

/* Figures for the result line, except from a folded run (out NULL): its values mean nothing. */
static void put_norm(esm_result *out, const char *name, double value)
{
    if (out)
        esm_result_norm(out, name, value);
}

static void put_real(esm_result *out, const char *path, double value)
{
    if (out)
        esm_result_real(out, path, value);
}

/* Sums of each species over the grid (exact, so they differ between rank counts only by the
 * solver), and the concentrations at three probe cells (result NULL: reduced, not reported). */
static void report_fields(const run *r, esm_result *result)
{
    const grid *g = &r->g;
    const int probes[3][3] = {
        {g->nx / 2, g->ny / 2, g->nz / 2}, {0, 0, 0}, {g->nx / 4, g->ny / 3, (3 * g->nz) / 5}};
    esm_sum sums[NS + 3 * NS];
    memset(sums, 0, sizeof sums);
    for (long c = 0; c < g->ncells; c++) {
        for (int s = 0; s < NS; s++)
            esm_sum_add(&sums[s], r->t.conc[NS * c + s]);
        long global = grid_global_cell(g, c);
        for (int p = 0; p < 3; p++)
            if (global == probes[p][0] + (long)g->nx * (probes[p][1] + (long)g->ny * probes[p][2]))
                for (int s = 0; s < NS; s++)
                    esm_sum_add(&sums[NS + NS * p + s], r->t.conc[NS * c + s]);
    }
    double total[NS + 3 * NS];
    esm_global_sums(sums, NS + 3 * NS, total);
    const char *key[NS] = {"ca", "h", "hco3", "tracer"};
    for (int s = 0; s < NS; s++) {
        char path[64];
        snprintf(path, sizeof path, "fields.sum.%s", key[s]);
        put_real(result, path, total[s]);
        for (int p = 0; p < 3; p++) {
            snprintf(path, sizeof path, "fields.probe%d.%s", p, key[s]);
            put_real(result, path, total[NS + NS * p + s]);
        }
    }
}

/* Relative L2 and max errors of the tracer against the erf solution at time t. */
static void tracer_errors(const run *r, double t, double *l2, double *max)
{
    const grid *g = &r->g;
    esm_sum sums[2];
    memset(sums, 0, sizeof sums);
    double worst = 0;
    for (int k = 0; k < g->mz; k++)
        for (int j = 0; j < g->my; j++)
            for (int i = 0; i < g->mx; i++) {
                double exact = erf_factor((g->i0 + i + 0.5) * g->width[0], t, r->chem.diffusion) *
                               erf_factor((g->j0 + j + 0.5) * g->width[1], t, r->chem.diffusion) *
                               erf_factor((g->k0 + k + 0.5) * g->width[2], t, r->chem.diffusion);
                double error = r->t.conc[NS * grid_cell(g, i, j, k) + TRACER] - exact;
                esm_sum_add(&sums[0], error * error);
                esm_sum_add(&sums[1], exact * exact);
                worst = fmax(worst, fabs(error));
            }
    double total[2];
    esm_global_sums(sums, 2, total);
    esm_global_max(&worst, 1);
    double peak = erf_factor(0.5, t, r->chem.diffusion);
    peak = peak * peak * peak;
    *l2 = sqrt(total[0] / total[1]);
    *max = worst / peak;
}

/* ---- the run -------------------------------------------------------------------------- */

typedef struct options {
    const esm_deck *deck;
    long steps;
    const char *case_name, *solver, *library;
    problem_case which;
    double dt, rate_constant, stream_mb;
    krylov_settings ksp;
    newton_settings newton;
    int n[3], p[3]; /* cells and ranks along x, y, z (0: the deck's, chosen) */
} options;

static options parse_options(int argc, char **argv)
{
    options o = {0};
    esm_cli *cli = esm_cli_begin(
        argc, argv,
        "PFLOTRAN proxy: implicit reactive transport (tracer diffusion + kinetic calcite) on a\n"
        "structured 3D grid, Newton-Krylov with block-Jacobi ILU(0), PETSc's VecScatter ghosts");
    o.deck = esm_cli_size(cli, decks, NDECKS);
    o.steps = esm_cli_int(cli, "steps", o.deck->steps, 1, 1000000, "time steps (MAX_STEPS)");
    o.case_name = esm_cli_choice(
        cli, "case", "calcite,tracer,batch",
        "calcite: the benchmark; tracer: diffusion only vs erf; batch: reaction only vs ODE");
    o.which = !strcmp(o.case_name, "tracer")  ? CASE_TRACER
              : !strcmp(o.case_name, "batch") ? CASE_BATCH
                                              : CASE_CALCITE;
    o.solver = esm_cli_choice(cli, "solver", "bicgstab,gmres",
                              "Krylov solver (PFLOTRAN's default: BiCGStab)");
    o.library = esm_cli_choice(cli, "library", "native,petsc",
                               "linear solves by this program or by the system's PETSc");
    o.dt = esm_cli_real(cli, "dt", default_dt[o.which], 1e-6, 1e12, "time step, s");
    o.rate_constant = esm_cli_real(cli, "rate-constant", o.which == CASE_TRACER ? 0 : 1e-8, 0, 1,
                                   "calcite rate constant, mol/m^2/s");
    o.ksp = (krylov_settings){
        .method = !strcmp(o.solver, "gmres") ? SOLVER_GMRES : SOLVER_BICGSTAB,
        .rtol = esm_cli_real(cli, "ksp-rtol", 1e-5, 1e-15, 0.5, "Krylov relative tolerance"),
        .atol = 1e-50,
        .dtol = 1e5,
        .max_iterations = 10000,
        .restart = (int)esm_cli_int(cli, "restart", 30, 1, 1000, "GMRES restart length"),
    };
    o.newton = (newton_settings){
        .rtol = esm_cli_real(cli, "newton-rtol", 1e-8, 1e-15, 0.5, "Newton relative tolerance"),
        .atol = 1e-50,
        .stol = 1e-8,
        .max_log_change = 5.0,
        .max_iterations = (int)esm_cli_int(cli, "newton-max", 50, 1, HISTORY - 1,
                                           "Newton iterations per step at most"),
    };
    bool folded = esm_folded();
    o.newton.fixed_iterations = (int)esm_cli_int(
        cli, "newton-iterations", folded ? FOLDED_NEWTON_ITERATIONS : 0, folded, HISTORY - 1,
        "Newton iterations per step, fixed, no convergence test (0: until converged; folded "
        "runs need a count, default a full 100_100_100 run's mean)");
    o.ksp.fixed_iterations = (int)esm_cli_int(
        cli, "krylov-iterations", folded ? FOLDED_KRYLOV_ITERATIONS : 0, folded, 100000,
        "Krylov iterations per Newton iteration, fixed, no convergence test (0: until "
        "converged; folded runs need a count, default a full 100_100_100 run's mean)");
    const char *axis = "xyz";
    for (int a = 0; a < 3; a++) {
        char name[8], help[64];
        snprintf(name, sizeof name, "n%c", axis[a]);
        snprintf(help, sizeof help, "cells along %c (0: the deck's)", axis[a]);
        o.n[a] = (int)esm_cli_int(cli, name, 0, 0, 100000, help);
    }
    for (int a = 0; a < 3; a++) {
        char name[8], help[64];
        snprintf(name, sizeof name, "p%c", axis[a]);
        snprintf(help, sizeof help, "ranks along %c (0: chosen)", axis[a]);
        o.p[a] = (int)esm_cli_int(cli, name, 0, 0, 100000, help);
    }
    o.stream_mb = esm_cli_real(cli, "stream-mb", simulated ? 0 : 64, 0, 65536,
                               "STREAM triad array size per rank, MiB (0: skip; under SMPI 0)");
    esm_cli_end(cli);
    if (folded && o.stream_mb > 0)
        esm_fail("--stream-mb %g: a folded run cannot measure STREAM (every simulated rank "
                 "would hold its own arrays): leave it 0",
                 o.stream_mb);
    if (!strcmp(o.library, "petsc") && !petsc_built())
        esm_fail("--library petsc: this pflotran was built without PETSc, which is linked only "
                 "into the build for the MPI it was compiled with (Debian's PETSc: the openmpi "
                 "stack): install it (apt-get install --no-install-recommends "
                 "libpetsc-real3.18-dev), run `make build`, and use build/openmpi's pflotran");
    if (!strcmp(o.library, "petsc") && o.ksp.fixed_iterations)
        esm_fail("--krylov-iterations: PETSc's KSP (--library petsc) tests convergence as it "
                 "does; fixed counts are for the native solvers: use --library native");
    for (int a = 0; a < 3; a++)
        o.n[a] = o.n[a] ? o.n[a] : (&o.deck->nx)[a];
    if (!strcmp(o.deck->name, "weak")) { /* the deck's box is per rank */
        int ranks = esm_ranks(); /* on the rank grid DMDA chooses for the box's shape */
        grid_rank_grid(ranks, o.n[0] * ranks, o.n[1] * ranks, o.n[2] * ranks, &o.p[0], &o.p[1],
                       &o.p[2]);
        for (int a = 0; a < 3; a++)
            o.n[a] *= o.p[a];
    }
    return o;
}

/* Grid, chemistry, Jacobian storage, linear solver, initial state (with its ghosts). */
static void set_up(run *r, const options *o)
{
    *r = (run){.newton = o->newton};
    r->step = (esm_timer){.name = "step"}, r->residual = (esm_timer){.name = "residual"};
    r->jacobian = (esm_timer){.name = "jacobian"}, r->factor = (esm_timer){.name = "pc_setup"};
    r->product = (esm_timer){.name = "matvec"}, r->precondition = (esm_timer){.name = "pc_apply"};
    r->dots = (esm_timer){.name = "dots"}, r->linear = (esm_timer){.name = "linear_solve"};
    grid_create(&r->g, o->n[0], o->n[1], o->n[2], o->p[0], o->p[1], o->p[2]);
    r->chem = chemistry_calcite(o->rate_constant);
    transport_create(&r->t, &r->g, &r->chem, o->dt);
    block_matrix_create(&r->A, &r->g);
    r->A.product_timer = &r->product, r->A.factor_timer = &r->factor;
    r->A.solve_timer = &r->precondition;
    long n = r->g.ncells * NS;
    if (!strcmp(o->library, "petsc")) {
        petsc_start();
        r->petsc = petsc_solver_create(&r->g, o->ksp);
    } else {
        r->ksp = krylov_create(n, o->ksp, &r->dots);
    }
    r->x = esm_field_alloc(n * sizeof(double));
    r->f = esm_field_alloc(n * sizeof(double));
    r->dx = esm_field_alloc(n * sizeof(double));
    r->rhs = esm_field_alloc(n * sizeof(double));
    r->rate = esm_field_alloc(r->g.ncells * sizeof(double));
    r->dissolved = esm_field_alloc(r->g.ncells * sizeof(double));
    initial_state(r, o->which);
    transport_update(&r->t, r->x);
}

static void tear_down(run *r)
{
    if (r->petsc) {
        petsc_solver_free(r->petsc);
        petsc_stop();
    } else {
        krylov_free(r->ksp);
    }
    block_matrix_free(&r->A);
    transport_free(&r->t);
    grid_free(&r->g);
    esm_field_free(r->x), esm_field_free(r->f), esm_field_free(r->dx);
    esm_field_free(r->rhs), esm_field_free(r->rate), esm_field_free(r->dissolved);
}

/* Calcite reacted in each cell over a step of dt, for the mass balance. */
static void calcite_reacted(run *r, double dt)
{
    static esm_kernel kernel = {.name = "pflotran.reacted"};
    if (esm_kernel_begin(&kernel, (double)r->g.ncells, 3.0 * 8 * r->g.ncells)) {
        for (long c = 0; c < r->g.ncells; c++)
            r->dissolved[c] += dt * r->rate[c];
        esm_kernel_end(&kernel);
    }
}

/* What the time steps leave for verification and report. */
typedef struct record {
    long newton, linear, failed_steps, linear_failures;
    int newton_most;
    newton_outcome first;     /* the first step's Newton solve */
    double *times, *ca_change; /* at the end of each step; Ca++ gained by cell 0 */
    double wall;              /* the time steps, slowest rank */
} record;

static record time_steps(run *r, const options *o)
{
    record h = {.times = esm_calloc(o->steps, sizeof(double)),
                .ca_change = esm_calloc(o->steps, sizeof(double))};
    double ca_start = r->t.conc[CA];
    esm_barrier();
    double started = esm_wtime();
    esm_timed_begin();
    for (long step = 0; step < o->steps; step++) {
        esm_timer_start(&r->step);
        transport_begin_step(&r->t);
        esm_phase_begin("newton");
        newton_outcome n = newton_solve(r);
        esm_phase_end("newton");
        transport_rates(&r->t, r->rate);
        calcite_reacted(r, o->dt);
        esm_timer_stop(&r->step);
        if (step == 0)
            h.first = n;
        h.newton += n.iterations;
        h.linear += n.linear_iterations;
        h.newton_most = n.iterations > h.newton_most ? n.iterations : h.newton_most;
        h.failed_steps += !n.converged;
        h.linear_failures += n.linear_failed;
        h.times[step] = (step + 1) * o->dt;
        h.ca_change[step] = r->t.conc[CA] - ca_start;
        esm_say("step %3ld  t %.4e s  newton %2d (%s)  linear %4ld  |F| %.3e -> %.3e\n", step + 1,
                h.times[step], n.iterations, n.reason, n.linear_iterations, n.residual[0],
                n.residual[n.iterations < HISTORY ? n.iterations : HISTORY - 1]);
    }
    esm_timed_end();
    h.wall = esm_wtime() - started;
    esm_global_max(&h.wall, 1);
    return h;
}

/* The verdict of the case's checks, with their norms. A folded run makes the same reductions
 * (its communication stays a full run's) but reports none of their figures, and no verdict:
 * "not verified: folded run". */
static void verify(run *r, const options *o, const record *h, inventory start, esm_result *result)
{
    esm_result *out = esm_folded() ? NULL : result;
    inventory end = inventories(r);
    const grid *g = &r->g;
    double pore_volume = r->chem.porosity; /* the unit cube's */
    water background = water_background(&r->chem); /* errors relative to dissolved amounts */
    double ca_error = fabs(end.calcium - start.calcium) / (pore_volume * background.c[CA]);
    double carbon_error = fabs(end.carbon - start.carbon) / (pore_volume * background.c[HCO3]);
    /* round-off bounds the residual at about 100 ulp of its terms, which ||F0|| measures */
    double order = convergence_order(h->first.residual, h->first.iterations,
                                     1e3 * 2.2e-16 * h->first.residual[0]);
    put_norm(out, "calcium_conservation", ca_error);
    put_norm(out, "carbon_conservation", carbon_error);
    put_norm(out, "newton_order", order);
    bool passed = h->failed_steps == 0 && ca_error < 1e-8 && carbon_error < 1e-8;
    const char *what = "every Newton solve converged; total calcium and carbon (dissolved + "
                       "calcite reacted) conserved to 1e-8";
    if (o->which == CASE_TRACER) {
        double l2, max, tracer_error = fabs(end.tracer - start.tracer) / start.tracer;
        tracer_errors(r, o->steps * o->dt, &l2, &max);
        put_norm(out, "tracer_l2", l2);
        put_norm(out, "tracer_max", max);
        put_norm(out, "tracer_conservation", tracer_error);
        passed = h->failed_steps == 0 && l2 < 0.1 && tracer_error < 1e-8;
        what = "tracer diffusion vs erf solution: relative l2 < 0.1, tracer conserved to 1e-8";
    } else if (o->which == CASE_BATCH) {
        double *exact = esm_calloc(o->steps, sizeof(double)), worst = 0;
        batch_extent(&r->chem, water_batch(&r->chem), h->times, (int)o->steps, exact);
        for (long s = 0; s < o->steps; s++) /* extent = Ca++ gained */
            worst = fmax(worst, fabs(h->ca_change[s] - exact[s]));
        double final = exact[o->steps - 1], range[2] = {-1e300, 1e300}; /* max, min Ca++ */
        for (long c = 0; c < g->ncells; c++) {
            range[0] = fmax(range[0], r->t.conc[NS * c + CA]);
            range[1] = fmin(range[1], r->t.conc[NS * c + CA]);
        }
        esm_global_max(&range[0], 1);
        esm_global_min(&range[1], 1);
        double batch_error = worst / fabs(final), spread = (range[0] - range[1]) / range[0];
        put_norm(out, "batch_extent_error", batch_error);
        put_norm(out, "batch_spread", spread);
        put_real(out, "batch.extent_final", h->ca_change[o->steps - 1]);
        put_real(out, "batch.extent_ode", final);
        passed = passed && batch_error < 0.05 && spread <= 1e-12;
        what = "batch calcite reaction vs ODE solution: extent within 5%, uniform, Ca and C "
               "conserved to 1e-8";
        free(exact);
    }
    if (out)
        esm_result_verification(result, passed, what);
    else
        esm_result_unverified(result, "not verified: folded run");
    put_real(out, "conservation.calcium_start", start.calcium);
    put_real(out, "conservation.calcium_end", end.calcium);
    put_real(out, "conservation.carbon_start", start.carbon);
    put_real(out, "conservation.carbon_end", end.carbon);
    put_real(out, "conservation.protons_start", start.protons);
    put_real(out, "conservation.protons_end", end.protons);
    report_fields(r, out);
}

/* Performance, solver work, communication, and the kernels against STREAM. */
static void report(run *r, const options *o, const record *h, esm_stream stream, esm_result *result)
{
    const grid *g = &r->g;
    long cells = (long)g->nx * g->ny * g->nz, steps = o->steps;
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
    esm_scatter_counts scatter = esm_scatter_counts_mine();
    esm_sum comm[4];
    memset(comm, 0, sizeof comm);
    esm_sum_add(&comm[0], (double)scatter.start);
    esm_sum_add(&comm[1], (double)scatter.waitany);
    esm_sum_add(&comm[2], (double)esm_counts_mine()->allreduce);
    esm_sum_add(&comm[3], (double)esm_scatter_bytes(g->scatter));
    double total[4], largest = (double)esm_scatter_largest(g->scatter);
    esm_global_sums(comm, 4, total);
    esm_global_max(&largest, 1);
    esm_result_real(result, "model.messages_per_step", total[0] / steps);
    esm_result_real(result, "model.allreduces_per_step", total[2] / steps / esm_ranks());
    esm_result_int(result, "model.largest_message_bytes", (long)largest);
    esm_result_int(result, "model.ghost_bytes_per_update", (long)total[3]);

    esm_result_text(result, "params.case", o->case_name);
    esm_result_text(result, "params.solver", o->solver);
    esm_result_text(result, "params.library", o->library);
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

    esm_result_int(result, "newton.iterations", h->newton);
    esm_result_int(result, "newton.most_in_a_step", h->newton_most);
    esm_result_int(result, "newton.failed_steps", h->failed_steps);
    esm_result_int(result, "newton.linear_iterations", h->linear);
    esm_result_int(result, "newton.linear_failures", h->linear_failures);
    char history[HISTORY * 26] = "";
    for (int k = 0, used = 0; k <= h->first.iterations && k < HISTORY; k++)
        used += snprintf(history + used, sizeof history - used, "%s%.6e", k ? "," : "",
                         h->first.residual[k]);
    esm_result_text(result, "newton.first_step_residuals", history);

    esm_timer *timers[] = {&r->step,   &r->residual, &r->jacobian,     &r->factor,
                           &r->linear, &r->product,  &r->precondition, &r->dots};
    esm_result_timers(result, timers, sizeof timers / sizeof timers[0]);
    double kernel_time[2] = {r->product.total, r->precondition.total};
    esm_global_max(kernel_time, 2);
    const char *kernel[2] = {"matvec", "pc_apply"};
    double bytes[2] = {(double)r->product.count * cells * block_matrix_product_bytes(),
                       (double)r->precondition.count * cells * block_ilu_solve_bytes()};
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
}

int main(int argc, char **argv)
{
    esm_init(&argc, &argv, "pflotran");
    options o = parse_options(argc, argv);
    run r;
    set_up(&r, &o);
    inventory start = inventories(&r);
    esm_stream stream = o.stream_mb > 0 ? esm_stream_triad(o.stream_mb, 5) : (esm_stream){0};
    record h = time_steps(&r, &o);
    esm_result *result = esm_result_new("pflotran", o.deck->name, o.steps);
    verify(&r, &o, &h, start, result);
    report(&r, &o, &h, stream, result);
    int status = esm_result_finish(result);
    tear_down(&r);
    free(h.times), free(h.ca_change);
    esm_exit(status);
}
