/* Space-filling curves: Hilbert (2x2), Peano (3x3 meander) and Cinco (5x5) levels, nested. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "esm_comm.h"
#include "esm_sfc.h"

/* One level: the cells of a p x p square in curve order, each with the corners (0 or 1 in x
 * and y) where the curve enters and leaves it. The whole level enters at corner (0,0) of cell
 * (0,0) and leaves at corner (1,0) of cell (p-1,0). */
typedef struct {
    signed char x, y, in_x, in_y, out_x, out_y;
} level_cell;

static const level_cell hilbert[4] = {
    {0, 0, 0, 0, 0, 1}, {0, 1, 0, 0, 1, 0}, {1, 1, 0, 0, 1, 0}, {1, 0, 1, 1, 1, 0}};
static const level_cell peano[9] = {{0, 0, 0, 0, 1, 0}, {1, 0, 0, 0, 0, 1}, {1, 1, 0, 0, 0, 1},
                                    {0, 1, 1, 1, 0, 1}, {0, 2, 0, 0, 1, 0}, {1, 2, 0, 0, 1, 0},
                                    {2, 2, 0, 0, 1, 0}, {2, 1, 1, 1, 1, 0}, {2, 0, 1, 1, 1, 0}};
static const level_cell cinco[25] = {
    {0, 0, 0, 0, 0, 1}, {0, 1, 0, 0, 1, 0}, {1, 1, 0, 0, 1, 0}, {1, 0, 1, 1, 1, 0},
    {2, 0, 0, 0, 0, 1}, {2, 1, 0, 0, 0, 1}, {2, 2, 0, 0, 0, 1}, {1, 2, 1, 1, 0, 1},
    {0, 2, 1, 1, 0, 1}, {0, 3, 0, 0, 0, 1}, {0, 4, 0, 0, 1, 0}, {1, 4, 0, 0, 1, 0},
    {1, 3, 1, 1, 1, 0}, {2, 3, 0, 0, 0, 1}, {2, 4, 0, 0, 1, 0}, {3, 4, 0, 0, 1, 0},
    {4, 4, 0, 0, 1, 0}, {4, 3, 1, 1, 0, 1}, {3, 3, 1, 1, 1, 0}, {3, 2, 1, 1, 1, 0},
    {4, 2, 0, 0, 1, 0}, {4, 1, 1, 1, 0, 1}, {3, 1, 1, 1, 1, 0}, {3, 0, 1, 1, 1, 0},
    {4, 0, 0, 0, 1, 0}};

static const level_cell *level_of(int p)
{
    return p == 2 ? hilbert : p == 3 ? peano : cinco;
}

int esm_sfc_side(int n)
{
    for (int side = n > 1 ? n : 1;; side++) {
        int m = side;
        while (m % 2 == 0)
            m /= 2;
        while (m % 3 == 0)
            m /= 3;
        while (m % 5 == 0)
            m /= 5;
        if (m == 1)
            return side;
    }
}

/* The symmetry of the square taking the canonical sub-curve (in at corner (0,0), out at (1,0))
 * to one that enters at `in` and leaves at `out`: swap x and y, then mirror x and/or y. */
typedef struct {
    int swap, mirror_x, mirror_y;
} symmetry;

static void corner_image(symmetry s, int x, int y, int *cx, int *cy)
{
    if (s.swap) {
        int t = x;
        x = y;
        y = t;
    }
    *cx = s.mirror_x ? 1 - x : x;
    *cy = s.mirror_y ? 1 - y : y;
}

static symmetry symmetry_for(const level_cell *c)
{
    for (int k = 0; k < 8; k++) {
        symmetry s = {k & 1, (k >> 1) & 1, (k >> 2) & 1};
        int ix, iy, ox, oy;
        corner_image(s, 0, 0, &ix, &iy);
        corner_image(s, 1, 0, &ox, &oy);
        if (ix == c->in_x && iy == c->in_y && ox == c->out_x && oy == c->out_y)
            return s;
    }
    return (symmetry){0, 0, 0}; /* unreachable: in and out are adjacent corners */
}

void esm_sfc_order(int nx, int ny, int *order, char *name, int namelen)
{
    int n = esm_sfc_side(nx > ny ? nx : ny);
    int factors[32], nf = 0;
    for (int m = n, p = 5; m > 1;) { /* coarsest level first: 5s, then 3s, then 2s */
        while (m % p == 0) {
            factors[nf++] = p;
            m /= p;
        }
        p = p == 5 ? 3 : 2;
    }
    /* Build the curve from the finest level up: `side` x `side` points in xs, ys. */
    int *xs = esm_calloc((size_t)n * n, sizeof *xs), *ys = esm_calloc((size_t)n * n, sizeof *ys);
    int *tx = esm_calloc((size_t)n * n, sizeof *tx), *ty = esm_calloc((size_t)n * n, sizeof *ty);
    long count = 1, side = 1;
    for (int f = nf - 1; f >= 0; f--) {
        int p = factors[f];
        const level_cell *level = level_of(p);
        long made = 0;
        for (int c = 0; c < p * p; c++) {
            symmetry s = symmetry_for(&level[c]);
            for (long k = 0; k < count; k++) {
                long x = xs[k], y = ys[k];
                if (s.swap) {
                    long t = x;
                    x = y;
                    y = t;
                }
                if (s.mirror_x)
                    x = side - 1 - x;
                if (s.mirror_y)
                    y = side - 1 - y;
                tx[made] = (int)(level[c].x * side + x);
                ty[made++] = (int)(level[c].y * side + y);
            }
        }
        int *swap_x = xs, *swap_y = ys;
        xs = tx;
        ys = ty;
        tx = swap_x;
        ty = swap_y;
        count = made;
        side *= p;
    }
    long k = 0;
    for (long c = 0; c < count; c++)
        if (xs[c] < nx && ys[c] < ny)
            order[k++] = xs[c] + nx * ys[c];
    free(xs);
    free(ys);
    free(tx);
    free(ty);

    static const char *level_name[6] = {"", "", "hilbert", "peano", "", "cinco"};
    int used = 0;
    name[0] = '\0';
    for (int f = 0; f < nf; f++)
        if (f == 0 || factors[f] != factors[f - 1])
            used += snprintf(name + used, used < namelen ? namelen - used : 0, "%s%s",
                             used ? "-" : "", level_name[factors[f]]);
    if (nf == 0)
        snprintf(name, namelen, "single");
}
