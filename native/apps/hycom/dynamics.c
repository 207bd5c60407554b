/* HYCOM proxy kernels. Each computes over region r of every local block (the interior and
 * r's halo rings) and adds the bytes it moves to m->bytes (reads + writes of 8-byte values per
 * point computed: the model for the roofline). Masks (mt, mu, mv) keep every field zero on
 * land, so halos facing dropped land tiles (zero) agree with computed ones.
 *
 * The loops over a row live in *_row functions whose restrict parameters tell the compiler
 * the arrays never overlap, so they run in vector lanes; the kernels walk blocks, levels and
 * rows around them. */
#include "hycom.h"

#define BLOCKS(m) for (int lb = 0; lb < (m)->d.nlocal; lb++)
#define BLOCK(m) (&(m)->d.block[(m)->d.local[lb]])
#define ROWS(b, r) for (int j = -(r).south; j < (b)->nj + (r).north; j++)

static double points(const hycom *m, esm_region r)
{
    double n = 0;
    BLOCKS(m) {
        const esm_block *b = BLOCK(m);
        n += (double)(b->ni + r.west + r.east) * (b->nj + r.south + r.north);
    }
    return n;
}

static void count(hycom *m, esm_region r, double doubles_per_point)
{
    m->bytes += points(m, r) * doubles_per_point * sizeof(double);
}

/* Offsets of the first point of region r's row j in a 2D and a layer field. */
static long at2(const hycom *m, int lb, esm_region r, int j) { return esm_at(&m->l2, lb, -r.west, j, 0); }
static long at3(const hycom *m, int lb, esm_region r, int j, int k) { return esm_at(&m->l3, lb, -r.west, j, k); }
static int width_of(const esm_block *b, esm_region r) { return b->ni + r.west + r.east; }

/* ---- 1. surface height and Montgomery potential ---------------------------------------- */

ESM_SIMD static void pressure_row(int n, int nz, long sk, const double *restrict gprime,
                         const double *restrict depth, const double *restrict mt,
                         const double *restrict h, double *restrict p, double *restrict eta,
                         double *restrict e, double *restrict pressure)
{
    for (int i = 0; i < n; i++)
        e[i] = -depth[i];
    for (int k = nz - 1; k >= 0; k--)
        for (int i = 0; i < n; i++)
            e[i] += h[k * sk + i];
    for (int i = 0; i < n; i++) {
        eta[i] = mt[i] * e[i];
        pressure[i] = 0;
    }
    for (int k = 0; k < nz; k++) {
        double gk = gprime[k];
        for (int i = 0; i < n; i++) {
            pressure[i] += gk * e[i]; /* gprime[0] = 0: no interface above the top layer */
            p[k * sk + i] = mt[i] * pressure[i];
            e[i] -= h[k * sk + i];    /* now the top of layer k+1 */
        }
    }
}

/* Surface height eta = sum_k h_k - depth, and the baroclinic Montgomery potential
 * p_k = sum_{1<=l<=k} g'_l e_l (e_l: elevation of the top of layer l). */
void kernel_pressure(hycom *m, esm_region r)
{
    BLOCKS(m) {
        const esm_block *b = BLOCK(m);
        ROWS(b, r) {
            long q = at2(m, lb, r, j), p = at3(m, lb, r, j, 0);
            pressure_row(width_of(b, r), m->nz, m->l3.stride_k, m->gprime, m->depth + q,
                         m->mt + q, m->h + p, m->p + p, m->eta + q, m->row_a, m->row_b);
        }
    }
    count(m, r, 3.0 * m->nz + 3);
}

/* ---- 2. faces ---------------------------------------------------------------------------- */

ESM_SIMD static void faces_row(int n, int nz, long sk, long back, double inverse_distance,
                      const double *restrict mask, const double *restrict h,
                      const double *restrict p, double *restrict thick,
                      double *restrict thick_total, double *restrict force_total,
                      double *restrict mean)
{
    for (int i = 0; i < n; i++)
        thick_total[i] = force_total[i] = 0;
    for (int k = 0; k < nz; k++)
        for (int i = 0; i < n; i++) {
            double face = mask[i] * 0.5 * (h[k * sk + i - back] + h[k * sk + i]);
            thick[k * sk + i] = face;
            thick_total[i] += face;
            force_total[i] -= face * (p[k * sk + i] - p[k * sk + i - back]) * inverse_distance;
        }
    for (int i = 0; i < n; i++) {
        force_total[i] *= mask[i];
        mean[i] = thick_total[i] > 0 ? force_total[i] / thick_total[i] : 0.0;
    }
}

/* At u (or v) faces: layer thickness (centred), its total, the depth-integrated baroclinic
 * pressure force (the slow forcing of the barotropic mode) and its depth mean. */
static void faces(hycom *m, esm_region r, int along_j)
{
    const long back = along_j ? m->l3.stride_j : 1;
    BLOCKS(m) {
        const esm_block *b = BLOCK(m);
        ROWS(b, r) {
            long q = at2(m, lb, r, j), p = at3(m, lb, r, j, 0);
            double distance = along_j ? m->dy : hycom_row(m->row_dxt, m, b->j0 + j);
            faces_row(width_of(b, r), m->nz, m->l3.stride_k, back, 1.0 / distance,
                      (along_j ? m->mv : m->mu) + q, m->h + p, m->p + p,
                      (along_j ? m->hv : m->hu) + p, (along_j ? m->hv_total : m->hu_total) + q,
                      (along_j ? m->force_v : m->force_u) + q, (along_j ? m->mean_v : m->mean_u) + q);
        }
    }
    count(m, r, 3.0 * m->nz + 4);
}

void kernel_faces_u(hycom *m, esm_region r) { faces(m, r, 0); }
void kernel_faces_v(hycom *m, esm_region r) { faces(m, r, 1); }

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

/* u uses the old v; v then uses the NEW u (Sielecki: stable, no extra storage). */
static void momentum(hycom *m, esm_region r, int along_j)
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
    BLOCKS(m) {
        const esm_block *b = BLOCK(m);
        for (int k = 0; k < m->nz; k++)
            ROWS(b, r) {
                int gj = b->j0 + j;
                double dx = hycom_row(along_j ? m->row_dxv : m->row_dxt, m, gj);
                double f = hycom_row(along_j ? m->row_fv : m->row_fu, m, gj);
                double distance = along_j ? m->dy : dx;
                long q = at2(m, lb, r, j), p = at3(m, lb, r, j, k);
                momentum_row(width_of(b, r), m->dt, along_j ? -f : f,
                             m->viscosity / (dx * dx), m->viscosity / (m->dy * m->dy),
                             1.0 / distance, vel + p, vel + p + 1, vel + p - 1, vel + p + sj,
                             vel + p - sj, mask + q, mask + q + 1, mask + q - 1, mask + q + sj2,
                             mask + q - sj2, m->p + p, m->p + p - back, mean + q, other + p + o1,
                             other + p + o2, other + p + o3, other + p + o4, out + p);
            }
    }
    count(m, r, 4.0 * m->nz + 3);
}

void kernel_momentum_u(hycom *m, esm_region r) { momentum(m, r, 0); }
void kernel_momentum_v(hycom *m, esm_region r) { momentum(m, r, 1); }

ESM_SIMD static void project_row(int n, int nz, long sk, const double *restrict thick,
                        const double *restrict total, double *restrict vel,
                        double *restrict mean)
{
    for (int i = 0; i < n; i++)
        mean[i] = 0;
    for (int k = 0; k < nz; k++)
        for (int i = 0; i < n; i++)
            mean[i] += thick[k * sk + i] * vel[k * sk + i];
    for (int i = 0; i < n; i++)
        mean[i] = total[i] > 0 ? mean[i] / total[i] : 0.0;
    for (int k = 0; k < nz; k++)
        for (int i = 0; i < n; i++)
            vel[k * sk + i] -= mean[i];
}

/* Keep the baroclinic velocities free of any depth mean: sum_k h_k u_k = 0 at every face. */
void kernel_project(hycom *m, esm_region ru, esm_region rv)
{
    for (int c = 0; c < 2; c++) {
        esm_region r = c ? rv : ru;
        BLOCKS(m) {
            const esm_block *b = BLOCK(m);
            ROWS(b, r) {
                long q = at2(m, lb, r, j), p = at3(m, lb, r, j, 0);
                project_row(width_of(b, r), m->nz, m->l3.stride_k, (c ? m->hv : m->hu) + p,
                            (c ? m->hv_total : m->hu_total) + q, (c ? m->v_next : m->u_next) + p,
                            m->row_a);
            }
        }
        count(m, r, 3.0 * m->nz + 1);
    }
}

/* ---- 4. barotropic substeps ---------------------------------------------------------------- */

/* Running sum of the barotropic transports used by the continuity substeps. */
void kernel_mean_add(hycom *m, esm_region ru, esm_region rv, int first)
{
    for (int c = 0; c < 2; c++) {
        esm_region r = c ? rv : ru;
        BLOCKS(m) {
            const esm_block *b = BLOCK(m);
            ROWS(b, r) {
                long q = at2(m, lb, r, j);
                double *restrict mean = (c ? m->vbm : m->ubm) + q;
                const double *restrict now = (c ? m->vb : m->ub) + q;
                for (int i = 0; i < width_of(b, r); i++)
                    mean[i] = first ? now[i] : mean[i] + now[i];
            }
        }
        count(m, r, first ? 2.0 : 3.0);
    }
}

/* Turn the sums into means over the substeps, and each face's share of the mean transport
 * per metre of water: the layers take share x their thickness. */
void kernel_mean_scale(hycom *m, esm_region ru, esm_region rv, double factor)
{
    for (int c = 0; c < 2; c++) {
        esm_region r = c ? rv : ru;
        BLOCKS(m) {
            const esm_block *b = BLOCK(m);
            ROWS(b, r) {
                long q = at2(m, lb, r, j);
                double *restrict mean = (c ? m->vbm : m->ubm) + q;
                double *restrict share = (c ? m->share_v : m->share_u) + q;
                const double *restrict total = (c ? m->hv_total : m->hu_total) + q;
                for (int i = 0; i < width_of(b, r); i++) {
                    mean[i] *= factor;
                    share[i] = total[i] > 0 ? mean[i] / total[i] : 0.0;
                }
            }
        }
        count(m, r, 4.0);
    }
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

/* Barotropic substep, continuity: eta -= dtau div(ub, vb). */
void kernel_barotropic_eta(hycom *m, esm_region r)
{
    const long sj = m->l2.stride_j;
    BLOCKS(m) {
        const esm_block *b = BLOCK(m);
        ROWS(b, r) {
            int gj = b->j0 + j;
            long q = at2(m, lb, r, j);
            eta_row(width_of(b, r), m->dtau / (hycom_row(m->row_dxt, m, gj) * m->dy), m->dy,
                    hycom_row(m->row_dxv, m, gj + 1), hycom_row(m->row_dxv, m, gj),
                    m->ub + q, m->ub + q + 1, m->vb + q, m->vb + q + sj, m->mt + q, m->eta + q);
        }
    }
    count(m, r, 5.0);
}

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

/* Barotropic substep, u (Coriolis from the old vb) or v (from the new ub). */
static void barotropic_transport(hycom *m, esm_region r, int along_j)
{
    const long sj = m->l2.stride_j;
    const long back = along_j ? sj : 1;
    const double *other = along_j ? m->ub : m->vb;
    const long o1 = along_j ? -sj : -1, o2 = along_j ? 1 - sj : 0, o3 = along_j ? 0 : sj - 1,
               o4 = along_j ? 1 : sj;
    BLOCKS(m) {
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
    count(m, r, 7.0);
}

void kernel_barotropic_u(hycom *m, esm_region r) { barotropic_transport(m, r, 0); }
void kernel_barotropic_v(hycom *m, esm_region r) { barotropic_transport(m, r, 1); }

/* ---- 5. continuity ------------------------------------------------------------------------ */

/* A layer's transport through the faces of a row: its baroclinic part plus its thickness'
 * share of the substep-averaged barotropic transport, so the layers add up to the barotropic
 * mode. Each face once: the cells on both sides use the same value. */
ESM_SIMD static void transport_faces_row(int n, const double *restrict thick, const double *restrict vel,
                                const double *restrict share, double *restrict flux)
{
    for (int i = 0; i < n; i++)
        flux[i] = thick[i] * (vel[i] + share[i]);
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

/* Layer thickness: h -= dt div(layer transports), flux form (conserves every layer's mass). */
void kernel_continuity(hycom *m, esm_region r)
{
    const long sj = m->l3.stride_j, sj2 = m->l2.stride_j;
    double *east_west = m->row_a, *south = m->row_b, *north = m->row_c;
    BLOCKS(m) {
        const esm_block *b = BLOCK(m);
        int n = width_of(b, r);
        for (int k = 0; k < m->nz; k++) {
            int j = -r.south; /* the south faces of the first row */
            long q = at2(m, lb, r, j), p = at3(m, lb, r, j, k);
            transport_faces_row(n, m->hv + p, m->v_next + p, m->share_v + q, south);
            ROWS(b, r) {
                int gj = b->j0 + j;
                q = at2(m, lb, r, j);
                p = at3(m, lb, r, j, k);
                transport_faces_row(n + 1, m->hu + p, m->u_next + p, m->share_u + q, east_west);
                transport_faces_row(n, m->hv + p + sj, m->v_next + p + sj, m->share_v + q + sj2, north);
                thickness_row(n, m->dt / (hycom_row(m->row_dxt, m, gj) * m->dy), m->dy,
                              hycom_row(m->row_dxv, m, gj + 1), hycom_row(m->row_dxv, m, gj),
                              east_west, south, north, m->mt + q, m->h + p, m->h_next + p);
                double *swap = south; /* this row's north faces are the next row's south */
                south = north;
                north = swap;
            }
        }
    }
    count(m, r, 5.0 * m->nz + 3);
}
