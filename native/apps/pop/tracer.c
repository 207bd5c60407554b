/* POP proxy baroclinic part: two tracers advected (upwind, flux form) by a prescribed 3D flow
 * and diffused (explicit Laplacian across, implicit down the columns), over active levels.
 *
 * The flow comes from a vector potential on cell edges, zero on every edge that touches a
 * land or sea-floor cell: each face's transport is the circulation of the potential around
 * it, so every cell's net inflow is zero and no water crosses the coast, the sea floor or the
 * surface. Flux form with one value per face conserves tracer content to round-off; upwind
 * advection and diffusion at Courant number < 1/2 keep tracers within their initial range. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "pop.h"

static const double DEPTH = 5500.0, COURANT = 0.2, KAPPA_H = 1000.0, KAPPA_V = 1e-4;

static int imin(int a, int b) { return a < b ? a : b; }

/* The flow's potentials around one block, levels k-1 and k: on vertical edges at the NE
 * corner of T(i, j) (gyres that reverse with depth) and on east-west edges at (i, j + 1/2) on
 * the bottom of a level (an overturning: sinking in the north, rising in the south). An
 * edge's potential is zero unless the 4 cells around it are wet. */
typedef struct {
    int ni, nj, w;              /* extent; arrays cover i, j in [-2, n + 1] */
    int *kmt;
    double *gyres, *overturn;   /* horizontal patterns at corners / east-west edges */
    double *z, *x_above, *x;    /* potentials: vertical edges at k, east-west edges at k-1, k */
} potentials;

#define AT(p, a, i, j) (p)->a[(i) + 2 + (size_t)(p)->w * ((j) + 2)]

static void potentials_create(potentials *p, const pop_grid *g, const esm_block *b)
{
    *p = (potentials){.ni = b->ni, .nj = b->nj, .w = b->ni + 4};
    size_t n = (size_t)p->w * (b->nj + 4);
    p->kmt = esm_calloc(n, sizeof *p->kmt);
    double **arrays[] = {&p->gyres, &p->overturn, &p->z, &p->x_above, &p->x};
    for (int a = 0; a < 5; a++)
        *arrays[a] = esm_calloc(n, sizeof(double));
    for (int j = -2; j <= b->nj + 1; j++)
        for (int i = -2; i <= b->ni + 1; i++) {
            int gi = b->i0 + i, gj = b->j0 + j;
            AT(p, kmt, i, j) = pop_kmt_at(g, gi, gj);
            double lon = (pop_wrap_i(g, gi) + 1) * g->dlon * M_PI / 180.0;
            double lat = pop_lat(g, gj + 0.5) * M_PI / 180.0;
            AT(p, gyres, i, j) = sin(3 * lat) * cos(lat) * (1.0 + 0.5 * cos(2 * lon));
            double dxu = (gj + 1 >= 0 && gj + 1 <= g->d.ny + 1) ? g->dxu[gj + 1] : 0.0;
            AT(p, overturn, i, j) = 0.3 * cos(lat) * sin(2 * lat) * g->dy * dxu;
        }
}

/* Potentials of level k (the east-west ones of level k-1 move to x_above). */
static void potentials_level(potentials *p, const pop_grid *g, int k)
{
    double *swap = p->x_above;
    p->x_above = p->x;
    p->x = swap;
    double depth_factor = g->dz[k] * g->dy * (1.0 - 1.5 * g->zc[k] / DEPTH);
    double sink = k < g->nz - 1 ? sin(M_PI * g->zw[k] / DEPTH) : 0.0;
    for (int j = -2; j <= p->nj; j++)
        for (int i = -2; i <= p->ni; i++) {
            int corner = imin(imin(AT(p, kmt, i, j), AT(p, kmt, i + 1, j)),
                              imin(AT(p, kmt, i, j + 1), AT(p, kmt, i + 1, j + 1)));
            AT(p, z, i, j) = corner > k ? AT(p, gyres, i, j) * depth_factor : 0.0;
            int edge = imin(AT(p, kmt, i, j), AT(p, kmt, i, j + 1));
            AT(p, x, i, j) = edge > k + 1 ? AT(p, overturn, i, j) * sink : 0.0;
        }
}

static void potentials_free(potentials *p)
{
    free(p->kmt); free(p->gyres); free(p->overturn); free(p->z); free(p->x_above); free(p->x);
}

static void make_flow(pop_tracers *tr, const pop_grid *g)
{
    const esm_layout *l = &g->l3;
    for (int lb = 0; lb < g->d.nlocal; lb++) {
        const esm_block *b = &g->d.block[g->d.local[lb]];
        potentials pot;
        potentials_create(&pot, g, b);
        for (int k = 0; k < g->nz; k++) {
            potentials_level(&pot, g, k);
            for (int j = -1; j <= b->nj; j++)
                for (int i = -1; i <= b->ni; i++) {
                    long p = esm_at(l, lb, i, j, k);
                    double above = k > 0 ? AT(&pot, x_above, i, j) : 0.0;
                    tr->utr[p] = AT(&pot, z, i, j) - AT(&pot, z, i, j - 1);
                    tr->vtr[p] = -(AT(&pot, z, i, j) - AT(&pot, z, i - 1, j))
                                 + (AT(&pot, x, i, j) - above);
                    tr->wtr[p] = -(AT(&pot, x, i, j) - AT(&pot, x, i, j - 1));
                }
        }
        potentials_free(&pot);
    }
    /* Scale the flow so its largest Courant number (outflow x dt / volume) is COURANT. */
    double largest = 0;
    for (int lb = 0; lb < g->d.nlocal; lb++) {
        const esm_block *b = &g->d.block[g->d.local[lb]];
        for (int j = 0; j < b->nj; j++)
            for (int k = 0; k < g->nz; k++)
                for (int i = 0; i < b->ni; i++) {
                    if (k >= g->kmt[esm_at(&g->l2, lb, i, j, 0)])
                        continue;
                    long p = esm_at(l, lb, i, j, k);
                    double out = fmax(tr->utr[p], 0) + fmax(-tr->utr[p - 1], 0)
                                 + fmax(tr->vtr[p], 0) + fmax(-tr->vtr[p - l->stride_j], 0)
                                 + fmax(tr->wtr[p], 0) + (k ? fmax(-tr->wtr[p - l->stride_k], 0) : 0);
                    double volume = g->dxt[b->j0 + j + 1] * g->dy * g->dz[k];
                    largest = fmax(largest, out * g->dt / volume);
                }
    }
    esm_global_max(&largest, 1);
    double scale = largest > 0 ? COURANT / largest : 0;
    long n = esm_layout_doubles(l, g->d.nlocal);
    for (long p = 0; p < n; p++) {
        tr->utr[p] *= scale;
        tr->vtr[p] *= scale;
        tr->wtr[p] *= scale;
    }
    tr->courant = largest * scale;
}

void pop_tracers_create(pop_tracers *tr, const pop_grid *g, esm_halo_engine engine)
{
    const esm_layout *l = &g->l3;
    long n = esm_layout_doubles(l, g->d.nlocal);
    *tr = (pop_tracers){.kappa_h = KAPPA_H, .kappa_v = KAPPA_V};
    double **arrays[] = {&tr->t, &tr->s, &tr->t_next, &tr->s_next, &tr->utr, &tr->vtr, &tr->wtr};
    for (unsigned a = 0; a < sizeof arrays / sizeof *arrays; a++)
        *arrays[a] = esm_calloc(n, sizeof(double));
    tr->scratch = esm_calloc((size_t)(6 * g->nz + 7) * l->sx + 2, sizeof(double));
    tr->halo = esm_halo_blocks(&g->d, l, 2, POP_HALO, engine);
    make_flow(tr, g);
    for (int lb = 0; lb < g->d.nlocal; lb++) {
        const esm_block *b = &g->d.block[g->d.local[lb]];
        for (int j = 0; j < b->nj; j++)
            for (int k = 0; k < g->nz; k++)
                for (int i = 0; i < b->ni; i++) {
                    if (k >= g->kmt[esm_at(&g->l2, lb, i, j, 0)])
                        continue;
                    long p = esm_at(l, lb, i, j, k);
                    double lon = pop_lon(g, b->i0 + i) * M_PI / 180.0;
                    double lat = pop_lat(g, b->j0 + j) * M_PI / 180.0, z = g->zc[k];
                    tr->t[p] = 2.0 + 20.0 * exp(-z / 700.0) * (0.6 + 0.4 * cos(2 * lat));
                    tr->s[p] = 34.5 + 0.5 * sin(lon) * cos(lat) - 0.2 * z / DEPTH;
                }
    }
}

/* Upwind advective flux minus diffusive flux through a face, positive from `left` to `right`.
 * Every face's flux is computed once and used by the cells on both sides: they cancel. */
static inline double face_flux(double transport, double left, double right, double conductance)
{
    double advected = transport > 0 ? transport * left : transport * right;
    return advected - conductance * (right - left);
}

/* 1 when level k is wet on both sides of a face (active levels kmt_a and kmt_b), else 0. */
static inline double open(int k, double kmt_a, double kmt_b)
{
    double shallower = kmt_a < kmt_b ? kmt_a : kmt_b;
    return k < shallower ? 1.0 : 0.0;
}

/* Scratch for one row of columns (each nz x sx, indexed [k * sx + i], i from -1):
 * star: tracers after advection; south: fluxes through the south faces, carried from the
 * row before; inverse and upper: the Thomas factors of the vertical diffusion. Rows of one
 * level (sx, indexed from -1): the fluxes through the east, north and bottom faces; below
 * (the bottom fluxes of the level above, per tracer); zero. */
typedef struct { double *star[2], *south[2], *inverse, *upper, *east, *below[2], *zero; } row_scratch;

static row_scratch scratch_of(const pop_tracers *tr, const pop_grid *g)
{
    size_t plane = (size_t)g->nz * g->l3.sx;
    double *s = tr->scratch;
    row_scratch r = {{s + 1, s + plane + 1}, {s + 2 * plane + 1, s + 3 * plane + 1},
                     s + 4 * plane + 1, s + 5 * plane + 1, s + 6 * plane + 1,
                     {s + 6 * plane + 3 * g->l3.sx + 1, s + 6 * plane + 4 * g->l3.sx + 1},
                     s + 6 * plane + 5 * g->l3.sx + 1};
    return r;
}

/* Fluxes through the north faces of row j (all levels, both tracers) into out[f][k*sx+i]. */
ESM_SIMD static void north_fluxes(const pop_tracers *tr, const pop_grid *g, int lb, const esm_block *b,
                         int j, double *out[2])
{
    const esm_layout *l = &g->l3;
    const double *kmt = g->kmt + esm_at(&g->l2, lb, 0, j, 0), *kmt_n = kmt + g->l2.stride_j;
    double cn = g->dxu[b->j0 + j + 1] / g->dy;
    for (int k = 0; k < g->nz; k++) {
        long p0 = esm_at(l, lb, 0, j, k);
        const double *v = tr->vtr + p0;
        double kdz = tr->kappa_h * g->dz[k];
        for (int f = 0; f < 2; f++) {
            const double *restrict c = (f ? tr->s : tr->t) + p0;
            double *restrict flux = out[f] + (size_t)k * l->sx;
            for (int i = 0; i < b->ni; i++) {
                flux[i] = face_flux(v[i], c[i], c[i + l->stride_j], kdz * cn * open(k, kmt[i], kmt_n[i]));
            }
        }
    }
}

/* The fluxes through the east, north and bottom faces of n cells of one level of a row
 * (every face once; restrict: the arrays never overlap, so the loop runs in vector lanes). */
ESM_SIMD static void level_faces(int n, int k, double east_conductance, double north_conductance,
                        const double *restrict u, const double *restrict v,
                        const double *restrict w, const double *restrict c,
                        const double *restrict c_east, const double *restrict c_north,
                        const double *restrict c_below, const double *restrict kmt,
                        const double *restrict kmt_east, const double *restrict kmt_north,
                        double *restrict east, double *restrict north, double *restrict bottom)
{
    for (int i = 0; i < n; i++) {
        east[i] = face_flux(u[i], c[i], c_east[i], east_conductance * open(k, kmt[i], kmt_east[i]));
        north[i] = face_flux(v[i], c[i], c_north[i], north_conductance * open(k, kmt[i], kmt_north[i]));
        bottom[i] = face_flux(w[i], c[i], c_below[i], 0.0);
    }
}

/* c + rate (inflow - outflow) on the wet cells of one level of a row; the north and bottom
 * fluxes become the next row's south and the next level's top fluxes. */
ESM_SIMD static void level_update(int n, int k, double rate, const double *restrict c,
                         const double *restrict east_west, const double *restrict east,
                         const double *restrict north, const double *restrict bottom,
                         const double *restrict kmt, double *restrict south,
                         double *restrict above, double *restrict out)
{
    for (int i = 0; i < n; i++) {
        double next = c[i] + rate * (east_west[i] - east[i] + south[i] - north[i] + above[i] - bottom[i]);
        out[i] = k < kmt[i] ? next : 0.0;
        south[i] = north[i];
        above[i] = bottom[i];
    }
}

/* Explicit advection and horizontal diffusion of one row of columns into star. */
static void advect_row(const pop_tracers *tr, const pop_grid *g, int lb, const esm_block *b,
                       int j, const row_scratch *rs)
{
    const esm_layout *l = &g->l3;
    const long sj = l->stride_j, sk = l->stride_k;
    const double *kmt = g->kmt + esm_at(&g->l2, lb, 0, j, 0), *kmt_n = kmt + g->l2.stride_j;
    int gj = b->j0 + j, ni = b->ni;
    double cx = g->dy / g->dxt[gj + 1];            /* east face length / distance */
    double cn = g->dxu[gj + 1] / g->dy;            /* north face */
    double area = g->dxt[gj + 1] * g->dy;
    double *east = rs->east, *north = east + l->sx, *bottom = north + l->sx;
    for (int f = 0; f < 2; f++) /* no flux through the surface */
        for (int i = 0; i < ni; i++)
            rs->below[f][i] = 0.0;
    for (int k = 0; k < g->nz; k++) {
        long p0 = esm_at(l, lb, 0, j, k);
        /* the sea floor below the last level: no transport, the level itself below */
        const double *w = k + 1 < g->nz ? tr->wtr + p0 : rs->zero;
        long down = k + 1 < g->nz ? sk : 0;
        double kdz = tr->kappa_h * g->dz[k], rate = g->dt / (area * g->dz[k]);
        for (int f = 0; f < 2; f++) {
            const double *c = (f ? tr->s : tr->t) + p0;
            level_faces(ni + 1, k, kdz * cx, kdz * cn, tr->utr + p0 - 1, tr->vtr + p0 - 1, w - 1,
                        c - 1, c, c - 1 + sj, c - 1 + down, kmt - 1, kmt, kmt_n - 1,
                        east - 1, north - 1, bottom - 1);
            level_update(ni, k, rate, c, east - 1, east, north, bottom, kmt,
                         rs->south[f] + (size_t)k * l->sx, rs->below[f],
                         rs->star[f] + (size_t)k * l->sx);
        }
    }
}

/* Implicit vertical diffusion of star into the next tracers (Thomas algorithm, the columns of
 * the row side by side; one factorisation for both tracers). Zero flux through the surface
 * and the sea floor. */
ESM_SIMD static void mix_row(pop_tracers *tr, const pop_grid *g, int lb, const esm_block *b, int j,
                    const row_scratch *rs)
{
    const esm_layout *l = &g->l3;
    const double *restrict kmt = g->kmt + esm_at(&g->l2, lb, 0, j, 0);
    const int nz = g->nz, ni = b->ni, sx = l->sx;
    for (int k = 0; k < nz; k++) {
        double up = k > 0 ? tr->kappa_v * g->dt / (0.5 * (g->dz[k - 1] + g->dz[k])) : 0;
        double down = k + 1 < nz ? tr->kappa_v * g->dt / (0.5 * (g->dz[k] + g->dz[k + 1])) : 0;
        double dz = g->dz[k];
        double *restrict inverse = rs->inverse + (size_t)k * sx;
        double *restrict upper = rs->upper + (size_t)k * sx;
        const double *restrict upper_above = k ? upper - sx : rs->zero;
        for (int i = 0; i < ni; i++) {
            double wet = kmt[i];
            double a = k < wet ? up : 0.0, c = k + 1 < wet ? down : 0.0;
            double diag = k < wet ? dz + a + c : 1.0;
            double denominator = diag + a * upper_above[i]; /* the sub-diagonal is -a */
            inverse[i] = 1.0 / denominator;
            upper[i] = -c * inverse[i];
        }
    }
    for (int f = 0; f < 2; f++) {
        double *next = f ? tr->s_next : tr->t_next, *star = rs->star[f];
        for (int k = 0; k < nz; k++) { /* forward: star becomes d' in place */
            double up = k > 0 ? tr->kappa_v * g->dt / (0.5 * (g->dz[k - 1] + g->dz[k])) : 0;
            double *restrict d = star + (size_t)k * sx, dz = g->dz[k];
            const double *restrict inverse = rs->inverse + (size_t)k * sx;
            const double *restrict d_above = k ? d - sx : rs->zero;
            for (int i = 0; i < ni; i++) {
                double a = k < kmt[i] ? up : 0.0, rhs = dz * d[i];
                rhs = k < kmt[i] ? rhs : 0.0;
                d[i] = (rhs + a * d_above[i]) * inverse[i];
            }
        }
        for (int k = nz - 1; k >= 0; k--) { /* back: the next tracer, from the bottom up */
            double *restrict row = next + esm_at(l, lb, 0, j, k);
            const double *restrict d = star + (size_t)k * sx, *restrict upper = rs->upper + (size_t)k * sx;
            const double *restrict row_below = k + 1 < nz ? row + l->stride_k : rs->zero;
            for (int i = 0; i < ni; i++)
                row[i] = d[i] - upper[i] * row_below[i];
        }
    }
}

void pop_tracers_step(pop_tracers *tr, const pop_grid *g, esm_timer *compute, esm_timer *halo)
{
    esm_timer_start(halo);
    esm_halo_update(tr->halo, (double *[]){tr->t, tr->s});
    esm_timer_stop(halo);
    esm_timer_start(compute);
    row_scratch rs = scratch_of(tr, g);
    for (int lb = 0; lb < g->d.nlocal; lb++) {
        const esm_block *b = &g->d.block[g->d.local[lb]];
        north_fluxes(tr, g, lb, b, -1, rs.south); /* the first row's south faces */
        for (int j = 0; j < b->nj; j++) {
            advect_row(tr, g, lb, b, j, &rs);
            mix_row(tr, g, lb, b, j, &rs);
        }
    }
    double *t = tr->t, *s = tr->s;
    tr->t = tr->t_next;
    tr->s = tr->s_next;
    tr->t_next = t;
    tr->s_next = s;
    esm_timer_stop(compute);
}

double pop_tracers_bytes(const pop_grid *g)
{
    double points = 0;
    for (int lb = 0; lb < g->d.nlocal; lb++) {
        const esm_block *b = &g->d.block[g->d.local[lb]];
        points += (double)b->ni * b->nj * g->nz;
    }
    return points * 7 * sizeof(double); /* read t, s, utr, vtr, wtr; write t, s */
}

void pop_tracers_mass(const pop_tracers *tr, const pop_grid *g, double mass[2])
{
    esm_sum sums[2] = {{0}};
    for (int lb = 0; lb < g->d.nlocal; lb++) {
        const esm_block *b = &g->d.block[g->d.local[lb]];
        double block[2] = {0, 0}; /* one partial per block, always summed in the same order */
        for (int j = 0; j < b->nj; j++) {
            double area = g->dxt[b->j0 + j + 1] * g->dy;
            for (int k = 0; k < g->nz; k++)
                for (int i = 0; i < b->ni; i++) {
                    long p = esm_at(&g->l3, lb, i, j, k);
                    block[0] += tr->t[p] * area * g->dz[k];
                    block[1] += tr->s[p] * area * g->dz[k];
                }
        }
        esm_sum_add(&sums[0], block[0]);
        esm_sum_add(&sums[1], block[1]);
    }
    esm_global_sums(sums, 2, mass);
}

void pop_tracers_range(const pop_tracers *tr, const pop_grid *g, double low[2], double high[2])
{
    double ext[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY}; /* max t, s, -min t, s */
    for (int lb = 0; lb < g->d.nlocal; lb++) {
        const esm_block *b = &g->d.block[g->d.local[lb]];
        for (int j = 0; j < b->nj; j++)
            for (int k = 0; k < g->nz; k++)
                for (int i = 0; i < b->ni; i++) {
                    if (k >= g->kmt[esm_at(&g->l2, lb, i, j, 0)])
                        continue;
                    long p = esm_at(&g->l3, lb, i, j, k);
                    ext[0] = fmax(ext[0], tr->t[p]);
                    ext[1] = fmax(ext[1], tr->s[p]);
                    ext[2] = fmax(ext[2], -tr->t[p]);
                    ext[3] = fmax(ext[3], -tr->s[p]);
                }
    }
    esm_global_max(ext, 4);
    high[0] = ext[0];
    high[1] = ext[1];
    low[0] = -ext[2];
    low[1] = -ext[3];
}
