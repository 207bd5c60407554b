/* kernels.h: what the HYCOM proxy's kernel files share (baroclinic.c: surface height,
 * Montgomery potential, faces, baroclinic velocities; barotropic.c: the barotropic substeps;
 * continuity.c: the layer thicknesses; queue.c: the queue that runs them block by block).
 *
 * Each kernel computes over region r of every local block (the interior and r's halo rings)
 * and adds the bytes it moves to m->bytes. Masks (mt, mu, mv) keep every field zero on land,
 * so halos facing dropped land tiles (zero) agree with computed ones.
 *
 * The byte model (the roofline's numerator): each kernel counts every array it reads and
 * every array it writes once per point of its region (8 bytes a value; a read-modify-write
 * counts twice, as STREAM counts a[i] = b[i] + s c[i] as three). Neighbours (i-1, j-1) and
 * second passes over data a kernel has just touched are not counted again. Each kernel
 * states its count next to its definition.
 *
 * The flop count (esm_fold.h, the node model's in-core part): each kernel's adds, subtracts,
 * multiplies and divides per point of its region, counted from its *_level loops (a sign
 * change, comparison, min or max none; per-row and per-level constants left out), given
 * beside its bytes when it is queued.
 *
 * The loops live in *_level functions (one level of a block's region each); the kernels
 * (*_block) walk the levels around them. Each *_level function computes one level of a
 * region of one block: `rows` rows of n points, every row `s` doubles after the previous one
 * in every array (2D and layer fields and the planes share the row stride: levels are
 * outermost). One call per level and block, not per row: the calls cost as much as the work
 * on rows of 30-80 points. The restrict parameters tell the compiler the arrays never
 * overlap, so the rows run in vector lanes; per-row constants (grid widths, Coriolis) come in
 * per-row arrays and are computed per row with the same expressions as before. */
#ifndef HYCOM_KERNELS_H
#define HYCOM_KERNELS_H
#include "hycom.h"

#define BLOCK(m) (&(m)->d.block[(m)->d.local[lb]])

/* Points per row and rows of region r of block b. */
static inline int width_of(const esm_block *b, esm_region r)
{
    return b->ni + r.west + r.east;
}
static inline int rows_of(const esm_block *b, esm_region r)
{
    return b->nj + r.south + r.north;
}

/* Offsets of the first point of region r's row j in a 2D and a layer field. */
static inline long at2(const hycom *m, int lb, esm_region r, int j)
{
    return esm_at(&m->l2, lb, -r.west, j, 0);
}
static inline long at3(const hycom *m, int lb, esm_region r, int j, int k)
{
    return esm_at(&m->l3, lb, -r.west, j, k);
}
/* Per-row arrays (row_dxt, ...) from region r's first row of block b. */
static inline const double *row_at(const hycom *m, const double *rows, const esm_block *b,
                                   esm_region r)
{
    return rows + b->j0 - r.south + m->width;
}

/* Queue kernel `run` (`name`) over region r (with its argument), counting its bytes
 * (doubles_per_point: the byte model above) and flops (flops_per_point); queue.c. */
void hycom_defer(hycom *m, block_kernel run, const char *name, esm_region r, double arg,
                 double doubles_per_point, double flops_per_point);
#endif
