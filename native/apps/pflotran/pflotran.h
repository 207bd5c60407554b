/* pflotran.h: what the parts of the PFLOTRAN proxy share.
 *
 *   grid.c       the structured 3D grid cut into boxes, one per rank, as a PETSc DMDA cuts it
 *                (any rank count, remainders spread), and the ghost plan (esm_scatter) of the
 *                4 unknowns per cell
 *   chemistry.c  the deck's chemistry: speciation (secondary species, totals and their
 *                derivatives), activity coefficients, the calcite rate, the deck's waters,
 *                and the batch reaction's ODE solution
 *   transport.c  backward-Euler residual and Jacobian of diffusion + reaction of the component
 *                totals, unknowns ln m (7-point stencil)
 *   blockmat.c   the Jacobian stored as 4x4 blocks (PETSc's BAIJ, bs = 4): product with ghost
 *                exchange overlapped, block ILU(0) of each rank's part (block Jacobi) or none
 *   krylov.c     GMRES(30) and BiCGStab, left preconditioned, PETSc's algorithms
 *   petsc_ksp.c  the same linear solve by PETSc's KSP, as a cross-check (when built with it)
 *   newton.c     Newton's method (SNES newtonls), the update truncated as PFLOTRAN does
 *   timestep.c   the deck's time stepping (PFLOTRAN's reactive-transport time-step control)
 *   verify.c     the verification of each --case: conservation, erf, the batch ODE; the
 *                Jacobian against finite differences
 *   report.c     the result line: performance, solver work, communication, kernels
 *   pflotran.c   the driver: decks, command line, initial state, time steps */
#ifndef PFLOTRAN_H
#define PFLOTRAN_H
#include <stdbool.h>
#include "esm.h"

/* The 4 primary species, in this order in every cell's block of unknowns. The H+ unknown is
 * ln[H+] (PFLOTRAN's log formulation), the others are concentrations (mol/m^3 of water). */
enum { CA, H, HCO3, TRACER, NS };
extern const char *const species_name[NS];

/* ---- grid ---------------------------------------------------------------------------- */

/* Faces of a box, in the order of the stencil's off-diagonal blocks. */
enum { WEST, EAST, SOUTH, NORTH, BOTTOM, TOP, FACES };

typedef struct grid {
    int nx, ny, nz;        /* global cells; the domain is the unit cube */
    int px, py, pz;        /* ranks along x, y, z */
    int ix, iy, iz;        /* this rank's place */
    int mx, my, mz;        /* local cells along x, y, z (one more on the first ranks of a
                              direction whose cells do not divide evenly) */
    long ncells;           /* mx my mz */
    int i0, j0, k0;        /* global index of the first local cell */
    double width[3];       /* cell sizes dx, dy, dz (m) */
    int neighbour[FACES];  /* rank across each face, or -1 at the domain's edge */
    long ghost_at[FACES];  /* first ghost cell of each face in the ghost vector */
    long nghosts;          /* ghost cells in all */
    esm_scatter_era era;   /* PETSc's ghost updates and reductions: <= 3.12 or 3.13+ */
    esm_scatter *scatter;  /* ghost update of NS unknowns per cell (DMGlobalToLocal) */
    esm_scatter *matrix_scatter; /* the same plan for the matrix product (MatMult's); under
                                    vpscat the same object */
} grid;

/* The px x py x pz rank grid for `ranks` ranks, as PETSc's DMDA chooses it: those given (non
 * zero) kept, the others chosen "squarish" from the grid's shape (DMSetUp_DA_3D). A rank grid
 * that does not multiply out or has more ranks than cells along a direction ends the run with
 * a message naming the fix. */
void grid_rank_grid(int ranks, int nx, int ny, int nz, int *px, int *py, int *pz);
/* Cut nx x ny x nz over the ranks on that rank grid (px py pz: 0 chosen), each direction's
 * cells split as PetscSplitOwnership splits them; ghost updates of PETSc's `era`.
 * Collective. */
void grid_create(grid *g, int nx, int ny, int nz, int px, int py, int pz, esm_scatter_era era);
void grid_free(grid *g);

/* Local cell index of (i, j, k), 0 <= i < mx ... */
static inline long grid_cell(const grid *g, int i, int j, int k)
{
    return i + (long)g->mx * (j + (long)g->my * k);
}

/* Index of local cell (i, j, k) on face f (which must lie on it) in that face's ghost run. */
long grid_face_index(const grid *g, int face, int i, int j, int k);

/* Global cell number of local cell c (x fastest); the rank owning global cell (gi, gj, gk)
 * and the cell's local index there; the cells owned by the ranks before `rank` (the first
 * block row of `rank` in PETSc's numbering). */
long grid_global_cell(const grid *g, long c);
int grid_owner(const grid *g, int gi, int gj, int gk, long *local);
long grid_cells_before(const grid *g, int rank);

/* ---- chemistry ----------------------------------------------------------------------- */

/* The deck's secondary species (chemistry.c), and the activity coefficients of a cell: the
 * primaries' then the secondaries' ln gamma. */
enum { NSEC = 5, NGAMMA = NS + NSEC, ACTIVITY_PASSES = 40 };
extern const char *const secondary_name[NSEC];

typedef struct chemistry {
    double rate_constant;   /* k, mol per m^2 of calcite per s */
    double area;            /* specific surface area, m^2 per m^3 of rock */
    double ln_K;            /* Calcite = -H+ + Ca++ + HCO3-, ln K (molal) */
    double ln_K_secondary[NSEC];
    double porosity;
    double diffusion;       /* m^2/s, the same for every species */
    double density;         /* of water, kg/m^3: molal to mol per m^3 of water */
    double debye_a, debye_b, debye_bdot; /* Debye-Hueckel A, B (1/Angstrom), B-dot at 25 C */
} chemistry;

/* A water: ln of the primary molalities (mol/kg) and the activity coefficients it was made
 * with (ln gamma, in equilibrium with it). */
typedef struct water {
    double ln_m[NS];
    double ln_gamma[NGAMMA];
} water;

chemistry chemistry_calcite(double rate_constant);
water water_background(const chemistry *chem); /* the deck's CONSTRAINT initial */
water water_acidic_pulse(const chemistry *chem); /* the deck's CONSTRAINT pulse */
water water_batch(const chemistry *chem);        /* the background, calcite half saturated */

/* Totals T_j = m_j + sum_s nu_sj m_s (mol/kg) and dT_j/d ln m_k (NS x NS, row-major) at ln m
 * with the activity coefficients ln gamma held. */
void speciate(const chemistry *chem, const double *ln_m, const double *lngam, double *total,
              double *dtotal);
/* The activity coefficients from the ionic strength of ln m and the secondaries it gives with
 * the coefficients in lngam (PFLOTRAN's LAG: one pass), into lngam. */
void activity_update(const chemistry *chem, const double *ln_m, double *lngam);
/* From gamma = 1, passes until one changes no bit (ACTIVITY_PASSES at most): the
 * coefficients in equilibrium with ln m, the same bits for the same ln m. */
void activity_equilibrate(const chemistry *chem, const double *ln_m, double *lngam);

/* The molalities of a water's species (primaries, then secondaries: NGAMMA) into m; returns
 * its ionic strength (mol/kg). */
double water_species(const chemistry *chem, const water *w, double *m);

/* Calcite dissolution rate R (mol per m^3 of rock per s; negative: precipitation) and its
 * derivatives by ln m of each primary. */
typedef struct rate {
    double r, d[NS];
} rate;
rate calcite_rate(const chemistry *chem, const double *ln_m, const double *lngam);
const double *calcite_stoichiometry(void); /* nu of Ca++, H+, HCO3-, Tracer in Calcite */

/* Flops, counted from the code (exp, log, sqrt one each; a sign change none; zero entries of
 * the stoichiometry too, as the loops do them): the secondaries (ln a 4; per secondary 1, 4
 * multiply-adds, exp), speciate (the secondaries, exp of each primary, per secondary and
 * primary 2 + 4 multiply-adds), calcite_rate (ln Q 3 per primary, 5, each derivative 2),
 * activity_update (the secondaries, I: 4 per primary, 3 per secondary, 2; ln gamma 11 for
 * each of the 6 charged species, none for the 3 neutral ones). */
enum {
    SECONDARIES_FLOPS = NS + NSEC * (1 + 2 * NS + 1),         /* 54 */
    SPECIATE_FLOPS = SECONDARIES_FLOPS + NS + NSEC * NS * (2 + 2 * NS), /* 258 */
    CALCITE_RATE_FLOPS = 3 * NS + 5 + 2 * NS,                 /* 25 */
    ACTIVITY_FLOPS = SECONDARIES_FLOPS + 4 * NS + 3 * NSEC + 2 + 6 * 11, /* 153 */
};

/* The batch reaction ODE (no transport) from `start`, the activity coefficients in
 * equilibrium at every instant: the extent of dissolution x(t) (mol/kg of water) for the times
 * t[0..n-1], by RK4 with steps far below the reaction's time scale. */
void batch_extent(const chemistry *chem, water start, const double *t, int n, double *extent);

/* ---- transport (backward Euler in time, finite volumes in space) --------------------- */

typedef struct block_matrix block_matrix;

typedef struct transport {
    const grid *g;
    const chemistry *chem;
    double dt;
    double coupling[3];  /* dt D / dx^2 along x, y, z */
    const double *ln_conc; /* ln m of the iterate (the unknowns x), NS per cell */
    double *conc;        /* m, the primary molalities of the iterate, NS per cell */
    double *ln_ghost;    /* ln m of the ghost cells (the iterate's ghost update) */
    double *lngam, *lngam_ghost;   /* ln gamma, NGAMMA per cell, held through a step */
    double *total, *total_ghost;   /* component totals T (mol/kg), NS per cell */
    double *dtotal, *dtotal_ghost; /* dT/d ln m, NS x NS per cell */
    double *total_old;   /* T at the start of the step */
} transport;

void transport_create(transport *t, const grid *g, const chemistry *chem, double dt);
void transport_free(transport *t);
/* The step's size (backward Euler's dt), s. */
void transport_set_dt(transport *t, double dt);
/* Molalities and totals of the iterate x (ln m, NS per cell), ghosts included (one scatter).
 * x stays the iterate's storage. */
void transport_update(transport *t, const double *x);
/* The activity coefficients in equilibrium with the iterate, from gamma = 1 (the initial
 * state: every cell and ghost alike). */
void transport_equilibrate_activities(transport *t);
/* Start a step: the iterate's totals become the old ones, then the activity coefficients are
 * updated (PFLOTRAN's LAG, once per time step) and the totals with them. */
void transport_begin_step(transport *t);
/* F(x) for the iterate last given to transport_update. */
void transport_residual(const transport *t, double *f);
/* dF/dx into A (every block of every cell). */
void transport_jacobian(const transport *t, block_matrix *A);
/* The local reaction rate R of each cell for the iterate (mol/m^3 rock/s). */
void transport_rates(const transport *t, double *r);

/* ---- block matrix -------------------------------------------------------------------- */

enum { DIAGONAL = FACES, BLOCKS = FACES + 1, BS = NS, BLOCK_SIZE = NS * NS };

struct block_matrix {
    const grid *g;
    double *block;   /* [ncells][BLOCKS][BLOCK_SIZE], row-major blocks: faces, then diagonal */
    double *lower;   /* ILU(0): L blocks towards WEST, SOUTH, BOTTOM: [ncells][3][BLOCK_SIZE] */
    double *inverse; /* ILU(0): inverted pivot blocks [ncells][BLOCK_SIZE] */
    double *ghost;   /* ghost values for the product */
    esm_timer *product_timer, *factor_timer, *solve_timer;
};

void block_matrix_create(block_matrix *A, const grid *g);
void block_matrix_free(block_matrix *A);
/* y = A x, the ghost exchange overlapped with the local part (MatMult_MPIBAIJ). Collective. */
void block_matrix_multiply(block_matrix *A, const double *x, double *y);
/* The preconditioner (--pc): block Jacobi + ILU(0), PETSc's default, or PCNONE (the Krylov
 * solver on the unpreconditioned operator; PETSc's PCApply_None copies the vector). */
typedef enum { PC_BJACOBI, PC_NONE } preconditioner;
/* Set up (bjacobi: factor; none: nothing) and apply z = B r, with A's timers. */
void preconditioner_setup(block_matrix *A, preconditioner pc);
void preconditioner_apply(const block_matrix *A, preconditioner pc, const double *r, double *z);
/* Bytes one application moves per cell. */
double preconditioner_apply_bytes(preconditioner pc);

/* Block ILU(0) of this rank's diagonal part, natural order (PCBJACOBI + PCILU). */
void block_ilu_factor(block_matrix *A);
/* z = (LU)^-1 r: forward and backward block substitution. */
void block_ilu_solve(const block_matrix *A, const double *r, double *z);
/* Bytes one product, one factor solve, one factorisation read and write per cell (for
 * bandwidth figures and the node model). */
double block_matrix_product_bytes(void);
double block_ilu_solve_bytes(void);
double block_ilu_factor_bytes(void);

/* ---- Krylov solvers ------------------------------------------------------------------ */

typedef enum { SOLVER_GMRES, SOLVER_BICGSTAB } krylov_method;

typedef struct krylov_settings {
    krylov_method method;
    preconditioner pc;
    double rtol, atol, dtol;
    int max_iterations, restart;
    int fixed_iterations;   /* > 0: exactly this many, no convergence or breakdown test (a
                               folded run's values mean nothing: esm_fold.h) */
    esm_scatter_era era;    /* PETSc's reductions: under sf none on one rank */
} krylov_settings;

typedef struct krylov_outcome {
    int iterations;
    bool converged;
    const char *reason;     /* "rtol", "atol", "max_it", "breakdown", "diverged", "fixed" */
    double rnorm0, rnorm;   /* preconditioned residual norms, first and last (PC_NONE: true) */
} krylov_outcome;

typedef struct krylov krylov;
krylov *krylov_create(long n, krylov_settings settings, esm_timer *dots_timer);
void krylov_free(krylov *k);
/* Solve A x = b with x starting from 0, preconditioned on the left by settings.pc. */
krylov_outcome krylov_solve(krylov *k, block_matrix *A, const double *b, double *x);
/* The next solves make exactly `iterations` (> 0), as settings.fixed_iterations. */
void krylov_fix_iterations(krylov *k, int iterations);

/* ---- PETSc cross-check --------------------------------------------------------------- */

bool petsc_built(void);       /* was this executable built with PETSc? */
void petsc_start(void);
void petsc_stop(void);
typedef struct petsc_solver petsc_solver;
petsc_solver *petsc_solver_create(const grid *g, krylov_settings settings);
krylov_outcome petsc_solve(petsc_solver *p, const block_matrix *A, const double *b, double *x);
void petsc_solver_free(petsc_solver *p);

/* ---- the deck's time stepping (timestep.c) ------------------------------------------- */

typedef struct time_stepper {
    double dt, dt_max, output_period, final_time; /* s: the next step's size; the deck's */
    int acceleration;                 /* TS_ACCELERATION */
    double time;                      /* reached, s */
    long steps, cuts;                 /* steps taken; cuts in all */
    double dt_first, dt_last, dt_largest; /* of the steps taken */
    /* PFLOTRAN's stepper state: the size before a waypoint matched it, whether the next step
     * reverts to it, whether this step was cut, its cuts, steps held constant since a cut */
    double dt_before_match;
    bool revert, cut;
    int cuts_this_step, constant_steps;
} time_stepper;

/* The calcite deck's TIME block (1e-6 y first, at most 1 y, 10 y in all), its output every
 * year (waypoints) and TS_ACCELERATION 8. */
time_stepper time_stepper_deck(void);
/* The next step's size: the step held, limited, matched to the next waypoint. */
double time_stepper_begin(time_stepper *s);
/* The step's Newton solve failed: halve it (true), or false when the cuts are exhausted. */
bool time_stepper_cut(time_stepper *s);
/* The step converged with `newton_iterations` in its last solve: advance the time, choose the
 * next step's size. */
void time_stepper_end(time_stepper *s, int newton_iterations);
/* Has the final time been reached? */
bool time_stepper_done(const time_stepper *s);

/* ---- the run: what the driver (pflotran.c), Newton (newton.c), verification (verify.c) and
 * the result (report.c) share ------------------------------------------------------------ */

typedef enum { CASE_CALCITE, CASE_TRACER, CASE_BATCH } problem_case;

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
    int linear[HISTORY];      /* Krylov iterations of each Newton iteration */
} newton_outcome;

/* Everything one run holds. */
typedef struct run {
    grid g;
    chemistry chem;
    transport t;
    block_matrix A;
    krylov *ksp;
    petsc_solver *petsc;
    preconditioner pc;        /* the Krylov solver's (--pc) */
    newton_settings newton;
    const int *krylov_counts; /* following a recorded history: each Newton iteration's */
    int history_step[HISTORY]; /* the step's counts, from the history */
    double *x, *x_old, *f, *dx, *rhs, *rate, *dissolved; /* x_old: the step's start */
    esm_timer step, residual, jacobian, factor, product, precondition, dots, linear;
} run;

typedef struct options {
    const esm_deck *deck;
    long steps;
    const char *case_name, *solver, *pc, *library, *petsc, *jacobian_check, *time_stepping;
    problem_case which;
    bool deck_steps; /* --time-stepping deck: PFLOTRAN's step control (timestep.c) */
    double dt, rate_constant, stream_mb;
    krylov_settings ksp;
    newton_settings newton;
    int n[3], p[3]; /* cells and ranks along x, y, z (0: the deck's, chosen) */
    const esm_fold_history *history; /* a folded run's iteration counts, step by step */
    const char *iterations_from;     /* where a folded run's counts come from */
} options;

/* The recorded histories (fold_history.c, written by scripts/fold_history.py). */
extern const esm_fold_history pflotran_fold_histories[];
extern const int pflotran_fold_history_count;

/* What the time steps leave for verification and report. */
typedef struct record {
    long steps;               /* taken (fewer than --steps when the deck's final time comes) */
    long newton, linear, failed_steps, linear_failures;
    time_stepper clock;       /* the step sizes and time reached (fixed steps too) */
    double final_residuals;   /* sum over the steps of ||F|| at each Newton solve's end */
    int newton_most;
    newton_outcome first;     /* the first step's Newton solve */
    double *times, *ca_change; /* at the end of each step; Ca++ gained by cell 0 */
    double wall;              /* the time steps, slowest rank */
    esm_counts before, after; /* the core's counts at the start and end of the time steps */
    char *iteration_history;  /* each step's Krylov counts per Newton (esm_fold_history_append) */
} record;

typedef struct inventory {
    double calcium, carbon, protons, tracer; /* mol, dissolved + calcite reacted */
} inventory;

/* One backward-Euler step's Newton solve (SNES newtonls) from the iterate in r->x. */
newton_outcome newton_solve(run *r);
/* The order of convergence the residuals show: log(r_k+1 / r_k) / log(r_k / r_k-1) at the
 * last k whose r_k+1 is still well above round-off (floor), or 0 when too few iterations. */
double convergence_order(const double *residual, int iterations, double floor);

/* Total calcium, carbon, protons and tracer, dissolved + calcite reacted (collective). */
inventory inventories(const run *r);
/* The case's checks and their norms into the result (collective). */
void verify(run *r, const options *o, const record *h, inventory start, esm_result *result);
/* The largest difference between the Jacobian and central differences of the residual at the
 * iterate, over the columns of the cells on the grid's diagonal (one rank). */
double jacobian_check(run *r);
/* Performance, solver work, communication, and the kernels against STREAM (collective). */
void report(run *r, const options *o, const record *h, esm_stream stream, esm_result *result);
#endif
