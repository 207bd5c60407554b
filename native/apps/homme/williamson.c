/* Williamson et al. (1992) test cases 1 and 2. */
#include <math.h>
#include "williamson.h"

static const double DAY = 86400.0;

williamson williamson_case(int test, double alpha_degrees)
{
    double alpha = alpha_degrees * M_PI / 180.0;
    williamson w = {.test = test, .radius = 6.37122e6, .omega = 7.292e-5, .gravity = 9.80616};
    w.u0 = 2.0 * M_PI * w.radius / (12.0 * DAY);
    w.h0 = test == TC1 ? 1000.0 : 2.94e4 / w.gravity;
    /* Wind u = u0 (cos(lat) cos(alpha) + cos(lon) sin(lat) sin(alpha)), v = -u0 sin(lon)
     * sin(alpha): a solid-body turn about this axis. */
    w.axis[0] = -sin(alpha);
    w.axis[1] = 0.0;
    w.axis[2] = cos(alpha);
    w.bell_centre[0] = 0.0; /* lon 3 pi / 2, lat 0 */
    w.bell_centre[1] = -1.0;
    w.bell_centre[2] = 0.0;
    return w;
}

static double dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

void williamson_wind(const williamson *w, const double x[3], double u[3])
{
    const double *k = w->axis;
    u[0] = w->u0 * (k[1] * x[2] - k[2] * x[1]);
    u[1] = w->u0 * (k[2] * x[0] - k[0] * x[2]);
    u[2] = w->u0 * (k[0] * x[1] - k[1] * x[0]);
}

double williamson_coriolis(const williamson *w, const double x[3])
{
    return 2.0 * w->omega * dot(w->axis, x);
}

double williamson_depth(const williamson *w, const double x[3], double t)
{
    if (w->test == TC2) {
        double s = dot(w->axis, x);
        return w->h0 - (w->radius * w->omega * w->u0 + 0.5 * w->u0 * w->u0) * s * s / w->gravity;
    }
    /* tc1: where the wind was at time 0 (x turned back by -u0 t / a about the axis). */
    double angle = -w->u0 * t / w->radius, c = cos(angle), s = sin(angle);
    const double *k = w->axis;
    double kx[3] = {k[1] * x[2] - k[2] * x[1], k[2] * x[0] - k[0] * x[2],
                    k[0] * x[1] - k[1] * x[0]};
    double kdx = dot(k, x), back[3];
    for (int a = 0; a < 3; a++)
        back[a] = x[a] * c + kx[a] * s + k[a] * kdx * (1.0 - c);
    double cosine = dot(back, w->bell_centre);
    cosine = cosine > 1.0 ? 1.0 : cosine < -1.0 ? -1.0 : cosine;
    double r = acos(cosine), bell_radius = 1.0 / 3.0; /* in radians: a/3 over a */
    return r < bell_radius ? 0.5 * w->h0 * (1.0 + cos(M_PI * r / bell_radius)) : 0.0;
}
