/* The analytic Earth. */
#include <math.h>
#include "esm_geo.h"

typedef struct {
    double lon, lat, a, b;
} continent; /* centre and half-axes, degrees */

static const continent continents[] = {
    {-100, 48, 32, 22},  /* North America */
    {-62, -15, 16, 34},  /* South America */
    {-85, 15, 10, 8},    /* Central America */
    {80, 52, 75, 20},    /* Eurasia */
    {20, 5, 22, 32},     /* Africa */
    {45, 22, 10, 10},    /* Arabia */
    {134, -25, 18, 12},  /* Australia */
    {-42, 73, 12, 9},    /* Greenland */
};

static double coastness(double lon, double lat)
{
    double c = INFINITY;
    for (unsigned k = 0; k < sizeof continents / sizeof *continents; k++) {
        double dx = remainder(lon - continents[k].lon, 360.0) / continents[k].a;
        double dy = (lat - continents[k].lat) / continents[k].b;
        double m = pow(dx * dx * dx * dx + dy * dy * dy * dy, 0.25); /* super-ellipse, p = 4 */
        c = fmin(c, m);
    }
    c = fmin(c, 1.0 + (lat + 70.0) / 8.0);  /* Antarctica */
    c = fmin(c, 1.0 + (80.0 - lat) / 8.0);  /* Arctic rim */
    return c;
}

bool esm_geo_land(double lon, double lat)
{
    return coastness(lon, lat) < 1.0;
}

double esm_geo_depth(double lon, double lat)
{
    double c = coastness(lon, lat);
    if (c < 1.0)
        return 0.0;
    double plain = 5200.0 * (1.0 - exp(-6.0 * (c - 1.0)));       /* shelf to abyss */
    double ridge_lon = -30.0 + 8.0 * sin(lat * M_PI / 90.0);      /* mid-Atlantic ridge */
    double ridge = 2000.0 * exp(-pow(remainder(lon - ridge_lon, 360.0) / 6.0, 2.0));
    return fmax(50.0, plain - ridge * (plain / 5200.0) * (plain / 5200.0));
}
