/* esm_sfc.h: space-filling curves over a grid of blocks (Dennis, "Inverse space-filling curve
 * partitioning of a global ocean model", IPDPS 2007).
 *
 * The curve covers an n x n square where n = 2^a 3^b 5^c is the smallest such side holding
 * the grid: each factor is one level of recursion, 5 (Cinco) at the coarsest levels, then 3
 * (Peano), then 2 (Hilbert) at the finest; a power of two gives the Hilbert curve itself.
 * Every level enters its square at one corner and leaves at the adjacent corner, so levels of
 * any factor nest and consecutive cells of the whole curve are always edge neighbours. Cells of
 * the square outside the grid are skipped (as POP does for non-square block grids).
 *
 * The 3x3 and 5x5 level patterns are, of all continuous corner-to-adjacent-corner paths (2 for
 * 3x3, 86 for 5x5), the ones whose contiguous pieces have the fewest cut edges. */
#ifndef ESM_SFC_H
#define ESM_SFC_H

/* Smallest 2^a 3^b 5^c >= n. */
int esm_sfc_side(int n);

/* order[k] = i + nx*j of the k-th cell of the nx x ny grid along the curve (nx*ny entries).
 * `name` receives the levels used, e.g. "cinco-hilbert" or "hilbert". */
void esm_sfc_order(int nx, int ny, int *order, char *name, int namelen);
#endif
