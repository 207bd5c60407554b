/* cesm_work_test: the CESM proxy's work maps (work.c) on small grids, printed as one JSON line
 * for tests/test_cesm_work.py to hold against counts worked out by hand: the sunlit columns
 * and the ice-covered points of two "ranks" (halves of a grid) at given model times, CAM's
 * radiation steps, the even deals, the NSIDC extents at mid-month, and on size S's grids the
 * ice-covered ocean area against the extent and the land fraction of the Earth. No MPI. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "cesm.h"

static double seconds_of_day(double day) /* model time at a day of the 365-day calendar */
{
    return fmod(day - 78.0 + 365.0, 365.0) / 365.0 * 360.0 * 86400.0;
}

/* Points of rows [j0, j1) of g: what a rank holding those rows works on. */
static cesm_points rows_of(const cesm_grid *g, int j0, int j1)
{
    cesm_points p = {.n = 0};
    p.lat = calloc((size_t)(j1 - j0) * g->nx, sizeof *p.lat);
    for (int j = j0; j < j1; j++)
        for (int i = 0; i < g->nx; i++)
            if (g->active[i + (long)g->nx * j])
                p.lat[p.n++] = g->lat[j];
    return p;
}

/* Sunlit points of columns [i0, i1) of g. */
static long sunlit(const cesm_grid *g, int i0, int i1, double seconds)
{
    long n = 0;
    for (int j = 0; j < g->ny; j++)
        for (int i = i0; i < i1; i++)
            n += cesm_cos_zenith(g->lat[j], cesm_lon(g, i), seconds) > 0.0;
    return n;
}

/* Ocean area under the ice cover of g now, m^2. */
static double ice_area(const cesm_grid *g, double seconds, int hemisphere)
{
    double edge[2], area = 0;
    cesm_ice_edges(g, seconds, edge);
    for (int j = 0; j < g->ny; j++)
        if (hemisphere == 0 ? g->lat[j] >= edge[0] : g->lat[j] <= edge[1])
            area += g->area[j] * g->row_active[j];
    return area;
}

int main(void)
{
    cesm_grid small, tiny, atm, ocn;
    cesm_grid_atm(&small, 8, 4);  /* 45 x 45 degrees, column centres 0, 45, ..., 315 E */
    cesm_grid_atm(&tiny, 8, 18);  /* 10-degree rows: an aquaplanet for the ice edges */
    printf("{\"sunlit\": {");
    double at[] = {5400.0, 27000.0}; /* 01:30 and 07:30 on the equinox */
    for (int k = 0; k < 2; k++)
        printf("%s\"%.0f\": [%ld, %ld, %ld]", k ? ", " : "", at[k], sunlit(&small, 0, 4, at[k]),
               sunlit(&small, 4, 8, at[k]), cesm_sunlit_columns(&small, at[k], 0, 32));
    /* 01:30 on the June solstice, the columns dealt in two contiguous pieces (CAM's bands) */
    double june = 90 * 86400.0 + 5400.0;
    printf("}, \"sunlit_bands_june\": [%ld, %ld", cesm_sunlit_columns(&small, june, 0, 16),
           cesm_sunlit_columns(&small, june, 16, 16));
    printf("], \"radiation_due_1800\": [");
    for (long s = 0; s < 8; s++)
        printf("%s%d", s ? ", " : "", cesm_radiation_due(s, 1800.0));
    printf("], \"radiation_due_3600\": [");
    for (long s = 0; s < 4; s++)
        printf("%s%d", s ? ", " : "", cesm_radiation_due(s, 3600.0));
    printf("], \"share_10_over_4\": [%ld, %ld, %ld, %ld]", cesm_share(10, 4, 0),
           cesm_share(10, 4, 1), cesm_share(10, 4, 2), cesm_share(10, 4, 3));
    printf(", \"first_10_over_4\": [%ld, %ld, %ld, %ld]", cesm_share_first(10, 4, 0),
           cesm_share_first(10, 4, 1), cesm_share_first(10, 4, 2), cesm_share_first(10, 4, 3));

    double march = seconds_of_day(31 + 28 + 15.5), september = seconds_of_day(243 + 15.0);
    printf(", \"extent_mkm2\": {\"north_march\": %.4f, \"south_september\": %.4f}",
           cesm_ice_extent(0, march) / 1e12, cesm_ice_extent(1, september) / 1e12);
    cesm_points south = rows_of(&tiny, 0, 9), north = rows_of(&tiny, 9, 18);
    printf(", \"icy\": {");
    double when[] = {march, september};
    const char *name[] = {"march", "september"};
    for (int k = 0; k < 2; k++) {
        double edge[2];
        cesm_ice_edges(&tiny, when[k], edge);
        printf("%s\"%s\": [%ld, %ld]", k ? ", " : "", name[k], cesm_icy_points(&south, edge),
               cesm_icy_points(&north, edge));
    }

    /* size S: the atmosphere's 96 x 48 and the ocean's 100 x 116 with esm_geo's continents */
    cesm_grid_atm(&atm, 96, 48);
    cesm_grid_ocn(&ocn, 100, 116);
    cesm_overlaps ov;
    cesm_overlaps_create(&ov, &atm, &ocn);
    double land = 0, earth = 0, largest_row = 0;
    for (int J = 0; J < atm.ny; J++)
        for (int I = 0; I < atm.nx; I++) {
            land += atm.area[J] - cesm_ocean_area(&ov, &atm, &ocn, I, J);
            earth += atm.area[J];
        }
    for (int j = 0; j < ocn.ny; j++)
        if (fabs(ocn.lat[j]) > 40 && ocn.area[j] * ocn.row_active[j] > largest_row)
            largest_row = ocn.area[j] * ocn.row_active[j];
    printf("}, \"size_S\": {\"land_fraction\": %.4f, \"ice_mkm2\": {\"north_march\": %.4f, "
           "\"north_september\": %.4f, \"south_february\": %.4f, \"south_september\": %.4f}, "
           "\"polar_row_mkm2_max\": %.4f}}\n",
           land / earth, ice_area(&ocn, march, 0) / 1e12, ice_area(&ocn, september, 0) / 1e12,
           ice_area(&ocn, seconds_of_day(31 + 14.0), 1) / 1e12, ice_area(&ocn, september, 1) / 1e12,
           largest_row / 1e12);
    return 0;
}
