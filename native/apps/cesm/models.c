/* The component models: atmosphere, ocean, land, sea ice. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "models.h"

#define DIFFUSIVITY_ATM 1.5e6   /* m2 s-1 */
#define DIFFUSIVITY_OCN 5.0e3
#define WIND_SOLID 15.0         /* m s-1 at the equator */

static double rad(double degrees)
{
    return degrees * M_PI / 180.0;
}

void points_of(const esm_decomp *d, const cesm_grid *g, const unsigned char *active,
               const double *area_factor, const esm_layout *layout, cesm_points *pts, long **at)
{
    long n = 0;
    for (int lb = 0; lb < d->nlocal; lb++) {
        const esm_block *b = &d->block[d->local[lb]];
        for (int j = 0; j < b->nj; j++)
            for (int i = 0; i < b->ni; i++)
                n += !active || active[(b->i0 + i) + (long)g->nx * (b->j0 + j)];
    }
    *pts = (cesm_points){.n = n,
                         .global = esm_calloc(n + 1, sizeof(long)),
                         .lat = esm_calloc(n + 1, sizeof(double)),
                         .area = esm_calloc(n + 1, sizeof(double))};
    if (at)
        *at = esm_calloc(n + 1, sizeof(long));
    n = 0;
    for (int lb = 0; lb < d->nlocal; lb++) {
        const esm_block *b = &d->block[d->local[lb]];
        for (int j = 0; j < b->nj; j++)
            for (int i = 0; i < b->ni; i++) {
                long gi = (b->i0 + i) + (long)g->nx * (b->j0 + j);
                if (active && !active[gi])
                    continue;
                pts->global[n] = gi;
                pts->lat[n] = g->lat[b->j0 + j];
                pts->area[n] = g->area[b->j0 + j] * (area_factor ? area_factor[gi] : 1.0);
                if (at)
                    (*at)[n] = esm_at(layout, lb, i, j, 0);
                n++;
            }
    }
}

/* Meridional diffusion coefficients in flux form: dT_j = ky_n (T_n - T) - ky_s (T - T_s). */
static void meridional(const cesm_grid *g, double kappa_dt, double **north, double **south)
{
    double r2 = EARTH_RADIUS * EARTH_RADIUS;
    *north = esm_calloc(g->ny, sizeof **north);
    *south = esm_calloc(g->ny, sizeof **south);
    for (int j = 0; j < g->ny; j++) {
        double ds = sin(rad(g->lat_edge[j + 1])) - sin(rad(g->lat_edge[j]));
        if (j + 1 < g->ny)
            (*north)[j] = kappa_dt * cos(rad(g->lat_edge[j + 1])) /
                          (r2 * ds * rad(g->lat[j + 1] - g->lat[j]));
        if (j > 0)
            (*south)[j] =
                kappa_dt * cos(rad(g->lat_edge[j])) / (r2 * ds * rad(g->lat[j] - g->lat[j - 1]));
    }
}

double *cesm_values(long n)
{
    return esm_field_alloc((size_t)(n + 1) * sizeof(double));
}

void cesm_values_into(double *dst[], long n, int nfields)
{
    for (int f = 0; f < nfields; f++)
        dst[f] = cesm_values(n);
}

/* ---- atmosphere ---------------------------------------------------------------------------- */

void atm_create(atm_model *m, const cesm_grid *g, int bx, int by, int substeps, double dt)
{
    esm_decomp_create(&m->d, &(esm_decomp_params){.nx = g->nx,
                                                  .ny = g->ny,
                                                  .bx = bx,
                                                  .by = by,
                                                  .periodic_x = true,
                                                  .distribution = ESM_DIST_SFC});
    m->l = esm_layout_levels_outer(&m->d, 1, 1);
    m->halo = esm_halo_blocks(&m->d, &m->l, 1, 1, ESM_HALO_ISEND);
    long n = esm_layout_doubles(&m->l, m->d.nlocal);
    m->t = cesm_values(n);
    m->t_next = cesm_values(n);
    m->substeps = substeps;
    m->dt = dt / substeps;
    double dx = EARTH_RADIUS * rad(g->dlon);
    m->courant = WIND_SOLID * m->dt / dx;
    m->kx = DIFFUSIVITY_ATM * m->dt / (dx * dx);
    meridional(g, DIFFUSIVITY_ATM * m->dt, &m->ky_n, &m->ky_s);
    points_of(&m->d, g, NULL, NULL, &m->l, &m->pts, &m->at);
    m->olr = cesm_values(m->pts.n);
    m->g = g;
    m->lon = esm_calloc(m->pts.n + 1, sizeof *m->lon); /* private: steers the radiation */
    m->sw = cesm_values(m->pts.n);
    for (long p = 0; p < m->pts.n; p++) {
        double c = cos(rad(m->pts.lat[p]));
        m->t[m->at[p]] = -15.0 + 40.0 * c * c;
        m->lon[p] = cesm_lon(g, (int)(m->pts.global[p] % g->nx));
    }
}

/* The models' kernels, for folding (esm_fold.h): charged after their first calls when
 * folded. Bytes by the byte model: the doubles (and indices) a point reads and writes. */
static const esm_kernel k_atm = {.name = "cesm.atm.substep"}, k_ocn = {.name = "cesm.ocn.substep"},
                        k_lnd = {.name = "cesm.lnd.run"}, k_ice = {.name = "cesm.ice.run"},
                        k_rad = {.name = "cesm.atm.radiation"};

/* CAM's shortwave (radiation_tend): the top-of-atmosphere sunlight S0 cos(zenith) on the
 * sunlit columns (those CAM hands to RRTMG_SW), zero on the others. The cost is charged as
 * CAM 1.0 shares it: its physics chunks are made of each process's own dynamics columns
 * (phys_loadbalance = 0, the default) and the FV dynamics owns latitude bands, so a rank's
 * columns are an even contiguous piece of the columns in latitude order, and its radiation
 * the sunlit ones among them (a polar band is all day or all night near a solstice). Bytes:
 * a sunlit column reads its latitude and longitude and writes its shortwave, a dark one
 * writes zero. */
static void atm_radiation(atm_model *m, double seconds)
{
    long columns = m->g->nx * (long)m->g->ny, own = cesm_share(columns, esm_ranks(), esm_rank());
    long first = cesm_share_first(columns, esm_ranks(), esm_rank());
    long mine = m->uniform ? m->pts.n : cesm_sunlit_columns(m->g, seconds, first, own);
    long dark = m->uniform ? 0 : own - mine;
    m->work_radiation += mine;
    if (esm_kernel_begin(&k_rad, (double)(mine + dark), 24.0 * mine + 8.0 * dark)) {
        for (long p = 0; p < m->pts.n; p++) {
            double c = cesm_cos_zenith(m->pts.lat[p], m->lon[p], seconds);
            m->sw[p] = c > 0.0 ? SOLAR * c : 0.0;
        }
        esm_kernel_end(&k_rad);
    }
}

void atm_export(atm_model *m, double seconds, long step, double dt, double *const a2x[])
{
    if (cesm_radiation_due(step, dt))
        atm_radiation(m, seconds);
    for (long p = 0; p < m->pts.n; p++) {
        a2x[A2X_T][p] = m->t[m->at[p]];
        a2x[A2X_SW][p] = m->sw[p];
        a2x[A2X_WIND][p] = cesm_wind(m->pts.lat[p]);
    }
}

void atm_run(atm_model *m, const double *const x2a[])
{
    const double *flux = x2a[X2A_FLUX];
    long sj = m->l.stride_j;
    for (int s = 0; s < m->substeps; s++) {
        esm_halo_update(m->halo, (double *const[]){m->t});
        m->work += m->pts.n;
        if (cesm_kernel_begin(&k_atm, &m->cost, (double)m->pts.n, 64.0 * m->pts.n)) {
            for (long p = 0; p < m->pts.n; p++) {
                long q = m->at[p];
                int gj = (int)(m->pts.global[p] / m->d.nx);
                double t = m->t[q], w = m->t[q - 1], e = m->t[q + 1];
                double olr = OLR_A + OLR_B * t;
                m->olr[p] += m->pts.area[p] * olr * m->dt;
                m->t_next[q] = t - m->courant * (t - w) + m->kx * (e - 2.0 * t + w) +
                               m->ky_n[gj] * (m->t[q + sj] - t) - m->ky_s[gj] * (t - m->t[q - sj]) +
                               m->dt / HEAT_CAPACITY_ATM * (flux[p] - olr);
            }
            esm_kernel_end(&k_atm);
        }
        double *swap = m->t;
        m->t = m->t_next;
        m->t_next = swap;
    }
}

void atm_energy(const atm_model *m, esm_sum *e)
{
    for (long p = 0; p < m->pts.n; p++)
        esm_sum_add(e, m->pts.area[p] * HEAT_CAPACITY_ATM * m->t[m->at[p]]);
}

/* ---- ocean --------------------------------------------------------------------------------- */

static bool is_active(int i, int j, const void *grid)
{
    const cesm_grid *g = grid;
    return g->active[i + (long)g->nx * j];
}

void ocn_create(ocn_model *m, const cesm_grid *g, int bx, int by, int substeps, double dt)
{
    esm_decomp_create(&m->d, &(esm_decomp_params){.nx = g->nx,
                                                  .ny = g->ny,
                                                  .bx = bx,
                                                  .by = by,
                                                  .periodic_x = true,
                                                  .distribution = ESM_DIST_SFC,
                                                  .is_ocean = is_active,
                                                  .context = g});
    m->l = esm_layout_levels_outer(&m->d, 1, 1);
    m->halo = esm_halo_blocks(&m->d, &m->l, 1, 1, ESM_HALO_ISEND);
    long n = esm_layout_doubles(&m->l, m->d.nlocal);
    m->t = cesm_values(n);
    m->t_next = cesm_values(n);
    m->mask = cesm_values(n);
    for (int lb = 0; lb < m->d.nlocal; lb++) { /* the mask over blocks and halos, from the grid */
        const esm_block *b = &m->d.block[m->d.local[lb]];
        for (int j = -1; j <= b->nj; j++)
            for (int i = -1; i <= b->ni; i++) {
                int gi = ((b->i0 + i) % g->nx + g->nx) % g->nx, gj = b->j0 + j;
                if (gj >= 0 && gj < g->ny)
                    m->mask[esm_at(&m->l, lb, i, j, 0)] = g->active[gi + (long)g->nx * gj];
            }
    }
    m->substeps = substeps;
    m->dt = dt / substeps;
    m->kx = esm_calloc(g->ny, sizeof *m->kx);
    for (int j = 0; j < g->ny; j++) {
        double dx = EARTH_RADIUS * rad(g->dlon) * cos(rad(g->lat[j]));
        m->kx[j] = DIFFUSIVITY_OCN * m->dt / (dx * dx);
    }
    meridional(g, DIFFUSIVITY_OCN * m->dt, &m->ky_n, &m->ky_s);
    points_of(&m->d, g, g->active, NULL, &m->l, &m->pts, &m->at);
    for (long p = 0; p < m->pts.n; p++) {
        double c = cos(rad(m->pts.lat[p]));
        m->t[m->at[p]] = fmax(FREEZING, -4.0 + 32.0 * c * c);
    }
}

void ocn_export(const ocn_model *m, double *const o2x[])
{
    for (long p = 0; p < m->pts.n; p++) {
        o2x[O2X_T][p] = m->t[m->at[p]];
        o2x[O2X_FRAZIL][p] = 0.0;
    }
}

void ocn_run(ocn_model *m, const double *const x2o[], double *const o2x[])
{
    const double *heat = x2o[X2O_HEAT];
    double *frazil = o2x[O2X_FRAZIL];
    long sj = m->l.stride_j;
    for (long p = 0; p < m->pts.n; p++)
        frazil[p] = 0.0;
    for (int s = 0; s < m->substeps; s++) {
        esm_halo_update(m->halo, (double *const[]){m->t});
        m->work += m->pts.n;
        if (cesm_kernel_begin(&k_ocn, &m->cost, (double)m->pts.n, 72.0 * m->pts.n)) {
            for (long p = 0; p < m->pts.n; p++) {
                long q = m->at[p];
                int gj = (int)(m->pts.global[p] / m->d.nx);
                const double *t = m->t, *k = m->mask;
                double forcing = (m->leak && p == 0) ? 0.0 : heat[p];
                double next =
                    t[q] +
                    m->kx[gj] * (k[q + 1] * (t[q + 1] - t[q]) - k[q - 1] * (t[q] - t[q - 1])) +
                    m->ky_n[gj] * k[q + sj] * (t[q + sj] - t[q]) -
                    m->ky_s[gj] * k[q - sj] * (t[q] - t[q - sj]) +
                    m->dt / HEAT_CAPACITY_OCN * forcing;
                if (next < FREEZING) {     /* frazil: the deficit goes to the ice */
                    frazil[p] += HEAT_CAPACITY_OCN * (next - FREEZING);
                    next = FREEZING;
                }
                m->t_next[q] = next;
            }
            esm_kernel_end(&k_ocn);
        }
        double *swap = m->t;
        m->t = m->t_next;
        m->t_next = swap;
    }
    for (long p = 0; p < m->pts.n; p++)
        o2x[O2X_T][p] = m->t[m->at[p]];
}

void ocn_energy(const ocn_model *m, esm_sum *e)
{
    for (long p = 0; p < m->pts.n; p++)
        esm_sum_add(e, m->pts.area[p] * HEAT_CAPACITY_OCN * m->t[m->at[p]]);
}

/* ---- land ---------------------------------------------------------------------------------- */

typedef struct {
    const double *fraction;
    int nx;
} land_context;

static bool has_land(int i, int j, const void *context)
{
    const land_context *c = context;
    return c->fraction[i + (long)c->nx * j] > 0.0;
}

void lnd_create(lnd_model *m, const cesm_grid *atm, const double *land_fraction, int bx, int by)
{
    land_context context = {land_fraction, atm->nx};
    esm_decomp_create(&m->d, &(esm_decomp_params){.nx = atm->nx,
                                                  .ny = atm->ny,
                                                  .bx = bx,
                                                  .by = by,
                                                  .periodic_x = true,
                                                  .distribution = ESM_DIST_SFC,
                                                  .is_ocean = has_land,
                                                  .context = &context});
    unsigned char *land = esm_calloc((size_t)atm->nx * atm->ny, 1);
    for (long p = 0; p < (long)atm->nx * atm->ny; p++) {
        land[p] = land_fraction[p] > 0.0;
        m->total += land[p];
    }
    points_of(&m->d, atm, land, land_fraction, NULL, &m->pts, NULL);
    free(land);
    m->t = cesm_values(m->pts.n);
    m->sw = cesm_values(m->pts.n);
    for (long p = 0; p < m->pts.n; p++) {
        double c = cos(rad(m->pts.lat[p]));
        m->t[p] = -15.0 + 40.0 * c * c;
    }
}

/* Explicit: the flux to the air uses the temperature at the start of the interval, and is the
 * one reported to the coupler, so what the land loses the atmosphere gains. */
void lnd_run(lnd_model *m, const double *const x2l[], double *const l2x[], double dt)
{
    /* CLM deals its land grid cells round-robin to clumps, one or more per rank
     * (decompInitMod): an even share each, whatever blocks the proxy's points came in */
    long mine = m->uniform ? m->pts.n : cesm_share(m->total, esm_ranks(), esm_rank());
    m->work += mine;
    if (cesm_kernel_begin(&k_lnd, &m->cost, (double)mine, 80.0 * mine)) {
        for (long p = 0; p < m->pts.n; p++) {
            double sw = (1.0 - ALBEDO_LND) * x2l[X2L_SW][p];
            double flux = cesm_exchange(x2l[X2L_WIND][p]) * (m->t[p] - x2l[X2L_T][p]);
            m->sw[p] += m->pts.area[p] * sw * dt;
            m->t[p] += dt / HEAT_CAPACITY_LND * (sw - flux);
            l2x[L2X_FLUX][p] = flux;
            l2x[L2X_T][p] = m->t[p];
        }
        esm_kernel_end(&k_lnd);
    }
}

void lnd_energy(const lnd_model *m, esm_sum *e)
{
    for (long p = 0; p < m->pts.n; p++)
        esm_sum_add(e, m->pts.area[p] * HEAT_CAPACITY_LND * m->t[p]);
}

/* ---- sea ice ------------------------------------------------------------------------------- */

void ice_create(ice_model *m, const cesm_grid *ocn, int bx, int by)
{
    esm_decomp_create(&m->d, &(esm_decomp_params){.nx = ocn->nx,
                                                  .ny = ocn->ny,
                                                  .bx = bx,
                                                  .by = by,
                                                  .periodic_x = true,
                                                  .distribution = ESM_DIST_SFC,
                                                  .is_ocean = is_active,
                                                  .context = ocn});
    points_of(&m->d, ocn, ocn->active, NULL, NULL, &m->pts, NULL);
    m->h = cesm_values(m->pts.n);
    m->sw = cesm_values(m->pts.n);
    double edge[2];
    cesm_ice_edges(ocn, 0.0, edge); /* the ice starts where the climatology has it */
    for (long p = 0; p < m->pts.n; p++)
        m->h[p] = cesm_icy(m->pts.lat[p], edge) ? 2.0 : 0.0;
}

/* Per point, over one coupling interval: new ice from frazil; with ice, the surface temperature
 * from SW + F_cond = k (Ts - Ta) (clamped at 0 C, the excess melting the top), basal growth by
 * conduction minus the ocean's heat; ice melted beyond zero thickness returns its heat to the
 * ocean. Exports (cell means): fraction, flux to the air, heat into the ocean, surface T. */
void ice_run(ice_model *m, const double *const x2i[], double *const i2x[], double dt,
             const double edge[2])
{
    /* CICE's thermodynamics runs on the cells with ice only (its icells lists); an ice-free
     * cell reads its thickness and frazil and writes its four exports (48 B), an icy one
     * reads and writes 112 B. The ice is where the climatology (work.c) has it now, on the
     * proxy's CICE blocks: a rank whose blocks hold no ice does little. */
    long icy = m->uniform ? m->pts.n : cesm_icy_points(&m->pts, edge);
    m->work += icy;
    /* CESM's cost (--cost cesm-*) falls on every point of the rank's blocks: CICE 1.0.3's
     * ranks took 26.7-29.0 s a model day on DAS-4 (cost.c), within 9 % of each other, which
     * a cost on the icy points of the proxy's blocks alone would contradict */
    if (cesm_kernel_begin(&k_ice, &m->cost, (double)m->pts.n,
                          112.0 * icy + 48.0 * (m->pts.n - icy))) {
        for (long p = 0; p < m->pts.n; p++) {
            double h = m->h[p] - x2i[X2I_FRAZIL][p] / ICE_LATENT;
            double frac = h > 0 ? fmin(1.0, h / ICE_FULL) : 0.0, ta = x2i[X2I_T][p],
                   to = x2i[X2I_TO][p];
            double flux = 0, qio = 0, ts = FREEZING;
            if (h > 0) {
                double k = cesm_exchange(x2i[X2I_WIND][p]), cond = ICE_CONDUCTIVITY / fmax(h, 0.05);
                double sw = (1.0 - ALBEDO_ICE) * x2i[X2I_SW][p];
                ts = (sw + k * ta + cond * FREEZING) / (k + cond);
                double melt = 0;
                if (ts > 0.0) {
                    ts = 0.0;
                    melt = sw + cond * (FREEZING - ts) - k * (ts - ta);
                }
                double up = k * (ts - ta), fcond = cond * (FREEZING - ts);
                double from_ocean = to > FREEZING ? ICE_OCEAN_EXCHANGE * (to - FREEZING) : 0.0;
                m->sw[p] += m->pts.area[p] * frac * sw * dt;
                h += frac * dt * (fcond - from_ocean - melt) / ICE_LATENT;
                flux = frac * up;
                qio = -frac * from_ocean;
                if (h < 0) { /* melted through: the rest of the heat warms the ocean */
                    qio += -h * ICE_LATENT / dt;
                    h = 0;
                }
            }
            m->h[p] = h;
            i2x[I2X_FRAC][p] = frac; /* the fraction these fluxes were computed over */
            i2x[I2X_FLUX][p] = flux;
            i2x[I2X_QIO][p] = qio;
            i2x[I2X_TSFC][p] = ts;
        }
        esm_kernel_end(&k_ice);
    }
}

void ice_energy(const ice_model *m, esm_sum *e)
{
    for (long p = 0; p < m->pts.n; p++)
        esm_sum_add(e, -m->pts.area[p] * ICE_LATENT * m->h[p]);
}
