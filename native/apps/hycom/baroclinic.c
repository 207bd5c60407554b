/* The HYCOM proxy's baroclinic kernels (kernels.h): 1. surface height and the Montgomery
 * potential, 2. layer thicknesses and the pressure force at the faces, 3. the baroclinic
 * velocities, kept free of any depth mean. */
#include "kernels.h"

/* Offset of region r's row j, level k, of block lb in a temporary (p, hu, hv: hycom.h). */
static long at_temporary(const hycom *m, int lb, esm_region r, int j, int k)
{
    return at3(m, m->temporary_blocks == 1 ? 0 : lb, r, j, k);
}

/* A kernel reading the temporaries must run in the flush that computes them when every
 * block shares their storage. */
static void temporaries_needed(const hycom *m, const char *kernel)
{
    if (m->temporary_blocks == 1 && m->queued_temporaries != m->flushes)
        esm_fail("internal error: %s queued after an exchange, but p, hu and hv are shared by "
                 "all blocks (halo width >= 2)",
                 kernel);
}

/* ---- 1. surface height and Montgomery potential ---------------------------------------- */

/* The column kernels (pressure, faces, project) run level by level over the block, the depth
 * sums of each column accumulating in a plane (m->plane_a, plane_b: one block's 2D extent,
 * indexed like block 0 of a 2D field, reused by every block so they stay in cache): each
 * level of a layer field is then one contiguous stream, where a row at a time over all
 * levels would start nz short streams per row. Every point still adds its levels in the
 * same order. */
static long at_plane(const hycom *m, esm_region r, int j)
{
    return at2(m, 0, r, j);
}

ESM_SIMD static void negate_level(int rows, int n, long s, const double *restrict x,
                                  double *restrict out)
{
    for (int j = 0; j < rows; j++, x += s, out += s)
        for (int i = 0; i < n; i++)
            out[i] = -x[i];
}

ESM_SIMD static void add_level(int rows, int n, long s, const double *restrict x,
                               double *restrict sum)
{
    for (int j = 0; j < rows; j++, x += s, sum += s)
        for (int i = 0; i < n; i++)
            sum[i] += x[i];
}

ESM_SIMD static void surface_level(int rows, int n, long s, const double *restrict mt,
                                   const double *restrict e, double *restrict eta,
                                   double *restrict pressure)
{
    for (int j = 0; j < rows; j++, mt += s, e += s, eta += s, pressure += s)
        for (int i = 0; i < n; i++) {
            eta[i] = mt[i] * e[i];
            pressure[i] = 0;
        }
}

/* One level: the potential at layer k from the elevation e of its top, then e moves down to
 * the top of layer k+1. gprime[0] = 0: no interface above the top layer. */
ESM_SIMD static void montgomery_level(int rows, int n, long s, double gk, const double *restrict mt,
                                      const double *restrict h, double *restrict p,
                                      double *restrict e, double *restrict pressure)
{
    for (int j = 0; j < rows; j++, mt += s, h += s, p += s, e += s, pressure += s)
        for (int i = 0; i < n; i++) {
            pressure[i] += gk * e[i];
            p[i] = mt[i] * pressure[i];
            e[i] -= h[i];
        }
}

/* Surface height eta = sum_k h_k - depth (added from the bottom up), and the baroclinic
 * Montgomery potential p_k = sum_{1<=l<=k} g'_l e_l (e_l: elevation of the top of layer l).
 * Bytes: h, p; depth, mt, eta (h's second pass comes from the cache). */
static void pressure_block(hycom *m, int lb, esm_region r, double unused)
{
    (void)unused;
    const esm_block *b = BLOCK(m);
    const int rows = rows_of(b, r), n = width_of(b, r), j = -r.south;
    const long s = m->l3.stride_j, q = at2(m, lb, r, j), c = at_plane(m, r, j);
    double *e = m->plane_a + c, *sum = m->plane_b + c; /* per column: elevation, potential */
    negate_level(rows, n, s, m->depth + q, e);
    for (int k = m->nz - 1; k >= 0; k--)
        add_level(rows, n, s, m->h + at3(m, lb, r, j, k), e);
    surface_level(rows, n, s, m->mt + q, e, m->eta + q, sum);
    for (int k = 0; k < m->nz; k++)
        montgomery_level(rows, n, s, m->gprime[k], m->mt + q, m->h + at3(m, lb, r, j, k),
                         m->p + at_temporary(m, lb, r, j, k), e, sum);
}

void kernel_pressure(hycom *m, esm_region r)
{
    m->queued_temporaries = m->flushes;
    /* a level: the depth sum 1, the potential 4; the surface 1 */
    hycom_defer(m, pressure_block, "pressure", r, 0, 2.0 * m->nz + 3, 5.0 * m->nz + 1);
}

/* ---- 2. faces ---------------------------------------------------------------------------- */

ESM_SIMD static void zero_level(int rows, int n, long s, double *restrict a)
{
    for (int j = 0; j < rows; j++, a += s)
        for (int i = 0; i < n; i++)
            a[i] = 0;
}

/* One level of faces: the layer's thickness there (centred), added to the total and to the
 * depth-integrated pressure force. `distance` between the cells: per row (u) or one (v). */
ESM_SIMD static void face_level(int rows, int n, long s, long back, const double *restrict distance,
                                int distance_step, const double *restrict mask,
                                const double *restrict h, const double *restrict p,
                                double *restrict thick, double *restrict thick_total,
                                double *restrict force_total)
{
    for (int j = 0; j < rows;
         j++, mask += s, h += s, p += s, thick += s, thick_total += s, force_total += s) {
        double inverse_distance = 1.0 / distance[j * distance_step];
        for (int i = 0; i < n; i++) {
            double face = mask[i] * 0.5 * (h[i - back] + h[i]);
            thick[i] = face;
            thick_total[i] += face;
            force_total[i] -= face * (p[i] - p[i - back]) * inverse_distance;
        }
    }
}

ESM_SIMD static void face_mean_level(int rows, int n, long s, const double *restrict mask,
                                     const double *restrict thick_total,
                                     double *restrict force_total, double *restrict mean)
{
    for (int j = 0; j < rows; j++, mask += s, thick_total += s, force_total += s, mean += s)
        for (int i = 0; i < n; i++) {
            force_total[i] *= mask[i];
            mean[i] = thick_total[i] > 0 ? force_total[i] / thick_total[i] : 0.0;
        }
}

/* At u (or v) faces: layer thickness (centred), its total, the depth-integrated baroclinic
 * pressure force (the slow forcing of the barotropic mode) and its depth mean.
 * Bytes: h, p, thickness; mask, thickness total, force, mean. */
static void faces_block(hycom *m, int lb, esm_region r, int along_j)
{
    const long s = m->l3.stride_j, back = along_j ? s : 1;
    const double *mask = along_j ? m->mv : m->mu;
    double *thick = along_j ? m->hv : m->hu, *total = along_j ? m->hv_total : m->hu_total;
    double *force = along_j ? m->force_v : m->force_u, *mean = along_j ? m->mean_v : m->mean_u;
    const esm_block *b = BLOCK(m);
    const int rows = rows_of(b, r), n = width_of(b, r), j = -r.south;
    const double *distance = along_j ? &m->dy : row_at(m, m->row_dxt, b, r);
    const long q = at2(m, lb, r, j);
    zero_level(rows, n, s, total + q);
    zero_level(rows, n, s, force + q);
    for (int k = 0; k < m->nz; k++) {
        long t = at_temporary(m, lb, r, j, k);
        face_level(rows, n, s, back, distance, !along_j, mask + q, m->h + at3(m, lb, r, j, k),
                   m->p + t, thick + t, total + q, force + q);
    }
    face_mean_level(rows, n, s, mask + q, total + q, force + q, mean + q);
}

static void faces_u_block(hycom *m, int lb, esm_region r, double unused)
{
    (void)unused;
    faces_block(m, lb, r, 0);
}
static void faces_v_block(hycom *m, int lb, esm_region r, double unused)
{
    (void)unused;
    faces_block(m, lb, r, 1);
}

void kernel_faces_u(hycom *m, esm_region r)
{
    temporaries_needed(m, "faces_u");
    /* a level: the face 3, its total 1, the force 4; the mean 2 */
    hycom_defer(m, faces_u_block, "faces_u", r, 0, 3.0 * m->nz + 4, 8.0 * m->nz + 2);
}

void kernel_faces_v(hycom *m, esm_region r)
{
    temporaries_needed(m, "faces_v");
    hycom_defer(m, faces_v_block, "faces_v", r, 0, 3.0 * m->nz + 4, 8.0 * m->nz + 2);
}

/* ---- 3. baroclinic velocities ------------------------------------------------------------- */

/* One level of a baroclinic velocity (u or v): the pressure force less its depth mean,
 * Coriolis from the other velocity averaged here (its 4 neighbours at offsets o1..o4), and
 * Laplacian viscosity with free slip (a missing neighbour adds nothing). Per row: dx, the
 * east-west width, and f, Coriolis; the pressure gradient is across dx (u) or dy (v). */
ESM_SIMD static void momentum_level(int rows, int n, long s, int along_j, double dt,
                                    double viscosity, double dy, const double *restrict dx_rows,
                                    const double *restrict f_rows, const double *restrict vel,
                                    const double *restrict mask, const double *restrict p,
                                    long back, const double *restrict mean,
                                    const double *restrict other, long o1, long o2, long o3,
                                    long o4, double *restrict out)
{
    for (int j = 0; j < rows; j++, vel += s, mask += s, p += s, mean += s, other += s, out += s) {
        double dx = dx_rows[j], f = f_rows[j];
        double coriolis = along_j ? -f : f, cx = viscosity / (dx * dx), cy = viscosity / (dy * dy);
        double inverse_distance = 1.0 / (along_j ? dy : dx);
        for (int i = 0; i < n; i++) {
            double force = -(p[i] - p[i - back]) * inverse_distance - mean[i];
            double o = 0.25 * (other[i + o1] + other[i + o2] + other[i + o3] + other[i + o4]);
            double lap =
                cx * (mask[i + 1] * (vel[i + 1] - vel[i]) + mask[i - 1] * (vel[i - 1] - vel[i])) +
                cy * (mask[i + s] * (vel[i + s] - vel[i]) + mask[i - s] * (vel[i - s] - vel[i]));
            out[i] = mask[i] * (vel[i] + dt * (force + coriolis * o + lap));
        }
    }
}

/* u uses the old v; v then uses the NEW u (Sielecki: stable, no extra storage).
 * Bytes: the velocity, p, the other velocity, the new velocity; mask, mean. */
static void momentum_block(hycom *m, int lb, esm_region r, int along_j)
{
    const long s = m->l3.stride_j, back = along_j ? s : 1;
    const double *vel = along_j ? m->v : m->u, *mask = along_j ? m->mv : m->mu;
    const double *other = along_j ? m->u_next : m->v, *mean = along_j ? m->mean_v : m->mean_u;
    double *out = along_j ? m->v_next : m->u_next;
    /* the other velocity's 4 points around this one: v at (i-1|i, j|j+1) for u, u at
     * (i|i+1, j-1|j) for v */
    const long o1 = along_j ? -s : -1, o2 = along_j ? 1 - s : 0, o3 = along_j ? 0 : s - 1,
               o4 = along_j ? 1 : s;
    const esm_block *b = BLOCK(m);
    const int rows = rows_of(b, r), n = width_of(b, r), j = -r.south;
    const long q = at2(m, lb, r, j);
    const double *dx = row_at(m, along_j ? m->row_dxv : m->row_dxt, b, r);
    const double *f = row_at(m, along_j ? m->row_fv : m->row_fu, b, r);
    for (int k = 0; k < m->nz; k++) {
        long p = at3(m, lb, r, j, k);
        momentum_level(rows, n, s, along_j, m->dt, m->viscosity, m->dy, dx, f, vel + p, mask + q,
                       m->p + at_temporary(m, lb, r, j, k), back, mean + q, other + p, o1, o2, o3,
                       o4, out + p);
    }
}

static void momentum_u_block(hycom *m, int lb, esm_region r, double unused)
{
    (void)unused;
    momentum_block(m, lb, r, 0);
}
static void momentum_v_block(hycom *m, int lb, esm_region r, double unused)
{
    (void)unused;
    momentum_block(m, lb, r, 1);
}

void kernel_momentum_u(hycom *m, esm_region r)
{
    temporaries_needed(m, "momentum_u");
    /* a level: the force 3, Coriolis 4, the Laplacian 13, the update 6 */
    hycom_defer(m, momentum_u_block, "momentum_u", r, 0, 4.0 * m->nz + 2, 26.0 * m->nz);
}

void kernel_momentum_v(hycom *m, esm_region r)
{
    temporaries_needed(m, "momentum_v");
    hycom_defer(m, momentum_v_block, "momentum_v", r, 0, 4.0 * m->nz + 2, 26.0 * m->nz);
}

ESM_SIMD static void transport_sum_level(int rows, int n, long s, const double *restrict thick,
                                         const double *restrict vel, double *restrict sum)
{
    for (int j = 0; j < rows; j++, thick += s, vel += s, sum += s)
        for (int i = 0; i < n; i++)
            sum[i] += thick[i] * vel[i];
}

ESM_SIMD static void depth_mean_level(int rows, int n, long s, const double *restrict total,
                                      double *restrict mean)
{
    for (int j = 0; j < rows; j++, total += s, mean += s)
        for (int i = 0; i < n; i++)
            mean[i] = total[i] > 0 ? mean[i] / total[i] : 0.0;
}

ESM_SIMD static void subtract_level(int rows, int n, long s, const double *restrict mean,
                                    double *restrict vel)
{
    for (int j = 0; j < rows; j++, mean += s, vel += s)
        for (int i = 0; i < n; i++)
            vel[i] -= mean[i];
}

/* Keep a baroclinic velocity free of any depth mean: sum_k h_k u_k = 0 at every face.
 * Bytes: thickness, velocity read and written; thickness total. */
static void project_block(hycom *m, int lb, esm_region r, int along_j)
{
    const double *thick = along_j ? m->hv : m->hu, *total = along_j ? m->hv_total : m->hu_total;
    double *vel = along_j ? m->v_next : m->u_next;
    const esm_block *b = BLOCK(m);
    const int rows = rows_of(b, r), n = width_of(b, r), j = -r.south;
    const long s = m->l3.stride_j;
    double *mean = m->plane_a + at_plane(m, r, j); /* per column */
    zero_level(rows, n, s, mean);
    for (int k = 0; k < m->nz; k++)
        transport_sum_level(rows, n, s, thick + at_temporary(m, lb, r, j, k),
                            vel + at3(m, lb, r, j, k), mean);
    depth_mean_level(rows, n, s, total + at2(m, lb, r, j), mean);
    for (int k = 0; k < m->nz; k++)
        subtract_level(rows, n, s, mean, vel + at3(m, lb, r, j, k));
}

static void project_u_block(hycom *m, int lb, esm_region r, double unused)
{
    (void)unused;
    project_block(m, lb, r, 0);
}
static void project_v_block(hycom *m, int lb, esm_region r, double unused)
{
    (void)unused;
    project_block(m, lb, r, 1);
}

void kernel_project(hycom *m, esm_region ru, esm_region rv)
{
    temporaries_needed(m, "project");
    /* a level: the transport sum 2, the subtraction 1; the mean 1 */
    hycom_defer(m, project_u_block, "project_u", ru, 0, 3.0 * m->nz + 1, 3.0 * m->nz + 1);
    hycom_defer(m, project_v_block, "project_v", rv, 0, 3.0 * m->nz + 1, 3.0 * m->nz + 1);
}
