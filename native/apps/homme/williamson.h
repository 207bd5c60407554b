/* williamson.h: test cases 1 and 2 of Williamson, Drake, Hack, Jakob & Swarztrauber, "A
 * standard test set for numerical approximations to the shallow water equations in spherical
 * geometry", J. Comput. Phys. 102 (1992) 211-224.
 *
 * Both turn the fluid as a solid body once round the sphere in 12 days, about an axis tilted
 * by alpha from the Earth's (alpha = 0: along the equator; 90 degrees: over the poles):
 *
 *   tc1  cosine bell advection: a bell of height 1000 m and radius a/3, centred on the equator
 *        at 270E, carried by the fixed wind; the exact answer is the bell turned by the wind.
 *   tc2  global steady state nonlinear geostrophic flow: g h = g h0 - (a Omega u0 + u0^2/2)
 *        (sin of the latitude about the tilted axis)^2 with g h0 = 2.94e4 m^2/s^2, the
 *        Coriolis parameter tilted alike; the exact answer is the initial state.
 *
 * Error norms (section 4 of the paper): l1 = I(|h - hT|) / I(|hT|), l2 = sqrt(I((h - hT)^2) /
 * I(hT^2)), linf = max|h - hT| / max|hT|, with I the integral over the sphere. */
#ifndef HOMME_WILLIAMSON_H
#define HOMME_WILLIAMSON_H

enum { TC1 = 1, TC2 = 2 };

typedef struct williamson {
    int test;                        /* TC1 or TC2 */
    double radius, omega, gravity;   /* a, Omega, g */
    double u0, h0;                   /* wind speed at the flow's equator, reference depth */
    double axis[3];                  /* the flow's rotation axis (unit) */
    double bell_centre[3];           /* tc1 */
} williamson;

williamson williamson_case(int test, double alpha_degrees);

/* The exact depth at unit position x and time t (seconds). */
double williamson_depth(const williamson *w, const double x[3], double t);
/* The wind (Cartesian, m/s) and Coriolis parameter (1/s) at x. */
void williamson_wind(const williamson *w, const double x[3], double u[3]);
double williamson_coriolis(const williamson *w, const double x[3]);
#endif
