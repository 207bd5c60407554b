/* pflotran: a proxy of PFLOTRAN's 100_100_100/calcite benchmark (HPC Advisory Council, 2011).
 *
 * What it solves. The deck's reactive transport (chemistry.c): 4 primary species (Ca++, H+,
 * HCO3-, Tracer; unknowns ln m), 5 secondary species in equilibrium, activity coefficients,
 * calcite kinetics, diffusing in the unit cube (finite volumes on an nx x ny x nz grid,
 * 7-point stencil, D = 1e-9 m^2/s, zero-gradient boundaries):
 *
 *     phi rho dT_j/dt = div(phi rho D grad T_j) + nu_j R,    R = k A (1 - Q/K)
 *
 * T_j the component totals, k = 1e-8 mol/m^2/s (the deck's rate constant). The deck's pulse
 * water (pH 5, carrying the tracer) fills the cells of the centre cube 0.45-0.55 at t = 0 in
 * water at equilibrium with calcite (pH 8); calcite dissolves there, and the products diffuse
 * out and precipitate. Fully implicit: each backward-Euler step is solved by Newton's
 * method, each Newton step by GMRES(30) or BiCGStab preconditioned by block Jacobi + block
 * ILU(0) on the 4x4 blocks of each cell (PETSc's SNES/KSP defaults, as PFLOTRAN ran them;
 * GMRES the calcite deck's KSP_TYPE; --pc none: unpreconditioned, the 2011 deck's PC_TYPE
 * NONE). The steps: --steps of --dt, or the deck's own time
 * stepping (--time-stepping deck, timestep.c: 1e-6 y growing to 1 y, until 10 y).
 *
 * How it communicates (what PETSc did): one box of cells per rank; every ghost update is a
 * VecScatter (esm_scatter, --petsc vpscat: receives started with MPI_Startall, each send with
 * MPI_Start, unpacking on MPI_Waitany; --petsc sf, PETSc 3.13+: one MPI_Startall for the
 * receives and one for the sends, MPI_Waitall on each, and PetscSF's bookkeeping calls);
 * every dot product and norm one MPI_Allreduce (under sf none on one rank).
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

/* A folded run cannot test for convergence (its values mean nothing): it follows the recorded
 * history of its deck (fold_history.c: a free-running run's Newton and Krylov counts, step by
 * step, at the nearest rank count recorded). Where none applies (a grid, case, solver or
 * tolerance other than the deck's defaults) it makes these fixed counts: Newton iterations
 * per step and BiCGStab iterations per Newton iteration of steps 5-12 of a full 100_100_100
 * run on one rank (docs/pflotran.md, "The folded counts"). */
enum { FOLDED_NEWTON_ITERATIONS = 2, FOLDED_KRYLOV_ITERATIONS = 15 };

/* The Krylov solver and preconditioner each deck's recorded histories were made with (its
 * default then): a history applies to a run of those only. Both decks' were recorded again
 * under GMRES when it became the calcite deck's default (2026-11-27), with block Jacobi. */
static const struct {
    const char *deck, *solver, *pc;
} history_solvers[] = {{"S", "gmres", "bjacobi"}, {"100_100_100", "gmres", "bjacobi"}};

static bool history_solver_matches(const options *o)
{
    for (unsigned d = 0; d < sizeof history_solvers / sizeof *history_solvers; d++)
        if (!strcmp(history_solvers[d].deck, o->deck->name))
            return !strcmp(history_solvers[d].solver, o->solver) &&
                   !strcmp(history_solvers[d].pc, o->pc);
    return false;
}

/* The options a recorded history was made with at their defaults: any given, it does not
 * apply (the rank grid changes block Jacobi's blocks, so --px/--py/--pz too). */
static const char *const history_settings[] = {
    "case",     "library", "dt",          "rate-constant",
    "ksp-rtol", "restart", "newton-rtol", "newton-max",
    "nx",       "ny",      "nz",          "px",
    "py",       "pz"};

/* A folded run's history: its deck's nearest recorded with its time stepping (fixed steps:
 * options "", the deck's: "--time-stepping deck"; scripts/fold_history.py --time-stepping)
 * if every other setting it depends on is the default and its solver the histories'. */
static const esm_fold_history *history_for(const esm_cli *cli, const options *o)
{
    if (!history_solver_matches(o))
        return NULL;
    for (unsigned s = 0; s < sizeof history_settings / sizeof *history_settings; s++)
        if (esm_cli_given(cli, history_settings[s]))
            return NULL;
    return esm_fold_history_nearest(pflotran_fold_histories, pflotran_fold_history_count,
                                    o->deck->name, o->deck_steps ? "--time-stepping deck" : "",
                                    esm_ranks());
}

/* Under SimGrid SMPI the STREAM triad would time this machine, not the simulated node (whose
 * bandwidth the node model takes from the machine preset), with arrays held by every simulated
 * rank at once (3 x 64 MiB each): it is skipped unless asked for. */
#ifdef ESM_SMPI
static const bool simulated = true;
#else
static const bool simulated = false;
#endif

/* s: calcite, tracer, batch. The batch water (Q/K = 1/2, buffered by its carbonate) comes
 * near calcite's equilibrium in about 2.5e6 s, 25 of its steps. */
static const double default_dt[] = {2.5e6, 2e5, 1e5};

/* ---- initial state ------------------------------------------------------------------ */

/* Fraction of [a, b] inside the pulse's [0.45, 0.55]. */
static double pulse_fraction(double a, double b)
{
    double lo = fmax(a, 0.45), hi = fmin(b, 0.55);
    return hi > lo ? (hi - lo) / (b - a) : 0.0;
}

/* Does [a, b] reach into [0.45, 0.55]? PFLOTRAN's region of a block of COORDINATES on a
 * structured grid is every cell from the one holding its lower corner to the one holding its
 * upper corner (grid.F90 GridLocalizeRegionFromCoordinates): on 32^3, cells 14-17 along each
 * direction. */
static bool in_pulse(double a, double b)
{
    return b >= 0.45 && a <= 0.55;
}

/* The deck's initial condition (calcite): the "initial" water everywhere, the "pulse" water in
 * the cells of the centre region. The tracer case: the initial water, its tracer the volume
 * average of the pulse's over the part of each cell inside the centre cube (exact on any grid,
 * for the erf solution). Batch: the batch water everywhere. The unknowns are ln m; then every
 * cell's activity coefficients are put in equilibrium with its water. */
static void initial_state(run *r, problem_case which)
{
    const grid *g = &r->g;
    water background = water_background(&r->chem), pulse = water_acidic_pulse(&r->chem);
    if (which == CASE_BATCH)
        background = water_batch(&r->chem);
    double tracer_low = exp(background.ln_m[TRACER]), tracer_high = exp(pulse.ln_m[TRACER]);
    for (int k = 0; k < g->mz; k++)
        for (int j = 0; j < g->my; j++)
            for (int i = 0; i < g->mx; i++) {
                double lo[3] = {(g->i0 + i) * g->width[0], (g->j0 + j) * g->width[1],
                                (g->k0 + k) * g->width[2]};
                bool inside = which == CASE_CALCITE;
                double fraction = 1.0;
                for (int a = 0; a < 3; a++) {
                    inside = inside && in_pulse(lo[a], lo[a] + g->width[a]);
                    fraction *= pulse_fraction(lo[a], lo[a] + g->width[a]);
                }
                double *u = r->x + NS * grid_cell(g, i, j, k);
                memcpy(u, inside ? pulse.ln_m : background.ln_m, NS * sizeof(double));
                if (which == CASE_TRACER)
                    u[TRACER] = log(fraction * tracer_high + (1.0 - fraction) * tracer_low);
            }
    transport_update(&r->t, r->x);
    transport_equilibrate_activities(&r->t);
}

/* ---- the run -------------------------------------------------------------------------- */

static options parse_options(int argc, char **argv)
{
    options o = {0};
    esm_cli *cli = esm_cli_begin(
        argc, argv,
        "PFLOTRAN proxy: implicit reactive transport (the calcite deck's chemistry: 4 primary\n"
        "and 5 secondary species, activity coefficients, kinetic calcite, ln m unknowns) on a\n"
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
                              "Krylov solver (default: the calcite deck's LINEAR_SOLVER TRANSPORT "
                              "KSP_TYPE GMRES; the other cases PFLOTRAN's default, BiCGStab)");
    if (o.which == CASE_CALCITE && !esm_cli_given(cli, "solver"))
        o.solver = "gmres"; /* the deck's (docs/pflotran.md, "The deck's linear solver") */
    o.pc = esm_cli_choice(cli, "pc", "bjacobi,none",
                          "preconditioner: bjacobi (block Jacobi + ILU(0), PETSc's default) or "
                          "none (PCNONE, the seed's deck until 2011-10: docs/pflotran.md)");
    o.library = esm_cli_choice(cli, "library", "native,petsc",
                               "linear solves by this program or by the system's PETSc");
    o.petsc = esm_cli_choice(
        cli, "petsc", "vpscat,sf",
        "PETSc era of the ghost updates and reductions: vpscat (<= 3.12, MPI_Start and "
        "MPI_Waitany per message) or sf (3.13+ PetscSF: MPI_Startall/MPI_Waitall, no MPI on "
        "one rank)");
    esm_scatter_era era = !strcmp(o.petsc, "sf") ? ESM_SCATTER_SF : ESM_SCATTER_VPSCAT;
    o.time_stepping = esm_cli_choice(
        cli, "time-stepping", "fixed,deck",
        "fixed: --steps steps of --dt; deck: PFLOTRAN's step control on the calcite deck's TIME "
        "block (1e-6 y first, growing by TS_ACCELERATION 8's factors to at most 1 y, matched to "
        "the yearly output, until 10 y or --steps)");
    o.deck_steps = !strcmp(o.time_stepping, "deck");
    o.dt = esm_cli_real(cli, "dt", default_dt[o.which], 1e-6, 1e12,
                        "time step, s (--time-stepping fixed)");
    bool dt_given = esm_cli_given(cli, "dt");
    o.rate_constant = esm_cli_real(cli, "rate-constant", o.which == CASE_TRACER ? 0 : 1e-8, 0, 1,
                                   "calcite rate constant, mol/m^2/s");
    o.ksp = (krylov_settings){
        .method = !strcmp(o.solver, "gmres") ? SOLVER_GMRES : SOLVER_BICGSTAB,
        .pc = !strcmp(o.pc, "none") ? PC_NONE : PC_BJACOBI,
        .rtol = esm_cli_real(cli, "ksp-rtol", 1e-5, 1e-15, 0.5, "Krylov relative tolerance"),
        .atol = 1e-50,
        .dtol = 1e5,
        .max_iterations = 10000,
        .restart = (int)esm_cli_int(cli, "restart", 30, 1, 1000, "GMRES restart length"),
        .era = era,
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
        "runs need counts: default the deck's recorded history, else 2)");
    o.ksp.fixed_iterations = (int)esm_cli_int(
        cli, "krylov-iterations", folded ? FOLDED_KRYLOV_ITERATIONS : 0, folded, 100000,
        "Krylov iterations per Newton iteration, fixed, no convergence test (0: until "
        "converged; folded runs need counts: default the deck's recorded history, else 15)");
    bool counts_given =
        esm_cli_given(cli, "newton-iterations") || esm_cli_given(cli, "krylov-iterations");
    o.history = folded && !counts_given ? history_for(cli, &o) : NULL;
    o.iterations_from = !folded        ? "convergence"
                        : counts_given ? "command line"
                        : o.history    ? "history"
                        : strcmp(o.pc, "bjacobi")
                            ? "constant (no history for --pc none: the histories are bjacobi's)"
                            : "constant (no history for these settings)";
    if (o.history)
        o.newton.fixed_iterations = o.ksp.fixed_iterations = 0;
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
    o.jacobian_check = esm_cli_choice(
        cli, "jacobian-check", "off,fd",
        "fd: after the steps, the Jacobian against central differences of the residual "
        "(one rank; the verdict needs 1e-6)");
    o.stream_mb = esm_cli_real(cli, "stream-mb", simulated ? 0 : 64, 0, 65536,
                               "STREAM triad array size per rank, MiB (0: skip; under SMPI 0)");
    esm_cli_end(cli);
    if (o.deck_steps && o.which != CASE_CALCITE)
        esm_fail("--time-stepping deck: the deck's time stepping is the calcite case's (its "
                 "verification of %s needs fixed steps): use --case calcite or --time-stepping "
                 "fixed",
                 o.case_name);
    if (o.deck_steps && dt_given)
        esm_fail("--dt %g: the deck's time stepping chooses each step's size: leave --dt out or "
                 "use --time-stepping fixed",
                 o.dt);
    if (o.deck_steps)
        o.dt = time_stepper_deck().dt; /* the first step */
    if (folded && o.stream_mb > 0)
        esm_fail("--stream-mb %g: a folded run cannot measure STREAM (every simulated rank "
                 "would hold its own arrays): leave it 0",
                 o.stream_mb);
    if (!strcmp(o.jacobian_check, "fd") && (esm_ranks() > 1 || folded))
        esm_fail("--jacobian-check fd: the finite differences run on one rank, unfolded: run "
                 "it with 1 rank and no ESM_FOLD");
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
    *r = (run){.newton = o->newton, .pc = o->ksp.pc};
    r->step = (esm_timer){.name = "step"}, r->residual = (esm_timer){.name = "residual"};
    r->jacobian = (esm_timer){.name = "jacobian"}, r->factor = (esm_timer){.name = "pc_setup"};
    r->product = (esm_timer){.name = "matvec"}, r->precondition = (esm_timer){.name = "pc_apply"};
    r->dots = (esm_timer){.name = "dots"}, r->linear = (esm_timer){.name = "linear_solve"};
    grid_create(&r->g, o->n[0], o->n[1], o->n[2], o->p[0], o->p[1], o->p[2], o->ksp.era);
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
    r->x_old = o->deck_steps ? esm_field_alloc(n * sizeof(double)) : NULL;
    r->f = esm_field_alloc(n * sizeof(double));
    r->dx = esm_field_alloc(n * sizeof(double));
    r->rhs = esm_field_alloc(n * sizeof(double));
    r->rate = esm_field_alloc(r->g.ncells * sizeof(double));
    r->dissolved = esm_field_alloc(r->g.ncells * sizeof(double));
    initial_state(r, o->which);
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
    if (r->x_old)
        esm_field_free(r->x_old);
    esm_field_free(r->rhs), esm_field_free(r->rate), esm_field_free(r->dissolved);
}

/* Calcite reacted in each cell over a step of dt, for the mass balance. */
static void calcite_reacted(run *r, double dt)
{
    static const esm_kernel kernel = {.name = "pflotran.reacted", .flops = 2};
    if (esm_kernel_begin(&kernel, (double)r->g.ncells, 3.0 * 8 * r->g.ncells)) {
        for (long c = 0; c < r->g.ncells; c++)
            r->dissolved[c] += dt * r->rate[c];
        esm_kernel_end(&kernel);
    }
}

/* The iterate back to the step's start (x_old) after a failed Newton solve, or x_old from it. */
static void copy_state(run *r, double *to, const double *from)
{
    static const esm_kernel kernel = {.name = "pflotran.copy_state", .flops = 0};
    const long n = r->g.ncells * NS;
    if (esm_kernel_begin(&kernel, (double)n, 2.0 * 8 * n)) {
        memcpy(to, from, n * sizeof(double));
        esm_kernel_end(&kernel);
    }
}

/* One step's Newton solve; under the deck's time stepping a failed solve (never a folded one,
 * whose values mean nothing) is cut and solved again from the step's start (timestep.c). The
 * solve that ends the step (converged, or the last) is returned; every solve's work counts. */
static newton_outcome step_solve(run *r, const options *o, record *h, long step)
{
    if (o->deck_steps)
        copy_state(r, r->x_old, r->x);
    for (;;) {
        if (o->history) { /* a folded run follows the step's recorded counts */
            r->newton.fixed_iterations =
                esm_fold_history_step(o->history, step, r->history_step, HISTORY - 1);
            r->krylov_counts = r->history_step;
        }
        esm_phase_begin("newton");
        newton_outcome n = newton_solve(r);
        esm_phase_end("newton");
        h->newton += n.iterations;
        h->linear += n.linear_iterations;
        h->linear_failures += n.linear_failed;
        h->newton_most = n.iterations > h->newton_most ? n.iterations : h->newton_most;
        if (!o->deck_steps || n.converged || r->newton.fixed_iterations ||
            !time_stepper_cut(&h->clock))
            return n;
        esm_say("step %3ld  cut: newton %d (%s), dt now %.4e s\n", step + 1, n.iterations, n.reason,
                h->clock.dt);
        transport_set_dt(&r->t, h->clock.dt);
        copy_state(r, r->x, r->x_old);
        transport_update(&r->t, r->x);
    }
}

/* The timed backward-Euler steps, each solved by Newton (newton.c): --steps of --dt, or the
 * deck's time stepping (timestep.c) until its final time or --steps. */
static record time_steps(run *r, const options *o)
{
    record h = {.times = esm_calloc(o->steps, sizeof(double)),
                .ca_change = esm_calloc(o->steps, sizeof(double))};
    h.clock = o->deck_steps ? time_stepper_deck() : (time_stepper){.dt = o->dt};
    double ca_start = r->t.total[CA];
    esm_barrier();
    double started = esm_wtime();
    h.before = *esm_counts_mine();
    esm_timed_begin();
    for (long step = 0; step < o->steps; step++) {
        esm_timer_start(&r->step);
        double dt = o->deck_steps ? time_stepper_begin(&h.clock) : o->dt;
        transport_set_dt(&r->t, dt);
        transport_begin_step(&r->t);
        newton_outcome n = step_solve(r, o, &h, step);
        dt = r->t.dt; /* as cut */
        transport_rates(&r->t, r->rate);
        calcite_reacted(r, dt);
        esm_timer_stop(&r->step);
        if (step == 0)
            h.first = n;
        h.final_residuals += n.residual[n.iterations < HISTORY ? n.iterations : HISTORY - 1];
        h.failed_steps += !n.converged;
        esm_fold_history_append(&h.iteration_history, n.linear, n.iterations);
        /* a deck step that failed after all its cuts ends the run (PFLOTRAN stops); a folded
         * run's "convergence" means nothing */
        bool failed = o->deck_steps && !n.converged && !r->newton.fixed_iterations;
        if (!failed)
            time_stepper_end(&h.clock, n.iterations);
        if (!o->deck_steps)
            h.clock.time = (step + 1) * o->dt; /* exact multiples */
        h.steps = step + 1;
        h.times[step] = h.clock.time;
        h.ca_change[step] = r->t.total[CA] - ca_start; /* total Ca++ gained by cell 0 */
        esm_say("step %3ld  t %.4e s  dt %.4e s  newton %2d (%s)  linear %4ld  |F| %.3e -> "
                "%.3e\n",
                step + 1, h.times[step], dt, n.iterations, n.reason, n.linear_iterations,
                n.residual[0], n.residual[n.iterations < HISTORY ? n.iterations : HISTORY - 1]);
        if (o->deck_steps && (failed || time_stepper_done(&h.clock)))
            break; /* a step that failed after all its cuts, or the final time */
    }
    esm_timed_end();
    h.after = *esm_counts_mine();
    h.wall = esm_wtime() - started;
    esm_global_max(&h.wall, 1);
    return h;
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
    esm_result *result = esm_result_new("pflotran", o.deck->name, h.steps);
    verify(&r, &o, &h, start, result);
    report(&r, &o, &h, stream, result);
    int status = esm_result_finish(result);
    tear_down(&r);
    free(h.times), free(h.ca_change), free(h.iteration_history);
    esm_exit(status);
}
