/* pop.h: the POP proxy's grid, barotropic operator and tracer state, shared by its files.
 *
 * Grid: a global longitude-latitude B-grid from 80S to 84N, periodic in longitude, with the
 * analytic continents and bathymetry of esm_geo.h. T-points at cell centres carry tracers and
 * the surface height; U-points at the north-east corner of each T-cell carry velocities
 * (POP's convention). KMT(i,j) = active levels of a column (0 on land). */
#ifndef POP_H
#define POP_H
#include "esm.h"

enum { POP_HALO = 1 };

typedef struct pop_grid {
    esm_decomp d;
    esm_layout l2;            /* 2D fields: [block][j][i], halo 1 */
    esm_layout l3; /* tracers: [block][j][k][i], halo 1 (a row of columns contiguous) */
    int nz;
    double lat_south, lat_north, dlon, dlat; /* degrees */
    double *dz, *zc, *zw; /* level thickness, centre depth, bottom depth (m) */
    /* per local block, over the block and its halo (1D in j where only latitude matters) */
    const unsigned char *kmt_global; /* KMT of every column (nx * ny bytes; shared when folded) */
    double *kmt; /* l2 layout; a double, so kernels compare it in vector registers */
    double *dxt, *dxu; /* per row j (index j + 1): east-west width at T and U latitude */
    double dy; /* north-south spacing (m) */
    double dt; /* time step (s) */
} pop_grid;

/* The barotropic operator: 9 points, POP's four coefficient arrays (l2 layout). */
typedef struct pop_operator {
    double *a0, *an, *ae, *ane;
    double *dinv; /* 1 / a0: the diagonal preconditioner */
} pop_operator;

void pop_grid_create(pop_grid *g, int nx, int ny, int nz, int bx, int by, esm_distribution dist,
                     esm_block_choice choice);
int pop_kmt_at(const pop_grid *g, int gi, int gj); /* any global index; 0 off the grid */
int pop_wrap_i(const pop_grid *g, int gi); /* into 0 .. nx-1 */
double pop_lon(const pop_grid *g, int gi);
double pop_lat(const pop_grid *g, double gj); /* gj may be fractional: j + 0.5 is a U row */
void pop_operator_create(pop_operator *a, const pop_grid *g);

/* y = A x on the interior of every local block (x's halo must be current). */
void pop_operator_apply(const pop_operator *a, const pop_grid *g, const double *x, double *y);

/* The manufactured surface height at step `step` (zero on land), over blocks and halos. */
void pop_manufactured(const pop_grid *g, int step, double *x);

/* Two tracers (temperature, salinity) advected by a prescribed, divergence-free 3D flow and
 * diffused (explicit Laplacian across, implicit down the columns). */
typedef struct pop_tracers {
    double *t, *s, *t_next, *s_next; /* l3 layout */
    double *utr, *vtr, *wtr; /* volume transports (m^3/s) through east, north, bottom faces */
    double kappa_h, kappa_v; /* diffusivities (m^2/s) */
    double courant; /* largest advective Courant number */
    esm_halo *halo; /* t and s together: one message per neighbour */
    double *scratch;
} pop_tracers;

void pop_tracers_create(pop_tracers *tr, const pop_grid *g, esm_halo_engine engine);
/* One step: halo update, then advection-diffusion of both tracers. */
void pop_tracers_step(pop_tracers *tr, const pop_grid *g, esm_timer *compute, esm_timer *halo);
/* Bytes the step's kernel moves (STREAM convention: reads plus writes). */
double pop_tracers_bytes(const pop_grid *g);
/* Global tracer content sum(T vol) and range over active cells (collective). */
void pop_tracers_mass(const pop_tracers *tr, const pop_grid *g, double mass[2]);
void pop_tracers_range(const pop_tracers *tr, const pop_grid *g, double low[2], double high[2]);
/* The recorded histories (fold_history.c, written by scripts/fold_history.py): each solve's
 * iterations, one a step, warm-up included. */
extern const esm_fold_history pop_fold_histories[];
extern const int pop_fold_history_count;
#endif
