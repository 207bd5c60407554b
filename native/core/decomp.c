/* Blocks, land-block elimination and block-to-rank distribution. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "esm_comm.h"
#include "esm_decomp.h"
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

/* Ocean points of every block of the grid (land blocks have none). */
static int *count_ocean(const esm_decomp *d, const esm_decomp_params *p)
{
    int *ocean = esm_calloc((size_t)d->nbx * d->nby, sizeof *ocean);
    for (int j = 0; j < d->ny; j++)
        for (int i = 0; i < d->nx; i++)
            if (!p->is_ocean || p->is_ocean(i, j, p->context))
                ocean[i / d->bx + d->nbx * (j / d->by)]++;
    return ocean;
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

void esm_decomp_create(esm_decomp *d, const esm_decomp_params *p)
{
    *d = (esm_decomp){.nx = p->nx, .ny = p->ny, .bx = p->bx, .by = p->by,
                      .periodic_x = p->periodic_x, .periodic_y = p->periodic_y,
                      .rank = esm_rank(), .ranks = esm_ranks()};
    if (p->bx > p->nx || p->by > p->ny)
        esm_fail("block %dx%d is larger than the %dx%d grid: use a smaller --block",
                 p->bx, p->by, p->nx, p->ny);
    d->nbx = (p->nx + p->bx - 1) / p->bx;
    d->nby = (p->ny + p->by - 1) / p->by;
    int nall = d->nbx * d->nby;
    int *ocean = count_ocean(d, p);

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
        int g = order[k];
        d->index_of[g] = -1;
        d->ocean_points += ocean[g];
        if (!ocean[g]) {
            d->land_blocks++;
            continue;
        }
        int ib = g % d->nbx, jb = g / d->nbx;
        esm_block *b = &d->block[d->nblocks];
        *b = (esm_block){.ib = ib, .jb = jb, .i0 = ib * p->bx, .j0 = jb * p->by,
                         .ocean = ocean[g]};
        b->ni = (ib == d->nbx - 1) ? p->nx - b->i0 : p->bx;
        b->nj = (jb == d->nby - 1) ? p->ny - b->j0 : p->by;
        d->index_of[g] = d->nblocks++;
    }
    free(order);
    free(ocean);
    if (d->ranks > d->nblocks)
        esm_fail("%d ranks but only %d ocean blocks (%d land blocks dropped from %dx%d): use at "
                 "most %d ranks or a smaller --block", d->ranks, d->nblocks, d->land_blocks,
                 d->nbx, d->nby, d->nblocks);

    /* Deal the ocean blocks to ranks. */
    if (p->distribution == ESM_DIST_SFC) {
        int base = d->nblocks / d->ranks, extra = d->nblocks % d->ranks, b = 0;
        for (int r = 0; r < d->ranks; r++)
            for (int k = 0; k < base + (r < extra); k++)
                d->block[b++].owner = r;
    } else {
        if (!cartesian_shape(d->ranks, d->nbx, d->nby, &d->px, &d->py))
            esm_fail("%d ranks do not fit a Cartesian grid on %dx%d blocks: use --distribution "
                     "sfc or a smaller --block", d->ranks, d->nbx, d->nby);
        snprintf(d->method, sizeof d->method, "cartesian %dx%d", d->px, d->py);
        for (int b = 0; b < d->nblocks; b++) {
            int rx = (int)((long)d->block[b].ib * d->px / d->nbx);
            int ry = (int)((long)d->block[b].jb * d->py / d->nby);
            d->block[b].owner = rx + d->px * ry;
        }
    }

    /* Neighbours, local indices, load per rank. */
    long *points = esm_calloc(d->ranks, sizeof *points);
    int *owned = esm_calloc(d->ranks, sizeof *owned);
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
    d->nlocal = owned[d->rank];
    d->local = esm_calloc(d->nlocal ? d->nlocal : 1, sizeof *d->local);
    for (int b = 0, k = 0; b < d->nblocks; b++)
        if (d->block[b].owner == d->rank)
            d->local[k++] = b;
    for (int r = 0; r < d->ranks; r++) {
        d->idle_ranks += owned[r] == 0;
        if (points[r] > d->max_rank_points)
            d->max_rank_points = points[r];
    }
    free(points);
    free(owned);
}

void esm_decomp_free(esm_decomp *d)
{
    free(d->block);
    free(d->index_of);
    free(d->local);
    *d = (esm_decomp){0};
}
