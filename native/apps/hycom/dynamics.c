/* HYCOM proxy kernels. Each computes over region r of every local block (the interior and
 * r's halo rings) and adds the bytes it moves to m->bytes. Masks (mt, mu, mv) keep every field
 * zero on land, so halos facing dropped land tiles (zero) agree with computed ones.
 *
 * Block by block. A kernel call only queues the kernel (kernel_*); hycom_flush runs the queue
 * one block at a time, every queued kernel on that block before the next block. Between two
 * halo exchanges each block reads only its own points and halo, so the order changes no
 * result; but the fields one kernel writes and the next reads (p, hu, hv, u_next ...) are
 * then still in the cache (one block of a layer field is under 1 MB) instead of making a
 * round trip to memory. hycom.c flushes before every exchange and at the end of each phase.
 *
 * The byte model (the roofline's numerator): each kernel counts every array it reads and
 * every array it writes once per point of its region (8 bytes a value; a read-modify-write
 * counts twice, as STREAM counts a[i] = b[i] + s c[i] as three). Neighbours (i-1, j-1) and
 * second passes over data a kernel has just touched are not counted again. Each kernel
 * states its count next to its definition.
 *
 * The loops over a row live in *_row functions whose restrict parameters tell the compiler
 * the arrays never overlap, so they run in vector lanes; the kernels walk levels and rows
 * around them. */
#include "hycom.h"

#define BLOCK(m) (&(m)->d.block[(m)->d.local[lb]])
#define ROWS(b, r) for (int j = -(r).south; j < (b)->nj + (r).north; j++)

static double points(const hycom *m, esm_region r)
{
    double n = 0;
    for (int lb = 0; lb < m->d.nlocal; lb++) {
        const esm_block *b = BLOCK(m);
        n += (double)(b->ni + r.west + r.east) * (b->nj + r.south + r.north);
    }
    return n;
}

/* Queue kernel `run` over region r (with its argument), counting its bytes. */
static void defer(hycom *m, block_kernel run, esm_region r, double arg, double doubles_per_point)
{
    if (m->queued == HYCOM_QUEUE)
        hycom_flush(m);
    m->queue[m->queued++] = (queued_kernel){run, r, arg};
    m->bytes += points(m, r) * doubles_per_point * sizeof(double);
}

void hycom_flush(hycom *m)
{
    m->flushes++;
    for (int lb = 0; lb < m->d.nlocal; lb++)
        for (int k = 0; k < m->queued; k++)
            m->queue[k].run(m, lb, m->queue[k].r, m->queue[k].arg);
    m->queued = 0;
}

/* Offsets of the first point of region r's row j in a 2D and a layer field. */
static long at2(const hycom *m, int lb, esm_region r, int j) { return esm_at(&m->l2, lb, -r.west, j, 0); }
static long at3(const hycom *m, int lb, esm_region r, int j, int k) { return esm_at(&m->l3, lb, -r.west, j, k); }
static int width_of(const esm_block *b, esm_region r) { return b->ni + r.west + r.east; }

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
                 "all blocks (halo width >= 2)", kernel);
}

/* ---- 1. surface height and Montgomery potential ---------------------------------------- */

/* The column kernels (pressure, faces, project) run level by level over the block, the depth
 * sums of each column accumulating in a plane (m->plane_a, plane_b: one block's 2D extent,
 * indexed like block 0 of a 2D field, reused by every block so they stay in cache): each level of a layer field is
 * then one contiguous stream, where a row at a time over all levels would start nz short
 * streams per row. Every point still adds its levels in the same order. */
static long at_plane(const hycom *m, esm_region r, int j) { return at2(m, 0, r, j); }

ESM_SIMD static void negate_row(int n, const double *restrict x, double *restrict out)
{
    for (int i = 0; i < n; i++)
        out[i] = -x[i];
}

ESM_SIMD static void add_row(int n, const double *restrict x, double *restrict sum)
{
    for (int i = 0; i < n; i++)
        sum[i] += x[i];
}

ESM_SIMD static void surface_row(int n, const double *restrict mt, const double *restrict e,
                                 double *restrict eta, double *restrict pressure)
{
    for (int i = 0; i < n; i++) {
        eta[i] = mt[i] * e[i];
        pressure[i] = 0;
    }
}

/* One level: the potential at layer k from the elevation e of its top, then e moves down to
 * the top of layer k+1. gprime[0] = 0: no interface above the top layer. */
ESM_SIMD static void montgomery_row(int n, double gk, const double *restrict mt,
                                    const double *restrict h, double *restrict p,
                                    double *restrict e, double *restrict pressure)
{
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
    const int n = width_of(b, r);
    double *e = m->plane_a, *sum = m->plane_b; /* per column: elevation, potential */
    ROWS(b, r) negate_row(n, m->depth + at2(m, lb, r, j), e + at_plane(m, r, j));
    for (int k = m->nz - 1; k >= 0; k--)
        ROWS(b, r) add_row(n, m->h + at3(m, lb, r, j, k), e + at_plane(m, r, j));
    ROWS(b, r) {
        long q = at2(m, lb, r, j), c = at_plane(m, r, j);
        surface_row(n, m->mt + q, e + c, m->eta + q, sum + c);
    }
    for (int k = 0; k < m->nz; k++)
        ROWS(b, r) {
            long q = at2(m, lb, r, j), c = at_plane(m, r, j), p = at3(m, lb, r, j, k);
            montgomery_row(n, m->gprime[k], m->mt + q, m->h + p, m->p + at_temporary(m, lb, r, j, k),
                           e + c, sum + c);
        }
}

void kernel_pressure(hycom *m, esm_region r)
{
    m->queued_temporaries = m->flushes;
    defer(m, pressure_block, r, 0, 2.0 * m->nz + 3);
}

/* ---- 2. faces ---------------------------------------------------------------------------- */

ESM_SIMD static void zero_rows(int n, double *restrict a, double *restrict b)
{
    for (int i = 0; i < n; i++)
        a[i] = b[i] = 0;
}

/* One level of one row of faces: the layer's thickness there (centred), added to the total
 * and to the depth-integrated pressure force. */
ESM_SIMD static void face_level_row(int n, long back, double inverse_distance,
                                    const double *restrict mask, const double *restrict h,
                                    const double *restrict p, double *restrict thick,
                                    double *restrict thick_total, double *restrict force_total)
{
    for (int i = 0; i < n; i++) {
        double face = mask[i] * 0.5 * (h[i - back] + h[i]);
        thick[i] = face;
        thick_total[i] += face;
        force_total[i] -= face * (p[i] - p[i - back]) * inverse_distance;
    }
}

ESM_SIMD static void face_mean_row(int n, const double *restrict mask,
                                   const double *restrict thick_total,
                                   double *restrict force_total, double *restrict mean)
{
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
    const long back = along_j ? m->l3.stride_j : 1;
    const double *mask = along_j ? m->mv : m->mu;
    double *thick = along_j ? m->hv : m->hu, *total = along_j ? m->hv_total : m->hu_total;
    double *force = along_j ? m->force_v : m->force_u, *mean = along_j ? m->mean_v : m->mean_u;
    const esm_block *b = BLOCK(m);
    const int n = width_of(b, r);
    ROWS(b, r) {
        long q = at2(m, lb, r, j);
        zero_rows(n, total + q, force + q);
    }
    for (int k = 0; k < m->nz; k++)
        ROWS(b, r) {
            long q = at2(m, lb, r, j), p = at3(m, lb, r, j, k), t = at_temporary(m, lb, r, j, k);
            double distance = along_j ? m->dy : hycom_row(m->row_dxt, m, b->j0 + j);
            face_level_row(n, back, 1.0 / distance, mask + q, m->h + p, m->p + t, thick + t,
                           total + q, force + q);
        }
    ROWS(b, r) {
        long q = at2(m, lb, r, j);
        face_mean_row(n, mask + q, total + q, force + q, mean + q);
    }
}

static void faces_u_block(hycom *m, int lb, esm_region r, double unused) { (void)unused; faces_block(m, lb, r, 0); }
static void faces_v_block(hycom *m, int lb, esm_region r, double unused) { (void)unused; faces_block(m, lb, r, 1); }
void kernel_faces_u(hycom *m, esm_region r)
{
    temporaries_needed(m, "faces_u");
    defer(m, faces_u_block, r, 0, 3.0 * m->nz + 4);
}

void kernel_faces_v(hycom *m, esm_region r)
{
    temporaries_needed(m, "faces_v");
    defer(m, faces_v_block, r, 0, 3.0 * m->nz + 4);
}

/* ---- 3. baroclinic velocities ------------------------------------------------------------- */

/* One row of one level of a baroclinic velocity (u or v): the pressure force less its depth
 * mean, Coriolis from the other velocity averaged here (a, b, c, d: its 4 neighbours), and
 * Laplacian viscosity with free slip (a missing neighbour adds nothing). */
ESM_SIMD static void momentum_row(int n, double dt, double coriolis, double cx, double cy,
                         double inverse_distance, const double *restrict vel,
                         const double *restrict east, const double *restrict west,
                         const double *restrict north, const double *restrict south,
                         const double *restrict mask, const double *restrict mask_east,
                         const double *restrict mask_west, const double *restrict mask_north,
                         const double *restrict mask_south, const double *restrict p,
                         const double *restrict p_back, const double *restrict mean,
                         const double *restrict a, const double *restrict b,
                         const double *restrict c, const double *restrict d,
                         double *restrict out)
{
    for (int i = 0; i < n; i++) {
        double force = -(p[i] - p_back[i]) * inverse_distance - mean[i];
        double other = 0.25 * (a[i] + b[i] + c[i] + d[i]);
        double lap = cx * (mask_east[i] * (east[i] - vel[i]) + mask_west[i] * (west[i] - vel[i]))
                   + cy * (mask_north[i] * (north[i] - vel[i]) + mask_south[i] * (south[i] - vel[i]));
        out[i] = mask[i] * (vel[i] + dt * (force + coriolis * other + lap));
    }
}

/* u uses the old v; v then uses the NEW u (Sielecki: stable, no extra storage).
 * Bytes: the velocity, p, the other velocity, the new velocity; mask, mean. */
static void momentum_block(hycom *m, int lb, esm_region r, int along_j)
{
    const long sj = m->l3.stride_j, sj2 = m->l2.stride_j;
    const long back = along_j ? sj : 1;
    const double *vel = along_j ? m->v : m->u, *mask = along_j ? m->mv : m->mu;
    const double *other = along_j ? m->u_next : m->v, *mean = along_j ? m->mean_v : m->mean_u;
    double *out = along_j ? m->v_next : m->u_next;
    /* the other velocity's 4 points around this one: v at (i-1|i, j|j+1) for u, u at
     * (i|i+1, j-1|j) for v */
    const long o1 = along_j ? -sj : -1, o2 = along_j ? 1 - sj : 0, o3 = along_j ? 0 : sj - 1,
               o4 = along_j ? 1 : sj;
    const esm_block *b = BLOCK(m);
    for (int k = 0; k < m->nz; k++)
        ROWS(b, r) {
            int gj = b->j0 + j;
            double dx = hycom_row(along_j ? m->row_dxv : m->row_dxt, m, gj);
            double f = hycom_row(along_j ? m->row_fv : m->row_fu, m, gj);
            double distance = along_j ? m->dy : dx;
            long q = at2(m, lb, r, j), p = at3(m, lb, r, j, k), t = at_temporary(m, lb, r, j, k);
            momentum_row(width_of(b, r), m->dt, along_j ? -f : f, m->viscosity / (dx * dx),
                         m->viscosity / (m->dy * m->dy), 1.0 / distance, vel + p, vel + p + 1,
                         vel + p - 1, vel + p + sj, vel + p - sj, mask + q, mask + q + 1,
                         mask + q - 1, mask + q + sj2, mask + q - sj2, m->p + t, m->p + t - back,
                         mean + q, other + p + o1, other + p + o2, other + p + o3,
                         other + p + o4, out + p);
        }
}

static void momentum_u_block(hycom *m, int lb, esm_region r, double unused) { (void)unused; momentum_block(m, lb, r, 0); }
static void momentum_v_block(hycom *m, int lb, esm_region r, double unused) { (void)unused; momentum_block(m, lb, r, 1); }
void kernel_momentum_u(hycom *m, esm_region r)
{
    temporaries_needed(m, "momentum_u");
    defer(m, momentum_u_block, r, 0, 4.0 * m->nz + 2);
}

void kernel_momentum_v(hycom *m, esm_region r)
{
    temporaries_needed(m, "momentum_v");
    defer(m, momentum_v_block, r, 0, 4.0 * m->nz + 2);
}

ESM_SIMD static void zero_row(int n, double *restrict a)
{
    for (int i = 0; i < n; i++)
        a[i] = 0;
}

ESM_SIMD static void transport_sum_row(int n, const double *restrict thick,
                                       const double *restrict vel, double *restrict sum)
{
    for (int i = 0; i < n; i++)
        sum[i] += thick[i] * vel[i];
}

ESM_SIMD static void depth_mean_row(int n, const double *restrict total, double *restrict mean)
{
    for (int i = 0; i < n; i++)
        mean[i] = total[i] > 0 ? mean[i] / total[i] : 0.0;
}

ESM_SIMD static void subtract_row(int n, const double *restrict mean, double *restrict vel)
{
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
    const int n = width_of(b, r);
    double *mean = m->plane_a; /* per column */
    ROWS(b, r) zero_row(n, mean + at_plane(m, r, j));
    for (int k = 0; k < m->nz; k++)
        ROWS(b, r) {
            long p = at3(m, lb, r, j, k);
            transport_sum_row(n, thick + at_temporary(m, lb, r, j, k), vel + p, mean + at_plane(m, r, j));
        }
    ROWS(b, r) depth_mean_row(n, total + at2(m, lb, r, j), mean + at_plane(m, r, j));
    for (int k = 0; k < m->nz; k++)
        ROWS(b, r) subtract_row(n, mean + at_plane(m, r, j), vel + at3(m, lb, r, j, k));
}

static void project_u_block(hycom *m, int lb, esm_region r, double unused) { (void)unused; project_block(m, lb, r, 0); }
static void project_v_block(hycom *m, int lb, esm_region r, double unused) { (void)unused; project_block(m, lb, r, 1); }
void kernel_project(hycom *m, esm_region ru, esm_region rv)
{
    temporaries_needed(m, "project");
    defer(m, project_u_block, ru, 0, 3.0 * m->nz + 1);
    defer(m, project_v_block, rv, 0, 3.0 * m->nz + 1);
}

/* ---- 4. barotropic substeps ---------------------------------------------------------------- */

/* Running sum of the barotropic transports used by the continuity substeps (`first`: start
 * it). Bytes: the transport, the sum (read unless first, written). */
static void mean_add_block(hycom *m, int lb, esm_region r, int along_j, double first)
{
    const esm_block *b = BLOCK(m);
    ROWS(b, r) {
        long q = at2(m, lb, r, j);
        double *restrict mean = (along_j ? m->vbm : m->ubm) + q;
        const double *restrict now = (along_j ? m->vb : m->ub) + q;
        for (int i = 0; i < width_of(b, r); i++)
            mean[i] = first != 0 ? now[i] : mean[i] + now[i];
    }
}

static void mean_add_u_block(hycom *m, int lb, esm_region r, double first) { mean_add_block(m, lb, r, 0, first); }
static void mean_add_v_block(hycom *m, int lb, esm_region r, double first) { mean_add_block(m, lb, r, 1, first); }
void kernel_mean_add(hycom *m, esm_region ru, esm_region rv, int first)
{
    defer(m, mean_add_u_block, ru, first, first ? 2.0 : 3.0);
    defer(m, mean_add_v_block, rv, first, first ? 2.0 : 3.0);
}

/* Turn the sums into means over the substeps, and each face's share of the mean transport
 * per metre of water: the layers take share x their thickness.
 * Bytes: the mean read and written, the thickness total, the share. */
static void mean_scale_block(hycom *m, int lb, esm_region r, int along_j, double factor)
{
    const esm_block *b = BLOCK(m);
    ROWS(b, r) {
        long q = at2(m, lb, r, j);
        double *restrict mean = (along_j ? m->vbm : m->ubm) + q;
        double *restrict share = (along_j ? m->share_v : m->share_u) + q;
        const double *restrict total = (along_j ? m->hv_total : m->hu_total) + q;
        for (int i = 0; i < width_of(b, r); i++) {
            mean[i] *= factor;
            share[i] = total[i] > 0 ? mean[i] / total[i] : 0.0;
        }
    }
}

static void mean_scale_u_block(hycom *m, int lb, esm_region r, double factor) { mean_scale_block(m, lb, r, 0, factor); }
static void mean_scale_v_block(hycom *m, int lb, esm_region r, double factor) { mean_scale_block(m, lb, r, 1, factor); }
void kernel_mean_scale(hycom *m, esm_region ru, esm_region rv, double factor)
{
    defer(m, mean_scale_u_block, ru, factor, 4.0);
    defer(m, mean_scale_v_block, rv, factor, 4.0);
}

ESM_SIMD static void eta_row(int n, double rate, double dy, double dx_north, double dx_south,
                    const double *restrict u, const double *restrict u_east,
                    const double *restrict v, const double *restrict v_north,
                    const double *restrict mt, double *restrict eta)
{
    for (int i = 0; i < n; i++) {
        double divergence = dy * (u_east[i] - u[i]) + dx_north * v_north[i] - dx_south * v[i];
        eta[i] = mt[i] * (eta[i] - rate * divergence);
    }
}

/* Barotropic substep, continuity: eta -= dtau div(ub, vb).
 * Bytes: ub, vb, mt, eta read and written. */
static void barotropic_eta_block(hycom *m, int lb, esm_region r, double unused)
{
    (void)unused;
    const long sj = m->l2.stride_j;
    const esm_block *b = BLOCK(m);
    ROWS(b, r) {
        int gj = b->j0 + j;
        long q = at2(m, lb, r, j);
        eta_row(width_of(b, r), m->dtau / (hycom_row(m->row_dxt, m, gj) * m->dy), m->dy,
                hycom_row(m->row_dxv, m, gj + 1), hycom_row(m->row_dxv, m, gj),
                m->ub + q, m->ub + q + 1, m->vb + q, m->vb + q + sj, m->mt + q, m->eta + q);
    }
}

void kernel_barotropic_eta(hycom *m, esm_region r) { defer(m, barotropic_eta_block, r, 0, 5.0); }

/* One row of a barotropic transport: surface pressure gradient, Coriolis from the other
 * transport's 4 neighbours, slow forcing. */
ESM_SIMD static void transport_row(int n, double dtau, double g_over_distance, double coriolis,
                          const double *restrict total, const double *restrict eta,
                          const double *restrict eta_back, const double *restrict a,
                          const double *restrict b, const double *restrict c,
                          const double *restrict d, const double *restrict force,
                          const double *restrict mask, double *restrict vel)
{
    for (int i = 0; i < n; i++) {
        double gradient = g_over_distance * total[i] * (eta[i] - eta_back[i]);
        double other = 0.25 * (a[i] + b[i] + c[i] + d[i]);
        vel[i] = mask[i] * (vel[i] + dtau * (-gradient + coriolis * other + force[i]));
    }
}

/* Barotropic substep, u (Coriolis from the old vb) or v (from the new ub).
 * Bytes: thickness total, eta, the other transport, forcing, mask, transport read and written. */
static void barotropic_transport_block(hycom *m, int lb, esm_region r, int along_j)
{
    const long sj = m->l2.stride_j;
    const long back = along_j ? sj : 1;
    const double *other = along_j ? m->ub : m->vb;
    const long o1 = along_j ? -sj : -1, o2 = along_j ? 1 - sj : 0, o3 = along_j ? 0 : sj - 1,
               o4 = along_j ? 1 : sj;
    const esm_block *b = BLOCK(m);
    ROWS(b, r) {
        int gj = b->j0 + j;
        long q = at2(m, lb, r, j);
        double distance = along_j ? m->dy : hycom_row(m->row_dxt, m, gj);
        double f = hycom_row(along_j ? m->row_fv : m->row_fu, m, gj);
        transport_row(width_of(b, r), m->dtau, m->gravity / distance, along_j ? -f : f,
                      (along_j ? m->hv_total : m->hu_total) + q, m->eta + q, m->eta + q - back,
                      other + q + o1, other + q + o2, other + q + o3, other + q + o4,
                      (along_j ? m->force_v : m->force_u) + q, (along_j ? m->mv : m->mu) + q,
                      (along_j ? m->vb : m->ub) + q);
    }
}

static void barotropic_u_block(hycom *m, int lb, esm_region r, double unused) { (void)unused; barotropic_transport_block(m, lb, r, 0); }
static void barotropic_v_block(hycom *m, int lb, esm_region r, double unused) { (void)unused; barotropic_transport_block(m, lb, r, 1); }
void kernel_barotropic_u(hycom *m, esm_region r) { defer(m, barotropic_u_block, r, 0, 7.0); }
void kernel_barotropic_v(hycom *m, esm_region r) { defer(m, barotropic_v_block, r, 0, 7.0); }

/* ---- 5. continuity ------------------------------------------------------------------------ */

/* A layer's transport through the faces of a row: its thickness at the face (the centred
 * mean of the cells on either side, as faces computes it, bit for bit) times its baroclinic
 * velocity plus its share of the substep-averaged barotropic transport, so the layers add
 * up to the barotropic mode. Each face once: the cells on both sides use the same value. */
ESM_SIMD static void transport_faces_row(int n, long back, const double *restrict mask,
                                         const double *restrict h, const double *restrict vel,
                                         const double *restrict share, double *restrict flux)
{
    for (int i = 0; i < n; i++) {
        double face = mask[i] * 0.5 * (h[i - back] + h[i]);
        flux[i] = face * (vel[i] + share[i]);
    }
}

ESM_SIMD static void thickness_row(int n, double rate, double dy, double dx_north, double dx_south,
                          const double *restrict west, const double *restrict south,
                          const double *restrict north, const double *restrict mt,
                          const double *restrict h, double *restrict h_next)
{
    for (int i = 0; i < n; i++) {
        double divergence = dy * (west[i + 1] - west[i]) + dx_north * north[i] - dx_south * south[i];
        h_next[i] = mt[i] * (h[i] - rate * divergence);
    }
}

/* Layer thickness: h -= dt div(layer transports), flux form (conserves every layer's mass).
 * Bytes: h, u_next, v_next, h_next; mu, mv, share_u, share_v, mt. */
static void continuity_block(hycom *m, int lb, esm_region r, double unused)
{
    (void)unused;
    const long sj = m->l3.stride_j, sj2 = m->l2.stride_j;
    double *east_west = m->row_a, *south = m->row_b, *north = m->row_c;
    const esm_block *b = BLOCK(m);
    int n = width_of(b, r);
    for (int k = 0; k < m->nz; k++) {
        int j = -r.south; /* the south faces of the first row */
        long q = at2(m, lb, r, j), p = at3(m, lb, r, j, k);
        transport_faces_row(n, sj, m->mv + q, m->h + p, m->v_next + p, m->share_v + q, south);
        ROWS(b, r) {
            int gj = b->j0 + j;
            q = at2(m, lb, r, j);
            p = at3(m, lb, r, j, k);
            transport_faces_row(n + 1, 1, m->mu + q, m->h + p, m->u_next + p, m->share_u + q,
                                east_west);
            transport_faces_row(n, sj, m->mv + q + sj2, m->h + p + sj, m->v_next + p + sj,
                                m->share_v + q + sj2, north);
            thickness_row(n, m->dt / (hycom_row(m->row_dxt, m, gj) * m->dy), m->dy,
                          hycom_row(m->row_dxv, m, gj + 1), hycom_row(m->row_dxv, m, gj),
                          east_west, south, north, m->mt + q, m->h + p, m->h_next + p);
            double *swap = south; /* this row's north faces are the next row's south */
            south = north;
            north = swap;
        }
    }
}

void kernel_continuity(hycom *m, esm_region r) { defer(m, continuity_block, r, 0, 4.0 * m->nz + 5); }
