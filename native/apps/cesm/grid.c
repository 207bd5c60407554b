/* The two grids, their exact overlaps, the conservative maps, the analytic forcing. */
#include <math.h>
#include <stdlib.h>
#include "cesm.h"

static double sind(double degrees)
{
    return sin(degrees * M_PI / 180.0);
}

static void grid_rows(cesm_grid *g)
{
    double dlon_rad = g->dlon * M_PI / 180.0, r2 = EARTH_RADIUS * EARTH_RADIUS;
    g->lat = esm_calloc(g->ny, sizeof *g->lat);
    g->area = esm_calloc(g->ny, sizeof *g->area);
    for (int j = 0; j < g->ny; j++) {
        g->lat[j] = 0.5 * (g->lat_edge[j] + g->lat_edge[j + 1]);
        g->area[j] = r2 * dlon_rad * (sind(g->lat_edge[j + 1]) - sind(g->lat_edge[j]));
    }
    g->active = esm_calloc((size_t)g->nx * g->ny, 1);
    g->row_active = esm_calloc(g->ny, sizeof *g->row_active);
}

double cesm_lon(const cesm_grid *g, int i)
{
    return g->lon0 + (i + 0.5) * g->dlon;
}

/* The atmosphere: uniform, column 0 centred on the Greenwich meridian (CAM's FV grids). */
void cesm_grid_atm(cesm_grid *g, int nx, int ny)
{
    *g = (cesm_grid){.name = "atm", .nx = nx, .ny = ny, .dlon = 360.0 / nx};
    g->lon0 = -0.5 * g->dlon;
    g->lat_edge = esm_calloc(ny + 1, sizeof *g->lat_edge);
    for (int j = 0; j <= ny; j++)
        g->lat_edge[j] = -90.0 + 180.0 * j / ny;
    grid_rows(g);
    for (long p = 0; p < (long)nx * ny; p++)
        g->active[p] = 1;
    g->nactive = (long)nx * ny;
    for (int j = 0; j < ny; j++)
        g->row_active[j] = nx;
}

/* The ocean: offset by 0.37 of a column from the date line, rows refined towards the equator
 * (lat = 90 (0.6 s + 0.4 s^3), s uniform in [-1, 1]), ocean where esm_geo has no land. */
void cesm_grid_ocn(cesm_grid *g, int nx, int ny)
{
    *g = (cesm_grid){.name = "ocn", .nx = nx, .ny = ny, .dlon = 360.0 / nx};
    g->lon0 = -180.0 + 0.37 * g->dlon;
    g->lat_edge = esm_calloc(ny + 1, sizeof *g->lat_edge);
    for (int j = 0; j <= ny; j++) {
        double s = -1.0 + 2.0 * j / ny;
        g->lat_edge[j] = 90.0 * (0.6 * s + 0.4 * s * s * s);
    }
    g->lat_edge[0] = -90.0;
    g->lat_edge[ny] = 90.0;
    grid_rows(g);
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++)
            if (!esm_geo_land(cesm_lon(g, i), g->lat[j])) {
                g->active[i + (long)nx * j] = 1;
                g->nactive++;
                g->row_active[j]++;
            }
}

static void add(cesm_overlap *o, int index, double length)
{
    o->index = esm_realloc(o->index, (o->n + 1) * sizeof *o->index);
    o->length = esm_realloc(o->length, (o->n + 1) * sizeof *o->length);
    o->index[o->n] = index;
    o->length[o->n++] = length;
}

/* For each column of `a`, the columns of `b` it overlaps (periodic), in radians. */
static cesm_overlap *lon_overlaps(const cesm_grid *a, const cesm_grid *b)
{
    cesm_overlap *list = esm_calloc(a->nx, sizeof *list);
    for (int i = 0; i < a->nx; i++) {
        double west = a->lon0 + i * a->dlon, east = a->lon0 + (i + 1) * a->dlon;
        int first = (int)floor((west - b->lon0) / b->dlon) - 1;
        int last = (int)ceil((east - b->lon0) / b->dlon) + 1;
        for (int k = first; k <= last; k++) {
            int wrapped = ((k % b->nx) + b->nx) % b->nx, turns = (k - wrapped) / b->nx;
            double bw = b->lon0 + wrapped * b->dlon + 360.0 * turns;
            double be = b->lon0 + (wrapped + 1) * b->dlon + 360.0 * turns;
            double lo = fmax(west, bw), hi = fmin(east, be);
            if (hi > lo)
                add(&list[i], wrapped, (hi - lo) * M_PI / 180.0);
        }
    }
    return list;
}

/* For each row of `a`, the rows of `b` it overlaps, as differences of sines of latitude. */
static cesm_overlap *lat_overlaps(const cesm_grid *a, const cesm_grid *b)
{
    cesm_overlap *list = esm_calloc(a->ny, sizeof *list);
    for (int j = 0; j < a->ny; j++)
        for (int k = 0; k < b->ny; k++) {
            double lo = fmax(a->lat_edge[j], b->lat_edge[k]);
            double hi = fmin(a->lat_edge[j + 1], b->lat_edge[k + 1]);
            if (hi > lo)
                add(&list[j], k, sind(hi) - sind(lo));
        }
    return list;
}

/* The same overlaps seen from the other grid: the very same numbers, so both maps share them. */
static cesm_overlap *invert(const cesm_overlap *list, int n, int m)
{
    cesm_overlap *inverse = esm_calloc(m, sizeof *inverse);
    for (int a = 0; a < n; a++)
        for (int k = 0; k < list[a].n; k++)
            add(&inverse[list[a].index[k]], a, list[a].length[k]);
    return inverse;
}

void cesm_overlaps_create(cesm_overlaps *o, const cesm_grid *atm, const cesm_grid *ocn)
{
    o->lon_of_ocn = lon_overlaps(ocn, atm);
    o->lat_of_ocn = lat_overlaps(ocn, atm);
    o->lon_of_atm = invert(o->lon_of_ocn, ocn->nx, atm->nx);
    o->lat_of_atm = invert(o->lat_of_ocn, ocn->ny, atm->ny);
}

double cesm_ocean_area(const cesm_overlaps *o, const cesm_grid *atm, const cesm_grid *ocn, int I,
                       int J)
{
    (void)atm;
    double r2 = EARTH_RADIUS * EARTH_RADIUS, cover = 0;
    const cesm_overlap *lat = &o->lat_of_atm[J], *lon = &o->lon_of_atm[I];
    for (int b = 0; b < lat->n; b++)
        for (int a = 0; a < lon->n; a++)
            if (ocn->active[lon->index[a] + (long)ocn->nx * lat->index[b]])
                cover += r2 * lon->length[a] * lat->length[b];
    return cover;
}

void cesm_map_apply(cesm_map *m, const double *const src[], double *const dst[],
                    const cesm_map_norm norm[])
{
    static const esm_kernel k_map = {.name = "cesm.map"};  /* folding (esm_fold.h) */
    esm_rearrange(m->gather, src, m->columns);
    /* bytes: per field, each weight, column index and gathered value; each row's start, area
     * or cover and destination */
    double bytes = m->nfields * (24.0 * m->nnz + 24.0 * m->nrows);
    if (!esm_kernel_begin(&k_map, (double)m->nfields * (m->nnz + m->nrows), bytes))
        return;
    for (int f = 0; f < m->nfields; f++)
        for (long r = 0; r < m->nrows; r++) {
            double sum = 0;
            for (long k = m->start[r]; k < m->start[r + 1]; k++)
                sum += m->w[k] * m->columns[f][m->col[k]];
            double by = norm[f] == MAP_CONSERVE ? m->row_area[r] : m->row_cover[r];
            dst[f][r] = by > 0 ? sum / by : 0.0;
        }
    esm_kernel_end(&k_map);
}

double cesm_wind(double lat)
{
    return 3.0 + 15.0 * cos(lat * M_PI / 180.0);
}

double cesm_exchange(double wind)
{
    return EXCHANGE_0 + EXCHANGE_1 * wind;
}
