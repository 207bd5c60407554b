/* The structured grid cut into boxes as PETSc's DMDA cuts it (DMSetUp_DA_3D): a px x py x pz
 * rank grid, chosen from the rank count and the grid's shape when not given, and along each
 * direction n cells split over p ranks as PetscSplitOwnership does: n / p each, and one more
 * for the first n % p ranks. Ranks are numbered x fastest, as DMDA numbers them. Every box
 * meets its face neighbour on a whole face (both share the ranges of the other two
 * directions), so a ghost update sends and receives exactly one face per neighbour. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "pflotran.h"

/* Direction by direction: cells of part i of n over p, its first cell, the part holding cell. */
static int part_cells(int n, int p, int i)
{
    return n / p + (n % p > i);
}
static int part_first(int n, int p, int i)
{
    return i * (n / p) + (i < n % p ? i : n % p);
}
static int part_of(int n, int p, int cell)
{
    int q = n / p, r = n % p;
    return cell < r * (q + 1) ? cell / (q + 1) : r + (cell - r * (q + 1)) / q;
}

/* Two directions (a with `na` cells, b with `nb`) share `ranks`: DMDA's "squarish" choice of a,
 * the largest count at most round(sqrt(na ranks / nb)) that divides them (1 always does); the
 * larger count goes to the direction with more cells. */
static void split_two(int ranks, int na, int nb, int *a, int *b)
{
    int m = (int)(0.5 + sqrt((double)na * ranks / nb));
    for (m = m ? m : 1; m > 1 && ranks % m; m--)
        ;
    *a = m, *b = ranks / m;
    if (na > nb && *a < *b)
        *a = ranks / m, *b = m;
}

void grid_rank_grid(int ranks, int nx, int ny, int nz, int *px, int *py, int *pz)
{
    int n[3] = {nx, ny, nz}, p[3] = {*px, *py, *pz}, given = 1, free_axes = 0;
    for (int a = 0; a < 3; a++)
        given *= p[a] ? p[a] : 1, free_axes += !p[a];
    if (free_axes == 0 && given != ranks)
        esm_fail("--px %d --py %d --pz %d makes %d boxes for %d ranks: their product must be the "
                 "number of ranks",
                 p[0], p[1], p[2], given, ranks);
    if (ranks % given)
        esm_fail("--px %d --py %d --pz %d (0: chosen) cannot make a rank grid of %d ranks: the "
                 "ranks given along x, y, z must divide the number of ranks; change them, or leave "
                 "them 0 to choose as PETSc's DMDA does",
                 p[0], p[1], p[2], ranks);
    int rest = ranks / given;
    if (free_axes == 1) {
        for (int a = 0; a < 3; a++)
            p[a] = p[a] ? p[a] : rest;
    } else if (free_axes == 2) { /* the two free directions share what is left */
        int a = !p[0] ? 0 : 1, b = !p[2] ? 2 : 1;
        split_two(rest, n[a], n[b], &p[a], &p[b]);
    } else if (free_axes == 3) {
        /* y first: the largest count at most round(cbrt(ny^2 ranks / (nx nz))) dividing ranks */
        int m = (int)(0.5 + cbrt((double)ny * ny * ranks / ((double)nx * nz)));
        for (m = m ? m : 1; m > 1 && ranks % m; m--)
            ;
        p[1] = m;
        int cx = (int)(0.5 + sqrt((double)nx * ranks / ((double)nz * m)));
        for (cx = cx ? cx : 1; cx > 1 && ranks % (cx * m); cx--)
            ;
        p[0] = cx, p[2] = ranks / (cx * m);
        if (nx > nz && p[0] < p[2]) {
            int swap = p[0];
            p[0] = p[2], p[2] = swap;
        }
    }
    const char *axis = "xyz";
    for (int a = 0; a < 3; a++)
        if (p[a] > n[a])
            esm_fail("the %dx%dx%d grid cannot be cut over %d ranks: the %dx%dx%d rank grid "
                     "(%s) has %d ranks along %c for its %d cells: use fewer ranks, or give "
                     "--px, --py, --pz (their product the number of ranks, each at most its "
                     "direction's cells)",
                     nx, ny, nz, ranks, p[0], p[1], p[2],
                     free_axes ? "chosen as PETSc's DMDA does" : "given", p[a], axis[a], n[a]);
    *px = p[0], *py = p[1], *pz = p[2];
}

/* The ghost plan: for each face with a neighbour, this rank sends its layer of cells on that
 * face and receives the neighbour's layer facing it, both in the face's natural order; sets
 * the faces' places in the ghost vector. */
static esm_halo_spec *ghost_spec(grid *g)
{
    g->nghosts = 0;
    long face_cells[FACES] = {(long)g->my * g->mz, (long)g->my * g->mz, (long)g->mx * g->mz,
                              (long)g->mx * g->mz, (long)g->mx * g->my, (long)g->mx * g->my};
    esm_halo_spec *spec = esm_halo_spec_new();
    for (int f = 0; f < FACES; f++) {
        g->ghost_at[f] = g->nghosts;
        if (g->neighbour[f] < 0)
            continue;
        long n = face_cells[f], *cells = esm_calloc(n, sizeof *cells);
        long *slots = esm_calloc(n, sizeof *slots);
        int i_at = f == EAST ? g->mx - 1 : 0, j_at = f == NORTH ? g->my - 1 : 0;
        int k_at = f == TOP ? g->mz - 1 : 0;
        for (int k = 0; k < g->mz; k++)
            for (int j = 0; j < g->my; j++)
                for (int i = 0; i < g->mx; i++) {
                    bool on = (f == WEST || f == EAST)     ? i == i_at
                              : (f == SOUTH || f == NORTH) ? j == j_at
                                                           : k == k_at;
                    if (!on)
                        continue;
                    long slot = grid_face_index(g, f, i, j, k);
                    cells[slot] = grid_cell(g, i, j, k);
                    slots[slot] = g->nghosts + slot;
                }
        for (long c = 0; c < n; c++) { /* a cell's NS unknowns, contiguous runs merged */
            esm_halo_spec_send(spec, g->neighbour[f], cells[c] * NS, NS);
            esm_halo_spec_recv(spec, g->neighbour[f], slots[c] * NS, NS);
        }
        g->nghosts += n;
        free(cells);
        free(slots);
    }
    /* A rank meets each neighbour across one face only (boxes on a rank grid), so the runs
     * listed for a peer are exactly one face, in the same order on both sides. */
    return spec;
}

void grid_create(grid *g, int nx, int ny, int nz, int px, int py, int pz, esm_scatter_era era)
{
    int rank = esm_rank();
    grid_rank_grid(esm_ranks(), nx, ny, nz, &px, &py, &pz);
    *g = (grid){.nx = nx, .ny = ny, .nz = nz, .px = px, .py = py, .pz = pz};
    g->ix = rank % px;
    g->iy = rank / px % py;
    g->iz = rank / (px * py);
    g->mx = part_cells(nx, px, g->ix), g->i0 = part_first(nx, px, g->ix);
    g->my = part_cells(ny, py, g->iy), g->j0 = part_first(ny, py, g->iy);
    g->mz = part_cells(nz, pz, g->iz), g->k0 = part_first(nz, pz, g->iz);
    g->ncells = (long)g->mx * g->my * g->mz;
    g->width[0] = 1.0 / nx, g->width[1] = 1.0 / ny, g->width[2] = 1.0 / nz;
    int count[3] = {px, py, pz};
    for (int f = 0; f < FACES; f++) {
        int axis = f / 2, step = f % 2 ? 1 : -1, there[3] = {g->ix, g->iy, g->iz};
        there[axis] += step;
        g->neighbour[f] = there[axis] < 0 || there[axis] >= count[axis]
                              ? -1
                              : there[0] + px * (there[1] + py * there[2]);
    }
    g->era = era;
    g->scatter = esm_scatter_create(ghost_spec(g), (esm_scatter_kind){era, NS, true});
    /* PETSc's DM and matrix own a scatter each; the proxy shares one under vpscat (whose calls
     * do not depend on the vectors or on the scatter's kind) and keeps two under sf (whose
     * direct sends follow x, and whose DM scatter keeps its bookkeeping on one rank). */
    g->matrix_scatter = era == ESM_SCATTER_SF
                            ? esm_scatter_create(ghost_spec(g), (esm_scatter_kind){era, NS, false})
                            : g->scatter;
}

void grid_free(grid *g)
{
    if (g->matrix_scatter != g->scatter)
        esm_scatter_free(g->matrix_scatter);
    g->matrix_scatter = NULL;
    esm_scatter_free(g->scatter);
    g->scatter = NULL;
}

long grid_face_index(const grid *g, int face, int i, int j, int k)
{
    switch (face) {
    case WEST:
    case EAST:
        return j + (long)g->my * k;
    case SOUTH:
    case NORTH:
        return i + (long)g->mx * k;
    default:
        return i + (long)g->mx * j;
    }
}

long grid_global_cell(const grid *g, long c)
{
    int i = (int)(c % g->mx), j = (int)(c / g->mx % g->my), k = (int)(c / ((long)g->mx * g->my));
    return (g->i0 + i) + (long)g->nx * ((g->j0 + j) + (long)g->ny * (g->k0 + k));
}

long grid_cells_before(const grid *g, int rank)
{
    int ix = rank % g->px, iy = rank / g->px % g->py, iz = rank / (g->px * g->py);
    long mz = part_cells(g->nz, g->pz, iz), my = part_cells(g->ny, g->py, iy);
    return (long)g->nx * g->ny * part_first(g->nz, g->pz, iz)   /* whole slabs below */
           + (long)g->nx * part_first(g->ny, g->py, iy) * mz      /* rows of boxes in front */
           + (long)part_first(g->nx, g->px, ix) * my * mz;        /* boxes to the west */
}

int grid_owner(const grid *g, int gi, int gj, int gk, long *local)
{
    int ix = part_of(g->nx, g->px, gi), iy = part_of(g->ny, g->py, gj);
    int iz = part_of(g->nz, g->pz, gk);
    int mx = part_cells(g->nx, g->px, ix), my = part_cells(g->ny, g->py, iy);
    *local = (gi - part_first(g->nx, g->px, ix)) +
             (long)mx * ((gj - part_first(g->ny, g->py, iy)) +
                         (long)my * (gk - part_first(g->nz, g->pz, iz)));
    return ix + g->px * (iy + g->py * iz);
}
