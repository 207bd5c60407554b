/* Verification (--case): total calcium and carbon (dissolved + calcite reacted) conserved to
 * the Newton tolerance; the tracer against the analytic erf solution of the diffusing cube;
 * the batch reaction against its ODE solution; the order of convergence Newton's residuals
 * show. Sums are exact (esm_sum), so they differ between rank counts only by the solver. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflotran.h"

/* The analytic tracer: a unit cube [0.45, 0.55]^3 diffusing in the unit cube with zero-flux
 * walls, i.e. the erf solution plus its mirror images, one factor per direction. */
static double erf_factor(double x, double t, double diffusion)
{
    double width = 2.0 * sqrt(diffusion * t), sum = 0;
    for (int m = -3; m <= 3; m++) /* images at 2m +- [a, b] */
        for (int mirror = -1; mirror <= 1; mirror += 2) {
            double a = 2 * m + mirror * 0.45, b = 2 * m + mirror * 0.55;
            if (a > b) {
                double swap = a;
                a = b;
                b = swap;
            }
            sum += 0.5 * (erf((x - a) / width) - erf((x - b) / width));
        }
    return sum;
}

inventory inventories(const run *r)
{
    const grid *g = &r->g;
    double volume = g->width[0] * g->width[1] * g->width[2];
    double water = r->chem.porosity * r->chem.density; /* kg of water per m^3 of rock */
    esm_sum sums[4];
    memset(sums, 0, sizeof sums);
    for (long c = 0; c < g->ncells; c++) {
        const double *u = r->t.total + NS * c; /* components: the HCO3- one is all carbon */
        double reacted = r->dissolved[c];      /* mol/m^3 rock */
        esm_sum_add(&sums[0], volume * (water * u[CA] - reacted));
        esm_sum_add(&sums[1], volume * (water * u[HCO3] - reacted));
        esm_sum_add(&sums[2], volume * (water * u[H] + reacted));
        esm_sum_add(&sums[3], volume * water * u[TRACER]);
    }
    double total[4];
    esm_global_sums(sums, 4, total);
    return (inventory){total[0], total[1], total[2], total[3]};
}

/* ||T|| over the grid (collective). */
static double total_norm(const run *r)
{
    esm_sum sum = {0};
    for (long e = 0; e < r->g.ncells * NS; e++)
        esm_sum_add(&sum, r->t.total[e] * r->t.total[e]);
    double squares;
    esm_global_sums(&sum, 1, &squares);
    return sqrt(squares);
}

/* Figures for the result line, except from a folded run (out NULL): its values mean nothing. */
static void put_norm(esm_result *out, const char *name, double value)
{
    if (out)
        esm_result_norm(out, name, value);
}

static void put_real(esm_result *out, const char *path, double value)
{
    if (out)
        esm_result_real(out, path, value);
}

/* Sums of each species over the grid (exact, so they differ between rank counts only by the
 * solver), and the concentrations at three probe cells (result NULL: reduced, not reported). */
static void report_fields(const run *r, esm_result *result)
{
    const grid *g = &r->g;
    const int probes[3][3] = {
        {g->nx / 2, g->ny / 2, g->nz / 2}, {0, 0, 0}, {g->nx / 4, g->ny / 3, (3 * g->nz) / 5}};
    esm_sum sums[NS + 3 * NS];
    memset(sums, 0, sizeof sums);
    for (long c = 0; c < g->ncells; c++) {
        for (int s = 0; s < NS; s++)
            esm_sum_add(&sums[s], r->t.conc[NS * c + s]);
        long global = grid_global_cell(g, c);
        for (int p = 0; p < 3; p++)
            if (global == probes[p][0] + (long)g->nx * (probes[p][1] + (long)g->ny * probes[p][2]))
                for (int s = 0; s < NS; s++)
                    esm_sum_add(&sums[NS + NS * p + s], r->t.conc[NS * c + s]);
    }
    double total[NS + 3 * NS];
    esm_global_sums(sums, NS + 3 * NS, total);
    const char *key[NS] = {"ca", "h", "hco3", "tracer"};
    for (int s = 0; s < NS; s++) {
        char path[64];
        snprintf(path, sizeof path, "fields.sum.%s", key[s]);
        put_real(result, path, total[s]);
        for (int p = 0; p < 3; p++) {
            snprintf(path, sizeof path, "fields.probe%d.%s", p, key[s]);
            put_real(result, path, total[NS + NS * p + s]);
        }
    }
}

/* The deck's two waters as speciated (result NULL: nothing): every species' molality, the
 * ionic strength, ln gamma of each primary, for checking against the database by hand. */
static void report_waters(const run *r, esm_result *result)
{
    const char *key[NGAMMA] = {"ca",  "h",     "hco3",    "tracer", "oh",
                               "co3", "co2aq", "caco3aq", "cahco3"};
    water waters[2] = {water_background(&r->chem), water_acidic_pulse(&r->chem)};
    const char *name[2] = {"initial", "pulse"};
    for (int w = 0; w < 2; w++) {
        double m[NGAMMA], ionic = water_species(&r->chem, &waters[w], m);
        char path[64];
        for (int s = 0; s < NGAMMA; s++) {
            snprintf(path, sizeof path, "waters.%s.%s", name[w], key[s]);
            put_real(result, path, m[s]);
        }
        snprintf(path, sizeof path, "waters.%s.ionic_strength", name[w]);
        put_real(result, path, ionic);
        for (int s = 0; s < NS; s++) {
            snprintf(path, sizeof path, "waters.%s.ln_gamma_%s", name[w], key[s]);
            put_real(result, path, waters[w].ln_gamma[s]);
        }
    }
}

/* Relative L2 and max errors of the tracer against the erf solution at time t. */
static void tracer_errors(const run *r, double t, double *l2, double *max)
{
    const grid *g = &r->g;
    esm_sum sums[2];
    memset(sums, 0, sizeof sums);
    double worst = 0;
    for (int k = 0; k < g->mz; k++)
        for (int j = 0; j < g->my; j++)
            for (int i = 0; i < g->mx; i++) {
                double exact = erf_factor((g->i0 + i + 0.5) * g->width[0], t, r->chem.diffusion) *
                               erf_factor((g->j0 + j + 0.5) * g->width[1], t, r->chem.diffusion) *
                               erf_factor((g->k0 + k + 0.5) * g->width[2], t, r->chem.diffusion);
                double error = r->t.conc[NS * grid_cell(g, i, j, k) + TRACER] - exact;
                esm_sum_add(&sums[0], error * error);
                esm_sum_add(&sums[1], exact * exact);
                worst = fmax(worst, fabs(error));
            }
    double total[2];
    esm_global_sums(sums, 2, total);
    esm_global_max(&worst, 1);
    double peak = erf_factor(0.5, t, r->chem.diffusion);
    peak = peak * peak * peak;
    *l2 = sqrt(total[0] / total[1]);
    *max = worst / peak;
}

/* The verdict of the case's checks, with their norms. A folded run makes the same reductions
 * (its communication stays a full run's) but reports none of their figures, and no verdict:
 * "not verified: folded run". */
void verify(run *r, const options *o, const record *h, inventory start, esm_result *result)
{
    esm_result *out = esm_folded() ? NULL : result;
    inventory end = inventories(r);
    const grid *g = &r->g;
    double pore_water = r->chem.porosity * r->chem.density; /* kg, the unit cube's */
    water background = water_background(&r->chem); /* errors relative to dissolved amounts */
    double total[NS], dtotal[NS * NS];
    speciate(&r->chem, background.ln_m, background.ln_gamma, total, dtotal);
    double ca_error = fabs(end.calcium - start.calcium) / (pore_water * total[CA]);
    double carbon_error = fabs(end.carbon - start.carbon) / (pore_water * total[HCO3]);
    /* What Newton's tolerance leaves (every unknown is ln m, so no equation is linear): a
     * step's imbalance of component j is phi rho V sum_c F_j(c) at its end (the fluxes cancel),
     * at most phi rho V sqrt(N) ||F|| (N cells of volume V = 1/N), so over the run at most
     * phi rho sum ||F|| / sqrt(N) mol; 1e-8 of the dissolved amount besides, for round-off. */
    double cells = (double)g->nx * g->ny * g->nz;
    double newton_bound = pore_water * h->final_residuals / sqrt(cells); /* mol */
    double ca_allowed = 1e-8 + newton_bound / (pore_water * total[CA]);
    double carbon_allowed = 1e-8 + newton_bound / (pore_water * total[HCO3]);
    /* round-off bounds the residual at about 100 ulp of its terms: the totals (whose norm
     * now stands for the first step's, and exceeds ||F0|| when the step changes them little)
     * or ||F0|| */
    double terms = total_norm(r);
    double order = convergence_order(h->first.residual, h->first.iterations,
                                     1e3 * 2.2e-16 * fmax(h->first.residual[0], terms));
    put_norm(out, "calcium_conservation", ca_error);
    put_norm(out, "carbon_conservation", carbon_error);
    put_norm(out, "newton_order", order);
    put_norm(out, "calcium_conservation_allowed", ca_allowed);
    bool passed = h->failed_steps == 0 && ca_error < ca_allowed && carbon_error < carbon_allowed;
    const char *what = "every Newton solve converged; total calcium and carbon (dissolved + "
                       "calcite reacted) conserved to 1e-8 and the Newton tolerance's bound";
    if (o->which == CASE_TRACER) {
        double l2, max, tracer_error = fabs(end.tracer - start.tracer) / start.tracer;
        tracer_errors(r, o->steps * o->dt, &l2, &max);
        put_norm(out, "tracer_l2", l2);
        put_norm(out, "tracer_max", max);
        put_norm(out, "tracer_conservation", tracer_error);
        double tracer_allowed = 1e-8 + newton_bound / start.tracer;
        passed = h->failed_steps == 0 && l2 < 0.1 && tracer_error < tracer_allowed;
        what = "tracer diffusion vs erf solution: relative l2 < 0.1, tracer conserved to 1e-8 "
               "and the Newton tolerance's bound";
    } else if (o->which == CASE_BATCH) {
        double *exact = esm_calloc(o->steps, sizeof(double)), worst = 0;
        batch_extent(&r->chem, water_batch(&r->chem), h->times, (int)o->steps, exact);
        for (long s = 0; s < o->steps; s++) /* extent = total Ca++ gained */
            worst = fmax(worst, fabs(h->ca_change[s] - exact[s]));
        double final = exact[o->steps - 1], range[2] = {-1e300, 1e300}; /* max, min Ca++ */
        for (long c = 0; c < g->ncells; c++) {
            range[0] = fmax(range[0], r->t.conc[NS * c + CA]);
            range[1] = fmin(range[1], r->t.conc[NS * c + CA]);
        }
        esm_global_max(&range[0], 1);
        esm_global_min(&range[1], 1);
        double batch_error = worst / fabs(final), spread = (range[0] - range[1]) / range[0];
        put_norm(out, "batch_extent_error", batch_error);
        put_norm(out, "batch_spread", spread);
        put_real(out, "batch.extent_final", h->ca_change[o->steps - 1]);
        put_real(out, "batch.extent_ode", final);
        passed = passed && batch_error < 0.05 && spread <= 1e-12;
        what = "batch calcite reaction vs ODE solution: extent within 5%, uniform, Ca and C "
               "conserved to 1e-8";
        free(exact);
    }
    if (!strcmp(o->jacobian_check, "fd")) {
        double error = jacobian_check(r);
        put_norm(out, "jacobian_fd_error", error);
        passed = passed && error < 1e-6;
    }
    if (out)
        esm_result_verification(result, passed, what);
    else
        esm_result_unverified(result, "not verified: folded run");
    put_real(out, "conservation.calcium_start", start.calcium);
    put_real(out, "conservation.calcium_end", end.calcium);
    put_real(out, "conservation.carbon_start", start.carbon);
    put_real(out, "conservation.carbon_end", end.carbon);
    put_real(out, "conservation.protons_start", start.protons);
    put_real(out, "conservation.protons_end", end.protons);
    report_fields(r, out);
    report_waters(r, out);
}

/* The Jacobian against central differences of the residual (one rank): for each cell on the
 * grid's diagonal (domain edges, the pulse's edge and centre) and each of its unknowns, the
 * columns of its own and its neighbours' blocks; the largest difference over the column's
 * largest entry. The iterate is restored afterwards. */
double jacobian_check(run *r)
{
    const grid *g = &r->g;
    const double h = 1e-5; /* in ln m: truncation ~h^2, round-off ~1e-16 / h, both < 1e-9 */
    double *up = esm_calloc(g->ncells * NS, sizeof(double));
    double *down = esm_calloc(g->ncells * NS, sizeof(double)), worst = 0;
    transport_jacobian(&r->t, &r->A);
    int cells = g->mx < g->my ? (g->mx < g->mz ? g->mx : g->mz) : (g->my < g->mz ? g->my : g->mz);
    for (int d = 0; d < cells; d++) {
        long c = grid_cell(g, d, d, d);
        const int at[3] = {d, d, d};
        for (int q = 0; q < NS; q++) {
            double saved = r->x[NS * c + q];
            r->x[NS * c + q] = saved + h;
            transport_update(&r->t, r->x);
            transport_residual(&r->t, up);
            r->x[NS * c + q] = saved - h;
            transport_update(&r->t, r->x);
            transport_residual(&r->t, down);
            r->x[NS * c + q] = saved;
            /* rows: the cell itself (diagonal block), then each neighbour n across face f,
             * whose block towards c is its face f ^ 1 */
            double column[BLOCKS][NS], exact[BLOCKS][NS], largest = 0;
            long row[BLOCKS];
            for (int f = 0; f < BLOCKS; f++) {
                row[f] = -1;
                if (f == DIAGONAL) {
                    row[f] = c;
                } else {
                    int n[3] = {at[0], at[1], at[2]}, axis = f / 2;
                    n[axis] += f % 2 ? 1 : -1;
                    if (n[axis] < 0 || n[axis] >= (&g->mx)[axis])
                        continue;
                    row[f] = grid_cell(g, n[0], n[1], n[2]);
                }
                int block = f == DIAGONAL ? DIAGONAL : f ^ 1;
                const double *b = r->A.block + (row[f] * BLOCKS + block) * BLOCK_SIZE;
                for (int s = 0; s < NS; s++) {
                    column[f][s] = (up[NS * row[f] + s] - down[NS * row[f] + s]) / (2 * h);
                    exact[f][s] = b[s * NS + q];
                    largest = fmax(largest, fabs(exact[f][s]));
                }
            }
            for (int f = 0; f < BLOCKS; f++)
                for (int s = 0; s < NS && row[f] >= 0; s++)
                    worst = fmax(worst, fabs(column[f][s] - exact[f][s]) / largest);
        }
    }
    transport_update(&r->t, r->x);
    free(up), free(down);
    return worst;
}
