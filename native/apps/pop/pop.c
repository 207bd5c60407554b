/* pop: a proxy of the Parallel Ocean Program (POP 2 / POPperf) that computes and communicates
 * the way the model does, and proves its answer.
 *
 * Each time step:
 *   1. baroclinic: two tracers advected and diffused in 3D over the active levels
 *      (one halo update of both tracers, one message per neighbour rank);
 *   2. barotropic: the implicit free-surface equation [-div(H grad) + 1/(g dt^2)] eta = b,
 *      POP's 9-point B-grid operator with variable coefficients over the continents, solved
 *      by ChronGear, PCG or P-CSI (halo updates and global sums every iteration), starting
 *      from the last step's answer. The right-hand side is b = A eta* for a known, moving eta*
 *      (a manufactured solution), so every solve is checked against the exact answer.
 * Verified: the barotropic error |eta - eta*| / |eta*| at every step, tracer content
 * conserved to round-off, tracers within their initial range.
 * Folded under SMPI (esm_fold.h): fields shared, kernels charged, each solve the iterations
 * the deck's recorded history made (fold_history.c), else a fixed number (folded_iterations
 * below), not verified (docs/ocean.md, "Seed scale"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "barotropic.h"

static const esm_deck decks[] = {
    {"S", 100, 116, 20, 10, 8, 10, "gx3 grid (3 degree), 20 levels: seconds on 2 cores"},
    {"M", 320, 384, 40, 32, 32, 10, "gx1 grid (1 degree), 40 levels"},
    {"L", 960, 720, 42, 48, 48, 5, "1/3 degree, 42 levels"},
    {"gx3", 100, 116, 60, 25, 29, 10, "POP gx3v7: 3 degree, 60 levels"},
    {"gx1", 320, 384, 60, 40, 48, 10, "POP gx1v6: 1 degree, 60 levels"},
    {"tenth", 3600, 2400, 42, 36, 24, 5, "POPperf 0.1 degree, 42 levels, Dennis 2007 blocks"},
};

/* Solver iterations per solve of a folded run (esm_fold.h), whose values mean nothing, so
 * that convergence cannot decide: each deck's figure from a full run of it here (the timed
 * steps' iterations per step with the default tolerance and --check 10; docs/ocean.md). */
static const struct {
    const char *deck;
    int chrongear, pcsi;
} folded_iterations[] = {
    {"S", 160, 210},
    {"M", 330, 690},
    {"L", 550, 1770},
    {"gx3", 160, 220},
    {"gx1", 330, 700},
    /* tenth cannot run in full here (its tracers alone take 20 GB): S, M and L's iterations
     * grow as nx^0.46 (ChronGear) and nx^0.86 (P-CSI) from M to L; extrapolated to nx = 3600
     * and rounded to the check interval */
    {"tenth", 1020, 5500},
};

/* The options a recorded history was made with at their defaults (ChronGear; the rank count,
 * blocks, layout and distribution give the same bits, barotropic.h): any given, it does not
 * apply. */
static const char *const history_settings[] = {"solver", "grid",       "tolerance",
                                               "check",  "iterations", "max-iterations"};

static const esm_fold_history *history_for(const esm_cli *cli, const esm_deck *deck)
{
    for (unsigned s = 0; s < sizeof history_settings / sizeof *history_settings; s++)
        if (esm_cli_given(cli, history_settings[s]))
            return NULL;
    return esm_fold_history_nearest(pop_fold_histories, pop_fold_history_count, deck->name, "",
                                    esm_ranks());
}

static int folded_iterations_of(const esm_deck *deck, const char *solver)
{
    for (unsigned d = 0; d < sizeof folded_iterations / sizeof *folded_iterations; d++)
        if (!strcmp(folded_iterations[d].deck, deck->name))
            return strcmp(solver, "pcsi") ? folded_iterations[d].chrongear
                                          : folded_iterations[d].pcsi;
    return 0;
}

/* A start vector for Lanczos: pseudo-random on ocean points, from the global index. */
static void lanczos_start(const pop_grid *g, double *field)
{
    for (int lb = 0; lb < g->d.nlocal; lb++) {
        const esm_block *b = &g->d.block[g->d.local[lb]];
        for (int j = 0; j < b->nj; j++)
            for (int i = 0; i < b->ni; i++) {
                long p = esm_at(&g->l2, lb, i, j, 0);
                unsigned long h = (b->i0 + i) * 2654435761UL ^ (b->j0 + j) * 40503UL;
                h = (h ^ (h >> 13)) * 0x5bd1e995UL;
                field[p] = g->kmt[p] ? (double)(h % 2001) / 1000.0 - 1.0 : 0.0;
            }
    }
}

/* The run: options, model, and what the time loop accumulates. */
typedef struct pop_run {
    const esm_deck *deck;
    long steps, warmup;
    const char *solver_name, *layout_name, *halo_name, *stream_name;
    esm_distribution distribution;
    int nx, ny, nz, bx, by, check_every, max_iterations, lanczos, fixed_iterations, sample;
    bool blocks_given;                       /* --block: else the deck's, or fewer if needed */
    const esm_fold_history *history;         /* folded: each solve's iterations, recorded */
    char *iteration_history;                 /* each solve's (esm_fold_history_append) */
    double tolerance;
    pop_grid g;
    pop_operator op;
    pop_tracers tr;
    space *s;
    solver *sv;
    double *eta_star, *rhs;                  /* l2 fields: the known answer, A times it */
    double *b, *x, *x_star, *error;         /* solver vectors */
    esm_timer t_tracer, t_tracer_halo, t_rhs, t_solver;
    long iterations, checks, unconverged, iterations_max, iterations_simulated;
    double worst_error, worst_residual, tracer_bytes, solver_bytes0, wall;
    esm_counts counts0, counts1;
    double mass0[2], low0[2], high0[2];
} pop_run;

static void parse(pop_run *run, int argc, char **argv)
{
    esm_cli *cli = esm_cli_begin(argc, argv,
                                 "POP proxy: barotropic solver (9-point B-grid, "
                                 "ChronGear/PCG/P-CSI) + baroclinic 3D tracer transport");
    run->deck = esm_cli_size(cli, decks, sizeof decks / sizeof *decks);
    run->nx = run->deck->nx, run->ny = run->deck->ny, run->bx = run->deck->bx,
    run->by = run->deck->by;
    run->steps = esm_cli_int(cli, "steps", run->deck->steps, 1, 1000000, "time steps timed");
    run->warmup = esm_cli_int(cli, "warmup", 1, 0, 1000, "time steps before timing");
    run->solver_name = esm_cli_choice(cli, "solver", "chrongear,pcg,pcsi", "barotropic solver");
    run->layout_name =
        esm_cli_choice(cli, "layout", "blocks,compressed",
                       "barotropic vectors: blocks with halos, or ocean points in 1D (POPperf)");
    const char *distribution = esm_cli_choice(cli, "distribution", "sfc,cartesian",
                                              "blocks to ranks: space-filling curve or Cartesian");
    run->halo_name = esm_cli_choice(cli, "halo", "isend,persistent", "halo exchange engine");
    esm_cli_pair(cli, "grid", &run->nx, &run->ny, 100000, "global grid, overrides the size's");
    esm_cli_pair(cli, "block", &run->bx, &run->by, 100000, "block size");
    run->nz = (int)esm_cli_int(cli, "levels", run->deck->nz, 1, 255, "vertical levels");
    run->tolerance = esm_cli_real(cli, "tolerance", 1e-12, 1e-16, 1e-2, "solver: |r| <= tol |b|");
    run->check_every = (int)esm_cli_int(cli, "check", 10, 1, 1000,
                                        "solver: iterations between convergence checks");
    run->max_iterations =
        (int)esm_cli_int(cli, "max-iterations", 20000, 1, 10000000, "solver: iteration limit");
    run->lanczos = (int)esm_cli_int(cli, "lanczos", 40, 2, 1000,
                                    "P-CSI: Lanczos steps for the spectrum bounds");
    run->fixed_iterations =
        (int)esm_cli_int(cli, "iterations", 0, 0, 10000000,
                         "solver: exactly this "
                         "many iterations per solve (0: until converged; a folded "
                         "run: the size's figure from a full run)");
    run->sample = (int)esm_cli_int(cli, "sample-iterations", 0, 0, 10000000,
                                   "folded: simulate "
                                   "this many iterations of each solve (a multiple of --check), "
                                   "charge the rest at their simulated time (0: all)");
    run->blocks_given = esm_cli_given(cli, "block") != NULL;
    run->stream_name = esm_cli_choice(cli, "stream", "on,off", "measure the STREAM triad roofline");
    esm_cli_end(cli);
    run->distribution = strcmp(distribution, "sfc") ? ESM_DIST_CARTESIAN : ESM_DIST_SFC;
    run->history = esm_folded() && !run->fixed_iterations ? history_for(cli, run->deck) : NULL;
    if (esm_folded() && !run->fixed_iterations && !run->history) {
        run->fixed_iterations = folded_iterations_of(run->deck, run->solver_name);
        if (!run->fixed_iterations)
            esm_fail("a folded run needs a fixed solver iteration count and size %s has none: "
                     "use --iterations N",
                     run->deck->name);
    }
    if (run->sample && !esm_folded())
        esm_fail("--sample-iterations %d charges iterations it does not simulate: a folded run "
                 "only (smpi stack, fold = on)",
                 run->sample);
    if (run->sample % run->check_every)
        esm_fail("--sample-iterations %d: use a multiple of --check %d, so that the sampled "
                 "iterations hold their share of convergence checks",
                 run->sample, run->check_every);
}

/* Grid and decomposition, operator, tracers, solver, vectors. */
static void set_up(pop_run *run)
{
    pop_grid *g = &run->g;
    pop_grid_create(g, run->nx, run->ny, run->nz, run->bx, run->by, run->distribution,
                    run->blocks_given ? ESM_BLOCKS_GIVEN : ESM_BLOCKS_GIVEN_OR_FOR_RANKS);
    run->bx = g->d.bx;
    run->by = g->d.by;
    pop_operator_create(&run->op, g);
    esm_halo_engine engine = esm_halo_engine_named(run->halo_name);
    pop_tracers_create(&run->tr, g, engine);
    run->s = strcmp(run->layout_name, "compressed") ? space_blocks(g, &run->op, engine)
                                                    : space_compressed(g, &run->op, engine);
    solver_kind kind = !strcmp(run->solver_name, "pcg")    ? SOLVER_PCG
                       : !strcmp(run->solver_name, "pcsi") ? SOLVER_PCSI
                                                           : SOLVER_CHRONGEAR;
    run->sv = solver_create(kind, run->s, run->tolerance, run->max_iterations, run->check_every,
                            run->fixed_iterations, run->sample);
    long n2 = esm_layout_doubles(&g->l2, g->d.nlocal), n = run->s->n;
    double **fields[] = {&run->eta_star, &run->rhs},
           **vectors[] = {&run->b, &run->x, &run->x_star, &run->error};
    for (int f = 0; f < 2; f++) /* folded: shared between ranks */
        *fields[f] = esm_field_alloc(n2 * sizeof(double));
    for (int v = 0; v < 4; v++)
        *vectors[v] = esm_field_alloc(n * sizeof(double));
    if (kind == SOLVER_PCSI) {
        lanczos_start(g, run->rhs);
        run->s->from_blocks(run->s, run->rhs, run->b);
        solver_bounds(run->sv, run->s, run->lanczos, run->b);
    }
    run->t_tracer = (esm_timer){.name = "tracer"};
    run->t_tracer_halo = (esm_timer){.name = "tracer_halo"};
    run->t_rhs = (esm_timer){.name = "rhs"};
    run->t_solver = (esm_timer){.name = "barotropic"};
    run->s->compute.name = "barotropic_compute";
    run->s->halo_time.name = "barotropic_halo";
    run->s->reduce.name = "barotropic_reduce";
}

/* After the warm-up: timers and counts from zero, ranks together. */
static void start_timing(pop_run *run)
{
    esm_timer *all[] = {&run->t_tracer,   &run->t_tracer_halo, &run->t_rhs,    &run->t_solver,
                        &run->s->compute, &run->s->halo_time,  &run->s->reduce};
    for (int t = 0; t < 7; t++)
        esm_timer_reset(all[t]);
    run->solver_bytes0 = run->s->bytes;
    run->tracer_bytes = 0;
    esm_barrier();
    run->counts0 = *esm_counts_mine();
    run->wall = esm_wtime();
    esm_timed_begin();
}

/* The barotropic mode of step `step`: solve A x = A eta* from the last step's x, and measure
 * the error against eta*. */
static void barotropic(pop_run *run, long step, bool timed)
{
    space *s = run->s;
    /* flops a point (esm_fold.h), counted from the code: the manufactured height (25: its
     * longitude and latitude, five sines and cosines counted one each, their products) and
     * the 9-point operator (17); the error, one subtraction */
    static const esm_kernel rhs = {.name = "pop.rhs", .flops = 25 + 17},
                            error = {.name = "pop.error", .flops = 1};
    long n2 = esm_layout_doubles(&run->g.l2, run->g.d.nlocal);
    esm_timer_start(&run->t_rhs);
    if (esm_kernel_begin(&rhs, (double)n2, (8.0 * n2 + 4.0 * s->n) * sizeof(double))) {
        pop_manufactured(&run->g, (int)step, run->eta_star);
        pop_operator_apply(&run->op, &run->g, run->eta_star, run->rhs);   /* b = A eta* */
        s->from_blocks(s, run->rhs, run->b);
        s->from_blocks(s, run->eta_star, run->x_star);
        esm_kernel_end(&rhs);
    }
    esm_timer_stop(&run->t_rhs);

    if (run->history) {
        int count;
        esm_fold_history_step(run->history, step, &count, 1);
        solver_fix_iterations(run->sv, count, run->sample);
    }
    esm_timer_start(&run->t_solver);
    solve_stats st = solver_solve(run->sv, s, run->b, run->x);
    esm_timer_stop(&run->t_solver);
    esm_fold_history_append(&run->iteration_history, &st.iterations, 1);

    if (esm_kernel_begin(&error, (double)s->n, 3.0 * sizeof(double) * s->n)) {
        for (long p = 0; p < s->n; p++)
            run->error[p] = run->x[p] - run->x_star[p];
        esm_kernel_end(&error);
    }
    double norms[2];
    s->dots(s, 2, (const double *[]){run->error, run->x_star},
            (const double *[]){run->error, run->x_star}, norms);
    run->worst_error = fmax(run->worst_error, sqrt(norms[0] / norms[1]));
    run->worst_residual = fmax(run->worst_residual, st.residual);
    run->unconverged += !st.converged;
    if (timed) {
        run->iterations += st.iterations;
        run->iterations_simulated += st.simulated;
        run->checks += st.checks;
        run->iterations_max =
            st.iterations > run->iterations_max ? st.iterations : run->iterations_max;
    }
}

/* Bitwise fingerprints of the final surface height and tracers, and the solution's sum. */
static void fingerprints(pop_run *run, esm_result *r)
{
    const pop_grid *g = &run->g;
    run->s->to_blocks(run->s, run->x, run->rhs);
    uint64_t eta = 0, tracers = 0;
    esm_sum total = {0};
    long plane = (long)run->nx * run->ny;
    static const esm_kernel kernel = {.name = "pop.fingerprint",
                                      .flops = 0}; /* integer checksums */
    double points = pop_tracers_bytes(g) / (7 * sizeof(double));
    bool run_it = esm_kernel_begin(&kernel, points, 2 * sizeof(double) * points);
    for (int lb = 0; lb < g->d.nlocal && run_it; lb++) {
        const esm_block *b = &g->d.block[g->d.local[lb]];
        for (int j = 0; j < b->nj; j++)
            for (int i = 0; i < b->ni; i++) {
                long gid = (b->i0 + i) + (long)run->nx * (b->j0 + j);
                double x = run->rhs[esm_at(&g->l2, lb, i, j, 0)];
                esm_checksum_add(&eta, gid, x);
                esm_sum_add(&total, x);
                for (int k = 0; k < run->nz; k++) {
                    long p = esm_at(&g->l3, lb, i, j, k);
                    esm_checksum_add(&tracers, 2 * (gid + plane * k), run->tr.t[p]);
                    esm_checksum_add(&tracers, 2 * (gid + plane * k) + 1, run->tr.s[p]);
                }
            }
    }
    if (run_it)
        esm_kernel_end(&kernel);
    char hex[24];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)esm_global_checksum(eta));
    esm_result_text(r, "checksum.eta", hex);
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)esm_global_checksum(tracers));
    esm_result_text(r, "checksum.tracers", hex);
    esm_result_real(r, "solver.solution_sum", esm_global_sum(&total));
}

/* Verification, performance model, kernel bandwidth against STREAM: the result line. */
static int report(pop_run *run)
{
    const pop_grid *g = &run->g;
    space *s = run->s;
    solver *sv = run->sv;
    long steps = run->steps;
    esm_result *r = esm_result_new("pop", run->deck->name, steps);

    /* verification */
    double mass[2], low[2], high[2], drift[2], excess = 0;
    pop_tracers_mass(&run->tr, g, mass);
    pop_tracers_range(&run->tr, g, low, high);
    for (int f = 0; f < 2; f++) {
        drift[f] = fabs(mass[f] - run->mass0[f]) / fabs(run->mass0[f]);
        double range = run->high0[f] - run->low0[f];
        excess = fmax(excess, fmax(run->low0[f] - low[f], high[f] - run->high0[f]) / range);
    }
    double error_limit = fmax(1e-6, 1e4 * run->tolerance);
    bool passed = run->worst_error <= error_limit && run->unconverged == 0 && drift[0] <= 1e-12 &&
                  drift[1] <= 1e-12 && excess <= 1e-12;
    if (esm_report_verification(r, passed,
                                "manufactured barotropic solution; tracer content "
                                "conserved; tracers within their initial range")) {
        esm_result_norm(r, "barotropic_error", run->worst_error);
        esm_result_norm(r, "barotropic_error_limit", error_limit);
        esm_result_norm(r, "solver_residual", run->worst_residual);
        esm_result_norm(r, "unconverged_solves", (double)run->unconverged);
        esm_result_norm(r, "tracer_mass_drift_t", drift[0]);
        esm_result_norm(r, "tracer_mass_drift_s", drift[1]);
        esm_result_norm(r, "tracer_range_excess", excess);
    }
    fingerprints(run, r);
    esm_result_real(r, "tracers.mass_t", mass[0]);
    esm_result_real(r, "tracers.mass_s", mass[1]);

    /* performance: bytes and the slowest rank's kernel times over the timed steps */
    esm_sum per_rank[3] = {{0}};
    esm_sum_add(&per_rank[0], run->tracer_bytes);
    esm_sum_add(&per_rank[1], s->bytes - run->solver_bytes0);
    esm_sum_add(&per_rank[2], (double)s->owned);
    double total[3], slowest[3] = {run->wall, run->t_tracer.total, s->compute.total};
    esm_global_sums(per_rank, 3, total);
    esm_global_max(slowest, 3);
    double wall = slowest[0], tracer_GBps = total[0] / fmax(slowest[1], 1e-30) / 1e9;
    double solver_GBps = total[1] / fmax(slowest[2], 1e-30) / 1e9;
    esm_result_wall(r, wall);
    esm_result_fom(r, steps * g->dt / (365.0 * 86400.0) / (wall / 86400.0), "SYPD", true);
    esm_result_real(r, "model.bytes_per_point",
                    (total[0] + total[1]) / steps / ((double)g->d.ocean_points * run->nz));
    esm_result_real(r, "model.tracer_bytes_per_point", 7.0 * sizeof(double));
    esm_result_real(r, "model.barotropic_bytes_per_point_iteration",
                    total[1] / fmax(1.0, (double)run->iterations) / total[2]);
    esm_report_counts(r, &run->counts0, &run->counts1, steps);
    esm_result_real(r, "model.iterations_per_step", (double)run->iterations / steps);
    esm_result_real(r, "model.steps_per_second", steps / wall);

    esm_report_grid(r, run->nx, run->ny, run->nz, run->bx, run->by);
    esm_result_int(r, "params.warmup", run->warmup);
    esm_result_text(r, "params.solver", run->solver_name);
    esm_result_text(r, "params.layout", run->layout_name);
    esm_result_text(r, "params.halo", run->halo_name);
    esm_result_real(r, "params.tolerance", run->tolerance);
    esm_result_int(r, "params.check", run->check_every);
    esm_result_int(r, "params.iterations", run->fixed_iterations);
    if (run->history) {
        char from[96];
        snprintf(from, sizeof from, "%s at %d ranks, %d solves", run->history->deck,
                 run->history->ranks, run->history->steps);
        esm_result_text(r, "params.history", from);
    }
    esm_result_int(r, "params.sample_iterations", run->sample);
    esm_result_real(r, "params.dt", g->dt);
    esm_report_decomp(r, &g->d);
    esm_result_real(r, "params.courant", run->tr.courant);
    if (sv->kind == SOLVER_PCSI) {
        esm_result_real(r, "params.pcsi_nu", sv->nu);
        esm_result_real(r, "params.pcsi_mu", sv->mu);
        esm_result_int(r, "params.lanczos_steps", sv->lanczos_steps);
    }
    esm_result_int(r, "solver.iterations", run->iterations);
    esm_result_int(r, "solver.iterations_max", run->iterations_max);
    esm_result_int(r, "solver.iterations_simulated", run->iterations_simulated);
    esm_result_int(r, "solver.checks", run->checks);
    esm_result_text(r, "solver.iteration_history", run->iteration_history);

    esm_stream stream = {0};
    if (!strcmp(run->stream_name, "on"))
        stream = esm_stream_triad(64.0, 10);
    esm_report_stream(r, stream);
    esm_report_kernel(r, "tracer", tracer_GBps, stream);
    esm_report_kernel(r, "barotropic", solver_GBps, stream);
    esm_timer *timers[] = {&run->t_tracer, &run->t_tracer_halo, &run->t_rhs, &run->t_solver,
                           &s->compute,    &s->halo_time,       &s->reduce};
    esm_result_timers(r, timers, 7);
    return esm_result_finish(r);
}

int main(int argc, char **argv)
{
    esm_init(&argc, &argv, "pop");
    pop_run run = {0};
    parse(&run, argc, argv);
    set_up(&run);
    pop_tracers_mass(&run.tr, &run.g, run.mass0);
    pop_tracers_range(&run.tr, &run.g, run.low0, run.high0);

    for (long step = -run.warmup; step < run.steps; step++) {
        if (step == 0)
            start_timing(&run);
        esm_phase_begin("baroclinic");
        pop_tracers_step(&run.tr, &run.g, &run.t_tracer, &run.t_tracer_halo);
        esm_phase_end("baroclinic");
        if (step >= 0)
            run.tracer_bytes += pop_tracers_bytes(&run.g);
        esm_phase_begin("barotropic");
        barotropic(&run, step + run.warmup, step >= 0);
        esm_phase_end("barotropic");
    }
    esm_timed_end();
    run.wall = esm_wtime() - run.wall;
    run.counts1 = *esm_counts_mine();
    esm_exit(report(&run));
}
