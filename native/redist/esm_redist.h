/* libesmredist: move bundles of fields between two decompositions of one index space.
 *
 * A decomposition (esm_distgrid, after ESMF's DistGrid) says which elements of a global index
 * space each rank holds and in which order it stores them. Three kinds:
 *   - blocks:  a regular block layout (cut points per dimension, one block per rank, blocks
 *              numbered with the first dimension fastest, as ESMF's DELayout); a dimension
 *              with one part is an undistributed one (levels);
 *   - boxes:   one arbitrary box per rank, given by each rank;
 *   - indices: a list of global indices per rank (any order), optionally repeated over
 *              undistributed levels.
 * A rank stores its elements in a dense local array: for blocks and boxes the box with the
 * first dimension fastest; for index lists element q of level k at k * count + q.
 * The global index space is linear with the first dimension fastest: element (i0, i1, ...)
 * is i0 + n0 * (i1 + n1 * (...)). Index lists name elements by that linear index.
 *
 * A route (esm_route_store) is the precomputed plan that moves a bundle of fields (N fields of
 * one type, one array per field) from a source decomposition to a destination one. It holds
 * per-peer run descriptors (offset, length, counts, strides), O(peers) memory:
 *   - blocks to blocks: each rank computes its overlaps locally (O(k log P) for k partners);
 *   - boxes: the boxes are allgathered when the decomposition is created;
 *   - index lists: a distributed directory (rendezvous by global index) with sparse partner
 *     discovery (synchronous sends + non-blocking barrier), never an all-to-all.
 * Storing ends with one small allreduce so that any error reaches every rank.
 *
 * esm_route_run (or esm_route_run_begin / esm_route_run_end around computation) moves the
 * data. Every function returns ESM_OK or an error code; esm_error_message() then says what
 * went wrong and how to fix it. Collective functions (create, store, free of a route) fail on
 * every rank alike, never hang on a user error. Documentation: docs/redist.md. */
#ifndef ESM_REDIST_H
#define ESM_REDIST_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ESM_MAX_DIMS 8

/* Result of every call. */
typedef enum {
    ESM_OK = 0,
    ESM_ERR_ARGUMENT,     /* a bad argument: null pointer, negative size, unknown option */
    ESM_ERR_TILING,       /* a decomposition leaves gaps in or overlaps the index space */
    ESM_ERR_MISMATCH,     /* source and destination disagree: global size, fields, type, ranks */
    ESM_ERR_INCONSISTENT, /* ranks passed different values for an argument that must agree */
    ESM_ERR_UNSUPPORTED, /* valid, but not possible with these objects (e.g. a layout-only decomposition) */
    ESM_ERR_STATE, /* a call out of order: run_end without run_begin, ... */
    ESM_ERR_MEMORY, /* out of memory */
    ESM_ERR_MPI, /* an MPI call failed */
    ESM_ERR_SYSTEM /* a system call failed (single-copy read of a peer's memory) */
} esm_status;

/* Element type of the fields of a bundle. */
typedef enum { ESM_DOUBLE = 0, ESM_FLOAT, ESM_INT32, ESM_INT64 } esm_type;
/* Bytes of one element of the type (0 for a value that is none of them). */
size_t esm_type_bytes(esm_type type);

/* A bundle: `count` fields of one element type, each its own array laid out as its decomposition says. */
typedef struct {
    int count;
    esm_type type;
} esm_fields;

/* How a route runs: ESM_COMM_ASYNC posts MPI_Irecv/MPI_Isend, ESM_COMM_SYNC pairs ranks with
 * MPI_Sendrecv step by step, ESM_COMM_PERSISTENT starts persistent requests made once. */
typedef enum { ESM_COMM_ASYNC = 0, ESM_COMM_SYNC, ESM_COMM_PERSISTENT } esm_comm_mode;

/* What one message carries: ESM_PACK_PET all of a peer's elements (packed), ESM_PACK_XP one
 * overlap box or index run (packed), ESM_PACK_NONE one contiguous run, sent from and received
 * into the fields themselves; ESM_PACK_DATATYPE all of a peer's elements described by an MPI
 * derived datatype (MPI packs). */
typedef enum { ESM_PACK_PET = 0, ESM_PACK_XP, ESM_PACK_NONE, ESM_PACK_DATATYPE } esm_pack_mode;

/* Options of a route; esm_route_options_default() gives the fastest measured (docs/redist.md). */
typedef struct {
    esm_comm_mode comm; /* default ESM_COMM_ASYNC */
    esm_pack_mode pack; /* default ESM_PACK_PET */
    int bundle; /* 1 (default): all fields of a bundle in one message; 0: one field per message */
    int local_direct; /* 1 (default): a rank's own overlap is copied directly; 0: through MPI like any peer */
    int single_copy; /* 1 (default): a rank copies its elements from peers on the same node
                            straight from their fields into its own, one copy, no MPI data message:
                            with memcpy when the sender's fields are in node-shared memory
                            (esm_shared_alloc), else with process_vm_readv (Linux cross-memory
                            attach), else (where neither is allowed) as one packed MPI message.
                            Peers on other nodes use MPI as the other options say.
                            0: MPI messages only. */
} esm_route_options;

typedef struct esm_distgrid esm_distgrid;
typedef struct esm_route esm_route;

/* What a stored route holds and moves per run, on this rank. */
typedef struct {
    int send_peers; /* other ranks this rank sends to */
    int recv_peers; /* other ranks this rank receives from */
    int single_copy_peers; /* of recv_peers, those read directly (single copy) */
    int64_t send_elements; /* elements of one field sent to other ranks */
    int64_t recv_elements; /* elements of one field received from other ranks */
    int64_t local_elements; /* elements of one field this rank keeps (its own overlap) */
    int64_t send_bytes; /* bytes of the whole bundle sent to other ranks per run */
    int64_t recv_bytes; /* bytes of the whole bundle received from other ranks per run */
    int64_t local_bytes; /* bytes of the whole bundle copied within this rank per run */
    int64_t messages; /* MPI data messages this rank sends per run */
    int64_t segments; /* run descriptors held (send, receive, local) */
    int64_t route_bytes; /* memory held by the descriptors */
    esm_route_options options; /* the options in effect */
} esm_route_info;

/* The message of the last error on this thread ("" when none). */
const char *esm_error_message(void);

/* The name of a status code ("ESM_ERR_TILING"). */
const char *esm_status_name(int status);

/* Fill `options` with the defaults (the fastest measured). */
void esm_route_options_default(esm_route_options *options);

/* Create a regular block decomposition of an `ndims`-dimensional index space of `dims`
 * elements, `parts[d]` blocks along dimension d, one block per rank of `comm` (the product of
 * `parts` must equal its size), numbered with the first dimension fastest. `cuts` is NULL for
 * even blocks or holds, per dimension, parts[d] + 1 non-decreasing cut points from 0 to dims[d].
 * Collective over `comm`. With comm == MPI_COMM_NULL it creates a layout only, of product(parts)
 * virtual ranks, for esm_route_store_as (no communication, cannot run). */
int esm_distgrid_create_blocks(MPI_Comm comm, int ndims, const int64_t dims[], const int parts[],
                               const int64_t *const cuts[], esm_distgrid **decomp);

/* Create a decomposition where this rank holds the box [lower, upper) (0-based, upper
 * exclusive; empty boxes allowed) of an `ndims`-dimensional index space of `dims` elements.
 * Collective: allgathers the boxes and checks that they tile the index space. */
int esm_distgrid_create_boxes(MPI_Comm comm, int ndims, const int64_t dims[], const int64_t lower[],
                              const int64_t upper[], esm_distgrid **decomp);

/* Create a decomposition where this rank holds `count` points of a space of `points` points,
 * `indices[q]` being the global point of local element q, repeated over `levels` undistributed
 * levels (element q of level k is global index indices[q] + k * points, stored at k * count + q).
 * Collective; that the lists tile the space is checked when a route is stored. */
int esm_distgrid_create_indices(MPI_Comm comm, int64_t points, int64_t levels, int64_t count,
                                const int64_t indices[], esm_distgrid **decomp);

/* Number of elements of one field this rank holds. */
int esm_distgrid_local_count(const esm_distgrid *decomp, int64_t *count);

/* The box [lower, upper) this rank holds (blocks and boxes); the number of dimensions is returned in *ndims. */
int esm_distgrid_local_box(const esm_distgrid *decomp, int *ndims, int64_t lower[],
                           int64_t upper[]);

/* Global linear index of every local element, in local storage order (local_count values). */
int esm_distgrid_global_indices(const esm_distgrid *decomp, int64_t global[]);

/* Free a decomposition (routes made from it stay valid); sets *decomp to NULL. Local. */
int esm_distgrid_free(esm_distgrid **decomp);

/* Allocate `bytes` (page aligned) for this rank's fields in memory its node's ranks of
 * `decomp`'s communicator can read (a POSIX shared-memory object each, mapped by all of them,
 * reserved at once). Routes with single_copy then copy node peers' elements with memcpy from
 * where they lie, in user space. Collective over the decomposition's communicator. */
int esm_shared_alloc(const esm_distgrid *decomp, size_t bytes, void **ptr);

/* Free memory from esm_shared_alloc (local; the memory goes when its last reader frees it too).
 * Sets *ptr to NULL. */
int esm_shared_free(void **ptr);

/* Store the route moving a bundle from `src` to `dst` (same global index space, same ranks).
 * `src_fields` and `dst_fields` must agree in count and type. `options` NULL means defaults.
 * Collective over the decompositions' communicator. */
int esm_route_store(const esm_distgrid *src, const esm_distgrid *dst, esm_fields src_fields,
                    esm_fields dst_fields, const esm_route_options *options, esm_route **route);

/* Store, without any communication, the route rank `rank` would store between two layout-only
 * block decompositions (created with MPI_COMM_NULL): for store-scaling studies of any number of
 * ranks in one process. The route can be inspected (esm_route_get_info), not run. */
int esm_route_store_as(const esm_distgrid *src, const esm_distgrid *dst, int rank,
                       esm_fields src_fields, esm_fields dst_fields,
                       const esm_route_options *options, esm_route **route);

/* Move the bundle: src[f] and dst[f] are field f's local arrays (count fields). Collective;
 * equal to esm_route_run_begin followed by esm_route_run_end. */
int esm_route_run(esm_route *route, const void *const src[], void *const dst[]);

/* Start moving the bundle. Until esm_route_run_end returns, src must not be modified and dst
 * not read; computation on other data can overlap. Collective. */
int esm_route_run_begin(esm_route *route, const void *const src[], void *const dst[]);

/* Finish the move started by esm_route_run_begin. Collective. */
int esm_route_run_end(esm_route *route);

/* What the route holds and moves on this rank. */
int esm_route_get_info(const esm_route *route, esm_route_info *info);

/* Free a route; sets *route to NULL. Local (a run in progress is finished first). */
int esm_route_free(esm_route **route);

#ifdef __cplusplus
}
#endif

#endif /* ESM_REDIST_H */
