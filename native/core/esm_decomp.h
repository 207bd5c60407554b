/* esm_decomp.h: a global nx x ny grid cut into bx x by blocks; blocks with no ocean point are
 * dropped (land-block elimination), and the ocean blocks are dealt to ranks along a
 * space-filling curve in contiguous pieces whose block counts differ by at most one (POPperf),
 * by a Cartesian grid of ranks, or in HYCOM's tile order (row by row, contiguous pieces: its
 * patch.input). A rank may own several blocks; every rank knows the whole decomposition.
 *
 * The block size may be chosen for the rank count, as HYCOM's topography tools make a
 * patch.input for a given number of processors: of the tile grids with at least as many ocean
 * tiles as ranks, the one whose busiest rank computes the fewest points, halos included (one
 * tile per rank where the land allows, square rather than long).
 *
 * Blocks at the east and north edges are smaller when nx, ny are not multiples of bx, by.
 *
 * The global tables (blocks, their owners and neighbours) are the same on every rank; given a
 * `shared_key` naming the ocean mask, they are built once and shared when the run is folded
 * (esm_fold.h), so that thousands of simulated ranks neither hold nor rebuild them. */
#ifndef ESM_DECOMP_H
#define ESM_DECOMP_H
#include <stdbool.h>

/* Directions to the 8 neighbours, in the order every halo plan walks them. */
enum { ESM_SW, ESM_S, ESM_SE, ESM_W, ESM_E, ESM_NW, ESM_N, ESM_NE, ESM_DIRECTIONS };
extern const int esm_dir_x[ESM_DIRECTIONS], esm_dir_y[ESM_DIRECTIONS];

typedef enum { ESM_DIST_SFC, ESM_DIST_CARTESIAN, ESM_DIST_PATCH } esm_distribution;

/* The block size: as given (bx, by), chosen for the rank count (bx, by ignored), or as given
 * unless that leaves fewer ocean blocks than ranks. */
typedef enum {
    ESM_BLOCKS_GIVEN,
    ESM_BLOCKS_FOR_RANKS,
    ESM_BLOCKS_GIVEN_OR_FOR_RANKS
} esm_block_choice;

typedef struct esm_block {
    int ib, jb;        /* position in the grid of blocks */
    int i0, j0;        /* global index of its first interior point */
    int ni, nj;        /* interior extent */
    int owner, local;  /* owning rank, and index among that rank's blocks */
    int ocean;         /* ocean points inside */
    int neighbour[ESM_DIRECTIONS]; /* ocean-block index, or -1 (land block or outside) */
} esm_block;

/* Is global point (i, j) ocean? */
typedef bool (*esm_ocean_fn)(int i, int j, const void *context);

typedef struct esm_decomp_params {
    int nx, ny, bx, by;
    bool periodic_x, periodic_y;
    esm_distribution distribution;
    esm_ocean_fn is_ocean;   /* NULL: all ocean */
    const void *context;
    esm_block_choice choice;
    int min_side;            /* chosen blocks: at least this many points a side (default 1) */
    const char *shared_key;  /* names the grid and mask ("pop.kmt.3600x2400x42"): the global
                                tables are shared between folded ranks; NULL: built privately */
} esm_decomp_params;

typedef struct esm_decomp {
    int nx, ny, bx, by, nbx, nby;
    bool periodic_x, periodic_y;
    int nblocks;          /* ocean blocks, in distribution order (curve order for sfc) */
    esm_block *block;
    int land_blocks;      /* blocks dropped */
    int *index_of;        /* ib + nbx*jb -> ocean-block index or -1 */
    int rank, ranks;
    int nlocal;           /* this rank's blocks ... */
    int *local;           /* ... their ocean-block indices, ascending */
    int idle_ranks;       /* ranks without blocks (Cartesian only) */
    int px, py;           /* Cartesian rank grid (0 otherwise) */
    long ocean_points;    /* whole grid */
    long max_rank_points; /* ocean points of the busiest rank */
    int min_blocks, max_blocks; /* blocks of the least and the most loaded rank */
    char method[48];      /* "sfc cinco-hilbert", "cartesian 2x2", "patch 30x34" */
    bool tables_owned;    /* block and index_of are this rank's (else shared: never freed) */
} esm_decomp;

/* Cut (choosing the block size if asked), drop land blocks, distribute. Bad parameters for the
 * rank count (more ranks than ocean blocks, a Cartesian grid that does not fit, no block size
 * that gives every rank a block) end the run with a clear message (collective). */
void esm_decomp_create(esm_decomp *d, const esm_decomp_params *params);
void esm_decomp_free(esm_decomp *d);

/* Global index of block-local point (i, j), wrapped where the grid is periodic; false when
 * it falls outside a non-periodic edge. */
bool esm_decomp_global(const esm_decomp *d, const esm_block *b, int i, int j, int *gi, int *gj);
#endif
