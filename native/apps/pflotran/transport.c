/* Backward-Euler finite volumes for diffusion + reaction of the component totals, per cell c
 * and primary species j (PFLOTRAN's global implicit reactive transport, RTResidual, divided
 * through by phi rho V / dt: the same factor for every row, so the tests are unchanged):
 *
 *   F_j(c) = T_j - T_j,old - sum over faces  dt D / dx^2 (T_j,neighbour - T_j)
 *            - dt / (phi rho) nu_j R
 *
 * T_j the total of component j (mol/kg: primary plus its share of the secondary species,
 * chemistry.c), R the calcite rate (mol per m^3 of rock per s), nu = (+1, -1, +1, 0) for
 * (Ca++, H+, HCO3-, Tracer). Every unknown is ln m (the deck's LOG_FORMULATION), so the
 * Jacobian is dF/d ln m: dT/d ln m = m_j delta_jk + sum_s nu_sj nu_sk m_s in every block, full
 * 3x3 among Ca++, H+ and HCO3- in the off-diagonal blocks too. A face on the domain's edge
 * carries no flux (the deck's zero_gradient boundaries). The activity coefficients are held
 * through a step (chemistry.c), so the Jacobian is exact.
 *
 * Each loop over the cells is a kernel (esm_fold.h) with the bytes it moves per cell: folded,
 * it runs on its first calls and is charged by that cost afterwards. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "pflotran.h"

/* Bytes per cell each kernel reads and writes (doubles: NS per vector, NGAMMA coefficients,
 * NS x NS dT/d ln m, 16 in a 4x4 block). Flops per cell are counted from the code, for an
 * interior cell (six faces carrying flux): every add, subtract, multiply and divide one, exp,
 * log and sqrt one (an undercount of their in-core time), a sign change none; the chemistry's
 * (pflotran.h) as counted there. */
enum {
    CHEMISTRY_BYTES = (NS + NS + NGAMMA + NS + NS * NS) * 8, /* x, conc, lngam, T, dT */
    BEGIN_STEP_BYTES = (NS + NS + 2 * NGAMMA + NS + NS * NS) * 8, /* T, T_old, x, lngam, T, dT */
    RESIDUAL_BYTES = (NS + NGAMMA + NS + NS + NS) * 8,       /* x, lngam, T, T_old, f */
    JACOBIAN_BYTES = (NS + NGAMMA + NS * NS + BLOCKS * BLOCK_SIZE) * 8, /* x, lngam, dT, A */
    RATES_BYTES = (NS + NGAMMA + 1) * 8,                     /* x, lngam, r */
    UPDATE_FLOPS = NS + SPECIATE_FLOPS,                      /* exp of each, the totals */
    RESIDUAL_FLOPS = FACES * NS * 3 + CALCITE_RATE_FLOPS + 1 + NS * 4,
    JACOBIAN_FLOPS = FACES * (1 + BLOCK_SIZE) + CALCITE_RATE_FLOPS + 1 + NS + BLOCK_SIZE * 3,
};

void transport_set_dt(transport *t, double dt)
{
    t->dt = dt;
    for (int a = 0; a < 3; a++)
        t->coupling[a] = dt * t->chem->diffusion / (t->g->width[a] * t->g->width[a]);
}

void transport_create(transport *t, const grid *g, const chemistry *chem, double dt)
{
    *t = (transport){.g = g, .chem = chem};
    transport_set_dt(t, dt);
    long n = g->ncells, ng = g->nghosts + 1;
    t->conc = esm_field_alloc(n * NS * sizeof(double));
    t->lngam = esm_field_alloc(n * NGAMMA * sizeof(double));
    t->total = esm_field_alloc(n * NS * sizeof(double));
    t->dtotal = esm_field_alloc(n * NS * NS * sizeof(double));
    t->total_old = esm_field_alloc(n * NS * sizeof(double));
    t->ln_ghost = esm_field_alloc(ng * NS * sizeof(double));
    t->lngam_ghost = esm_field_alloc(ng * NGAMMA * sizeof(double));
    t->total_ghost = esm_field_alloc(ng * NS * sizeof(double));
    t->dtotal_ghost = esm_field_alloc(ng * NS * NS * sizeof(double));
}

void transport_free(transport *t)
{
    double *fields[] = {t->conc,     t->lngam,       t->total,       t->dtotal,      t->total_old,
                        t->ln_ghost, t->lngam_ghost, t->total_ghost, t->dtotal_ghost};
    for (unsigned f = 0; f < sizeof fields / sizeof *fields; f++)
        esm_field_free(fields[f]);
}

/* Totals and their derivatives of n cells from their ln m and ln gamma. */
static void speciate_cells(const transport *t, long n, const double *ln_m, const double *lngam,
                           double *total, double *dtotal)
{
    for (long c = 0; c < n; c++)
        speciate(t->chem, ln_m + NS * c, lngam + NGAMMA * c, total + NS * c, dtotal + NS * NS * c);
}

/* The ghost cells' chemistry: computed from the ghost update of ln m and the ghosts' own
 * activity coefficients, which every rank computes as the owner does (PFLOTRAN's auxiliary
 * variables on ghosted cells): no more messages than the unknowns'. */
static void ghost_chemistry(transport *t, bool update_activities)
{
    static const esm_kernel kernel = {.name = "pflotran.ghost_chemistry", .flops = SPECIATE_FLOPS};
    static const esm_kernel with_activities = {.name = "pflotran.ghost_chemistry_step",
                                               .flops = ACTIVITY_FLOPS + SPECIATE_FLOPS};
    const esm_kernel *k = update_activities ? &with_activities : &kernel;
    long n = t->g->nghosts;
    double bytes = update_activities ? BEGIN_STEP_BYTES : CHEMISTRY_BYTES - NS * 8; /* no m */
    if (!esm_kernel_begin(k, (double)n, bytes * n))
        return;
    for (long c = 0; update_activities && c < n; c++)
        activity_update(t->chem, t->ln_ghost + NS * c, t->lngam_ghost + NGAMMA * c);
    speciate_cells(t, n, t->ln_ghost, t->lngam_ghost, t->total_ghost, t->dtotal_ghost);
    esm_kernel_end(k);
}

void transport_update(transport *t, const double *x)
{
    static const esm_kernel kernel = {.name = "pflotran.update", .flops = UPDATE_FLOPS};
    long n = t->g->ncells;
    t->ln_conc = x;
    if (esm_kernel_begin(&kernel, (double)n, (double)CHEMISTRY_BYTES * n)) {
        for (long e = 0; e < n * NS; e++)
            t->conc[e] = exp(x[e]);
        speciate_cells(t, n, x, t->lngam, t->total, t->dtotal);
        esm_kernel_end(&kernel);
    }
    esm_scatter_update(t->g->scatter, x, t->ln_ghost); /* DMGlobalToLocal */
    ghost_chemistry(t, false);
}

void transport_equilibrate_activities(transport *t)
{
    for (long c = 0; c < t->g->ncells; c++)
        activity_equilibrate(t->chem, t->ln_conc + NS * c, t->lngam + NGAMMA * c);
    for (long c = 0; c < t->g->nghosts; c++)
        activity_equilibrate(t->chem, t->ln_ghost + NS * c, t->lngam_ghost + NGAMMA * c);
    speciate_cells(t, t->g->ncells, t->ln_conc, t->lngam, t->total, t->dtotal);
    speciate_cells(t, t->g->nghosts, t->ln_ghost, t->lngam_ghost, t->total_ghost, t->dtotal_ghost);
}

void transport_begin_step(transport *t)
{
    static const esm_kernel kernel = {.name = "pflotran.begin_step",
                                      .flops = ACTIVITY_FLOPS + SPECIATE_FLOPS};
    long n = t->g->ncells;
    if (esm_kernel_begin(&kernel, (double)n, (double)BEGIN_STEP_BYTES * n)) {
        memcpy(t->total_old, t->total, n * NS * sizeof(double));
        for (long c = 0; c < n; c++)
            activity_update(t->chem, t->ln_conc + NS * c, t->lngam + NGAMMA * c);
        speciate_cells(t, n, t->ln_conc, t->lngam, t->total, t->dtotal);
        esm_kernel_end(&kernel);
    }
    ghost_chemistry(t, true);
}

/* The totals across face f of local cell (i, j, k): a local cell, a ghost, or NULL
 * at the domain's edge. */
static inline const double *across(const transport *t, int f, int i, int j, int k, long c)
{
    const grid *g = t->g;
    bool inside;
    long step;
    switch (f) {
    case WEST:
        inside = i > 0;
        step = -1;
        break;
    case EAST:
        inside = i < g->mx - 1;
        step = 1;
        break;
    case SOUTH:
        inside = j > 0;
        step = -g->mx;
        break;
    case NORTH:
        inside = j < g->my - 1;
        step = g->mx;
        break;
    case BOTTOM:
        inside = k > 0;
        step = -(long)g->mx * g->my;
        break;
    default:
        inside = k < g->mz - 1;
        step = (long)g->mx * g->my;
        break;
    }
    if (inside)
        return t->total + NS * (c + step);
    if (g->neighbour[f] < 0)
        return NULL;
    return t->total_ghost + NS * (g->ghost_at[f] + grid_face_index(g, f, i, j, k));
}

void transport_residual(const transport *t, double *f)
{
    /* 6 faces x 4 species x 3, the rate and its scaling, 4 for each of the four rows */
    static const esm_kernel kernel = {.name = "pflotran.residual", .flops = RESIDUAL_FLOPS};
    const grid *g = t->g;
    if (!esm_kernel_begin(&kernel, (double)g->ncells, (double)RESIDUAL_BYTES * g->ncells))
        return;
    const double per_water = t->dt / (t->chem->porosity * t->chem->density);
    const double *nu = calcite_stoichiometry();
    for (int k = 0; k < g->mz; k++)
        for (int j = 0; j < g->my; j++)
            for (int i = 0; i < g->mx; i++) {
                long c = grid_cell(g, i, j, k);
                const double *now = t->total + NS * c, *old = t->total_old + NS * c;
                double diffusion[NS] = {0};
                for (int face = 0; face < FACES; face++) {
                    const double *other = across(t, face, i, j, k, c);
                    if (!other)
                        continue;
                    double a = t->coupling[face / 2];
                    for (int s = 0; s < NS; s++)
                        diffusion[s] += a * (other[s] - now[s]);
                }
                double reacted =
                    per_water * calcite_rate(t->chem, t->ln_conc + NS * c, t->lngam + NGAMMA * c).r;
                double *out = f + NS * c;
                for (int s = 0; s < NS; s++)
                    out[s] = now[s] - old[s] - diffusion[s] - nu[s] * reacted;
            }
    esm_kernel_end(&kernel);
}

/* The dT/d ln m of the cell across face f (as across()). */
static inline const double *dtotal_across(const transport *t, int f, int i, int j, int k, long c)
{
    const double *other = across(t, f, i, j, k, c);
    if (!other)
        return NULL;
    if (other >= t->total && other < t->total + NS * t->g->ncells)
        return t->dtotal + NS * (other - t->total);
    return t->dtotal_ghost + NS * (other - t->total_ghost);
}

void transport_jacobian(const transport *t, block_matrix *A)
{
    /* per face 1 + 16, the rate, 1 + 4 for its scaling, 3 per diagonal entry */
    static const esm_kernel kernel = {.name = "pflotran.jacobian", .flops = JACOBIAN_FLOPS};
    const grid *g = t->g;
    if (!esm_kernel_begin(&kernel, (double)g->ncells, (double)JACOBIAN_BYTES * g->ncells))
        return;
    const double per_water = t->dt / (t->chem->porosity * t->chem->density);
    const double *nu = calcite_stoichiometry();
    for (int k = 0; k < g->mz; k++)
        for (int j = 0; j < g->my; j++)
            for (int i = 0; i < g->mx; i++) {
                long c = grid_cell(g, i, j, k);
                double *blocks = A->block + c * BLOCKS * BLOCK_SIZE;
                memset(blocks, 0, BLOCKS * BLOCK_SIZE * sizeof(double));
                double coupled = 0; /* sum of dt D / dx^2 over the faces that carry flux */
                for (int face = 0; face < FACES; face++) {
                    const double *other = dtotal_across(t, face, i, j, k, c);
                    if (!other)
                        continue;
                    double a = t->coupling[face / 2], *b = blocks + face * BLOCK_SIZE;
                    coupled += a;
                    for (int e = 0; e < BLOCK_SIZE; e++)
                        b[e] = -a * other[e];
                }
                rate r = calcite_rate(t->chem, t->ln_conc + NS * c, t->lngam + NGAMMA * c);
                const double *own = t->dtotal + NS * NS * c;
                double *d = blocks + DIAGONAL * BLOCK_SIZE, scale = 1.0 + coupled, p[NS];
                for (int s = 0; s < NS; s++)
                    p[s] = per_water * nu[s];
                for (int s = 0; s < NS; s++)
                    for (int q = 0; q < NS; q++)
                        d[s * NS + q] = scale * own[s * NS + q] - p[s] * r.d[q];
            }
    esm_kernel_end(&kernel);
}

void transport_rates(const transport *t, double *r)
{
    static const esm_kernel kernel = {.name = "pflotran.rates", .flops = CALCITE_RATE_FLOPS};
    if (!esm_kernel_begin(&kernel, (double)t->g->ncells, (double)RATES_BYTES * t->g->ncells))
        return;
    for (long c = 0; c < t->g->ncells; c++)
        r[c] = calcite_rate(t->chem, t->ln_conc + NS * c, t->lngam + NGAMMA * c).r;
    esm_kernel_end(&kernel);
}
