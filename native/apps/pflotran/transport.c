/* Backward-Euler finite volumes for diffusion + reaction, per cell c and species s
 * (concentrations in mol/m^3 of water, divided through by porosity x volume / dt):
 *
 *   F_s(c) = C_s - C_s,old - sum over faces  dt D / dx^2 (C_s,neighbour - C_s)  -  dt/phi nu_s R
 *
 * with nu = (+1, -1, +1, 0) for (Ca++, H+, HCO3-, Tracer). A face on the domain's edge carries
 * no flux (zero gradient). The H+ rows are divided by [H+] at the start of the step, so that
 * the Newton and Krylov norms weigh every species by its relative change, and the H+ unknown
 * is ln[H+], so [H+] stays positive across orders of magnitude.
 *
 * Each loop over the cells is a kernel (esm_fold.h) with the bytes it moves per cell: folded,
 * it runs on its first calls and is charged by that cost afterwards. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "pflotran.h"

/* Bytes per cell each kernel reads and writes (doubles: 4 unknowns, 16 in a 4x4 block). Its
 * flops per cell are counted from the code, for an interior cell (six faces carrying flux):
 * every add, subtract, multiply and divide one, exp() one (an undercount of its in-core time),
 * a sign change none; calcite_rate (chemistry.c) is CALCITE_RATE_FLOPS. */
enum {
    UPDATE_BYTES = (NS + NS) * 8,                        /* x, conc */
    BEGIN_STEP_BYTES = (NS + NS + 1) * 8,                /* conc, conc_old, h_scale */
    RESIDUAL_BYTES = (NS + NS + 1 + NS) * 8,             /* conc, conc_old, h_scale, f */
    JACOBIAN_BYTES = (NS + 1) * 8 + BLOCKS * BLOCK_SIZE * 8, /* conc, h_scale, 7 blocks */
    RATES_BYTES = (NS + 1) * 8,                          /* conc, r */
};

void transport_create(transport *t, const grid *g, const chemistry *chem, double dt)
{
    *t = (transport){.g = g, .chem = chem, .dt = dt};
    for (int a = 0; a < 3; a++)
        t->coupling[a] = dt * chem->diffusion / (g->width[a] * g->width[a]);
    t->conc = esm_field_alloc(g->ncells * NS * sizeof(double));
    t->conc_old = esm_field_alloc(g->ncells * NS * sizeof(double));
    t->conc_ghost = esm_field_alloc((g->nghosts * NS + 1) * sizeof(double));
    t->h_scale = esm_field_alloc(g->ncells * sizeof(double));
}

void transport_free(transport *t)
{
    esm_field_free(t->conc);
    esm_field_free(t->conc_old);
    esm_field_free(t->conc_ghost);
    esm_field_free(t->h_scale);
}

void transport_update(transport *t, const double *x)
{
    static esm_kernel kernel = {.name = "pflotran.update", .flops = 1}; /* exp */
    long n = t->g->ncells;
    if (esm_kernel_begin(&kernel, (double)n, (double)UPDATE_BYTES * n)) {
        for (long c = 0; c < n; c++) {
            const double *u = x + NS * c;
            double *v = t->conc + NS * c;
            v[CA] = u[CA];
            v[H] = exp(u[H]);
            v[HCO3] = u[HCO3];
            v[TRACER] = u[TRACER];
        }
        esm_kernel_end(&kernel);
    }
    esm_scatter_update(t->g->scatter, t->conc, t->conc_ghost); /* DMGlobalToLocal */
}

void transport_begin_step(transport *t)
{
    static esm_kernel kernel = {.name = "pflotran.begin_step", .flops = 1}; /* 1 / [H+] */
    if (!esm_kernel_begin(&kernel, (double)t->g->ncells, (double)BEGIN_STEP_BYTES * t->g->ncells))
        return;
    memcpy(t->conc_old, t->conc, t->g->ncells * NS * sizeof(double));
    for (long c = 0; c < t->g->ncells; c++)
        t->h_scale[c] = 1.0 / t->conc_old[NS * c + H];
    esm_kernel_end(&kernel);
}

/* The concentrations across face f of local cell (i, j, k): a local cell, a ghost, or NULL
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
        return t->conc + NS * (c + step);
    if (g->neighbour[f] < 0)
        return NULL;
    return t->conc_ghost + NS * (g->ghost_at[f] + grid_face_index(g, f, i, j, k));
}

void transport_residual(const transport *t, double *f)
{
    /* 6 faces x 4 species x 3, the rate and its scaling, 12 for the four rows */
    static esm_kernel kernel = {.name = "pflotran.residual",
                                .flops = FACES * NS * 3 + CALCITE_RATE_FLOPS + 1 + 12};
    const grid *g = t->g;
    if (!esm_kernel_begin(&kernel, (double)g->ncells, (double)RESIDUAL_BYTES * g->ncells))
        return;
    const double per_porosity = t->dt / t->chem->porosity;
    for (int k = 0; k < g->mz; k++)
        for (int j = 0; j < g->my; j++)
            for (int i = 0; i < g->mx; i++) {
                long c = grid_cell(g, i, j, k);
                const double *now = t->conc + NS * c, *old = t->conc_old + NS * c;
                double diffusion[NS] = {0};
                for (int face = 0; face < FACES; face++) {
                    const double *other = across(t, face, i, j, k, c);
                    if (!other)
                        continue;
                    double a = t->coupling[face / 2];
                    for (int s = 0; s < NS; s++)
                        diffusion[s] += a * (other[s] - now[s]);
                }
                double reacted = per_porosity * calcite_rate(t->chem, now[CA], now[H], now[HCO3]).r;
                double *out = f + NS * c;
                out[CA] = now[CA] - old[CA] - diffusion[CA] - reacted;
                out[H] = t->h_scale[c] * (now[H] - old[H] - diffusion[H] + reacted);
                out[HCO3] = now[HCO3] - old[HCO3] - diffusion[HCO3] - reacted;
                out[TRACER] = now[TRACER] - old[TRACER] - diffusion[TRACER];
            }
    esm_kernel_end(&kernel);
}

#define AT(s, q) ((s) * NS + (q))

void transport_jacobian(const transport *t, block_matrix *A)
{
    /* 6 faces x 3, the rate, 20 for the diagonal block's entries */
    static esm_kernel kernel = {.name = "pflotran.jacobian",
                                .flops = FACES * 3 + CALCITE_RATE_FLOPS + 20};
    const grid *g = t->g;
    if (!esm_kernel_begin(&kernel, (double)g->ncells, (double)JACOBIAN_BYTES * g->ncells))
        return;
    const double per_porosity = t->dt / t->chem->porosity;
    for (int k = 0; k < g->mz; k++)
        for (int j = 0; j < g->my; j++)
            for (int i = 0; i < g->mx; i++) {
                long c = grid_cell(g, i, j, k);
                const double *now = t->conc + NS * c;
                double w = t->h_scale[c], *blocks = A->block + c * BLOCKS * BLOCK_SIZE;
                memset(blocks, 0, BLOCKS * BLOCK_SIZE * sizeof(double));
                double coupled = 0; /* sum of dt D / dx^2 over the faces that carry flux */
                for (int face = 0; face < FACES; face++) {
                    const double *other = across(t, face, i, j, k, c);
                    if (!other)
                        continue;
                    double a = t->coupling[face / 2], *b = blocks + face * BLOCK_SIZE;
                    coupled += a;
                    b[AT(CA, CA)] = -a;
                    b[AT(H, H)] = -w * a * other[H]; /* d/d ln[H+] of the neighbour */
                    b[AT(HCO3, HCO3)] = -a;
                    b[AT(TRACER, TRACER)] = -a;
                }
                rate r = calcite_rate(t->chem, now[CA], now[H], now[HCO3]);
                double *d = blocks + DIAGONAL * BLOCK_SIZE, p = per_porosity;
                d[AT(CA, CA)] = 1.0 + coupled - p * r.d_ca;
                d[AT(CA, H)] = -p * r.d_lnh;
                d[AT(CA, HCO3)] = -p * r.d_hco3;
                d[AT(H, CA)] = w * p * r.d_ca;
                d[AT(H, H)] = w * ((1.0 + coupled) * now[H] + p * r.d_lnh);
                d[AT(H, HCO3)] = w * p * r.d_hco3;
                d[AT(HCO3, CA)] = -p * r.d_ca;
                d[AT(HCO3, H)] = -p * r.d_lnh;
                d[AT(HCO3, HCO3)] = 1.0 + coupled - p * r.d_hco3;
                d[AT(TRACER, TRACER)] = 1.0 + coupled;
            }
    esm_kernel_end(&kernel);
}

void transport_rates(const transport *t, double *r)
{
    static esm_kernel kernel = {.name = "pflotran.rates", .flops = CALCITE_RATE_FLOPS};
    if (!esm_kernel_begin(&kernel, (double)t->g->ncells, (double)RATES_BYTES * t->g->ncells))
        return;
    for (long c = 0; c < t->g->ncells; c++) {
        const double *now = t->conc + NS * c;
        r[c] = calcite_rate(t->chem, now[CA], now[H], now[HCO3]).r;
    }
    esm_kernel_end(&kernel);
}
