/* Where each component of the CESM proxy works, from the physics (docs/cesm.md, "Where the
 * components work"): sea ice where the climatological ice cover is (by latitude and season),
 * the atmosphere's shortwave radiation on the sunlit columns every radiation step, land over
 * land, ocean over ocean (those two are the models' points already). And how the real model
 * shares that work among a component's ranks. No MPI: the same numbers on every rank. */
#include <math.h>
#include <stdlib.h>
#include "cesm.h"

/* NSIDC Sea Ice Index, Version 3 (G02135; Fetterer, Knowles, Meier, Savoie and Windnagel,
 * 2017, doi:10.7265/N5K072F8): the monthly mean extents of the files N_MM_extent_v3.0.csv and
 * S_MM_extent_v3.0.csv averaged over the Index's reference period 1981-2010 (30 years; 29 for
 * January and December, 1987-88 missing), million km^2. Northern, southern hemisphere. */
static const double ICE_EXTENT_MKM2[2][12] = {
    {14.42, 15.30, 15.43, 14.69, 13.29, 11.77, 9.47, 7.20, 6.41, 8.35, 10.70, 12.84},
    {5.00, 3.07, 4.03, 6.85, 10.16, 13.35, 15.96, 17.72, 18.49, 18.10, 15.90, 10.41},
};
static const int MONTH_DAYS[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
#define EQUINOX_DAY 78.0       /* 20 March 00:00, days after 1 January (a 365-day year) */
#define OBLIQUITY 23.44        /* degrees: the Earth's axial tilt */
#define RADIATION_HOURS 1      /* CAM's iradsw = -1: shortwave every hour (radiation.F90) */

/* The proxy's clock starts at the March equinox and its seasons turn in 360 days (its sun's
 * declination, cesm_cos_zenith); as a day of the 365-day calendar the extents are given on. */
double cesm_calendar_day(double seconds)
{
    double year = 360.0 * 86400.0, f = fmod(seconds, year) / year;
    return fmod(EQUINOX_DAY + 365.0 * f, 365.0);
}

/* Linear between mid-month values (each month's mean held at its middle day), cyclic. */
double cesm_ice_extent(int hemisphere, double seconds)
{
    double day = cesm_calendar_day(seconds), mid[12], start = 0;
    for (int m = 0; m < 12; m++) {
        mid[m] = start + 0.5 * MONTH_DAYS[m];
        start += MONTH_DAYS[m];
    }
    int next = 0;
    while (next < 12 && mid[next] <= day)
        next++;
    int prev = (next + 11) % 12;
    next %= 12;
    double from = mid[prev], to = mid[next];
    if (to <= from)
        to += 365.0;
    double at = day < from ? day + 365.0 : day, w = (at - from) / (to - from);
    const double *e = ICE_EXTENT_MKM2[hemisphere];
    return 1e12 * ((1.0 - w) * e[prev] + w * e[next]); /* m^2 */
}

/* The ice edge of each hemisphere on grid g: whole rows of ocean from the pole equatorward,
 * as many as bring their ocean area nearest the extent (ties: fewer; rows of land passed
 * over); edge[0] the northern
 * edge's latitude (ice at lat >= edge[0]), edge[1] the southern (ice at lat <= edge[1]). */
void cesm_ice_edges(const cesm_grid *g, double seconds, double edge[2])
{
    for (int h = 0; h < 2; h++) {
        double extent = cesm_ice_extent(h, seconds), covered = 0;
        edge[h] = h == 0 ? 91.0 : -91.0; /* no row: no ice */
        for (int k = 0; k < g->ny; k++) {
            int j = h == 0 ? g->ny - 1 - k : k;
            if (g->row_active[j] == 0) /* all land (80N and beyond, Antarctica) */
                continue;
            double more = covered + g->area[j] * g->row_active[j];
            if (fabs(more - extent) >= fabs(covered - extent))
                break;
            covered = more;
            edge[h] = g->lat[j];
        }
    }
}

bool cesm_icy(double lat, const double edge[2])
{
    return lat >= edge[0] || lat <= edge[1];
}

/* Cosine of the solar zenith angle: declination from the proxy's season (the obliquity times
 * the sine of the season's phase, zero at the March equinox), local solar time from the
 * longitude (noon at Greenwich at 12:00 model time). */
double cesm_cos_zenith(double lat, double lon, double seconds)
{
    double d2r = M_PI / 180.0;
    double declination = OBLIQUITY * d2r * sin(2 * M_PI * seconds / (360.0 * 86400.0));
    double hour_angle = 2 * M_PI * fmod(seconds, 86400.0) / 86400.0 + lon * d2r - M_PI;
    return sin(lat * d2r) * sin(declination) + cos(lat * d2r) * cos(declination) * cos(hour_angle);
}

/* CAM's radiation_do('sw'): on step 0 and then every n steps from step 1 on, n the radiation
 * interval in steps of dt (iradsw = -1: one hour; radiation.F90, CESM 1.0). */
bool cesm_radiation_due(long step, double dt)
{
    long n = lround(RADIATION_HOURS * 3600.0 / dt);
    if (n < 1)
        n = 1;
    return step == 0 || n == 1 || ((step - 1) % n == 0 && step != 1);
}

/* The share of `total` equal pieces that rank `rank` of `ranks` gets when they are dealt out
 * evenly (CLM's grid cells dealt to clumps), and where its piece starts when the pieces are
 * contiguous (CAM's columns in latitude-band order). */
long cesm_share(long total, int ranks, int rank)
{
    return total / ranks + (rank < total % ranks);
}

long cesm_share_first(long total, int ranks, int rank)
{
    return rank * (total / ranks) + (rank < total % ranks ? rank : total % ranks);
}

long cesm_icy_points(const cesm_points *pts, const double edge[2])
{
    long n = 0;
    for (long p = 0; p < pts->n; p++)
        n += cesm_icy(pts->lat[p], edge);
    return n;
}

/* The columns with the sun above the horizon among `count` columns of g from column `first`
 * (global index i + nx j): cesm_cos_zenith's products, each row's and each column's factors
 * computed once. */
long cesm_sunlit_columns(const cesm_grid *g, double seconds, long first, long count)
{
    double d2r = M_PI / 180.0;
    double declination = OBLIQUITY * d2r * sin(2 * M_PI * seconds / (360.0 * 86400.0));
    double day = 2 * M_PI * fmod(seconds, 86400.0) / 86400.0, sd = sin(declination),
           cd = cos(declination);
    double *hour = esm_calloc(g->nx, sizeof *hour);
    for (int i = 0; i < g->nx; i++)
        hour[i] = cos(day + cesm_lon(g, i) * d2r - M_PI);
    long n = 0;
    for (long c = first; c < first + count; c++) {
        int i = (int)(c % g->nx), j = (int)(c / g->nx);
        n += sin(g->lat[j] * d2r) * sd + cos(g->lat[j] * d2r) * cd * hour[i] > 0.0;
    }
    free(hour);
    return n;
}
