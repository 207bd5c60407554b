/* The HYCOM proxy's continuity kernel (kernels.h): 5. the layer thicknesses from the layer
 * transports, in flux form. */
#include "kernels.h"

/* ---- 5. continuity ------------------------------------------------------------------------ */

/* A layer's transport through n faces of a row: its thickness at the face (the centred mean
 * of the cells on either side, as faces computes it, bit for bit) times its baroclinic
 * velocity plus its share of the substep-averaged barotropic transport, so the layers add up
 * to the barotropic mode. */
static inline void transport_faces(int n, long back, const double *restrict mask,
                                   const double *restrict h, const double *restrict vel,
                                   const double *restrict share, double *restrict flux)
{
    for (int i = 0; i < n; i++) {
        double face = mask[i] * 0.5 * (h[i - back] + h[i]);
        flux[i] = face * (vel[i] + share[i]);
    }
}

/* One level of the continuity. Each face once: the cells on both sides use the same value
 * (row scratch: east_west, and south and north, swapped from row to row). */
ESM_SIMD static void continuity_level(int rows, int n, long s, double dt, double dy,
                                      const double *restrict dxt, const double *restrict dxv,
                                      const double *restrict mu, const double *restrict mv,
                                      const double *restrict h, const double *restrict u,
                                      const double *restrict v, const double *restrict share_u,
                                      const double *restrict share_v, const double *restrict mt,
                                      double *restrict h_next, double *restrict east_west,
                                      double *restrict south, double *restrict north)
{
    transport_faces(n, s, mv, h, v, share_v, south); /* the south faces of the first row */
    for (int j = 0; j < rows; j++, mu += s, mv += s, h += s, u += s, v += s, share_u += s,
             share_v += s, mt += s, h_next += s) {
        double rate = dt / (dxt[j] * dy), dx_north = dxv[j + 1], dx_south = dxv[j];
        transport_faces(n + 1, 1, mu, h, u, share_u, east_west);
        transport_faces(n, s, mv + s, h + s, v + s, share_v + s, north);
        for (int i = 0; i < n; i++) {
            double divergence =
                dy * (east_west[i + 1] - east_west[i]) + dx_north * north[i] - dx_south * south[i];
            h_next[i] = mt[i] * (h[i] - rate * divergence);
        }
        double *swap = south; /* this row's north faces are the next row's south */
        south = north;
        north = swap;
    }
}

/* Layer thickness: h -= dt div(layer transports), flux form (conserves every layer's mass).
 * Bytes: h, u_next, v_next, h_next; mu, mv, share_u, share_v, mt. */
static void continuity_block(hycom *m, int lb, esm_region r, double unused)
{
    (void)unused;
    const esm_block *b = BLOCK(m);
    const int rows = rows_of(b, r), n = width_of(b, r), j = -r.south;
    const long s = m->l3.stride_j, q = at2(m, lb, r, j);
    for (int k = 0; k < m->nz; k++) {
        long p = at3(m, lb, r, j, k);
        continuity_level(rows, n, s, m->dt, m->dy, row_at(m, m->row_dxt, b, r),
                         row_at(m, m->row_dxv, b, r), m->mu + q, m->mv + q, m->h + p, m->u_next + p,
                         m->v_next + p, m->share_u + q, m->share_v + q, m->mt + q, m->h_next + p,
                         m->row_a, m->row_b, m->row_c);
    }
}

void kernel_continuity(hycom *m, esm_region r)
{
    /* a level: two faces' transports 5 each, the divergence 6, the update 3 */
    hycom_defer(m, continuity_block, "continuity", r, 0, 4.0 * m->nz + 5, 19.0 * m->nz);
}
