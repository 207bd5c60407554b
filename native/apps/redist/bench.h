/* redist-bench: what the driver (redist_bench.c), its command line (bench_args.c), fields
 * (bench_fields.c) and the peers (peer_*.c) share. */
#ifndef REDIST_BENCH_H
#define REDIST_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "esm_redist.h"

enum { MAX_REPEATS = 1000, MAX_STORE_RANKS = 64 };
enum { OURS, COPY, ALLTOALLW, PETSC, MCT, METHODS };

/* The command line (bench_args.c). */
typedef struct {
    const char *size;
    int64_t dims[3];
    int steps, repeats, nfields;
    esm_type type;
    int src_parts[3], dst_parts[3];
    esm_route_options options;
    int peers[METHODS]; /* which of alltoallw, petsc, mct */
    const char *peers_text, *mode, *type_text, *comm_text, *pack_text, *bundle_text, *local_text,
        *single_copy_text, *verify_text, *memory_text;
    int verify_each, shared_memory;
    int64_t store_ranks[MAX_STORE_RANKS];
    int n_store_ranks;
} config;

/* Parse the command line for a run on `nranks` ranks (esm_cli.h: one clear error, or --help,
 * ends the run on every rank). */
void bench_parse(int argc, char **argv, config *c, int nranks);

/* The seed's layouts for n ranks (Table 1 and its continuation; else Px1 -> 1xP). */
void seed_layout(int64_t n, int src[3], int dst[3]);

/* A block of the 3D grid: [lo, hi) per dimension, i (dimension 0) fastest. */
typedef struct {
    int64_t lo[3], hi[3];
} block;

/* The grid, its two block layouts and this rank's bundles. */
typedef struct {
    MPI_Comm comm;
    int rank, nranks;
    int64_t dims[3];
    int src_parts[3], dst_parts[3];
    int nfields;
    esm_type type;
    size_t esz;
    block src_block, dst_block;       /* this rank's */
    int64_t src_count, dst_count;     /* elements of one field on this rank */
    void *src, *dst;                  /* bundles: field f at f * count elements */
} bench;

/* Rank q's block of a layout with `parts` even blocks (the library's even cuts). */
block block_of(const bench *b, const int parts[3], int q);

/* Elements of one field in a block. */
int64_t block_count(const block *k);

/* The intersection of two blocks; 0 when empty. */
int intersect(const block *a, const block *b, block *out);

/* The fields (bench_fields.c). Field f at grid point (i, j, k): one wave table per dimension,
 * value t0[i] + (t1[j] + t2[k]), each table a sum of two sine waves whose frequency, amplitude
 * and phase depend on f. */
typedef struct {
    double *t[3];
} waves;

waves make_waves(const bench *b);
void fill_source(const bench *b, const waves *w);
/* The largest error in the destination against the formula, over ranks (NaN: infinite). */
double check_destination(const bench *b, const waves *w);

/* A peer of ours: set up (the "store", timed), run (timed), free. Each returns 0 or fills
 * `why` (one sentence) and returns nonzero. */
typedef struct peer peer;
typedef struct {
    const char *name;
    int (*setup)(const bench *b, peer **state, char *why, size_t why_size);
    int (*run)(const bench *b, peer *state);
    void (*destroy)(peer *state);
    /* Why this peer cannot run here (NULL when it can), asked before any setup. */
    const char *(*unavailable)(const bench *b);
    /* Optional (NULL: none). The library's own start, once after MPI_Init and before any setup,
     * and its end before MPI_Finalize. */
    void (*start)(const bench *b);
    void (*stop)(void);
    /* Optional, for a peer whose fields live in its own storage (MCT's attribute vectors), both
     * untimed and called around each checked run: prepare copies the source bundle in and
     * poisons (NaN) the peer's destination, deliver copies its destination into b->dst. */
    void (*prepare)(const bench *b, peer *state);
    void (*deliver)(const bench *b, peer *state);
} peer_ops;

extern const peer_ops alltoallw_peer;
extern const peer_ops petsc_peer;
extern const peer_ops mct_peer;

#endif
