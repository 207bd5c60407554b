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
 * The loops live in *_level functions (one level of a block's region each, see below); the
 * kernels (*_block) walk the levels around them. */
#include <stdio.h>
#include <string.h>
#include "hycom.h"

#define BLOCK(m) (&(m)->d.block[(m)->d.local[lb]])

/* Points per row and rows of region r of block b. */
static int width_of(const esm_block *b, esm_region r)
{
    return b->ni + r.west + r.east;
}
static int rows_of(const esm_block *b, esm_region r)
{
    return b->nj + r.south + r.north;
}

static double points(const hycom *m, esm_region r)
{
    double n = 0;
    for (int lb = 0; lb < m->d.nlocal; lb++) {
        const esm_block *b = BLOCK(m);
        n += (double)width_of(b, r) * rows_of(b, r);
    }
    return n;
}

/* Queue kernel `run` (`name`) over region r (with its argument), counting its bytes. */
static void defer(hycom *m, block_kernel run, const char *name, esm_region r, double arg,
                  double doubles_per_point)
{
    if (m->queued == HYCOM_QUEUE)
        hycom_flush(m);
    double n = points(m, r), bytes = n * doubles_per_point * sizeof(double);
    m->queue[m->queued++] = (queued_kernel){run, r, arg, name, n, bytes};
    m->bytes += bytes;
}

/* The kernel (for esm_fold.h) of the mix of kernels queued now. */
static esm_kernel *flush_kernel_of(hycom *m, double *points, double *bytes)
{
    char name[sizeof m->flush_kernels[0]->name] = "hycom";
    *points = *bytes = 0;
    for (int k = 0; k < m->queued; k++) {
        size_t used = strlen(name);
        snprintf(name + used, sizeof name - used, ".%s", m->queue[k].name);
        *points += m->queue[k].points;
        *bytes += m->queue[k].bytes;
    }
    for (int f = 0; f < m->nflush_kernels; f++)
        if (!strcmp(m->flush_kernels[f]->name, name))
            return &m->flush_kernels[f]->kernel;
    m->flush_kernels =
        esm_realloc(m->flush_kernels, (m->nflush_kernels + 1) * sizeof *m->flush_kernels);
    flush_kernel *f = esm_calloc(1, sizeof *f);
    memcpy(f->name, name, sizeof name);
    f->kernel.name = f->name;
    m->flush_kernels[m->nflush_kernels++] = f;
    return &f->kernel;
}

void hycom_flush(hycom *m)
{
    m->flushes++;
    if (!m->queued)
        return;
    double work, bytes;
    esm_kernel *kernel = flush_kernel_of(m, &work, &bytes);
    if (esm_kernel_begin(kernel, work, bytes)) { /* folded: run on its first calls only */
        for (int lb = 0; lb < m->d.nlocal; lb++)
            for (int k = 0; k < m->queued; k++)
                m->queue[k].run(m, lb, m->queue[k].r, m->queue[k].arg);
        esm_kernel_end(kernel);
    }
    m->queued = 0;
}

/* Offsets of the first point of region r's row j in a 2D and a layer field. */
static long at2(const hycom *m, int lb, esm_region r, int j)
{
    return esm_at(&m->l2, lb, -r.west, j, 0);
}
static long at3(const hycom *m, int lb, esm_region r, int j, int k)
{
    return esm_at(&m->l3, lb, -r.west, j, k);
}
/* Per-row arrays (row_dxt, ...) from region r's first row of block b. */
static const double *row_at(const hycom *m, const double *rows, const esm_block *b, esm_region r)
{
    return rows + b->j0 - r.south + m->width;
}

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

/* The loops. Each *_level function computes one level of a region of one block: `rows`
 * rows of n points, every row `s` doubles after the previous one in every array (2D and
 * layer fields and the planes share the row stride: levels are outermost). One call per level
 * and block, not per row: the calls cost as much as the work on rows of 30-80 points. The
 * restrict parameters tell the compiler the arrays never overlap, so the rows run in vector
 * lanes; per-row constants (grid widths, Coriolis) come in per-row arrays and are computed
 * per row with the same expressions as before. */

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
    defer(m, pressure_block, "pressure", r, 0, 2.0 * m->nz + 3);
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
    defer(m, faces_u_block, "faces_u", r, 0, 3.0 * m->nz + 4);
}

void kernel_faces_v(hycom *m, esm_region r)
{
    temporaries_needed(m, "faces_v");
    defer(m, faces_v_block, "faces_v", r, 0, 3.0 * m->nz + 4);
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
    defer(m, momentum_u_block, "momentum_u", r, 0, 4.0 * m->nz + 2);
}

void kernel_momentum_v(hycom *m, esm_region r)
{
    temporaries_needed(m, "momentum_v");
    defer(m, momentum_v_block, "momentum_v", r, 0, 4.0 * m->nz + 2);
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
    defer(m, project_u_block, "project_u", ru, 0, 3.0 * m->nz + 1);
    defer(m, project_v_block, "project_v", rv, 0, 3.0 * m->nz + 1);
}

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
    defer(m, mean_add_u_block, "mean_add_u", ru, first, first ? 2.0 : 3.0);
    defer(m, mean_add_v_block, "mean_add_v", rv, first, first ? 2.0 : 3.0);
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
    defer(m, mean_scale_u_block, "mean_scale_u", ru, factor, 4.0);
    defer(m, mean_scale_v_block, "mean_scale_v", rv, factor, 4.0);
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
    defer(m, barotropic_eta_block, "barotropic_eta", r, 0, 5.0);
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
    defer(m, barotropic_u_block, "barotropic_u", r, 0, 7.0);
}
void kernel_barotropic_v(hycom *m, esm_region r)
{
    defer(m, barotropic_v_block, "barotropic_v", r, 0, 7.0);
}

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
    defer(m, continuity_block, "continuity", r, 0, 4.0 * m->nz + 5);
}
