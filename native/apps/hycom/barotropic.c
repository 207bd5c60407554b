/* The HYCOM proxy's barotropic kernels (kernels.h): 4. the barotropic substeps (surface
 * height and transports with short steps) and the transports averaged over them. */
#include "kernels.h"

/* ---- 4. barotropic substeps ---------------------------------------------------------------- */

ESM_SIMD static void running_sum_level(int rows, int n, long s, int first,
                                       const double *restrict now, double *restrict sum)
{
    for (int j = 0; j < rows; j++, now += s, sum += s)
        for (int i = 0; i < n; i++)
            sum[i] = first ? now[i] : sum[i] + now[i];
}

/* Running sum of the barotropic transports used by the continuity substeps (`first`: start
 * it). Bytes: the transport, the sum (read unless first, written). */
static void mean_add_block(hycom *m, int lb, esm_region r, int along_j, double first)
{
    const esm_block *b = BLOCK(m);
    const long q = at2(m, lb, r, -r.south);
    running_sum_level(rows_of(b, r), width_of(b, r), m->l2.stride_j, first != 0,
                      (along_j ? m->vb : m->ub) + q, (along_j ? m->vbm : m->ubm) + q);
}

static void mean_add_u_block(hycom *m, int lb, esm_region r, double first)
{
    mean_add_block(m, lb, r, 0, first);
}
static void mean_add_v_block(hycom *m, int lb, esm_region r, double first)
{
    mean_add_block(m, lb, r, 1, first);
}

void kernel_mean_add(hycom *m, esm_region ru, esm_region rv, int first)
{
    hycom_defer(m, mean_add_u_block, "mean_add_u", ru, first, first ? 2.0 : 3.0, first ? 0 : 1);
    hycom_defer(m, mean_add_v_block, "mean_add_v", rv, first, first ? 2.0 : 3.0, first ? 0 : 1);
}

ESM_SIMD static void share_level(int rows, int n, long s, double factor,
                                 const double *restrict total, double *restrict mean,
                                 double *restrict share)
{
    for (int j = 0; j < rows; j++, total += s, mean += s, share += s)
        for (int i = 0; i < n; i++) {
            mean[i] *= factor;
            share[i] = total[i] > 0 ? mean[i] / total[i] : 0.0;
        }
}

/* Turn the sums into means over the substeps, and each face's share of the mean transport
 * per metre of water: the layers take share x their thickness.
 * Bytes: the mean read and written, the thickness total, the share. */
static void mean_scale_block(hycom *m, int lb, esm_region r, int along_j, double factor)
{
    const esm_block *b = BLOCK(m);
    const long q = at2(m, lb, r, -r.south);
    share_level(rows_of(b, r), width_of(b, r), m->l2.stride_j, factor,
                (along_j ? m->hv_total : m->hu_total) + q, (along_j ? m->vbm : m->ubm) + q,
                (along_j ? m->share_v : m->share_u) + q);
}

static void mean_scale_u_block(hycom *m, int lb, esm_region r, double factor)
{
    mean_scale_block(m, lb, r, 0, factor);
}
static void mean_scale_v_block(hycom *m, int lb, esm_region r, double factor)
{
    mean_scale_block(m, lb, r, 1, factor);
}

void kernel_mean_scale(hycom *m, esm_region ru, esm_region rv, double factor)
{
    hycom_defer(m, mean_scale_u_block, "mean_scale_u", ru, factor, 4.0, 2);
    hycom_defer(m, mean_scale_v_block, "mean_scale_v", rv, factor, 4.0, 2);
}

/* eta -= dtau div(u, v) on one level; per row the cell's width dxt and its faces' dxv. */
ESM_SIMD static void eta_level(int rows, int n, long s, double dtau, double dy,
                               const double *restrict dxt, const double *restrict dxv,
                               const double *restrict u, const double *restrict v,
                               const double *restrict mt, double *restrict eta)
{
    for (int j = 0; j < rows; j++, u += s, v += s, mt += s, eta += s) {
        double rate = dtau / (dxt[j] * dy), dx_north = dxv[j + 1], dx_south = dxv[j];
        for (int i = 0; i < n; i++) {
            double divergence = dy * (u[i + 1] - u[i]) + dx_north * v[i + s] - dx_south * v[i];
            eta[i] = mt[i] * (eta[i] - rate * divergence);
        }
    }
}

/* Barotropic substep, continuity: eta -= dtau div(ub, vb).
 * Bytes: ub, vb, mt, eta read and written. */
static void barotropic_eta_block(hycom *m, int lb, esm_region r, double unused)
{
    (void)unused;
    const esm_block *b = BLOCK(m);
    const long q = at2(m, lb, r, -r.south);
    eta_level(rows_of(b, r), width_of(b, r), m->l2.stride_j, m->dtau, m->dy,
              row_at(m, m->row_dxt, b, r), row_at(m, m->row_dxv, b, r), m->ub + q, m->vb + q,
              m->mt + q, m->eta + q);
}

void kernel_barotropic_eta(hycom *m, esm_region r)
{
    hycom_defer(m, barotropic_eta_block, "barotropic_eta", r, 0, 5.0,
                9); /* divergence 6, update 3 */
}

/* One level of a barotropic transport: surface pressure gradient, Coriolis from the other
 * transport's 4 neighbours, slow forcing. Per row: the distance across the gradient
 * (`distance`, per row for u, dy for v: distance_step 0) and f. */
ESM_SIMD static void transport_level(int rows, int n, long s, int along_j, double dtau,
                                     double gravity, const double *restrict distance,
                                     int distance_step, const double *restrict f_rows,
                                     const double *restrict total, const double *restrict eta,
                                     long back, const double *restrict other, long o1, long o2,
                                     long o3, long o4, const double *restrict force,
                                     const double *restrict mask, double *restrict vel)
{
    for (int j = 0; j < rows;
         j++, total += s, eta += s, other += s, force += s, mask += s, vel += s) {
        double g_over_distance = gravity / distance[j * distance_step];
        double coriolis = along_j ? -f_rows[j] : f_rows[j];
        for (int i = 0; i < n; i++) {
            double gradient = g_over_distance * total[i] * (eta[i] - eta[i - back]);
            double o = 0.25 * (other[i + o1] + other[i + o2] + other[i + o3] + other[i + o4]);
            vel[i] = mask[i] * (vel[i] + dtau * (-gradient + coriolis * o + force[i]));
        }
    }
}

/* Barotropic substep, u (Coriolis from the old vb) or v (from the new ub).
 * Bytes: thickness total, eta, the other transport, forcing, mask, transport read and written. */
static void barotropic_transport_block(hycom *m, int lb, esm_region r, int along_j)
{
    const long s = m->l2.stride_j, back = along_j ? s : 1;
    const long o1 = along_j ? -s : -1, o2 = along_j ? 1 - s : 0, o3 = along_j ? 0 : s - 1,
               o4 = along_j ? 1 : s;
    const esm_block *b = BLOCK(m);
    const long q = at2(m, lb, r, -r.south);
    transport_level(rows_of(b, r), width_of(b, r), s, along_j, m->dtau, m->gravity,
                    along_j ? &m->dy : row_at(m, m->row_dxt, b, r), !along_j,
                    row_at(m, along_j ? m->row_fv : m->row_fu, b, r),
                    (along_j ? m->hv_total : m->hu_total) + q, m->eta + q, back,
                    (along_j ? m->ub : m->vb) + q, o1, o2, o3, o4,
                    (along_j ? m->force_v : m->force_u) + q, (along_j ? m->mv : m->mu) + q,
                    (along_j ? m->vb : m->ub) + q);
}

static void barotropic_u_block(hycom *m, int lb, esm_region r, double unused)
{
    (void)unused;
    barotropic_transport_block(m, lb, r, 0);
}
static void barotropic_v_block(hycom *m, int lb, esm_region r, double unused)
{
    (void)unused;
    barotropic_transport_block(m, lb, r, 1);
}
void kernel_barotropic_u(hycom *m, esm_region r)
{
    hycom_defer(m, barotropic_u_block, "barotropic_u", r, 0, 7.0,
                13); /* gradient 3, Coriolis 4, update 6 */
}
void kernel_barotropic_v(hycom *m, esm_region r)
{
    hycom_defer(m, barotropic_v_block, "barotropic_v", r, 0, 7.0, 13);
}
