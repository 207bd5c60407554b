/* The coupler: decompositions, rearrangers, maps, fluxes, merges; history and restart files. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "coupler.h"

static double **bundle(long n, int nfields)
{
    double **b = esm_calloc(nfields, sizeof *b);
    for (int f = 0; f < nfields; f++)
        b[f] = esm_calloc(n + 1, sizeof(double));
    return b;
}

/* Segment `rank` of `ranks` of the list of active points of `g`, in global order. */
static void segment(const cesm_grid *g, int rank, int ranks, cesm_points *pts)
{
    long total = g->nactive, first = total * rank / ranks, last = total * (rank + 1) / ranks;
    if (rank >= ranks)
        first = last = 0;
    *pts = (cesm_points){.n = last - first,
                         .global = esm_calloc(last - first + 1, sizeof(long)),
                         .lat = esm_calloc(last - first + 1, sizeof(double)),
                         .area = esm_calloc(last - first + 1, sizeof(double))};
    long k = 0, n = 0;
    for (long p = 0; p < (long)g->nx * g->ny && n < pts->n; p++) {
        if (!g->active[p])
            continue;
        if (k++ < first)
            continue;
        pts->global[n] = p;
        pts->lat[n] = g->lat[p / g->nx];
        pts->area[n++] = g->area[p / g->nx];
    }
}

static int compare_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* Rows: this rank's coupler points of the destination grid; columns gathered from the
 * coupler's points of the source grid. `to_ocean`: atmosphere -> ocean, else the reverse. */
static void map_create(cesm_map *m, const cesm_overlaps *ov, const cesm_grid *atm,
                       const cesm_grid *ocn, const cesm_points *rows, const cesm_points *src,
                       bool to_ocean, int nfields)
{
    double r2 = EARTH_RADIUS * EARTH_RADIUS;
    const cesm_grid *dst_g = to_ocean ? ocn : atm, *src_g = to_ocean ? atm : ocn;
    *m = (cesm_map){.nrows = rows->n, .nfields = nfields};
    m->start = esm_calloc(rows->n + 1, sizeof(long));
    m->row_area = esm_calloc(rows->n + 1, sizeof(double));
    m->row_cover = esm_calloc(rows->n + 1, sizeof(double));
    long capacity = 16 * (rows->n + 1);
    long *global_col = esm_calloc(capacity, sizeof(long));
    m->w = esm_calloc(capacity, sizeof(double));
    for (long r = 0; r < rows->n; r++) {
        int i = (int)(rows->global[r] % dst_g->nx), j = (int)(rows->global[r] / dst_g->nx);
        const cesm_overlap *lat = to_ocean ? &ov->lat_of_ocn[j] : &ov->lat_of_atm[j];
        const cesm_overlap *lon = to_ocean ? &ov->lon_of_ocn[i] : &ov->lon_of_atm[i];
        double cover = 0;
        for (int b = 0; b < lat->n; b++)       /* the order of cesm_ocean_area: same bits */
            for (int a = 0; a < lon->n; a++) {
                long c = lon->index[a] + (long)src_g->nx * lat->index[b];
                if (!src_g->active[c])
                    continue;
                if (m->nnz == capacity) {
                    capacity *= 2;
                    global_col = esm_realloc(global_col, capacity * sizeof(long));
                    m->w = esm_realloc(m->w, capacity * sizeof(double));
                }
                global_col[m->nnz] = c;
                m->w[m->nnz] = r2 * lon->length[a] * lat->length[b];
                cover += m->w[m->nnz++];
            }
        m->start[r + 1] = m->nnz;
        m->row_area[r] = dst_g->area[j];
        m->row_cover[r] = cover;
    }
    /* the distinct columns, sorted; each entry's position among them */
    long *cols = esm_calloc(m->nnz + 1, sizeof(long));
    memcpy(cols, global_col, m->nnz * sizeof(long));
    qsort(cols, m->nnz, sizeof(long), compare_long);
    long ncols = 0;
    for (long k = 0; k < m->nnz; k++)
        if (k == 0 || cols[k] != cols[ncols - 1])
            cols[ncols++] = cols[k];
    m->ncols = ncols;
    m->col = esm_calloc(m->nnz + 1, sizeof(long));
    for (long k = 0; k < m->nnz; k++)
        m->col[k] = (long *)bsearch(&global_col[k], cols, ncols, sizeof(long), compare_long) - cols;
    m->gather = esm_rearranger_create((long)src_g->nx * src_g->ny, src->n, src->global, ncols, cols,
                                      nfields);
    m->columns = bundle(ncols, nfields);
    free(cols);
    free(global_col);
}

void coupler_create(coupler *c, const cesm_grid *atm_g, const cesm_grid *ocn_g,
                    const cesm_overlaps *ov, const double *land_fraction, int cpl_ranks,
                    const cesm_points *atm, const cesm_points *lnd, const cesm_points *ice,
                    const cesm_points *ocn, bool fault_map)
{
    *c = (coupler){.atm_g = atm_g, .ocn_g = ocn_g};
    int rank = esm_rank();
    segment(atm_g, rank, cpl_ranks, &c->a);
    segment(ocn_g, rank, cpl_ranks, &c->o);
    long na = (long)atm_g->nx * atm_g->ny, no = (long)ocn_g->nx * ocn_g->ny;
    c->lfrac = esm_calloc(c->a.n + 1, sizeof(double));
    c->l_in_a = esm_calloc(c->a.n + 1, sizeof(long));
    c->l = (cesm_points){.global = esm_calloc(c->a.n + 1, sizeof(long))};
    for (long p = 0; p < c->a.n; p++) {
        c->lfrac[p] = land_fraction[c->a.global[p]];
        if (c->lfrac[p] > 0) {
            c->l_in_a[c->l.n] = p;
            c->l.global[c->l.n++] = c->a.global[p];
        }
    }
    map_create(&c->a2o, ov, atm_g, ocn_g, &c->o, &c->a, true, A2X_N);
    map_create(&c->o2a, ov, atm_g, ocn_g, &c->a, &c->o, false, 3);
    if (fault_map && c->a2o.nnz > 0)
        c->a2o.w[0] *= 1.001;     /* a wrong weight: the map no longer conserves */

    c->a2c = esm_rearranger_create(na, atm->n, atm->global, c->a.n, c->a.global, A2X_N);
    c->c2a = esm_rearranger_create(na, c->a.n, c->a.global, atm->n, atm->global, X2A_N);
    c->c2l = esm_rearranger_create(na, c->a.n, c->a.global, lnd->n, lnd->global, X2L_N);
    c->l2c = esm_rearranger_create(na, lnd->n, lnd->global, c->l.n, c->l.global, L2X_N);
    c->c2i = esm_rearranger_create(no, c->o.n, c->o.global, ice->n, ice->global, X2I_N);
    c->i2c = esm_rearranger_create(no, ice->n, ice->global, c->o.n, c->o.global, I2X_N);
    c->c2o = esm_rearranger_create(no, c->o.n, c->o.global, ocn->n, ocn->global, X2O_N);
    c->o2c = esm_rearranger_create(no, ocn->n, ocn->global, c->o.n, c->o.global, O2X_N);

    cesm_values_into(c->a2x, c->a.n, A2X_N);
    cesm_values_into(c->x2a, c->a.n, X2A_N);
    cesm_values_into(c->l2x, c->l.n, L2X_N);
    cesm_values_into(c->ao, c->o.n, A2X_N);
    cesm_values_into(c->x2i, c->o.n, X2I_N);
    cesm_values_into(c->i2x, c->o.n, I2X_N);
    cesm_values_into(c->x2o, c->o.n, X2O_N);
    cesm_values_into(c->o2x, c->o.n, O2X_N);
    cesm_values_into(c->fo, c->o.n, 3);
    cesm_values_into(c->oa, c->a.n, 3);
    double **ledgers_a[] = {&c->map_src[0], &c->map_gross[0], &c->map_dst[1]};
    double **ledgers_o[] = {&c->ocean_sw, &c->map_dst[0], &c->map_src[1], &c->map_gross[1]};
    for (int k = 0; k < 3; k++)
        *ledgers_a[k] = cesm_values(c->a.n);
    for (int k = 0; k < 4; k++)
        *ledgers_o[k] = cesm_values(c->o.n);
}

/* The coupler's kernels, for folding (esm_fold.h); bytes: the doubles a point reads and
 * writes. */
static const esm_kernel k_ice_prep = {.name = "cesm.cpl.ice_prep"},
                        k_fluxes = {.name = "cesm.cpl.fluxes"},
                        k_merge = {.name = "cesm.cpl.merge"};

void coupler_ice_prep(coupler *c)
{
    static const cesm_map_norm norm[A2X_N] = {MAP_CONSERVE, MAP_CONSERVE, MAP_CONSERVE};
    cesm_map_apply(&c->a2o, (const double *const *)c->a2x, c->ao, norm);
    if (!cesm_kernel_begin(&k_ice_prep, &c->cost, (double)(c->a.n + c->o.n),
                           24.0 * c->a.n + 112.0 * c->o.n))
        return;
    for (long p = 0; p < c->a.n; p++) {   /* conservation of the shortwave mapped */
        double v = c->o2a.row_cover[p] * c->a2x[A2X_SW][p];
        c->map_src[0][p] += v;
        c->map_gross[0][p] += fabs(v);
    }
    for (long p = 0; p < c->o.n; p++) {
        c->map_dst[0][p] += c->a2o.row_area[p] * c->ao[A2X_SW][p];
        c->x2i[X2I_T][p] = c->ao[A2X_T][p];
        c->x2i[X2I_SW][p] = c->ao[A2X_SW][p];
        c->x2i[X2I_WIND][p] = c->ao[A2X_WIND][p];
        c->x2i[X2I_TO][p] = c->o2x[O2X_T][p];
        c->x2i[X2I_FRAZIL][p] = c->o2x[O2X_FRAZIL][p];
        c->o2x[O2X_FRAZIL][p] = 0.0;      /* handed to the ice */
    }
    esm_kernel_end(&k_ice_prep);
}

void coupler_atm_prep(coupler *c, double dt)
{
    if (cesm_kernel_begin(&k_fluxes, &c->cost, (double)c->o.n, 136.0 * c->o.n)) {
        for (long p = 0; p < c->o.n; p++) {   /* atmosphere-ocean fluxes on the ocean grid */
            double frac = c->i2x[I2X_FRAC][p], open = 1.0 - frac, to = c->o2x[O2X_T][p];
            double up = cesm_exchange(c->ao[A2X_WIND][p]) * (to - c->ao[A2X_T][p]);
            double sw = (1.0 - ALBEDO_OCN) * c->ao[A2X_SW][p];
            c->ocean_sw[p] += c->o.area[p] * open * sw * dt;
            c->x2o[X2O_HEAT][p] = open * (sw - up) + c->i2x[I2X_QIO][p];
            c->fo[0][p] = open * up + c->i2x[I2X_FLUX][p];
            c->fo[1][p] = open * to + frac * c->i2x[I2X_TSFC][p];
            c->fo[2][p] = frac;
            c->map_src[1][p] += c->o.area[p] * c->fo[0][p];
            c->map_gross[1][p] += fabs(c->o.area[p] * c->fo[0][p]);
        }
        esm_kernel_end(&k_fluxes);
    }
    static const cesm_map_norm norm[3] = {MAP_CONSERVE, MAP_NORMALIZE, MAP_NORMALIZE};
    cesm_map_apply(&c->o2a, (const double *const *)c->fo, c->oa, norm);
    if (!cesm_kernel_begin(&k_merge, &c->cost, (double)(c->a.n + c->l.n),
                           96.0 * c->a.n + 48.0 * c->l.n))
        return;
    for (long p = 0; p < c->a.n; p++) {   /* merge: ocean and ice, then land */
        c->map_dst[1][p] += c->o2a.row_area[p] * c->oa[0][p];
        double ofrac = c->o2a.row_cover[p] / c->o2a.row_area[p];
        c->x2a[X2A_FLUX][p] = c->oa[0][p];
        c->x2a[X2A_TSFC][p] = ofrac * c->oa[1][p];
        c->x2a[X2A_IFRAC][p] = c->oa[2][p];
    }
    for (long q = 0; q < c->l.n; q++) {
        long p = c->l_in_a[q];
        c->x2a[X2A_FLUX][p] += c->lfrac[p] * c->l2x[L2X_FLUX][q];
        c->x2a[X2A_TSFC][p] += c->lfrac[p] * c->l2x[L2X_T][q];
    }
    esm_kernel_end(&k_merge);
}

double coupler_constant_error(coupler *c)
{
    double **one_a = bundle(c->a.n, A2X_N), **one_o = bundle(c->o.n, 3);
    double **to_o = bundle(c->o.n, A2X_N), **to_a = bundle(c->a.n, 3);
    for (int f = 0; f < A2X_N; f++)
        for (long p = 0; p < c->a.n; p++)
            one_a[f][p] = 1.0;
    for (int f = 0; f < 3; f++)
        for (long p = 0; p < c->o.n; p++)
            one_o[f][p] = 1.0;
    static const cesm_map_norm conserve[A2X_N] = {MAP_CONSERVE, MAP_CONSERVE, MAP_CONSERVE};
    static const cesm_map_norm normalize[3] = {MAP_NORMALIZE, MAP_NORMALIZE, MAP_NORMALIZE};
    cesm_map_apply(&c->a2o, (const double *const *)one_a, to_o, conserve);
    cesm_map_apply(&c->o2a, (const double *const *)one_o, to_a, normalize);
    double worst = 0;
    for (long p = 0; p < c->o.n; p++)
        worst = fmax(worst, fabs(to_o[0][p] - 1.0));
    for (long p = 0; p < c->a.n; p++)
        if (c->o2a.row_cover[p] > 0)
            worst = fmax(worst, fabs(to_a[0][p] - 1.0));
    esm_global_max(&worst, 1);
    for (int f = 0; f < A2X_N; f++) {
        free(one_a[f]);
        free(to_o[f]);
    }
    for (int f = 0; f < 3; f++) {
        free(one_o[f]);
        free(to_a[f]);
    }
    free(one_a);
    free(to_o);
    free(one_o);
    free(to_a);
    return worst;
}

void coupler_energy(const coupler *c, double dt, esm_sum *e)
{
    for (long p = 0; p < c->o.n; p++) {
        esm_sum_add(e, c->o.area[p] * c->x2o[X2O_HEAT][p] * dt);
        esm_sum_add(e, c->o.area[p] * c->o2x[O2X_FRAZIL][p]);
    }
}

/* ---- history and restart files ------------------------------------------------------------ */

void file_plan_create(cesm_file_plan *f, const char *component, const cesm_grid *g,
                      const cesm_points *src, const unsigned char *active, int nfields, int root)
{
    *f = (cesm_file_plan){.component = component, .g = g, .nfields = nfields, .root = root};
    long total = (long)g->nx * g->ny;
    if (esm_rank() == root) {
        f->global = esm_calloc(total + 1, sizeof(long));
        for (long p = 0; p < total; p++)
            if (!active || active[p])
                f->global[f->n++] = p;
    }
    f->gather = esm_rearranger_create(total, src->n, src->global, f->n, f->global, nfields);
    f->at_root = bundle(f->n, nfields);
}

static void write_all(int fd, const void *data, size_t bytes, const char *path)
{
    const char *p = data;
    while (bytes > 0) {
        ssize_t done = write(fd, p, bytes);
        if (done < 0 && errno == EINTR)
            continue;
        if (done <= 0) {
            fprintf(stderr,
                    "%s: error: cannot write %s: %s: free space or choose another "
                    "--output-dir\n",
                    esm_program(), path, strerror(errno));
            exit(ESM_EXIT_BAD_INPUT);
        }
        p += done;
        bytes -= (size_t)done;
    }
}

long file_write(cesm_file_plan *f, const char *dir, const char *kind, long interval, double seconds,
                const char *const names[], const double *const fields[])
{
    esm_rearrange(f->gather, fields, f->at_root);
    if (esm_rank() != f->root)
        return 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/cesm.%s.%s.%06ld.bin", dir, f->component, kind, interval);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        fprintf(stderr, "%s: error: cannot create %s: %s: choose a writable --output-dir\n",
                esm_program(), path, strerror(errno));
        exit(ESM_EXIT_BAD_INPUT);
    }
    long grid = (long)f->g->nx * f->g->ny, bytes = 0;
    char header[64] = {0};
    memcpy(header, "ESMPERF-CESM", 12);
    snprintf(header + 12, 4, "%s", kind);
    int32_t shape[4] = {f->g->nx, f->g->ny, f->nfields, (int32_t)interval};
    memcpy(header + 16, shape, sizeof shape);
    memcpy(header + 32, &seconds, sizeof seconds);
    write_all(fd, header, sizeof header, path);
    bytes += sizeof header;
    for (int k = 0; k < f->nfields; k++) {
        char name[16] = {0};
        snprintf(name, sizeof name, "%s", names[k]);
        write_all(fd, name, sizeof name, path);
        bytes += sizeof name;
    }
    double *full = esm_calloc(grid, sizeof *full);
    for (int k = 0; k < f->nfields; k++) {
        memset(full, 0, grid * sizeof *full);
        for (long p = 0; p < f->n; p++)
            full[f->global[p]] = f->at_root[k][p];
        write_all(fd, full, grid * sizeof *full, path);
        bytes += grid * (long)sizeof *full;
    }
    free(full);
    close(fd);
    return bytes;
}
