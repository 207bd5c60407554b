/* Element kernels: metric terms, the shallow-water tendency, advection, weak Laplacian. */
#include <stdlib.h>
#include "esm.h"
#include "sweq.h"

void metric_create(homme_metric *m, int ne, int nlocal, const int *element, long length,
                   double radius)
{
    double **arrays[] = {&m->x[0],  &m->x[1],  &m->x[2],  &m->d1[0], &m->d1[1],
                         &m->d1[2], &m->d2[0], &m->d2[1], &m->d2[2], &m->jac,
                         &m->gi11,  &m->gi12,  &m->gi22,  &m->mp,    &m->fcor};
    for (size_t a = 0; a < sizeof arrays / sizeof *arrays; a++)
        *arrays[a] = esm_field_alloc((length + 1) * sizeof(double));
    m->npoints = (long)nlocal * NPTS;
    for (int e = 0; e < nlocal; e++)
        for (int p = 0; p < NPTS; p++) {
            long k = (long)e * NPTS + p;
            point_geometry pg = cube_point(ne, element[e], p, radius);
            double g11 = 0, g12 = 0, g22 = 0;
            for (int a = 0; a < 3; a++) {
                m->x[a][k] = pg.x[a];
                m->d1[a][k] = pg.d1[a];
                m->d2[a][k] = pg.d2[a];
                g11 += pg.d1[a] * pg.d1[a];
                g12 += pg.d1[a] * pg.d2[a];
                g22 += pg.d2[a] * pg.d2[a];
            }
            double det = g11 * g22 - g12 * g12;
            m->gi11[k] = g22 / det;
            m->gi12[k] = -g12 / det;
            m->gi22[k] = g11 / det;
            m->jac[k] = pg.jac;
            m->mp[k] = gll_w[p % NP] * gll_w[p / NP] * pg.jac;
        }
}

void metric_free(homme_metric *m)
{
    for (int a = 0; a < 3; a++) {
        esm_field_free(m->x[a]);
        esm_field_free(m->d1[a]);
        esm_field_free(m->d2[a]);
    }
    esm_field_free(m->jac);
    esm_field_free(m->gi11);
    esm_field_free(m->gi12);
    esm_field_free(m->gi22);
    esm_field_free(m->mp);
    esm_field_free(m->fcor);
}

#define D gll_deriv

void sw_tendency(const homme_metric *m, int nlocal, double gravity, const double *h,
                 double *const u[3], double *dh, double *const du[3])
{
    for (int e = 0; e < nlocal; e++) {
        const long o = (long)e * NPTS;
        double cov1[NPTS], cov2[NPTS], energy[NPTS], flux1[NPTS], flux2[NPTS];
        for (int p = 0; p < NPTS; p++) {
            const long k = o + p;
            double ux = u[0][k], uy = u[1][k], uz = u[2][k];
            double c1 = m->d1[0][k] * ux + m->d1[1][k] * uy + m->d1[2][k] * uz;
            double c2 = m->d2[0][k] * ux + m->d2[1][k] * uy + m->d2[2][k] * uz;
            double jh = m->jac[k] * h[k];
            cov1[p] = c1;
            cov2[p] = c2;
            energy[p] = gravity * h[k] + 0.5 * (ux * ux + uy * uy + uz * uz);
            flux1[p] = jh * (m->gi11[k] * c1 + m->gi12[k] * c2); /* J h u^1 */
            flux2[p] = jh * (m->gi12[k] * c1 + m->gi22[k] * c2); /* J h u^2 */
        }
        for (int j = 0; j < NP; j++)
            for (int i = 0; i < NP; i++) {
                const int p = i + NP * j;
                const long k = o + p;
                double de1 = 0, de2 = 0, dcov2 = 0, dcov1 = 0, dflux = 0;
                for (int b = 0; b < NP; b++) {
                    de1 += D[i][b] * energy[b + NP * j];
                    de2 += D[j][b] * energy[i + NP * b];
                    dcov2 += D[i][b] * cov2[b + NP * j];
                    dcov1 += D[j][b] * cov1[i + NP * b];
                    dflux += D[i][b] * flux1[b + NP * j] + D[j][b] * flux2[i + NP * b];
                }
                double absolute_vorticity = (dcov2 - dcov1) / m->jac[k] + m->fcor[k];
                double grad1 = m->gi11[k] * de1 + m->gi12[k] * de2; /* contravariant gradient */
                double grad2 = m->gi12[k] * de1 + m->gi22[k] * de2;
                double ux = u[0][k], uy = u[1][k], uz = u[2][k];
                double kx = m->x[0][k], ky = m->x[1][k], kz = m->x[2][k];
                double cross[3] = {ky * uz - kz * uy, kz * ux - kx * uz, kx * uy - ky * ux};
                double mp = m->mp[k];
                for (int a = 0; a < 3; a++)
                    du[a][k] = -mp * (absolute_vorticity * cross[a] + grad1 * m->d1[a][k] +
                                      grad2 * m->d2[a][k]);
                dh[k] = -gll_w[i] * gll_w[j] * dflux; /* spheremp * (-div(h u)) */
            }
    }
}

void advection_tendency(const homme_metric *m, int nlocal, const double *jw1, const double *jw2,
                        const double *h, double *dh)
{
    for (int e = 0; e < nlocal; e++) {
        const long o = (long)e * NPTS;
        double flux1[NPTS], flux2[NPTS];
        for (int p = 0; p < NPTS; p++) {
            flux1[p] = h[o + p] * jw1[o + p];
            flux2[p] = h[o + p] * jw2[o + p];
        }
        for (int j = 0; j < NP; j++)
            for (int i = 0; i < NP; i++) {
                double dflux = 0;
                for (int b = 0; b < NP; b++)
                    dflux += D[i][b] * flux1[b + NP * j] + D[j][b] * flux2[i + NP * b];
                dh[o + i + NP * j] = -gll_w[i] * gll_w[j] * dflux;
            }
    }
    (void)m;
}

void laplace_wk(const homme_metric *m, int nlocal, const double *s, double *out)
{
    for (int e = 0; e < nlocal; e++) {
        const long o = (long)e * NPTS;
        double jg1[NPTS], jg2[NPTS]; /* J times the contravariant gradient */
        for (int j = 0; j < NP; j++)
            for (int i = 0; i < NP; i++) {
                const long k = o + i + NP * j;
                double ds1 = 0, ds2 = 0;
                for (int b = 0; b < NP; b++) {
                    ds1 += D[i][b] * s[o + b + NP * j];
                    ds2 += D[j][b] * s[o + i + NP * b];
                }
                jg1[i + NP * j] = m->jac[k] * (m->gi11[k] * ds1 + m->gi12[k] * ds2);
                jg2[i + NP * j] = m->jac[k] * (m->gi12[k] * ds1 + m->gi22[k] * ds2);
            }
        for (int j = 0; j < NP; j++)
            for (int i = 0; i < NP; i++) {
                double sum = 0;
                for (int a = 0; a < NP; a++)
                    sum += gll_w[a] * gll_w[j] * jg1[a + NP * j] * D[a][i] +
                           gll_w[i] * gll_w[a] * jg2[i + NP * a] * D[a][j];
                out[o + i + NP * j] = -sum;
            }
    }
}

void project_tangent(const homme_metric *m, double *const u[3])
{
    for (long k = 0; k < m->npoints; k++) {
        double radial = u[0][k] * m->x[0][k] + u[1][k] * m->x[1][k] + u[2][k] * m->x[2][k];
        for (int a = 0; a < 3; a++)
            u[a][k] -= radial * m->x[a][k];
    }
}
