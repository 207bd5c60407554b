/* Blocks, land-block elimination and block-to-rank distribution. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "esm_comm.h"
#include "esm_decomp.h"
#include "esm_fold.h"
#include "esm_sfc.h"

const int esm_dir_x[ESM_DIRECTIONS] = {-1, 0, 1, -1, 1, -1, 0, 1};
const int esm_dir_y[ESM_DIRECTIONS] = {-1, -1, -1, 0, 0, 1, 1, 1};

static int wrap(int v, int n, bool periodic)
{
    if (v >= 0 && v < n)
        return v;
    return periodic ? (v + n) % n : -1;
}

bool esm_decomp_global(const esm_decomp *d, const esm_block *b, int i, int j, int *gi, int *gj)
{
    *gi = wrap(b->i0 + i, d->nx, d->periodic_x);
    *gj = wrap(b->j0 + j, d->ny, d->periodic_y);
    return *gi >= 0 && *gj >= 0;
}

/* The global tables every rank builds alike (the decomposition without rank, nlocal, local),
 * or why the parameters do not fit the rank count. */
typedef struct tables {
    esm_decomp d;
    char error[400];
} tables;

typedef struct {
    const esm_decomp_params *p;
    int ranks;
} tables_context;

/* Ocean points in [0, i) x [0, j) for every i <= nx, j <= ny: (nx+1) x (ny+1) counts, so that
 * any block's count is four lookups (and a block size can be chosen by trying many). */
static int *ocean_prefix(const esm_decomp_params *p)
{
    const long w = p->nx + 1;
    int *prefix = esm_calloc((size_t)w * (p->ny + 1), sizeof *prefix);
    for (int j = 0; j < p->ny; j++) {
        int row = 0;
        for (int i = 0; i < p->nx; i++) {
            row += !p->is_ocean || p->is_ocean(i, j, p->context);
            prefix[(i + 1) + w * (j + 1)] = prefix[(i + 1) + w * j] + row;
        }
    }
    return prefix;
}

static int ocean_in(const int *prefix, int nx, int i0, int j0, int i1, int j1)
{
    const long w = nx + 1;
    return prefix[i1 + w * j1] - prefix[i0 + w * j1] - prefix[i1 + w * j0] + prefix[i0 + w * j0];
}

/* Ocean blocks of the nx x ny grid cut into bx x by blocks. */
static int ocean_blocks(const int *prefix, int nx, int ny, int bx, int by)
{
    int count = 0;
    for (int j0 = 0; j0 < ny; j0 += by)
        for (int i0 = 0; i0 < nx; i0 += bx)
            count += ocean_in(prefix, nx, i0, j0, i0 + bx < nx ? i0 + bx : nx,
                              j0 + by < ny ? j0 + by : ny) > 0;
    return count;
}

/* The block size for `ranks`, as HYCOM's topography tools cut a patch for npes: of the tile
 * grids whose tiles (edge ones included) have at least min_side points a side and whose ocean
 * tiles are at least the rank count, the one whose busiest rank computes the fewest points,
 * halo rings of min_side included (ceil(ocean tiles / ranks) tiles of (bx + 2 side)(by + 2 side)
 * points: one tile per rank where the land allows, square rather than long); on a tie, the one
 * with fewer ocean tiles. 0 if none. */
static int blocks_for_ranks(const esm_decomp_params *p, const int *prefix, int ranks, int *bx,
                            int *by)
{
    const int side = p->min_side > 0 ? p->min_side : 1;
    const long cap = 4L * ranks + 64; /* land is rarely more than 3/4 of the tiles */
    double best_cost = INFINITY;
    long best_ocean = 0;
    *bx = *by = 0;
    for (int nby = 1; nby <= p->ny / side; nby++) {
        int h = (p->ny + nby - 1) / nby;
        if ((p->ny + h - 1) / h != nby || p->ny - (nby - 1) * h < side)
            continue; /* the same cut as a smaller nby, or an edge row too thin */
        for (int nbx = 1; nbx <= p->nx / side && (long)nbx * nby <= cap; nbx++) {
            int w = (p->nx + nbx - 1) / nbx;
            if ((p->nx + w - 1) / w != nbx || p->nx - (nbx - 1) * w < side ||
                (long)nbx * nby < ranks)
                continue;
            long ocean = ocean_blocks(prefix, p->nx, p->ny, w, h);
            if (ocean < ranks)
                continue;
            double cost =
                (double)((ocean + ranks - 1) / ranks) * (w + 2.0 * side) * (h + 2.0 * side);
            if (cost < best_cost || (cost == best_cost && ocean < best_ocean)) {
                best_cost = cost;
                best_ocean = ocean;
                *bx = w;
                *by = h;
            }
        }
    }
    return *bx;
}

/* The factorisation px * py = ranks closest in shape to the block grid, or 0 if none fits. */
static int cartesian_shape(int ranks, int nbx, int nby, int *px, int *py)
{
    double best = INFINITY;
    *px = *py = 0;
    for (int x = 1; x <= ranks; x++) {
        if (ranks % x || x > nbx || ranks / x > nby)
            continue;
        double mismatch = fabs(log((double)x / (ranks / x)) - log((double)nbx / nby));
        if (mismatch < best - 1e-12) {
            best = mismatch;
            *px = x;
            *py = ranks / x;
        }
    }
    return *px;
}

static void *build_tables(const void *context)
{
    const tables_context *c = context;
    const esm_decomp_params *p = c->p;
    const int ranks = c->ranks;
    tables *t = esm_calloc(1, sizeof *t);
    esm_decomp *d = &t->d;
    *d = (esm_decomp){.nx = p->nx,
                      .ny = p->ny,
                      .bx = p->bx,
                      .by = p->by,
                      .periodic_x = p->periodic_x,
                      .periodic_y = p->periodic_y,
                      .ranks = ranks};
    int *prefix = ocean_prefix(p);
    bool given = p->choice == ESM_BLOCKS_GIVEN ||
                 (p->choice == ESM_BLOCKS_GIVEN_OR_FOR_RANKS &&
                  ocean_blocks(prefix, p->nx, p->ny, p->bx, p->by) >= ranks);
    if (!given && !blocks_for_ranks(p, prefix, ranks, &d->bx, &d->by)) {
        int side = p->min_side > 0 ? p->min_side : 1;
        int most = ocean_blocks(prefix, p->nx, p->ny, side, side);
        snprintf(t->error, sizeof t->error,
                 "%d ranks: no cut of the %dx%d grid into blocks of "
                 "at least %dx%d points gives every rank an ocean block (at most %d ocean "
                 "blocks): use at most %d ranks%s",
                 ranks, p->nx, p->ny, side, side, most, most,
                 side > 1 ? " or a smaller --halo-width" : "");
        free(prefix);
        return t;
    }
    d->nbx = (p->nx + d->bx - 1) / d->bx;
    d->nby = (p->ny + d->by - 1) / d->by;
    int nall = d->nbx * d->nby;

    /* The order in which blocks are dealt: along the curve, or row by row. */
    int *order = esm_calloc(nall, sizeof *order);
    if (p->distribution == ESM_DIST_SFC) {
        char curve[32];
        esm_sfc_order(d->nbx, d->nby, order, curve, sizeof curve);
        snprintf(d->method, sizeof d->method, "sfc %s", curve);
    } else {
        for (int b = 0; b < nall; b++)
            order[b] = b;
    }
    d->index_of = esm_calloc(nall, sizeof *d->index_of);
    d->block = esm_calloc(nall, sizeof *d->block);
    for (int k = 0; k < nall; k++) {
        int g = order[k], ib = g % d->nbx, jb = g / d->nbx;
        esm_block b = {.ib = ib, .jb = jb, .i0 = ib * d->bx, .j0 = jb * d->by};
        b.ni = (ib == d->nbx - 1) ? p->nx - b.i0 : d->bx;
        b.nj = (jb == d->nby - 1) ? p->ny - b.j0 : d->by;
        b.ocean = ocean_in(prefix, p->nx, b.i0, b.j0, b.i0 + b.ni, b.j0 + b.nj);
        d->index_of[g] = -1;
        d->ocean_points += b.ocean;
        if (!b.ocean) {
            d->land_blocks++;
            continue;
        }
        d->block[d->nblocks] = b;
        d->index_of[g] = d->nblocks++;
    }
    free(order);
    free(prefix);
    if (ranks > d->nblocks) {
        snprintf(t->error, sizeof t->error,
                 "%d ranks but only %d ocean blocks (%d land blocks "
                 "dropped from %dx%d): use at most %d ranks or a smaller --block",
                 ranks, d->nblocks, d->land_blocks, d->nbx, d->nby, d->nblocks);
        return t;
    }

    /* Deal the ocean blocks to ranks. */
    if (p->distribution == ESM_DIST_CARTESIAN) {
        if (!cartesian_shape(ranks, d->nbx, d->nby, &d->px, &d->py)) {
            snprintf(t->error, sizeof t->error,
                     "%d ranks do not fit a Cartesian grid on %dx%d "
                     "blocks: use --distribution sfc or a smaller --block",
                     ranks, d->nbx, d->nby);
            return t;
        }
        snprintf(d->method, sizeof d->method, "cartesian %dx%d", d->px, d->py);
        for (int b = 0; b < d->nblocks; b++) {
            int rx = (int)((long)d->block[b].ib * d->px / d->nbx);
            int ry = (int)((long)d->block[b].jb * d->py / d->nby);
            d->block[b].owner = rx + d->px * ry;
        }
    } else { /* contiguous pieces of the curve or of the rows, block counts within one */
        if (p->distribution == ESM_DIST_PATCH)
            snprintf(d->method, sizeof d->method, "patch %dx%d", d->nbx, d->nby);
        int base = d->nblocks / ranks, extra = d->nblocks % ranks, b = 0;
        for (int r = 0; r < ranks; r++)
            for (int k = 0; k < base + (r < extra); k++)
                d->block[b++].owner = r;
    }

    /* Neighbours, local indices, load per rank. */
    long *points = esm_calloc(ranks, sizeof *points);
    int *owned = esm_calloc(ranks, sizeof *owned);
    for (int b = 0; b < d->nblocks; b++) {
        esm_block *blk = &d->block[b];
        for (int dir = 0; dir < ESM_DIRECTIONS; dir++) {
            int ib = wrap(blk->ib + esm_dir_x[dir], d->nbx, d->periodic_x);
            int jb = wrap(blk->jb + esm_dir_y[dir], d->nby, d->periodic_y);
            blk->neighbour[dir] = (ib < 0 || jb < 0) ? -1 : d->index_of[ib + d->nbx * jb];
        }
        blk->local = owned[blk->owner]++;
        points[blk->owner] += blk->ocean;
    }
    d->min_blocks = d->nblocks;
    for (int r = 0; r < ranks; r++) {
        d->idle_ranks += owned[r] == 0;
        d->min_blocks = owned[r] < d->min_blocks ? owned[r] : d->min_blocks;
        d->max_blocks = owned[r] > d->max_blocks ? owned[r] : d->max_blocks;
        if (points[r] > d->max_rank_points)
            d->max_rank_points = points[r];
    }
    free(points);
    free(owned);
    return t;
}

void esm_decomp_create(esm_decomp *d, const esm_decomp_params *p)
{
    if (p->choice != ESM_BLOCKS_FOR_RANKS && (p->bx > p->nx || p->by > p->ny))
        esm_fail("block %dx%d is larger than the %dx%d grid: use a smaller --block", p->bx, p->by,
                 p->nx, p->ny);
    if (p->choice != ESM_BLOCKS_FOR_RANKS && (p->bx < 1 || p->by < 1))
        esm_fail("block %dx%d: use a --block of at least 1x1", p->bx, p->by);
    tables_context context = {p, esm_ranks()};
    const tables *t;
    bool owned = true;
    if (p->shared_key) {
        char key[256];
        snprintf(key, sizeof key, "esm_decomp.%s.%dx%d.%dx%d.%d%d.%d.%d.%d.ranks%d", p->shared_key,
                 p->nx, p->ny, p->bx, p->by, p->periodic_x, p->periodic_y, (int)p->distribution,
                 (int)p->choice, p->min_side, context.ranks);
        t = esm_shared(key, build_tables, &context);
        owned = esm_shared_owned();
    } else {
        t = build_tables(&context);
    }
    if (t->error[0])
        esm_fail("%s", t->error);
    *d = t->d;
    d->tables_owned = owned;
    if (owned)
        free((void *)t);
    d->rank = esm_rank();
    int mine = 0;
    for (int b = 0; b < d->nblocks; b++)
        mine += d->block[b].owner == d->rank;
    d->nlocal = mine;
    d->local = esm_calloc(mine ? mine : 1, sizeof *d->local);
    for (int b = 0, k = 0; b < d->nblocks; b++)
        if (d->block[b].owner == d->rank)
            d->local[k++] = b;
}

void esm_decomp_free(esm_decomp *d)
{
    if (d->tables_owned) {
        free(d->block);
        free(d->index_of);
    }
    free(d->local);
    *d = (esm_decomp){0};
}
