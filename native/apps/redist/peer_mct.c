/* Peer: MCT's Rearranger (the Model Coupling Toolkit, on which CESM's coupler is built), what an
 * MCT user would write: mct_rearranger.f90 holds the Fortran side. Its "store" makes a
 * GlobalSegMap of each layout from this rank's segments (its block's rows of consecutive global
 * points, merged where they touch), the Rearranger between them and the two attribute vectors;
 * the run is one rearrange. MCT keeps fields in its attribute vectors (point by point, field
 * fastest), not in the bundle: around each checked run the bundle is copied in and out,
 * untimed (prepare and deliver). Built only where MCT is found and only for the openmpi stack
 * (Debian's MCT, in liboasis3-dev, is built on Debian Open MPI); elsewhere the stub at the end
 * says why. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

#ifdef ESM_HAVE_MCT

/* mct_rearranger.f90 (ISO_C_BINDING); `comm` is a Fortran communicator handle. */
void esm_mct_start(int comm);
void esm_mct_stop(void);
void *esm_mct_store(int comm, int gsize, int nfields, int nsrc, const int *src_start,
                    const int *src_length, int ndst, const int *dst_start, const int *dst_length);
void esm_mct_run(void *route);
void esm_mct_load(void *route, const void *bundle);
void esm_mct_unload(void *route, void *bundle);
void esm_mct_free(void *route);

struct peer {
    void *route;
};

/* MCT takes Fortran handles: the one MPI call here converts the benchmark's communicator. */
static int fortran_comm(const bench *b)
{
    return (int)MPI_Comm_c2f(b->comm);
}

static void start(const bench *b)
{
    esm_mct_start(fortran_comm(b));
}

static void stop(void)
{
    esm_mct_stop();
}

static const char *unavailable(const bench *b)
{
    if (b->type != ESM_DOUBLE)
        return "MCT's attribute vectors hold reals of its kind FP, a double: use --type double";
    double points = (double)b->dims[0] * b->dims[1] * b->dims[2];
    if (points * b->nfields > INT32_MAX)
        return "the bundle has over 2^31 entries and MCT indexes with default integers";
    return NULL;
}

/* The segments of block k (1-based global start, length), rows along dimension 0 in ascending
 * order, a row merged into the previous one where it continues it; their count. */
static int segments_of(const bench *b, const block *k, int **start, int **length)
{
    int64_t rows = (k->hi[1] - k->lo[1]) * (k->hi[2] - k->lo[2]), row_length = k->hi[0] - k->lo[0];
    *start = malloc((rows ? rows : 1) * sizeof(int));
    *length = malloc((rows ? rows : 1) * sizeof(int));
    int n = 0;
    for (int64_t gk = k->lo[2]; gk < k->hi[2] && row_length > 0; gk++)
        for (int64_t gj = k->lo[1]; gj < k->hi[1]; gj++) {
            int64_t first = 1 + k->lo[0] + b->dims[0] * (gj + b->dims[1] * gk);
            if (n > 0 && (*start)[n - 1] + (int64_t)(*length)[n - 1] == first)
                (*length)[n - 1] += (int)row_length;
            else
                (*start)[n] = (int)first, (*length)[n++] = (int)row_length;
        }
    return n;
}

static int setup(const bench *b, peer **out, char *why, size_t why_size)
{
    (void)why, (void)why_size; /* MCT reports its errors itself and aborts */
    int *src_start, *src_length, *dst_start, *dst_length;
    int nsrc = segments_of(b, &b->src_block, &src_start, &src_length);
    int ndst = segments_of(b, &b->dst_block, &dst_start, &dst_length);
    peer *p = calloc(1, sizeof *p);
    p->route = esm_mct_store(fortran_comm(b), (int)(b->dims[0] * b->dims[1] * b->dims[2]),
                             b->nfields, nsrc, src_start, src_length, ndst, dst_start, dst_length);
    free(src_start), free(src_length), free(dst_start), free(dst_length);
    *out = p;
    return 0;
}

static int run(const bench *b, peer *p)
{
    (void)b;
    esm_mct_run(p->route);
    return 0;
}

static void prepare(const bench *b, peer *p)
{
    esm_mct_load(p->route, b->src);
}

static void deliver(const bench *b, peer *p)
{
    esm_mct_unload(p->route, b->dst);
}

static void destroy(peer *p)
{
    if (!p)
        return;
    if (p->route)
        esm_mct_free(p->route);
    free(p);
}

const peer_ops mct_peer = {.name = "mct",
                           .setup = setup,
                           .run = run,
                           .destroy = destroy,
                           .unavailable = unavailable,
                           .start = start,
                           .stop = stop,
                           .prepare = prepare,
                           .deliver = deliver};

#else /* no MCT in this build */

#ifndef ESM_MCT_WHY
#define ESM_MCT_WHY "MCT was not found when this stack was built"
#endif

static const char *unavailable(const bench *b)
{
    (void)b;
    return ESM_MCT_WHY;
}
static int setup(const bench *b, peer **out, char *why, size_t why_size)
{
    (void)b, (void)out;
    snprintf(why, why_size, "%s", ESM_MCT_WHY);
    return 1;
}
static int run(const bench *b, peer *p)
{
    (void)b, (void)p;
    return 1;
}
static void destroy(peer *p)
{
    (void)p;
}

const peer_ops mct_peer = {
    .name = "mct", .setup = setup, .run = run, .destroy = destroy, .unavailable = unavailable};

#endif
