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
#include <emmintrin.h>
#include "pop.h"

static const double DEPTH = 5500.0, COURANT = 0.2, KAPPA_H = 1000.0, KAPPA_V = 1e-4;

static int imin(int a, int b)
{
    return a < b ? a : b;
}

/* The sweeps compute whole groups of LANES cells (one AVX-512 vector, two AVX2 ones): no
 * scalar remainder loop, which on a 10-cell row would cost as much as the vector part. The
 * extra cells read whatever follows a row (the next level, padding), are dry, and land only
 * in scratch, never in a tracer. */
enum { LANES = 8 };
static int lanes_for(int n)
{
    return (n + LANES - 1) / LANES * LANES;
}

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
    free(p->kmt);
    free(p->gyres);
    free(p->overturn);
    free(p->z);
    free(p->x_above);
    free(p->x);
}

static void make_flow(pop_tracers *tr, const pop_grid *g)
{
    const esm_layout *l = &g->l3;
    for (int lb = 0; lb < g->d.nlocal && !esm_folded(); lb++) { /* folded: values mean nothing */
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
                    tr->vtr[p] =
                        -(AT(&pot, z, i, j) - AT(&pot, z, i - 1, j)) + (AT(&pot, x, i, j) - above);
                    tr->wtr[p] = -(AT(&pot, x, i, j) - AT(&pot, x, i, j - 1));
                }
        }
        potentials_free(&pot);
    }
    /* Scale the flow so its largest Courant number (outflow x dt / volume) is COURANT. */
    double largest = 0;
    for (int lb = 0; lb < g->d.nlocal && !esm_folded(); lb++) {
        const esm_block *b = &g->d.block[g->d.local[lb]];
        for (int j = 0; j < b->nj; j++)
            for (int k = 0; k < g->nz; k++)
                for (int i = 0; i < b->ni; i++) {
                    if (k >= g->kmt[esm_at(&g->l2, lb, i, j, 0)])
                        continue;
                    long p = esm_at(l, lb, i, j, k);
                    double out = fmax(tr->utr[p], 0) + fmax(-tr->utr[p - 1], 0) +
                                 fmax(tr->vtr[p], 0) + fmax(-tr->vtr[p - l->stride_j], 0) +
                                 fmax(tr->wtr[p], 0) + (k ? fmax(-tr->wtr[p - l->stride_k], 0) : 0);
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

static size_t scratch_doubles(const pop_grid *g);

void pop_tracers_create(pop_tracers *tr, const pop_grid *g, esm_halo_engine engine)
{
    const esm_layout *l = &g->l3;
    long n = esm_layout_doubles(l, g->d.nlocal);
    *tr = (pop_tracers){.kappa_h = KAPPA_H, .kappa_v = KAPPA_V};
    double **arrays[] = {&tr->t, &tr->s, &tr->t_next, &tr->s_next, &tr->utr, &tr->vtr, &tr->wtr};
    for (unsigned a = 0; a < sizeof arrays / sizeof *arrays; a++) /* padded: see LANES */
        *arrays[a] = esm_field_alloc((n + 2 * LANES) * sizeof(double)); /* folded: shared */
    tr->scratch = esm_calloc(scratch_doubles(g), sizeof(double));
    tr->halo = esm_halo_blocks(&g->d, l, 2, POP_HALO, engine);
    make_flow(tr, g);
    for (int lb = 0; lb < g->d.nlocal && !esm_folded(); lb++) { /* folded: values mean nothing */
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

/* An upwind advective flux minus a diffusive one through a face, positive from `left` to
 * `right`, is linear in the two tracer values: transport > 0 ? transport * left : transport *
 * right, minus conductance * (right - left), is
 *     (max(transport, 0) + conductance) * left + (min(transport, 0) - conductance) * right.
 * The weights depend on the flow and the conductance, not on the tracer: computed once per
 * face for both tracers, they leave each tracer's flux two multiplies and an add, no compare
 * or select (measured: the sweep 25 % faster than upwind selects per tracer). Every face's
 * flux is computed once, from its two weights, and used by the cells on both sides: they
 * cancel. */
typedef struct {
    double left, right;
} face_weights;

static inline face_weights weights_of(double transport, double conductance)
{
    return (face_weights){(transport > 0 ? transport : 0.0) + conductance,
                          (transport < 0 ? transport : 0.0) - conductance};
}

static inline double face_flux(double weight_left, double left, double weight_right, double right)
{
    return weight_left * left + weight_right * right;
}

/* The active levels of a face: those of the shallower of the cells on its sides. */
static inline double face_levels(double kmt_a, double kmt_b)
{
    return kmt_a < kmt_b ? kmt_a : kmt_b;
}

/* 1 when level k is wet on both sides of a face (active levels kmt_a and kmt_b), else 0. */
static inline double open(int k, double kmt_a, double kmt_b)
{
    return k < face_levels(kmt_a, kmt_b) ? 1.0 : 0.0;
}

/* The Thomas factors of the implicit vertical diffusion depend only on the level and the
 * column's depth kmt: above a column's last level they are those of a full-depth column; its
 * last level has no diffusion through the floor; dry levels get the identity (inverse 1,
 * upper -0). So one factorisation per level, with the operations, in the order, of one
 * column's (the sub-diagonal is -up), replaces a division per point. */
typedef struct {
    double up, inverse, upper, inverse_last;
} mix_factors;

static void mix_factors_of(const pop_tracers *tr, const pop_grid *g, mix_factors *m)
{
    double upper_above = 0.0; /* no diffusion through the surface */
    for (int k = 0; k < g->nz; k++) {
        double up = k > 0 ? tr->kappa_v * g->dt / (0.5 * (g->dz[k - 1] + g->dz[k])) : 0;
        double down = k + 1 < g->nz ? tr->kappa_v * g->dt / (0.5 * (g->dz[k] + g->dz[k + 1])) : 0;
        m[k].up = up;
        m[k].inverse = 1.0 / (g->dz[k] + up + down + up * upper_above);
        m[k].upper = -down * m[k].inverse;
        m[k].inverse_last = 1.0 / (g->dz[k] + up + 0.0 + up * upper_above);
        upper_above = m[k].upper;
    }
}

/* Scratch of one row of columns, rows of `width` indexed from i = -1 (i = 0 on a cache-line
 * boundary: a vector load that straddles two lines costs two), per tracer f: south: the
 * fluxes through the south faces of every level, carried from the row before; d: the forward
 * Thomas sweep of every level, then (back substitution, in place) the next tracer; above: the
 * fluxes through the bottom faces of the level above; kmt, east, north: the active levels of
 * the row's cells and of their east (from i = -1) and north faces (dry past the row's end),
 * once per row; zero: no flux through the surface or the sea floor.
 * Small: it stays in the L1/L2 cache. */
typedef struct {
    long width;
    double *south[2], *d[2], *above[2], *kmt, *east, *north, *zero;
    mix_factors *mix;
} row_scratch;

enum { ROWS = 6 };

static long scratch_width(const pop_grid *g)
{
    return lanes_for(g->l3.sx) + LANES;
}

static size_t scratch_doubles(const pop_grid *g)
{
    return (4 * g->nz + ROWS) * scratch_width(g) + 4 * g->nz + LANES;
}

static row_scratch scratch_of(const pop_tracers *tr, const pop_grid *g)
{
    long width = scratch_width(g), plane = g->nz * width;
    double *s = tr->scratch + LANES, *row = s + 4 * plane;
    double *r[ROWS];
    for (int i = 0; i < ROWS; i++)
        r[i] = row + i * width;
    return (row_scratch){width,        {s, s + plane}, {s + 2 * plane, s + 3 * plane},
                         {r[0], r[1]}, r[2],           r[3],
                         r[4],         r[5],           (mix_factors *)(row + ROWS * width)};
}

/* The active levels of the cells of row j and of their faces, as rows of lanes; dry beyond. */
static void row_kmt(const pop_grid *g, int lb, const esm_block *b, int j, const row_scratch *rs)
{
    const double *kmt = g->kmt + esm_at(&g->l2, lb, 0, j, 0), *kmt_n = kmt + g->l2.stride_j;
    for (int i = -1; i < rs->width - 1; i++)
        rs->kmt[i] = i <= b->ni ? kmt[i] : 0.0;
    for (int i = -1; i < rs->width - 2; i++) {
        int inside = i < b->ni;
        rs->east[i] = inside ? face_levels(kmt[i], kmt[i + 1]) : 0.0;
        rs->north[i] = inside && i >= 0 ? face_levels(kmt[i], kmt_n[i]) : 0.0;
    }
}

/* Fluxes through the north faces of row j (all levels, both tracers) into out[f][k*width+i]:
 * the same weights, operations and order as sweep_down's north faces. */
ESM_SIMD static void north_fluxes(const pop_tracers *tr, const pop_grid *g, int lb,
                                  const esm_block *b, int j, double *out[2])
{
    const esm_layout *l = &g->l3;
    const double *kmt = g->kmt + esm_at(&g->l2, lb, 0, j, 0), *kmt_n = kmt + g->l2.stride_j;
    double cn = g->dxu[b->j0 + j + 1] / g->dy;
    for (int k = 0; k < g->nz; k++) {
        long p0 = esm_at(l, lb, 0, j, k);
        const double *v = tr->vtr + p0;
        double north_conductance = tr->kappa_h * g->dz[k] * cn;
        for (int f = 0; f < 2; f++) {
            const double *restrict c = (f ? tr->s : tr->t) + p0;
            double *restrict flux = out[f] + (size_t)k * scratch_width(g);
            for (int i = 0; i < b->ni; i++) {
                face_weights n = weights_of(v[i], north_conductance * open(k, kmt[i], kmt_n[i]));
                flux[i] = face_flux(n.left, c[i], n.right, c[i + l->stride_j]);
            }
        }
    }
}

/* Ask for what the next row reads at level k (its transports; the tracers of the row north of
 * it) one row ahead, into L2: the hardware prefetchers alone leave some of these reads
 * exposed (measured: about 5 % of the kernel's time on M). Prefetches never fault. */
static void prefetch_next_row(const pop_tracers *tr, const pop_grid *g, long p0)
{
    const long sj = g->l3.stride_j, first = p0 - 1, n = g->l3.sx;
    for (long o = 0; o < n + 8; o += 8) { /* one request per cache line */
        __builtin_prefetch(tr->utr + first + sj + o, 0, 1);
        __builtin_prefetch(tr->vtr + first + sj + o, 0, 1);
        __builtin_prefetch(tr->wtr + first + sj + o, 0, 1);
        __builtin_prefetch(tr->t + first + 2 * sj + o, 0, 1);
        __builtin_prefetch(tr->s + first + 2 * sj + o, 0, 1);
    }
}

/* One tracer's update of cell i of a level: the fluxes through its faces (weights w, e, n, b
 * of its west, east, north and bottom faces), the advective and horizontal-diffusive update
 * and the forward sweep of the vertical diffusion in one expression,
 *     d = keep * c + carry * d_above + gain * (sum of the fluxes in),
 * summed as a tree (shorter dependency chains than a running sum: measured 8 % faster); the north
 * and bottom fluxes are kept as the next row's south and the next level's top ones. */
static inline void cell_update(const double *c, long i, long sj, long down, face_weights w,
                               face_weights e, face_weights n, face_weights b, double keep,
                               double carry, double gain, double *south, double *above, double *d,
                               const double *d_above)
{
    double west = face_flux(w.left, c[i - 1], w.right, c[i]);
    double east = face_flux(e.left, c[i], e.right, c[i + 1]);
    double north = face_flux(n.left, c[i], n.right, c[i + sj]);
    double bottom = face_flux(b.left, c[i], b.right, c[i + down]);
    double in = ((west - east) + (south[i] - north)) + (above[i] - bottom);
    d[i] = (keep * c[i] + carry * d_above[i]) + gain * in;
    south[i] = north;
    above[i] = bottom;
}

/* One row of columns, top down, one loop per level over the cells for both tracers: the
 * faces' weights and the vertical diffusion's terms, computed once, serve both (some of the
 * loop's pointers live on the stack; still faster than a loop per tracer). Each face's
 * flux has one value: the west one is computed from the same operands, in the same order, as
 * the east one of the cell before it (recomputing it costs less than a second loop and a
 * round trip through memory), the north and bottom ones are kept as the next row's south and
 * the next level's top fluxes. */
ESM_SIMD static void sweep_down(const pop_tracers *tr, const pop_grid *g, int lb,
                                const esm_block *b, int j, const row_scratch *rs)
{
    const esm_layout *l = &g->l3;
    const long sj = l->stride_j, width = rs->width;
    const int nz = g->nz, n = lanes_for(b->ni);
    const double *kmt = rs->kmt, *east_levels = rs->east, *north_levels = rs->north;
    int gj = b->j0 + j;
    double cx = g->dy / g->dxt[gj + 1];            /* east face length / distance */
    double cn = g->dxu[gj + 1] / g->dy;            /* north face */
    double area = g->dxt[gj + 1] * g->dy;
    double *above_t = rs->above[0], *above_s = rs->above[1];
    for (int i = 0; i < n; i++) /* no flux through the surface */
        above_t[i] = above_s[i] = 0.0;
    for (int k = 0; k < nz; k++) {
        long p0 = esm_at(l, lb, 0, j, k);
        const double *t = tr->t + p0, *s = tr->s + p0, *u = tr->utr + p0, *v = tr->vtr + p0;
        /* the sea floor below the last level: no transport, the level itself below */
        const double *w = k + 1 < nz ? tr->wtr + p0 : rs->zero;
        long down = k + 1 < nz ? l->stride_k : 0;
        double kdz = tr->kappa_h * g->dz[k], east_conductance = kdz * cx,
               north_conductance = kdz * cn;
        double rate = g->dt / (area * g->dz[k]), dz = g->dz[k];
        mix_factors m = rs->mix[k];
        prefetch_next_row(tr, g, p0);
        double *south_t = rs->south[0] + k * width, *d_t = rs->d[0] + k * width;
        double *south_s = rs->south[1] + k * width, *d_s = rs->d[1] + k * width;
        const double *d_above_t = k ? d_t - width : rs->zero,
                     *d_above_s = k ? d_s - width : rs->zero;
#pragma GCC ivdep
        for (int i = 0; i < n; i++) {
            face_weights we =
                weights_of(u[i - 1], east_conductance * (k < east_levels[i - 1] ? 1.0 : 0.0));
            face_weights ea = weights_of(u[i], east_conductance * (k < east_levels[i] ? 1.0 : 0.0));
            face_weights no =
                weights_of(v[i], north_conductance * (k < north_levels[i] ? 1.0 : 0.0));
            face_weights bo = weights_of(w[i], 0.0);
            /* the Thomas row of a wet cell: (dz * next + up * d_above) * inverse, next = c +
             * rate * in; a dry one comes out 0 */
            double inverse = k + 1 < kmt[i] ? m.inverse : m.inverse_last;
            int wet = k < kmt[i];
            double keep = wet ? dz * inverse : 0.0, carry = wet ? m.up * inverse : 0.0;
            double gain = keep * rate;
            cell_update(t, i, sj, down, we, ea, no, bo, keep, carry, gain, south_t, above_t, d_t,
                        d_above_t);
            cell_update(s, i, sj, down, we, ea, no, bo, keep, carry, gain, south_s, above_s, d_s,
                        d_above_s);
        }
    }
}

/* Whether a row of columns can be written as whole aligned pairs: every level of it (sx
 * doubles, halo columns included) starts on 16 bytes (the arrays start on 64). */
static int streams(const pop_grid *g, int lb, int j)
{
    return g->l3.sx % 2 == 0 && esm_at(&g->l3, lb, -1, j, 0) % 2 == 0;
}

/* One level of a row, halo columns included (zero: the next step's halo update refreshes
 * them before anything reads them), by non-temporal stores: the next tracers go to memory
 * without the lines being read first, as a plain store does (measured: 15 % faster on M,
 * more on S). The rows of a block follow each other: one contiguous stream per block. */
static inline void stream_level(double *out, const double *new, int ni)
{
    _mm_stream_pd(out, _mm_set_pd(new[0], 0.0));
    for (int i = 1; i + 1 < ni; i += 2)
        _mm_stream_pd(out + i + 1, _mm_loadu_pd(new + i));
    _mm_stream_pd(out + ni, _mm_set_pd(0.0, new[ni - 1]));
}

/* The back substitution of the vertical diffusion, bottom up, in place in the scratch (d
 * becomes the next tracers); then the next tracers are written top down: stores that walk
 * memory backwards, level by level, halve the bandwidth (measured). Dry levels come out 0. */
ESM_SIMD static void sweep_up(pop_tracers *tr, const pop_grid *g, int lb, const esm_block *b, int j,
                              const row_scratch *rs)
{
    const esm_layout *l = &g->l3;
    const double *kmt = rs->kmt;
    const long width = rs->width;
    const int nz = g->nz, n = lanes_for(b->ni), ni = b->ni;
    for (int k = nz - 1; k >= 0; k--) {
        double *t = rs->d[0] + k * width, *s = rs->d[1] + k * width;
        const double *t_below = k + 1 < nz ? t + width : rs->zero;
        const double *s_below = k + 1 < nz ? s + width : rs->zero;
        double upper_full = rs->mix[k].upper;
#pragma GCC ivdep
        for (int i = 0; i < n; i++) {
            double upper = k + 1 < kmt[i] ? upper_full : -0.0;
            t[i] = t[i] - upper * t_below[i];
            s[i] = s[i] - upper * s_below[i];
        }
    }
    if (streams(g, lb, j)) {
        for (int k = 0; k < nz; k++) {
            long p0 = esm_at(l, lb, -1, j, k);
            stream_level(tr->t_next + p0, rs->d[0] + k * width, ni);
            stream_level(tr->s_next + p0, rs->d[1] + k * width, ni);
        }
        return;
    }
    for (int k = 0; k < nz; k++) {
        long p0 = esm_at(l, lb, 0, j, k);
        double *restrict t = tr->t_next + p0, *restrict s = tr->s_next + p0;
        const double *restrict t_new = rs->d[0] + k * width, *restrict s_new = rs->d[1] + k * width;
        for (int i = 0; i < ni; i++) {
            t[i] = t_new[i];
            s[i] = s_new[i];
        }
    }
}

void pop_tracers_step(pop_tracers *tr, const pop_grid *g, esm_timer *compute, esm_timer *halo)
{
    esm_timer_start(halo);
    esm_halo_update(tr->halo, (double *[]){tr->t, tr->s});
    esm_timer_stop(halo);
    esm_timer_start(compute);
    /* flops a cell (esm_fold.h), counted from sweep_down and sweep_up: 4 faces' weights (11),
     * the Thomas row's factors (3), each tracer's 4 fluxes, their sum and update (2 x 22), the
     * back substitution (2 x 2); the first row's south fluxes and the per-level factors, not
     * per cell, are left out */
    static const esm_kernel kernel = {.name = "pop.tracer", .flops = 11 + 3 + 2 * 22 + 2 * 2};
    double bytes = pop_tracers_bytes(g);
    if (esm_kernel_begin(&kernel, bytes / (7 * sizeof(double)), bytes)) {
        row_scratch rs = scratch_of(tr, g);
        mix_factors_of(tr, g, rs.mix);
        for (int lb = 0; lb < g->d.nlocal; lb++) {
            const esm_block *b = &g->d.block[g->d.local[lb]];
            north_fluxes(tr, g, lb, b, -1, rs.south); /* the first row's south faces */
            for (int j = 0; j < b->nj; j++) {
                row_kmt(g, lb, b, j, &rs);
                sweep_down(tr, g, lb, b, j, &rs);
                sweep_up(tr, g, lb, b, j, &rs);
            }
        }
        _mm_sfence(); /* the streamed stores, visible before anything else reads the tracers */
        esm_kernel_end(&kernel);
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
    static const esm_kernel kernel = {.name = "pop.tracer_mass", .flops = 6};
    double points = pop_tracers_bytes(g) / (7 * sizeof(double));
    if (esm_kernel_begin(&kernel, points, 2 * sizeof(double) * points)) { /* reads t, s */
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
        esm_kernel_end(&kernel);
    }
    esm_global_sums(sums, 2, mass);
}

void pop_tracers_range(const pop_tracers *tr, const pop_grid *g, double low[2], double high[2])
{
    double ext[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY}; /* max t, s, -min t, s */
    static const esm_kernel kernel = {.name = "pop.tracer_range", .flops = 0} /* comparisons */;
    double points = pop_tracers_bytes(g) / (7 * sizeof(double));
    if (esm_kernel_begin(&kernel, points, 2 * sizeof(double) * points)) { /* reads t, s */
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
        esm_kernel_end(&kernel);
    }
    esm_global_max(ext, 4);
    high[0] = ext[0];
    high[1] = ext[1];
    low[0] = -ext[2];
    low[1] = -ext[3];
}
