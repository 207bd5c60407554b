/* HYCOM proxy set-up: grid, masks, depth, layers, time steps and the initial state.
 *
 * basin: a global ocean from 78S to 78N with the analytic continents of esm_geo.h, periodic in
 *        longitude; nz layers whose interfaces are flat at rest (the upper nz-1 layers, 30 m
 *        thin at the top to 7 times thicker at 3000 m; the bottom layer takes the rest of a
 *        4000-5500 m deep ocean), stratified by 5 kg/m^3 in all; warm and cold eddies depress
 *        or lift the interfaces and start the motion (geostrophic adjustment, waves, drift).
 * wave:  a flat 4000 m deep, doubly periodic f-plane basin, unstratified, with a small surface
 *        wave eta = A cos(k x) at rest: a linear inertia-gravity wave (docs/ocean.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "hycom.h"

static const double EARTH_RADIUS = 6.371e6, OMEGA = 7.292e-5, GRAVITY = 9.806;
static const double LAT_EDGE = 78.0, UPPER_DEPTH = 3000.0, DENSITY_STEP = 0.005;
static const double WAVE_DX = 20e3, WAVE_DEPTH = 4000.0, WAVE_F = 1e-4, WAVE_AMPLITUDE = 1e-3;

/* The basin: the land mask (1 byte a point) and the depth of every point (0 on land), the same
 * on every rank (built once and shared when folded). */
typedef struct {
    unsigned char *ocean;
    double *depth;
} basin_map;
typedef struct {
    hycom_case kind;
    int nx, ny;
    const basin_map *map;
} geometry;

static double lat_of(const geometry *g, double gj)
{
    return -LAT_EDGE + (gj + 0.5) * 2 * LAT_EDGE / g->ny;
}
static double lon_of(const geometry *g, int gi)
{
    return (gi + 0.5) * 360.0 / g->nx;
}

static bool is_ocean(int gi, int gj, const void *context)
{
    const geometry *g = context;
    if (g->kind == CASE_WAVE)
        return true;
    if (gj < 0 || gj >= g->ny)
        return false;
    return g->map->ocean[(gi % g->nx + g->nx) % g->nx + (long)g->nx * gj];
}

static double depth_at(const geometry *g, int gi, int gj)
{
    if (!is_ocean(gi, gj, g))
        return 0.0;
    if (g->kind == CASE_WAVE)
        return WAVE_DEPTH;
    return g->map->depth[(gi % g->nx + g->nx) % g->nx + (long)g->nx * gj];
}

double hycom_row(const double *rows, const hycom *m, int gj)
{
    return rows[gj + m->width];
}

/* Depth of the top of layer k at rest (k = 1 .. nz-1), positive down. */
static double rest_interface(int nz, int k)
{
    if (nz < 2 || k <= 0)
        return 0.0;
    double total = 0, above = 0;
    for (int m = 0; m < nz - 1; m++) {
        double t = 1.0 + (nz > 2 ? 6.0 * m / (nz - 2) : 0.0);
        total += t;
        if (m < k)
            above += t;
    }
    return UPPER_DEPTH * above / total;
}

/* Interface displacement (m, down) by the initial eddies at the surface; deeper interfaces
 * are displaced less (eddy_taper). */
static double eddies(double lon, double lat)
{
    static const struct {
        double lon, lat, amplitude, radius;
    } e[] = {{-55, 38, 25, 4},  {145, 33, 25, 4}, {25, -40, 25, 4},  {-140, -20, -20, 6},
             {70, -35, -20, 5}, {-30, 55, 15, 5}, {170, -50, -15, 6}};
    double sum = 0;
    for (unsigned k = 0; k < sizeof e / sizeof *e; k++) {
        double dx = remainder(lon - e[k].lon, 360.0) * cos(e[k].lat * M_PI / 180.0);
        double dy = lat - e[k].lat;
        sum += e[k].amplitude * exp(-(dx * dx + dy * dy) / (e[k].radius * e[k].radius));
    }
    return sum;
}

static double eddy_taper(double z)
{
    return 1.0 - 0.9 * z / UPPER_DEPTH;
}

static void initial_layers(hycom *m, const geometry *g)
{
    const esm_layout *l = &m->l3;
    double *rest = esm_calloc(m->nz + 1, sizeof *rest); /* interfaces at rest, k = 0 .. nz */
    for (int k = 0; k <= m->nz; k++)
        rest[k] = rest_interface(m->nz, k);
    for (int lb = 0; lb < m->d.nlocal; lb++) {
        const esm_block *b = &m->d.block[m->d.local[lb]];
        for (int j = 0; j < b->nj; j++)
            for (int i = 0; i < b->ni; i++) {
                int gi = (b->i0 + i) % g->nx, gj = b->j0 + j;
                long p2 = esm_at(&m->l2, lb, i, j, 0);
                double depth = m->depth[p2];
                double eddy = m->kind == CASE_WAVE ? 0.0 : eddies(lon_of(g, gi), lat_of(g, gj));
                for (int k = 0; k < m->nz; k++) {
                    double top, bottom;
                    if (m->kind == CASE_WAVE) {
                        top = depth * k / m->nz;
                        bottom = depth * (k + 1) / m->nz;
                        if (k == 0) /* the surface wave */
                            top = -m->wave_amplitude * cos(m->wave_k * (gi + 0.5) * WAVE_DX);
                    } else {
                        double zt = rest[k], zb = rest[k + 1];
                        top = k ? zt + eddy * eddy_taper(zt) : 0.0;
                        bottom = k + 1 < m->nz ? zb + eddy * eddy_taper(zb) : depth;
                    }
                    m->h[esm_at(l, lb, i, j, k)] = m->mt[p2] * (bottom - top);
                }
            }
    }
    free(rest);
}

static void *basin_map_of(const void *context)
{
    const geometry *g = context;
    basin_map *map = esm_calloc(1, sizeof *map);
    map->ocean = esm_calloc((size_t)g->nx * g->ny, 1);
    map->depth = esm_calloc((size_t)g->nx * g->ny, sizeof *map->depth);
    for (int gj = 0; gj < g->ny; gj++)
        for (int gi = 0; gi < g->nx; gi++) {
            long p = gi + (long)g->nx * gj;
            double depth = esm_geo_depth(lon_of(g, gi), lat_of(g, gj));
            map->ocean[p] = depth > 0;
            map->depth[p] = depth > 0 ? fmin(5500.0, fmax(4000.0, depth)) : 0.0;
        }
    return map;
}

void hycom_create(hycom *m, hycom_case kind, int nx, int ny, int nz, int bx, int by, int width,
                  esm_distribution dist, esm_block_choice choice, esm_halo_engine engine)
{
    *m = (hycom){.kind = kind, .width = width, .nz = nz, .gravity = GRAVITY};
    geometry g = {kind, nx, ny, NULL};
    char key[96];
    snprintf(key, sizeof key, "hycom.%s.%dx%d", kind == CASE_WAVE ? "wave" : "basin", nx, ny);
    if (kind == CASE_BASIN)
        g.map = esm_shared(key, basin_map_of, &g);
    bool mask_owned = kind == CASE_BASIN && esm_shared_owned();
    esm_decomp_params params = {.nx = nx,
                                .ny = ny,
                                .bx = bx,
                                .by = by,
                                .periodic_x = true,
                                .periodic_y = kind == CASE_WAVE,
                                .distribution = dist,
                                .is_ocean = is_ocean,
                                .context = &g,
                                .choice = choice,
                                .min_side = width,
                                .shared_key = key};
    esm_decomp_create(&m->d, &params);
    m->l2 = esm_layout_levels_outer(&m->d, width, 1);
    m->l3 = esm_layout_levels_outer(&m->d, width, nz);
    m->layer_halo = esm_halo_blocks(&m->d, &m->l3, 3, width, engine);
    m->barotropic_halo = esm_halo_blocks(&m->d, &m->l2, 3, width, engine);

    /* rows: widths and Coriolis per global row, halo rows included */
    int rows = ny + 2 * width;
    m->row_dxt = esm_calloc(rows, sizeof(double));
    m->row_dxv = esm_calloc(rows, sizeof(double));
    m->row_fu = esm_calloc(rows, sizeof(double));
    m->row_fv = esm_calloc(rows, sizeof(double));
    double dlon = 2 * M_PI / nx, dlat = 2 * LAT_EDGE / ny * M_PI / 180.0;
    m->dy = kind == CASE_WAVE ? WAVE_DX : EARTH_RADIUS * dlat;
    for (int gj = -width; gj < ny + width; gj++) {
        double lat = lat_of(&g, gj) * M_PI / 180.0, lat_v = lat_of(&g, gj - 0.5) * M_PI / 180.0;
        int r = gj + width;
        if (kind == CASE_WAVE) {
            m->row_dxt[r] = m->row_dxv[r] = WAVE_DX;
            m->row_fu[r] = m->row_fv[r] = WAVE_F;
        } else { /* halo rows beyond the poles stay finite; they are land */
            m->row_dxt[r] = EARTH_RADIUS * dlon * fmax(cos(lat), 0.01);
            m->row_dxv[r] = EARTH_RADIUS * dlon * fmax(cos(lat_v), 0.01);
            m->row_fu[r] = 2 * OMEGA * sin(lat);
            m->row_fv[r] = 2 * OMEGA * sin(lat_v);
        }
    }

    m->row_a = esm_calloc(m->l2.sx + 1, sizeof(double)); /* a row and one more face */
    m->row_b = esm_calloc(m->l2.sx + 1, sizeof(double));
    m->row_c = esm_calloc(m->l2.sx + 1, sizeof(double));
    m->plane_a = esm_calloc(m->l2.block_size, sizeof(double));
    m->plane_b = esm_calloc(m->l2.block_size, sizeof(double));

    /* allocate every field (zero) */
    long n2 = esm_layout_doubles(&m->l2, m->d.nlocal), n3 = esm_layout_doubles(&m->l3, m->d.nlocal);
    double **f2[] = {&m->depth,   &m->mt,     &m->mu,     &m->mv,       &m->eta,      &m->ub,
                     &m->vb,      &m->ubm,    &m->vbm,    &m->hu_total, &m->hv_total, &m->force_u,
                     &m->force_v, &m->mean_u, &m->mean_v, &m->share_u,  &m->share_v};
    double **f3[] = {&m->h, &m->u, &m->v, &m->h_next, &m->u_next, &m->v_next};
    double **temporaries[] = {&m->p, &m->hu, &m->hv};
    m->temporary_blocks = width >= 2 ? 1 : m->d.nlocal; /* see hycom.h */
    for (unsigned a = 0; a < sizeof f2 / sizeof *f2; a++) /* folded: shared between ranks */
        *f2[a] = esm_field_alloc(n2 * sizeof(double));
    for (unsigned a = 0; a < sizeof f3 / sizeof *f3; a++)
        *f3[a] = esm_field_alloc(n3 * sizeof(double));
    for (unsigned a = 0; a < sizeof temporaries / sizeof *temporaries; a++)
        *temporaries[a] =
            esm_field_alloc(esm_layout_doubles(&m->l3, m->temporary_blocks) * sizeof(double));

    /* static fields over blocks and halos, from global indices (no exchange needed) */
    double dx_min = INFINITY, depth_max = 0;
    for (int lb = 0; lb < m->d.nlocal; lb++) {
        const esm_block *b = &m->d.block[m->d.local[lb]];
        for (int j = -width; j < b->nj + width; j++)
            for (int i = -width; i < b->ni + width; i++) {
                long p = esm_at(&m->l2, lb, i, j, 0);
                int gi = b->i0 + i, gj = b->j0 + j;
                if (kind == CASE_WAVE)
                    gj = (gj % ny + ny) % ny;
                m->depth[p] = depth_at(&g, gi, gj);
                m->mt[p] = is_ocean(gi, gj, &g);
                m->mu[p] = m->mt[p] * is_ocean(gi - 1, gj, &g);
                m->mv[p] = m->mt[p] * (kind == CASE_WAVE ? 1.0 : is_ocean(gi, gj - 1, &g));
                if (m->mt[p] && i >= 0 && i < b->ni && j >= 0 && j < b->nj) {
                    dx_min = fmin(dx_min, fmin(hycom_row(m->row_dxt, m, gj), m->dy));
                    depth_max = fmax(depth_max, m->depth[p]);
                }
            }
    }
    double extremes[2] = {-dx_min, depth_max}; /* the CFL limits, from all ranks */
    esm_global_max(extremes, 2);
    dx_min = -extremes[0];
    depth_max = extremes[1];

    /* layers: reduced gravity; time steps from the fastest waves */
    m->gprime = esm_calloc(nz + 1, sizeof(double));
    for (int k = 1; k < nz; k++)
        m->gprime[k] = kind == CASE_WAVE ? 0.0 : GRAVITY * DENSITY_STEP / (nz - 1);
    double c0 = sqrt(GRAVITY * depth_max);
    if (kind == CASE_WAVE) {
        m->wave_amplitude = WAVE_AMPLITUDE;
        m->wave_k = 2 * M_PI / (nx * WAVE_DX);
        m->wave_f = WAVE_F;
        m->wave_depth = WAVE_DEPTH;
        double omega = sqrt(WAVE_F * WAVE_F + GRAVITY * WAVE_DEPTH * m->wave_k * m->wave_k);
        m->dt = 2 * M_PI / omega / 20.0;
        m->viscosity = 0.0;
    } else {
        double c1 = sqrt(GRAVITY * DENSITY_STEP * depth_max); /* bounds the internal waves */
        m->dt = floor(0.5 * dx_min / c1);
        m->viscosity = fmin(1000.0, 0.05 * dx_min * dx_min / m->dt);
    }
    m->substeps = (int)ceil(m->dt / (0.35 * dx_min / c0));
    m->dtau = m->dt / m->substeps;
    if (!esm_folded()) /* folded: the fields are shared, their values mean nothing */
        initial_layers(m, &g);
    if (mask_owned) {
        free(g.map->ocean);
        free(g.map->depth);
        free((void *)g.map);
    }
    esm_region interior = esm_region_full(0);
    m->ok = (valid){.h = interior,
                    .u = interior,
                    .v = interior,
                    .p = interior,
                    .fu = interior,
                    .fv = interior,
                    .eta = interior,
                    .ub = interior,
                    .vb = interior,
                    .ubm = interior,
                    .vbm = interior};
}
