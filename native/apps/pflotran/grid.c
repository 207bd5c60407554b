/* The structured grid, cut into equal boxes (one per rank), and its ghost plan. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include "pflotran.h"

/* Faces cut by a px x py x pz rank grid (the messages' total size, up to a factor). */
static double cut_faces(int nx, int ny, int nz, int px, int py, int pz)
{
    return (double)(px - 1) * ny * nz + (double)(py - 1) * nx * nz + (double)(pz - 1) * nx * ny;
}

static bool fits(int n, int p, int wanted) { return n % p == 0 && (!wanted || p == wanted); }

/* Rank counts up to 64 that split nx x ny x nz evenly, for the error message. */
static void workable_ranks(int nx, int ny, int nz, char *out, int size)
{
    int used = 0, shown = 0;
    out[0] = '\0';
    for (int p = 1; p <= 64 && used < size; p++) {
        bool ok = false;
        for (int a = 1; a <= p && !ok; a++)
            for (int b = 1; a * b <= p && !ok; b++)
                if (p % (a * b) == 0)
                    ok = nx % a == 0 && ny % b == 0 && nz % (p / (a * b)) == 0;
        if (ok)
            used += snprintf(out + used, size - used, "%s%d", shown++ ? ", " : "", p);
    }
}

void grid_create(grid *g, int nx, int ny, int nz, int px, int py, int pz)
{
    int ranks = esm_ranks(), rank = esm_rank();
    if ((px && nx % px) || (py && ny % py) || (pz && nz % pz))
        esm_fail("the %dx%dx%d grid cannot be cut into %dx%dx%d equal boxes (each of --px, "
                 "--py, --pz must divide the cells along its direction): change them or the grid",
                 nx, ny, nz, px ? px : 1, py ? py : 1, pz ? pz : 1);
    if (px && py && pz && px * py * pz != ranks)
        esm_fail("--px %d --py %d --pz %d makes %d boxes for %d ranks: their product must be the "
                 "number of ranks", px, py, pz, px * py * pz, ranks);
    double best = -1;
    int bx = 0, by = 0, bz = 0;
    for (int a = 1; a <= ranks; a++) /* every factorisation a b c = ranks that divides evenly */
        for (int b = 1; a * b <= ranks; b++) {
            if (ranks % (a * b))
                continue;
            int c = ranks / (a * b);
            if (!fits(nx, a, px) || !fits(ny, b, py) || !fits(nz, c, pz))
                continue;
            double cost = cut_faces(nx, ny, nz, a, b, c);
            if (best < 0 || cost < best || (cost == best && c > bz)) { /* ties: cut z first */
                best = cost;
                bx = a, by = b, bz = c;
            }
        }
    if (best < 0 && (px || py || pz))
        esm_fail("no rank grid with --px %d --py %d --pz %d (0: free) cuts the %dx%dx%d grid "
                 "evenly over %d ranks: change them, or leave them 0 to let the ranks be placed",
                 px, py, pz, nx, ny, nz, ranks);
    if (best < 0) {
        char workable[400];
        workable_ranks(nx, ny, nz, workable, sizeof workable);
        esm_fail("the %dx%dx%d grid cannot be cut evenly over %d ranks (the ranks along each "
                 "direction must divide its cells): run on one of %s ranks, or choose --nx, "
                 "--ny, --nz divisible by them", nx, ny, nz, ranks, workable);
    }
    *g = (grid){.nx = nx, .ny = ny, .nz = nz, .px = bx, .py = by, .pz = bz};
    g->ix = rank % bx;
    g->iy = rank / bx % by;
    g->iz = rank / (bx * by);
    g->mx = nx / bx, g->my = ny / by, g->mz = nz / bz;
    g->ncells = (long)g->mx * g->my * g->mz;
    g->i0 = g->ix * g->mx, g->j0 = g->iy * g->my, g->k0 = g->iz * g->mz;
    g->width[0] = 1.0 / nx, g->width[1] = 1.0 / ny, g->width[2] = 1.0 / nz;
    int count[3] = {bx, by, bz};
    for (int f = 0; f < FACES; f++) {
        int axis = f / 2, step = f % 2 ? 1 : -1, there[3] = {g->ix, g->iy, g->iz};
        there[axis] += step;
        g->neighbour[f] = there[axis] < 0 || there[axis] >= count[axis]
                              ? -1 : there[0] + bx * (there[1] + by * there[2]);
    }
    /* Ghost plan: for each face with a neighbour, this rank sends its layer of cells on that
     * face and receives the neighbour's layer facing it, both in the face's natural order. */
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
                    bool on = (f == WEST || f == EAST) ? i == i_at
                            : (f == SOUTH || f == NORTH) ? j == j_at : k == k_at;
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
    g->scatter = esm_scatter_create(spec);
}

void grid_free(grid *g)
{
    esm_scatter_free(g->scatter);
    g->scatter = NULL;
}

long grid_face_index(const grid *g, int face, int i, int j, int k)
{
    switch (face) {
    case WEST: case EAST: return j + (long)g->my * k;
    case SOUTH: case NORTH: return i + (long)g->mx * k;
    default: return i + (long)g->mx * j;
    }
}

long grid_global_cell(const grid *g, long c)
{
    int i = (int)(c % g->mx), j = (int)(c / g->mx % g->my), k = (int)(c / ((long)g->mx * g->my));
    return (g->i0 + i) + (long)g->nx * ((g->j0 + j) + (long)g->ny * (g->k0 + k));
}

int grid_owner(const grid *g, int gi, int gj, int gk)
{
    return gi / g->mx + g->px * (gj / g->my + g->py * (gk / g->mz));
}
