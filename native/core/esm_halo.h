/* esm_halo.h: halo exchange, with two engines (POP's and HYCOM's way):
 *
 *   ESM_HALO_ISEND       each update posts MPI_Irecv and MPI_Isend to every neighbour rank and
 *                        completes them with one MPI_Waitall;
 *   ESM_HALO_PERSISTENT  MPI_Recv_init / MPI_Send_init once when the plan is made, then one
 *                        MPI_Startall and one MPI_Waitall per update.
 *
 * A plan lists, for the fields handed to each update, the runs of contiguous doubles this rank
 * sends to each neighbour rank, those it receives, those it copies between its own blocks, and
 * halo points it sets to zero (those facing a dropped land block or a closed edge of the
 * domain: every field is zero on land). Everything bound for one rank travels in ONE message
 * per update, whatever the number of blocks and fields (as POP's boundary module does).
 * No MPI call is made for a rank without remote neighbours.
 *
 * Block plans come from a decomposition (esm_halo_blocks); plans for other layouts, such as
 * POP's compressed 1D ocean-point vectors, from explicit runs (esm_halo_spec_*).
 *
 * Wide halos (HYCOM): allocate the layout with a halo of width w, let kernels compute into
 * the halo over a shrinking margin, and exchange only when the margin is used up: fewer,
 * larger messages. esm_region keeps that book. */
#ifndef ESM_HALO_H
#define ESM_HALO_H
#include "esm_decomp.h"

/* How one block-decomposed field is stored on a rank: the rank's blocks one after another,
 * each with a halo of width `halo` around its bx x by interior, over nz levels. */
typedef struct esm_layout {
    int halo;          /* halo width allocated around each block */
    int sx, sy;        /* bx + 2 halo, by + 2 halo */
    int nz;            /* levels */
    long stride_j;     /* doubles from a row to the next */
    long stride_k;     /* doubles from a level to the next */
    long block_size;   /* doubles per block */
} esm_layout;

/* Levels outermost, [block][k][j][i] (HYCOM's and POP's Fortran order). */
esm_layout esm_layout_levels_outer(const esm_decomp *d, int halo, int nz);
/* Levels inside rows, [block][j][k][i]: the columns of a row are contiguous (column physics). */
esm_layout esm_layout_levels_inner(const esm_decomp *d, int halo, int nz);

/* Offset of point (i, j, k) of local block lb; i, j from -halo to bx-1+halo. */
static inline long esm_at(const esm_layout *l, int lb, int i, int j, int k)
{
    return lb * l->block_size + (long)(j + l->halo) * l->stride_j + (long)k * l->stride_k +
           (i + l->halo);
}

/* Doubles per field on a rank with `nlocal` blocks. */
long esm_layout_doubles(const esm_layout *l, int nlocal);

typedef enum { ESM_HALO_ISEND, ESM_HALO_PERSISTENT } esm_halo_engine;

/* "isend" or "persistent" (the command-line names). */
esm_halo_engine esm_halo_engine_named(const char *name);

typedef struct esm_halo esm_halo;

/* A plan exchanging the outer `width` halo points (1 <= width <= layout->halo) of `nfields`
 * fields stored by `layout`. A width beyond the allocated halo or wider than a block ends the
 * run with a clear message. Collective. */
esm_halo *esm_halo_blocks(const esm_decomp *d, const esm_layout *layout, int nfields, int width,
                          esm_halo_engine engine);

/* Plans from explicit runs (offsets into each field). Runs for one peer are sent in the order
 * given; the receiver lists its runs in the same order. The same spec makes a VecScatter-style
 * plan (esm_scatter.h). */
typedef struct esm_halo_spec esm_halo_spec;
esm_halo_spec *esm_halo_spec_new(void);
void esm_halo_spec_send(esm_halo_spec *s, int rank, long offset, int length);
void esm_halo_spec_recv(esm_halo_spec *s, int rank, long offset, int length);
void esm_halo_spec_copy(esm_halo_spec *s, long from, long to, int length);
void esm_halo_spec_zero(esm_halo_spec *s, long offset, int length);
/* Make the plan (collective) and free the spec. `width` is only recorded. */
esm_halo *esm_halo_create(esm_halo_spec *s, int nfields, int width, esm_halo_engine engine);

/* Exchange: fields[0 .. nfields-1], each laid out as when the plan was made. */
void esm_halo_update(esm_halo *h, double *const fields[]);
/* The same in two halves, to overlap computation on the interior with the messages. */
void esm_halo_begin(esm_halo *h, double *const fields[]);
void esm_halo_end(esm_halo *h, double *const fields[]);

int esm_halo_width(const esm_halo *h);
int esm_halo_peers(const esm_halo *h);       /* neighbour ranks: messages sent per update */
long esm_halo_bytes(const esm_halo *h);      /* bytes sent to other ranks per update */
void esm_halo_free(esm_halo *h);

/* Book-keeping for wide halos (HYCOM's margins): which halo rings of an array hold valid
 * values, per side. An array is valid over i in [-west, ni-1+east], j in [-south, nj-1+north]
 * of every block. A kernel that reads input X at offsets di in [di0, di1], dj in [dj0, dj1]
 * can compute its output over esm_region_after(X, di0, di1, dj0, dj1), met over all its
 * inputs; when that region no longer covers the interior (esm_region_covers), exchange. */
typedef struct esm_region {
    int west, east, south, north;
} esm_region;

static inline esm_region esm_region_full(int width)
{
    return (esm_region){width, width, width, width};
}
static inline esm_region esm_region_after(esm_region x, int di0, int di1, int dj0, int dj1)
{
    return (esm_region){x.west + di0, x.east - di1, x.south + dj0, x.north - dj1};
}
static inline esm_region esm_region_meet(esm_region a, esm_region b)
{
    return (esm_region){a.west < b.west ? a.west : b.west, a.east < b.east ? a.east : b.east,
                        a.south < b.south ? a.south : b.south,
                        a.north < b.north ? a.north : b.north};
}
static inline int esm_region_covers(esm_region r)
{
    return r.west >= 0 && r.east >= 0 && r.south >= 0 && r.north >= 0;
}
#endif
