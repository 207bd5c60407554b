/* Peer: one MPI_Alltoallw with subarray datatypes, what a user of plain MPI would write. Set-up
 * (its "store") intersects this rank's blocks with every rank's, O(P), and builds one subarray
 * type per overlapping peer over the 4D local bundle (field, k, j, i); the run is one call, the
 * rank's own overlap included. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

struct peer {
    int nranks;
    int *counts[2], *displs[2];
    MPI_Datatype *types[2];
};

static MPI_Datatype mpi_type_of(esm_type t)
{
    return t == ESM_DOUBLE  ? MPI_DOUBLE
           : t == ESM_FLOAT ? MPI_FLOAT
           : t == ESM_INT32 ? MPI_INT32_T
                            : MPI_INT64_T;
}

/* The part `o` of the local block `k` of a bundle of nfields, as a subarray (C order: field slowest). */
static MPI_Datatype subarray(const bench *b, const block *k, const block *o)
{
    int sizes[4] = {b->nfields}, subsizes[4] = {b->nfields}, starts[4] = {0};
    for (int d = 0; d < 3; d++) {
        sizes[3 - d] = (int)(k->hi[d] - k->lo[d]);
        subsizes[3 - d] = (int)(o->hi[d] - o->lo[d]);
        starts[3 - d] = (int)(o->lo[d] - k->lo[d]);
    }
    MPI_Datatype t;
    MPI_Type_create_subarray(4, sizes, subsizes, starts, MPI_ORDER_C, mpi_type_of(b->type), &t);
    MPI_Type_commit(&t);
    return t;
}

static int setup(const bench *b, peer **out, char *why, size_t why_size)
{
    peer *p = calloc(1, sizeof *p);
    p->nranks = b->nranks;
    for (int s = 0; s < 2; s++) {
        p->counts[s] = calloc(b->nranks, sizeof(int));
        p->displs[s] = calloc(b->nranks, sizeof(int));
        p->types[s] = malloc(b->nranks * sizeof(MPI_Datatype));
    }
    for (int q = 0; q < b->nranks; q++) {
        block theirs_dst = block_of(b, b->dst_parts, q), theirs_src = block_of(b, b->src_parts, q),
              o;
        p->types[0][q] = p->types[1][q] = MPI_BYTE;
        if (intersect(&b->src_block, &theirs_dst, &o)) {
            p->types[0][q] = subarray(b, &b->src_block, &o);
            p->counts[0][q] = 1;
        }
        if (intersect(&b->dst_block, &theirs_src, &o)) {
            p->types[1][q] = subarray(b, &b->dst_block, &o);
            p->counts[1][q] = 1;
        }
    }
    *out = p;
    (void)why, (void)why_size;
    return 0;
}

static int run(const bench *b, peer *p)
{
    return MPI_Alltoallw(b->src, p->counts[0], p->displs[0], p->types[0], b->dst, p->counts[1],
                         p->displs[1], p->types[1], b->comm) != MPI_SUCCESS;
}

static void destroy(peer *p)
{
    if (!p)
        return;
    for (int s = 0; s < 2; s++) {
        for (int q = 0; q < p->nranks; q++)
            if (p->counts[s][q])
                MPI_Type_free(&p->types[s][q]);
        free(p->counts[s]);
        free(p->displs[s]);
        free(p->types[s]);
    }
    free(p);
}

static const char *unavailable(const bench *b)
{
    for (int d = 0; d < 3; d++)
        if (b->dims[d] > 0x7fffffff)
            return "the grid is over 2^31 points in a dimension (subarray sizes are int)";
    return NULL;
}

const peer_ops alltoallw_peer = {.name = "alltoallw",
                                 .setup = setup,
                                 .run = run,
                                 .destroy = destroy,
                                 .unavailable = unavailable};
