/* The Jacobian as 4x4 blocks on the 7-point stencil (PETSc's BAIJ with block size 4): one
 * diagonal block and six face blocks per cell. Its product overlaps the ghost exchange with
 * the local part, as MatMult_MPIBAIJ does (VecScatterBegin, local product, VecScatterEnd,
 * off-rank part). The preconditioner is block Jacobi over the ranks with a block ILU(0) of
 * each rank's part in natural order (PETSc's default PCBJACOBI + PCILU on BAIJ). On a 7-point
 * stencil ILU(0) only changes the pivot blocks:
 *
 *   P_c = A_cc - sum over lower neighbours l (west, south, bottom) of  A_cl P_l^-1 A_lc
 *
 * so the factor is L_cl = A_cl P_l^-1 (stored), U = the upper face blocks of A (shared) and
 * P_c^-1 (stored). Under --pc none (PCNONE) there is no factorisation and applying the
 * preconditioner copies the vector, as PETSc's PCApply_None does.
 *
 * The product's local and off-rank parts, the factorisation and the solve are kernels
 * (esm_fold.h) with the bytes per cell below. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "pflotran.h"

void block_matrix_create(block_matrix *A, const grid *g)
{
    *A = (block_matrix){.g = g};
    A->block = esm_field_alloc(g->ncells * BLOCKS * BLOCK_SIZE * sizeof(double));
    A->lower = esm_field_alloc(g->ncells * 3 * BLOCK_SIZE * sizeof(double));
    A->inverse = esm_field_alloc(g->ncells * BLOCK_SIZE * sizeof(double));
    A->ghost = esm_field_alloc((g->nghosts * NS + 1) * sizeof(double));
}

void block_matrix_free(block_matrix *A)
{
    esm_field_free(A->block);
    esm_field_free(A->lower);
    esm_field_free(A->inverse);
    esm_field_free(A->ghost);
}

double block_matrix_product_bytes(void)
{
    return (BLOCKS * BLOCK_SIZE + 2 * NS) * sizeof(double);          /* blocks, x, y */
}

double block_ilu_solve_bytes(void)
{
    return (6 * BLOCK_SIZE + BLOCK_SIZE + 4 * NS) * sizeof(double);  /* L, U, P^-1, r, z twice */
}

double block_ilu_factor_bytes(void)
{
    /* reads the diagonal, 3 lower and 3 neighbours' upper blocks and 3 neighbours' P^-1;
     * writes 3 L blocks and P^-1 */
    return (7 * BLOCK_SIZE + 3 * BLOCK_SIZE + 4 * BLOCK_SIZE) * sizeof(double);
}

/* The off-rank part of the product: a face block, a ghost and y, per face cell. */
static double ghost_product_bytes(void)
{
    return (BLOCK_SIZE + 2 * NS) * sizeof(double);
}

/* Flops of the block operations below, counted from their code: a block times a vector
 * added to (or subtracted from) another, a block times a block, a block's inverse (12 minors,
 * the determinant, its reciprocal, 16 entries). */
enum {
    MULTIPLY_ADD_FLOPS = NS * 8,
    BLOCK_PRODUCT_FLOPS = BLOCK_SIZE * 7,
    BLOCK_INVERSE_FLOPS = 12 * 3 + 11 + 1 + BLOCK_SIZE * 6,
};

/* y += b x for a 4x4 row-major block */
static inline void multiply_add(const double *restrict b, const double *restrict x,
                                double *restrict y)
{
    for (int s = 0; s < NS; s++)
        y[s] +=
            b[NS * s] * x[0] + b[NS * s + 1] * x[1] + b[NS * s + 2] * x[2] + b[NS * s + 3] * x[3];
}

/* y -= b x */
static inline void multiply_subtract(const double *restrict b, const double *restrict x,
                                     double *restrict y)
{
    for (int s = 0; s < NS; s++)
        y[s] -=
            b[NS * s] * x[0] + b[NS * s + 1] * x[1] + b[NS * s + 2] * x[2] + b[NS * s + 3] * x[3];
}

/* c = a b (4x4 blocks), row by row so each row of c is one vector operation */
static inline void block_product(const double *restrict a, const double *restrict b,
                                 double *restrict c)
{
    for (int s = 0; s < NS; s++) {
        double a0 = a[NS * s], a1 = a[NS * s + 1], a2 = a[NS * s + 2], a3 = a[NS * s + 3];
        for (int q = 0; q < NS; q++)
            c[NS * s + q] = a0 * b[q] + a1 * b[NS + q] + a2 * b[2 * NS + q] + a3 * b[3 * NS + q];
    }
}

/* inverse = a^-1 by the adjugate (cofactors over the determinant), branch-free like PETSc's
 * unrolled 4x4 kernels; a singular block gives infinities, which the Krylov solver reports as
 * a breakdown. */
static void block_inverse(const double *restrict m, double *restrict inv)
{
    /* 2x2 minors of the bottom two rows (s) and of the top two rows (c) */
    double s0 = m[0] * m[5] - m[4] * m[1], s1 = m[0] * m[6] - m[4] * m[2];
    double s2 = m[0] * m[7] - m[4] * m[3], s3 = m[1] * m[6] - m[5] * m[2];
    double s4 = m[1] * m[7] - m[5] * m[3], s5 = m[2] * m[7] - m[6] * m[3];
    double c5 = m[10] * m[15] - m[14] * m[11], c4 = m[9] * m[15] - m[13] * m[11];
    double c3 = m[9] * m[14] - m[13] * m[10], c2 = m[8] * m[15] - m[12] * m[11];
    double c1 = m[8] * m[14] - m[12] * m[10], c0 = m[8] * m[13] - m[12] * m[9];
    double det = s0 * c5 - s1 * c4 + s2 * c3 + s3 * c2 - s4 * c1 + s5 * c0, d = 1.0 / det;
    inv[0] = (m[5] * c5 - m[6] * c4 + m[7] * c3) * d;
    inv[1] = (-m[1] * c5 + m[2] * c4 - m[3] * c3) * d;
    inv[2] = (m[13] * s5 - m[14] * s4 + m[15] * s3) * d;
    inv[3] = (-m[9] * s5 + m[10] * s4 - m[11] * s3) * d;
    inv[4] = (-m[4] * c5 + m[6] * c2 - m[7] * c1) * d;
    inv[5] = (m[0] * c5 - m[2] * c2 + m[3] * c1) * d;
    inv[6] = (-m[12] * s5 + m[14] * s2 - m[15] * s1) * d;
    inv[7] = (m[8] * s5 - m[10] * s2 + m[11] * s1) * d;
    inv[8] = (m[4] * c4 - m[5] * c2 + m[7] * c0) * d;
    inv[9] = (-m[0] * c4 + m[1] * c2 - m[3] * c0) * d;
    inv[10] = (m[12] * s4 - m[13] * s2 + m[15] * s0) * d;
    inv[11] = (-m[8] * s4 + m[9] * s2 - m[11] * s0) * d;
    inv[12] = (-m[4] * c3 + m[5] * c1 - m[6] * c0) * d;
    inv[13] = (m[0] * c3 - m[1] * c1 + m[2] * c0) * d;
    inv[14] = (-m[12] * s3 + m[13] * s1 - m[14] * s0) * d;
    inv[15] = (m[8] * s3 - m[9] * s1 + m[10] * s0) * d;
}

static inline const double *block_of(const block_matrix *A, long c, int which)
{
    return A->block + (c * BLOCKS + which) * BLOCK_SIZE;
}

/* y = the product of this rank's part of A with x (no ghosts). */
static void local_product(const block_matrix *A, const double *x, double *y)
{
    const grid *g = A->g;
    const long sj = g->mx, sk = (long)g->mx * g->my;
    for (int k = 0; k < g->mz; k++)
        for (int j = 0; j < g->my; j++) {
            bool south = j > 0, north = j < g->my - 1, bottom = k > 0, top = k < g->mz - 1;
            for (int i = 0; i < g->mx; i++) {
                long c = grid_cell(g, i, j, k);
                const double *b = A->block + c * BLOCKS * BLOCK_SIZE;
                double sum[NS] = {0};
                multiply_add(b + DIAGONAL * BLOCK_SIZE, x + NS * c, sum);
                if (i > 0)
                    multiply_add(b + WEST * BLOCK_SIZE, x + NS * (c - 1), sum);
                if (i < g->mx - 1)
                    multiply_add(b + EAST * BLOCK_SIZE, x + NS * (c + 1), sum);
                if (south)
                    multiply_add(b + SOUTH * BLOCK_SIZE, x + NS * (c - sj), sum);
                if (north)
                    multiply_add(b + NORTH * BLOCK_SIZE, x + NS * (c + sj), sum);
                if (bottom)
                    multiply_add(b + BOTTOM * BLOCK_SIZE, x + NS * (c - sk), sum);
                if (top)
                    multiply_add(b + TOP * BLOCK_SIZE, x + NS * (c + sk), sum);
                memcpy(y + NS * c, sum, sizeof sum);
            }
        }
}

/* y += the off-rank part: each face cell's face block times the ghost across it. */
static void off_rank_product(const block_matrix *A, double *y)
{
    const grid *g = A->g;
    for (int f = 0; f < FACES; f++) {
        if (g->neighbour[f] < 0)
            continue;
        int i0 = f == EAST ? g->mx - 1 : 0, i1 = f == WEST ? 1 : g->mx;
        int j0 = f == NORTH ? g->my - 1 : 0, j1 = f == SOUTH ? 1 : g->my;
        int k0 = f == TOP ? g->mz - 1 : 0, k1 = f == BOTTOM ? 1 : g->mz;
        for (int k = k0; k < k1; k++)
            for (int j = j0; j < j1; j++)
                for (int i = i0; i < i1; i++) {
                    long c = grid_cell(g, i, j, k);
                    const double *ghost =
                        A->ghost + NS * (g->ghost_at[f] + grid_face_index(g, f, i, j, k));
                    multiply_add(block_of(A, c, f), ghost, y + NS * c);
                }
    }
}

void block_matrix_multiply(block_matrix *A, const double *x, double *y)
{
    static const esm_kernel local = {.name = "pflotran.matvec_local",
                                     .flops = BLOCKS * MULTIPLY_ADD_FLOPS}; /* an interior cell */
    static const esm_kernel off_rank = {.name = "pflotran.matvec_ghosts",
                                        .flops = MULTIPLY_ADD_FLOPS};
    const grid *g = A->g;
    esm_timer_start(A->product_timer);
    esm_scatter_begin(g->matrix_scatter, x);
    if (esm_kernel_begin(&local, (double)g->ncells, block_matrix_product_bytes() * g->ncells)) {
        local_product(A, x, y);
        esm_kernel_end(&local);
    }
    esm_scatter_end(g->matrix_scatter, A->ghost);
    if (esm_kernel_begin(&off_rank, (double)g->nghosts, ghost_product_bytes() * g->nghosts)) {
        off_rank_product(A, y);
        esm_kernel_end(&off_rank);
    }
    esm_timer_stop(A->product_timer);
}

void block_ilu_factor(block_matrix *A)
{
    static const esm_kernel kernel = {
        /* an interior cell: 3 lower neighbours, the pivot's inverse */
        .name = "pflotran.ilu_factor",
        .flops = 3 * (2 * BLOCK_PRODUCT_FLOPS + BLOCK_SIZE) + BLOCK_INVERSE_FLOPS};
    const grid *g = A->g;
    const long sj = g->mx, sk = (long)g->mx * g->my;
    esm_timer_start(A->factor_timer);
    if (!esm_kernel_begin(&kernel, (double)g->ncells, block_ilu_factor_bytes() * g->ncells)) {
        esm_timer_stop(A->factor_timer);
        return;
    }
    for (int k = 0; k < g->mz; k++)
        for (int j = 0; j < g->my; j++)
            for (int i = 0; i < g->mx; i++) {
                long c = grid_cell(g, i, j, k);
                double pivot[BLOCK_SIZE], update[BLOCK_SIZE];
                memcpy(pivot, block_of(A, c, DIAGONAL), sizeof pivot);
                /* lower neighbours in this rank's part: (face towards it, its face back, where) */
                const struct {
                    bool there;
                    int face, back;
                    long l;
                } lower[3] = {
                    {i > 0, WEST, EAST, c - 1},
                    {j > 0, SOUTH, NORTH, c - sj},
                    {k > 0, BOTTOM, TOP, c - sk},
                };
                for (int n = 0; n < 3; n++) {
                    if (!lower[n].there)
                        continue;
                    double *l_block = A->lower + (c * 3 + n) * BLOCK_SIZE;
                    block_product(block_of(A, c, lower[n].face),
                                  A->inverse + lower[n].l * BLOCK_SIZE, l_block);
                    block_product(l_block, block_of(A, lower[n].l, lower[n].back), update);
                    for (int e = 0; e < BLOCK_SIZE; e++)
                        pivot[e] -= update[e];
                }
                block_inverse(pivot, A->inverse + c * BLOCK_SIZE);
            }
    esm_kernel_end(&kernel);
    esm_timer_stop(A->factor_timer);
}

void block_ilu_solve(const block_matrix *A, const double *r, double *z)
{
    static const esm_kernel kernel = {/* an interior cell: 3 lower, 3 upper, the pivot's inverse */
                                      .name = "pflotran.ilu_solve",
                                      .flops = 7 * MULTIPLY_ADD_FLOPS};
    const grid *g = A->g;
    const long sj = g->mx, sk = (long)g->mx * g->my;
    esm_timer_start(A->solve_timer);
    if (!esm_kernel_begin(&kernel, (double)g->ncells, block_ilu_solve_bytes() * g->ncells)) {
        esm_timer_stop(A->solve_timer);
        return;
    }
    for (int k = 0; k < g->mz; k++) /* forward: L w = r, w kept in z */
        for (int j = 0; j < g->my; j++)
            for (int i = 0; i < g->mx; i++) {
                long c = grid_cell(g, i, j, k);
                const double *l_block = A->lower + c * 3 * BLOCK_SIZE;
                double w[NS] = {r[NS * c], r[NS * c + 1], r[NS * c + 2], r[NS * c + 3]};
                if (i > 0)
                    multiply_subtract(l_block, z + NS * (c - 1), w);
                if (j > 0)
                    multiply_subtract(l_block + BLOCK_SIZE, z + NS * (c - sj), w);
                if (k > 0)
                    multiply_subtract(l_block + 2 * BLOCK_SIZE, z + NS * (c - sk), w);
                memcpy(z + NS * c, w, sizeof w);
            }
    for (int k = g->mz - 1; k >= 0; k--) /* backward: U z = w */
        for (int j = g->my - 1; j >= 0; j--)
            for (int i = g->mx - 1; i >= 0; i--) {
                long c = grid_cell(g, i, j, k);
                double w[NS] = {z[NS * c], z[NS * c + 1], z[NS * c + 2], z[NS * c + 3]};
                if (i < g->mx - 1)
                    multiply_subtract(block_of(A, c, EAST), z + NS * (c + 1), w);
                if (j < g->my - 1)
                    multiply_subtract(block_of(A, c, NORTH), z + NS * (c + sj), w);
                if (k < g->mz - 1)
                    multiply_subtract(block_of(A, c, TOP), z + NS * (c + sk), w);
                double out[NS] = {0};
                multiply_add(A->inverse + c * BLOCK_SIZE, w, out);
                memcpy(z + NS * c, out, sizeof out);
            }
    esm_kernel_end(&kernel);
    esm_timer_stop(A->solve_timer);
}

void preconditioner_setup(block_matrix *A, preconditioner pc)
{
    if (pc == PC_BJACOBI)
        block_ilu_factor(A);
}

void preconditioner_apply(const block_matrix *A, preconditioner pc, const double *r, double *z)
{
    static const esm_kernel copy = {.name = "pflotran.pc_none"};
    if (pc == PC_BJACOBI) {
        block_ilu_solve(A, r, z);
        return;
    }
    const long cells = A->g->ncells; /* PCApply_None: VecCopy */
    esm_timer_start(A->solve_timer);
    if (esm_kernel_begin(&copy, (double)cells, preconditioner_apply_bytes(pc) * cells)) {
        memcpy(z, r, cells * NS * sizeof *z);
        esm_kernel_end(&copy);
    }
    esm_timer_stop(A->solve_timer);
}

double preconditioner_apply_bytes(preconditioner pc)
{
    return pc == PC_BJACOBI ? block_ilu_solve_bytes() : 2 * NS * sizeof(double); /* r, z */
}
