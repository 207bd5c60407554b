/* sweq.h: the element kernels of the shallow-water equations in vector-invariant form,
 *
 *     du/dt = -(zeta + f) k x u - grad(g h + |u|^2 / 2)
 *     dh/dt = -div(h u)
 *
 * on a sphere of radius a, u the velocity (tangent to the sphere), h the fluid depth, zeta the
 * relative vorticity, f the Coriolis parameter, k the outward unit normal. As HOMME does, the
 * operators are collocation derivatives of the degree-3 polynomials of each element, through
 * the element's metric (covariant u_i = d_i . u, contravariant u^i = g^ij u_j):
 *
 *     grad s   = (g^ij ds/dxi_j) d_i
 *     div u    = (1/J) d(J u^i)/dxi_i
 *     zeta     = (1/J) (du_2/dxi_1 - du_1/dxi_2)
 *
 * Velocity is stored by its three Cartesian components, which are continuous across faces and
 * defined at the poles (HOMME stores latitude-longitude components and rotates at the faces).
 * Tendencies leave the kernels multiplied by the local mass spheremp = w_i w_j J, ready for the
 * direct stiffness summation that assembles them (dss_apply).
 *
 * Hyperviscosity is -nu del^4, built as HOMME's biharmonic_wk from the weak Laplacian
 * (laplace_wk, integrated against each basis function), one DSS after each Laplacian. */
#ifndef HOMME_SWEQ_H
#define HOMME_SWEQ_H
#include "cube.h"

/* Per element point (nlocal * NPTS each), for this rank's elements; the arrays come from
 * esm_field_alloc (shared between simulated ranks when folded). */
typedef struct homme_metric {
    long npoints;
    double *x[3];              /* unit position vector (outward normal k) */
    double *d1[3], *d2[3];     /* tangent basis dX/dxi_1, dX/dxi_2 (metres) */
    double *jac;               /* area element |d1 x d2| */
    double *gi11, *gi12, *gi22; /* inverse metric tensor g^ij */
    double *mp;                /* spheremp: w_i w_j J, the local mass */
    double *fcor;              /* Coriolis parameter */
} homme_metric;

/* The metric of `nlocal` elements with global ids `element`, length `length` per array. */
void metric_create(homme_metric *m, int ne, int nlocal, const int *element, long length,
                   double radius);
void metric_free(homme_metric *m);

/* Shallow water: dh, du = spheremp * tendency. Arrays of h, u as stored (element points first). */
void sw_tendency(const homme_metric *m, int nlocal, double gravity, const double *h,
                 double *const u[3], double *dh, double *const du[3]);

/* Advection of h by a fixed wind (test case 1): jw1, jw2 = J u^1, J u^2 of the wind. */
void advection_tendency(const homme_metric *m, int nlocal, const double *jw1, const double *jw2,
                        const double *h, double *dh);

/* out_i = -integral(grad phi_i . grad s): the weak Laplacian of s, integrated. */
void laplace_wk(const homme_metric *m, int nlocal, const double *s, double *out);

/* u <- u - (u.k) k: keeps u tangent (removes round-off). */
void project_tangent(const homme_metric *m, double *const u[3]);

/* Bytes moved per element point by one call (the model behind the kernels' bandwidth figure
 * and the node model of folded runs): sw_tendency reads h, u (4) and the metric (d1, d2, x: 9;
 * jac, g^ij, mp, fcor: 6) and writes 4 tendencies; advection_tendency reads h, J u^1, J u^2 and
 * writes 1; laplace_wk (per field) reads s, jac, g^ij and writes 1; project_tangent reads u
 * and x and writes u. */
enum {
    SW_TENDENCY_BYTES = 8 * (4 + 15 + 4),
    ADVECTION_BYTES = 8 * 4,
    LAPLACE_WK_BYTES = 8 * 6,
    PROJECT_TANGENT_BYTES = 8 * 9
};
/* Flops per element point of the same calls (the node model's in-core part, esm_fold.h),
 * counted from sweq.c's loops with NP = 4: sw_tendency's covariant velocities, energy and
 * fluxes (27), then 4 derivative sums of 4 terms and the flux divergence (48), vorticity,
 * gradient, cross product, momentum and height tendencies (38); advection_tendency's fluxes
 * (2), divergence (16) and weights (2); laplace_wk's gradient (16), metric terms (8) and
 * weak divergence (32); project_tangent's radial part (5) and its removal (6). */
enum {
    SW_TENDENCY_FLOPS = 27 + 48 + 38,
    ADVECTION_FLOPS = 2 + 16 + 2,
    LAPLACE_WK_FLOPS = 16 + 8 + 32,
    PROJECT_TANGENT_FLOPS = 5 + 6
};
#endif
