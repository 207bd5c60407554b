/* POP proxy grid: geometry, levels, KMT, the 9-point barotropic operator, the manufactured
 * surface height. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "pop.h"

enum { RING = 2 }; /* KMT is kept over the block and 2 halo rings (operator corners) */
static const double EARTH_RADIUS = 6.371e6, GRAVITY = 9.806, DEPTH = 5500.0;

double pop_lon(const pop_grid *g, int gi)
{
    return (gi + 0.5) * g->dlon;
}
double pop_lat(const pop_grid *g, double gj)
{
    return g->lat_south + (gj + 0.5) * g->dlat;
}

/* Stretched levels: thin at the surface, thick at depth, DEPTH in all. */
static void make_levels(pop_grid *g)
{
    int nz = g->nz;
    g->dz = esm_calloc(nz, sizeof *g->dz);
    g->zc = esm_calloc(nz, sizeof *g->zc);
    g->zw = esm_calloc(nz, sizeof *g->zw);
    double total = 0;
    for (int k = 0; k < nz; k++) {
        double s = nz > 1 ? (double)k / (nz - 1) : 0;
        g->dz[k] = 1.0 + 24.0 * s * s;
        total += g->dz[k];
    }
    double bottom = 0;
    for (int k = 0; k < nz; k++) {
        g->dz[k] *= DEPTH / total;
        g->zc[k] = bottom + 0.5 * g->dz[k];
        bottom += g->dz[k];
        g->zw[k] = bottom;
    }
}

/* Active levels at a global point: levels whose bottom lies above the sea floor (>= 1 in the
 * ocean). Outside a closed edge: 0. */
int pop_wrap_i(const pop_grid *g, int gi)
{
    return (gi % g->d.nx + g->d.nx) % g->d.nx;
}

/* Active levels of a column: levels whose bottom lies above the sea floor (>= 1 in the
 * ocean), from the analytic depth. */
static int column_levels(const pop_grid *g, int gi, int gj)
{
    double depth = esm_geo_depth(pop_lon(g, gi), pop_lat(g, gj));
    if (depth <= 0)
        return 0;
    int k = 0;
    while (k < g->nz && g->zw[k] <= depth * 1.0000001)
        k++;
    return k > 0 ? k : 1;
}

int pop_kmt_at(const pop_grid *g, int gi, int gj)
{
    if (gj < 0 || gj >= g->d.ny)
        return 0;
    return g->kmt_global[pop_wrap_i(g, gi) + (long)g->d.nx * gj];
}

static bool is_ocean(int i, int j, const void *context)
{
    return pop_kmt_at(context, i, j) > 0;
}

/* KMT of every column, 1 byte each: the same on every rank (shared when folded). */
static void *kmt_of_grid(const void *context)
{
    const pop_grid *g = context;
    unsigned char *kmt = esm_calloc((size_t)g->d.nx * g->d.ny, 1);
    for (int gj = 0; gj < g->d.ny; gj++)
        for (int gi = 0; gi < g->d.nx; gi++)
            kmt[gi + (long)g->d.nx * gj] = (unsigned char)column_levels(g, gi, gj);
    return kmt;
}

void pop_grid_create(pop_grid *g, int nx, int ny, int nz, int bx, int by, esm_distribution dist,
                     esm_block_choice choice)
{
    *g = (pop_grid){.nz = nz, .lat_south = -80.0, .lat_north = 84.0};
    g->dlon = 360.0 / nx;
    g->dlat = (g->lat_north - g->lat_south) / ny;
    g->d.nx = nx; /* pop_kmt_at needs the grid size before the decomposition exists */
    g->d.ny = ny;
    make_levels(g);
    if (nz > 255)
        esm_fail("%d levels: use --levels 255 or fewer", nz);
    char key[64];
    snprintf(key, sizeof key, "pop.kmt.%dx%dx%d", nx, ny, nz);
    g->kmt_global = esm_shared(key, kmt_of_grid, g);
    esm_decomp_params p = {.nx = nx,
                           .ny = ny,
                           .bx = bx,
                           .by = by,
                           .periodic_x = true,
                           .distribution = dist,
                           .is_ocean = is_ocean,
                           .context = g,
                           .choice = choice,
                           .min_side = 2,
                           .shared_key = key};
    esm_decomp_create(&g->d, &p);
    g->l2 = esm_layout_levels_outer(&g->d, POP_HALO, 1);
    g->l3 = esm_layout_levels_inner(&g->d, POP_HALO, nz);
    g->dy = EARTH_RADIUS * g->dlat * M_PI / 180.0;
    g->dt = 3600.0 * sqrt(fmin(1.0, 100.0 / nx));

    /* KMT over each block and its halo, from global coordinates (no exchange needed) */
    long n2 = esm_layout_doubles(&g->l2, g->d.nlocal);
    g->kmt = esm_calloc(n2, sizeof *g->kmt);
    for (int lb = 0; lb < g->d.nlocal; lb++) {
        const esm_block *b = &g->d.block[g->d.local[lb]];
        for (int j = -POP_HALO; j < b->nj + POP_HALO; j++)
            for (int i = -POP_HALO; i < b->ni + POP_HALO; i++)
                g->kmt[esm_at(&g->l2, lb, i, j, 0)] = pop_kmt_at(g, b->i0 + i, b->j0 + j);
    }
    /* widths per global row, rows -1 .. ny (index gj + 1) */
    g->dxt = esm_calloc(ny + 2, sizeof *g->dxt);
    g->dxu = esm_calloc(ny + 2, sizeof *g->dxu);
    for (int gj = -1; gj <= ny; gj++) {
        double scale = EARTH_RADIUS * g->dlon * M_PI / 180.0;
        g->dxt[gj + 1] = scale * cos(pop_lat(g, gj) * M_PI / 180.0);
        g->dxu[gj + 1] = scale * cos(pop_lat(g, gj + 0.5) * M_PI / 180.0);
    }
}

/* Depth of the water column at a global T-point (from KMT), 0 on land. */
static double column_depth(const pop_grid *g, int gi, int gj)
{
    int k = pop_kmt_at(g, gi, gj);
    return k ? g->zw[k - 1] : 0.0;
}

/* The operator from the energy (1/2) sum_U H_U area_U |grad eta|^2 of B-grid gradients at
 * U-points, plus area_T / (g dt^2) on the diagonal (POP's implicit free surface). Corner c of
 * T-cell (i,j) is its north-east U-point; H_U is the shallowest of the 4 surrounding columns,
 * so any land neighbour makes the corner dry and decouples the land point. */
void pop_operator_create(pop_operator *a, const pop_grid *g)
{
    long n = esm_layout_doubles(&g->l2, g->d.nlocal);
    double **arrays[] = {&a->a0, &a->an, &a->ae, &a->ane, &a->dinv}; /* folded: shared */
    for (int k = 0; k < 5; k++)
        *arrays[k] = esm_field_alloc(n * sizeof(double));
    const double dy = g->dy;
    for (int lb = 0; lb < g->d.nlocal; lb++) {
        const esm_block *b = &g->d.block[g->d.local[lb]];
        /* corner weights over i, j in [-2, n] so every coefficient in [-1, n] can be formed */
        int cw = b->ni + 3, ch = b->nj + 3;
        double *diag = esm_calloc((size_t)cw * ch, sizeof *diag),
               *ew = esm_calloc((size_t)cw * ch, sizeof *ew);
        double *ns = esm_calloc((size_t)cw * ch, sizeof *ns),
               *ne = esm_calloc((size_t)cw * ch, sizeof *ne);
#define C(arr, i, j) arr[(i) + 2 + (size_t)cw * ((j) + 2)]
        for (int j = -2; j <= b->nj; j++)
            for (int i = -2; i <= b->ni; i++) {
                int gi = b->i0 + i, gj = b->j0 + j;
                double hu =
                    fmin(fmin(column_depth(g, gi, gj), column_depth(g, gi + 1, gj)),
                         fmin(column_depth(g, gi, gj + 1), column_depth(g, gi + 1, gj + 1)));
                double dx = (gj + 1 >= 0 && gj + 1 <= g->d.ny + 1) ? g->dxu[gj + 1] : 1.0;
                double w = hu * dx * dy, ix2 = 1.0 / (dx * dx), iy2 = 1.0 / (dy * dy);
                C(diag, i, j) = w * (ix2 + iy2) / 4;
                C(ew, i, j) = w * (iy2 - ix2) / 4;
                C(ns, i, j) = w * (ix2 - iy2) / 4;
                C(ne, i, j) = -w * (ix2 + iy2) / 4;
            }
        for (int j = -1; j <= b->nj; j++)
            for (int i = -1; i <= b->ni; i++) {
                long p = esm_at(&g->l2, lb, i, j, 0);
                int gj = b->j0 + j;
                bool wet = g->kmt[p] > 0;
                double area = (gj >= 0 && gj < g->d.ny) ? g->dxt[gj + 1] * dy : 0.0;
                a->ae[p] = C(ew, i, j) + C(ew, i, j - 1);
                a->an[p] = C(ns, i, j) + C(ns, i - 1, j);
                a->ane[p] = C(ne, i, j);
                a->a0[p] = wet ? C(diag, i, j) + C(diag, i - 1, j) + C(diag, i, j - 1) +
                                     C(diag, i - 1, j - 1) + area / (GRAVITY * g->dt * g->dt)
                               : 1.0;
                a->dinv[p] = 1.0 / a->a0[p];
            }
#undef C
        free(diag);
        free(ew);
        free(ns);
        free(ne);
    }
}

ESM_SIMD void pop_operator_apply(const pop_operator *a, const pop_grid *g, const double *x,
                                 double *y)
{
    const long sj = g->l2.stride_j;
    const double *a0 = a->a0, *an = a->an, *ae = a->ae, *ane = a->ane;
    for (int lb = 0; lb < g->d.nlocal; lb++) {
        const esm_block *b = &g->d.block[g->d.local[lb]];
        for (int j = 0; j < b->nj; j++) {
            long p0 = esm_at(&g->l2, lb, 0, j, 0);
            for (long p = p0; p < p0 + b->ni; p++)
                y[p] = a0[p] * x[p] + an[p] * x[p + sj] + an[p - sj] * x[p - sj] +
                       ae[p] * x[p + 1] + ae[p - 1] * x[p - 1] + ane[p] * x[p + sj + 1] +
                       ane[p - sj - 1] * x[p - sj - 1] + ane[p - 1] * x[p + sj - 1] +
                       ane[p - sj] * x[p - sj + 1];
        }
    }
}

void pop_manufactured(const pop_grid *g, int step, double *x)
{
    double phase = 0.1 * step;
    for (int lb = 0; lb < g->d.nlocal; lb++) {
        const esm_block *b = &g->d.block[g->d.local[lb]];
        for (int j = -POP_HALO; j < b->nj + POP_HALO; j++)
            for (int i = -POP_HALO; i < b->ni + POP_HALO; i++) {
                long p = esm_at(&g->l2, lb, i, j, 0);
                int gi = pop_wrap_i(g, b->i0 + i); /* the same bits as the owner's */
                double lon = pop_lon(g, gi) * M_PI / 180.0;
                double lat = pop_lat(g, b->j0 + j) * M_PI / 180.0;
                x[p] = g->kmt[p] ? cos(lat) * (sin(2 * lon - phase) * cos(3 * lat) +
                                               0.5 * cos(lon + 2 * phase) * sin(2 * lat))
                                 : 0.0;
            }
    }
}
