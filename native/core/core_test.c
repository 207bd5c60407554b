/* Self-test of the workload core, run by tests/test_core.py on 1-4 ranks: space-filling
 * curves, decomposition, halo exchange (both engines, both layouts, widths 1-3, partial and
 * land blocks, periodic and closed edges), reproducible sums, checksums, max/min. Prints one
 * JSON result line; figures that must not depend on the rank count are printed exactly. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "esm.h"

/* Curves: every cell once, and consecutive cells edge neighbours on 2^a 3^b 5^c squares. */
static long check_curves(esm_result *r)
{
    long bad = 0;
    for (int nx = 1; nx <= 40; nx++)
        for (int ny = 1; ny <= 40; ny += (ny < 12 ? 1 : 7)) {
            int *order = esm_calloc(nx * ny, sizeof *order),
                *seen = esm_calloc(nx * ny, sizeof *seen);
            char name[32];
            esm_sfc_order(nx, ny, order, name, sizeof name);
            for (int k = 0; k < nx * ny; k++)
                bad += order[k] < 0 || order[k] >= nx * ny || seen[order[k]]++;
            if (nx == ny && esm_sfc_side(nx) == nx)
                for (int k = 1; k < nx * ny; k++) {
                    int dx = abs(order[k] % nx - order[k - 1] % nx);
                    int dy = abs(order[k] / nx - order[k - 1] / nx);
                    bad += dx + dy != 1;
                }
            if ((nx == 8 || nx == 10 || nx == 12 || nx == 30) && ny == nx) {
                char path[64];
                snprintf(path, sizeof path, "curves.%d", nx);
                esm_result_text(r, path, name);
            }
            free(order);
            free(seen);
        }
    return bad;
}

/* A test grid: 38 x 31 points (partial blocks at the east and north edges), a land rectangle and a land disc. */
enum { NX = 38, NY = 31 };
static bool test_ocean(int i, int j, const void *context)
{
    (void)context;
    bool rectangle = i >= 8 && i < 24 && j >= 12 && j < 24;
    bool disc = (i - 30) * (i - 30) + (j - 5) * (j - 5) < 9;
    return !rectangle && !disc;
}

static double code(int gi, int gj, int k, int f)
{
    return 1.0 + gi + 100.0 * gj + 1e4 * k + 1e6 * f;
}

/* Fill interiors, exchange, check every halo point of width `width`. Returns wrong points. */
static long check_halo(const esm_decomp *d, const esm_layout *l, int width, esm_halo_engine e)
{
    enum { FIELDS = 2 };
    long n = esm_layout_doubles(l, d->nlocal), wrong = 0;
    double *field[FIELDS];
    for (int f = 0; f < FIELDS; f++) {
        field[f] = esm_calloc(n, sizeof(double));
        for (long p = 0; p < n; p++)
            field[f][p] = -1.0; /* garbage to be overwritten */
    }
    for (int lb = 0; lb < d->nlocal; lb++) {
        const esm_block *b = &d->block[d->local[lb]];
        for (int f = 0; f < FIELDS; f++)
            for (int k = 0; k < l->nz; k++)
                for (int j = 0; j < b->nj; j++)
                    for (int i = 0; i < b->ni; i++)
                        field[f][esm_at(l, lb, i, j, k)] = code(b->i0 + i, b->j0 + j, k, f);
    }
    esm_halo *h = esm_halo_blocks(d, l, FIELDS, width, e);
    for (int repeat = 0; repeat < 2; repeat++) /* persistent requests restart */
        esm_halo_update(h, field);
    for (int lb = 0; lb < d->nlocal; lb++) {
        const esm_block *b = &d->block[d->local[lb]];
        for (int f = 0; f < FIELDS; f++)
            for (int k = 0; k < l->nz; k++)
                for (int j = -width; j < b->nj + width; j++)
                    for (int i = -width; i < b->ni + width; i++) {
                        if (i >= 0 && i < b->ni && j >= 0 && j < b->nj)
                            continue;
                        int gi, gj;
                        double expect = 0;
                        if (esm_decomp_global(d, b, i, j, &gi, &gj)) {
                            int owner = d->index_of[gi / d->bx + d->nbx * (gj / d->by)];
                            expect = owner >= 0 ? code(gi, gj, k, f) : 0.0;
                        }
                        wrong += field[f][esm_at(l, lb, i, j, k)] != expect;
                    }
    }
    esm_halo_free(h);
    for (int f = 0; f < FIELDS; f++)
        free(field[f]);
    return wrong;
}

/* Values spanning 2^-150 .. 2^120 with cancellations: the exact sum is known. */
static double value_at(long g)
{
    double v = ldexp(1.0 + (g % 97) / 97.0, (int)(g % 271) - 150);
    return g % 2 ? v : -v * 0.75;
}

int main(int argc, char **argv)
{
    esm_init(&argc, &argv, "esm_core_test");
    esm_cli *cli = esm_cli_begin(argc, argv, "Self-test of the workload core");
    esm_cli_end(cli);
    esm_result *r = esm_result_new("core_test", "S", 0);

    long curve_errors = check_curves(r);
    esm_result_int(r, "curve_errors", curve_errors);

    /* halo exchange in every configuration */
    long halo_wrong = 0, configurations = 0;
    const char *dists[] = {"sfc", "cartesian"};
    for (int dist = 0; dist < 2; dist++) {
        esm_decomp d;
        esm_decomp_params p = {.nx = NX,
                               .ny = NY,
                               .bx = 5,
                               .by = 4,
                               .periodic_x = true,
                               .distribution = dist ? ESM_DIST_CARTESIAN : ESM_DIST_SFC,
                               .is_ocean = test_ocean};
        esm_decomp_create(&d, &p);
        char path[64];
        snprintf(path, sizeof path, "decomp.%s.blocks", dists[dist]);
        esm_result_int(r, path, d.nblocks);
        snprintf(path, sizeof path, "decomp.%s.land_blocks", dists[dist]);
        esm_result_int(r, path, d.land_blocks);
        snprintf(path, sizeof path, "decomp.%s.method", dists[dist]);
        esm_result_text(r, path, d.method);
        for (int e = 0; e < 2; e++)
            for (int inner = 0; inner < 2; inner++)
                for (int width = 1; width <= 3; width++) {
                    esm_layout l = inner ? esm_layout_levels_inner(&d, 3, 3)
                                         : esm_layout_levels_outer(&d, 3, 3);
                    halo_wrong +=
                        check_halo(&d, &l, width, e ? ESM_HALO_PERSISTENT : ESM_HALO_ISEND);
                    configurations++;
                }
        esm_decomp_free(&d);
    }
    double wrong = (double)halo_wrong;
    esm_global_max(&wrong, 1);
    esm_result_int(r, "halo.configurations", configurations);
    esm_result_int(r, "halo.wrong_points", (long)wrong);

    /* reproducible sums over a decomposition: per point, and per block */
    esm_decomp d;
    esm_decomp_params p = {.nx = NX, .ny = NY, .bx = 5, .by = 4, .is_ocean = test_ocean};
    esm_decomp_create(&d, &p);
    esm_sum exact = {0}, cancel = {0};
    uint64_t checksum = 0;
    double extremes[2] = {-INFINITY, -INFINITY};
    for (int lb = 0; lb < d.nlocal; lb++) {
        const esm_block *b = &d.block[d.local[lb]];
        for (int j = 0; j < b->nj; j++)
            for (int i = 0; i < b->ni; i++) {
                long g = (b->i0 + i) + (long)NX * (b->j0 + j);
                esm_sum_add(&exact, value_at(g));
                /* +1e20, +1, -1e20 on three different points: the sum is exactly 1 */
                esm_sum_add(&cancel, g == 0             ? 1e20
                                     : g == 500         ? 1.0
                                     : g == NX * NY - 1 ? -1e20
                                                        : 0.0);
                esm_checksum_add(&checksum, g, value_at(g));
                extremes[0] = fmax(extremes[0], value_at(g));
                extremes[1] = fmax(extremes[1], -value_at(g));
            }
    }
    double sums[2];
    esm_sum both[2] = {exact, cancel};
    esm_global_sums(both, 2, sums);
    esm_global_max(extremes, 2);
    char hex[64];
    snprintf(hex, sizeof hex, "%a", sums[0]);
    esm_result_text(r, "sum.exact_hex", hex);
    esm_result_real(r, "sum.cancel", sums[1]);
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)esm_global_checksum(checksum));
    esm_result_text(r, "sum.checksum", hex);
    esm_result_real(r, "sum.max", extremes[0]);
    esm_result_real(r, "sum.min", -extremes[1]);
    esm_sum nan_sum = {0};
    esm_sum_add(&nan_sum, esm_rank() == 0 ? NAN : 1.0);
    esm_result_bool(r, "sum.nan_detected", isnan(esm_global_sum(&nan_sum)));
    esm_decomp_free(&d);

    esm_stream s = esm_stream_triad(1.0, 2);
    esm_result_bool(r, "stream_ran", s.triad_GBps > 0);
    bool passed = curve_errors == 0 && wrong == 0 && sums[1] == 1.0;
    esm_result_verification(r, passed, "core self-test");
    esm_exit(esm_result_finish(r));
}
