/* barotropic.h: the POP proxy's barotropic solvers and the two layouts they run on.
 *
 * A solver sees vectors of n doubles in a "space" that knows how to refresh halo (or ghost)
 * values, apply the 9-point operator, and form global dot products. Two spaces:
 *
 *   blocks      POP 2's layout: each block with a halo ring, land points included;
 *   compressed  POPperf's layout: the rank's ocean points only, in a 1D vector (block by
 *               block, row by row), neighbours by index, ghost values from other ranks
 *               after them.
 *
 * Dot products are summed block by block in a fixed order and combined exactly (esm_sum.h),
 * so both spaces, and every rank count and distribution, give the same bits. */
#ifndef BAROTROPIC_H
#define BAROTROPIC_H
#include "pop.h"

typedef struct space space;
struct space {
    long n;                  /* doubles per vector, halo/ghost slots included */
    long owned;              /* points this rank owns (interior points of its blocks) */
    double *dinv;            /* the diagonal preconditioner; 1 off the ocean */
    void (*halo)(space *s, double *x);
    void (*apply)(space *s, const double *x, double *y);  /* owned points of y */
    /* out[k] = global sum over owned points of a[k] * b[k], k < count: one allreduce */
    void (*dots)(space *s, int count, const double *const a[], const double *const b[],
                 double *out);
    void (*from_blocks)(space *s, const double *field, double *v);  /* l2 field -> vector */
    void (*to_blocks)(space *s, const double *v, double *field);    /* vector -> l2 field */
    double apply_bytes, dot_bytes; /* bytes moved by one apply, one dot product pair */
    esm_timer compute, halo_time, reduce;
    double bytes;            /* kernel bytes moved so far (the model, for the roofline) */
    void *data;
};

space *space_blocks(const pop_grid *g, const pop_operator *a, esm_halo_engine engine);
space *space_compressed(const pop_grid *g, const pop_operator *a, esm_halo_engine engine);

typedef enum { SOLVER_CHRONGEAR, SOLVER_PCG, SOLVER_PCSI } solver_kind;

typedef struct solver {
    solver_kind kind;
    double tolerance;        /* converged when |r| <= tolerance |b| */
    int max_iterations, check_every;
    int iterations;          /* > 0: exactly this many per solve (folded runs), checks ignored */
    int sample;              /* > 0 (folded, fixed count): simulate this many iterations of a
                              * solve, charge the rest at their simulated time (esm_fold_skip) */
    double nu, mu;           /* P-CSI: bounds of the preconditioned operator's spectrum */
    int lanczos_steps;
    double *r, *z, *s, *q, *az, *dx; /* work vectors */
} solver;

typedef struct solve_stats {
    int iterations, checks;
    int simulated;           /* iterations simulated (sampled solves: fewer than iterations) */
    double started;          /* simulated time at the first iteration */
    double residual;         /* |r| / |b| at the last check */
    int converged;
} solve_stats;

solver *solver_create(solver_kind kind, space *s, double tolerance, int max_iterations,
                      int check_every, int iterations, int sample);
/* P-CSI set-up: `steps` of Lanczos on the preconditioned operator from `start_vector` give
 * [nu, mu]. Collective. */
void solver_bounds(solver *sv, space *s, int steps, const double *start_vector);
/* Solve A x = b from the guess in x. Collective. */
solve_stats solver_solve(solver *sv, space *s, const double *b, double *x);
/* The next solves make exactly `iterations` (> 0), sampled as solver_create's `sample` says. */
void solver_fix_iterations(solver *sv, int iterations, int sample);
#endif
