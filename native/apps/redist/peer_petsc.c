/* Peer: PETSc VecScatter (PetscSF inside), what a PETSc user would write. The two bundles are
 * wrapped as PETSc vectors without copying (VecCreateMPIWithArray); set-up (its "store") lists,
 * for every destination entry, the source entry it comes from (ISCreateGeneral) and creates the
 * scatter; the run is VecScatterBegin + VecScatterEnd. Built only where PETSc is found (the
 * Debian PETSc is built on Debian Open MPI); elsewhere the stub at the end says why. */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

#ifdef ESM_HAVE_PETSC
#include <petscvec.h>

struct peer {
    Vec x, y;
    VecScatter scatter;
};

#define TRY(call)                                                                                  \
    do {                                                                                           \
        PetscErrorCode e_ = (call);                                                                \
        if (e_) {                                                                                  \
            snprintf(why, why_size, "%s failed with PETSc error %d", #call, (int)e_);              \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static void start(const bench *b)
{
    (void)b;
    PetscInitializeNoArguments();
}
static void stop(void)
{
    PetscFinalize();
}

static const char *unavailable(const bench *b)
{
    if (b->type != ESM_DOUBLE)
        return "PETSc vectors hold PetscScalar, a double here: use --type double";
    double entries = (double)b->dims[0] * b->dims[1] * b->dims[2] * b->nfields;
    if (entries > (double)PETSC_MAX_INT)
        return "the bundle has over 2^31 entries and this PETSc has 32-bit indices";
    return NULL;
}

/* For each coordinate along dimension d: its part and its offset in that part's block. */
static void parts_along(const bench *b, const int parts[3], int d, int *part, int64_t *offset)
{
    int p = 0;
    for (int64_t g = 0; g < b->dims[d]; g++) {
        while (b->dims[d] * (p + 1) / parts[d] <= g)
            p++;
        part[g] = p;
        offset[g] = g - b->dims[d] * p / parts[d];
    }
}

static int setup(const bench *b, peer **out, char *why, size_t why_size)
{
    peer *p = calloc(1, sizeof *p);
    *out = p;
    PetscInt nx = (PetscInt)(b->src_count * b->nfields), ny = (PetscInt)(b->dst_count * b->nfields);
    TRY(VecCreateMPIWithArray(b->comm, 1, nx, PETSC_DECIDE, (const PetscScalar *)b->src, &p->x));
    TRY(VecCreateMPIWithArray(b->comm, 1, ny, PETSC_DECIDE, (const PetscScalar *)b->dst, &p->y));
    const PetscInt *ranges;
    PetscInt ystart, yend;
    TRY(VecGetOwnershipRanges(p->x, &ranges));
    TRY(VecGetOwnershipRange(p->y, &ystart, &yend));
    /* where each destination entry comes from, in the source vector's numbering */
    int *part[3];
    int64_t *offset[3];
    for (int d = 0; d < 3; d++) {
        part[d] = malloc(b->dims[d] * sizeof(int));
        offset[d] = malloc(b->dims[d] * sizeof(int64_t));
        parts_along(b, b->src_parts, d, part[d], offset[d]);
    }
    PetscInt *from;
    TRY(PetscMalloc1(ny, &from));
    const block *k = &b->dst_block;
    PetscInt n = 0;
    int last = -1;
    int64_t ex = 0, ey = 0, count = 0;
    for (int f = 0; f < b->nfields; f++)
        for (int64_t gk = k->lo[2]; gk < k->hi[2]; gk++)
            for (int64_t gj = k->lo[1]; gj < k->hi[1]; gj++)
                for (int64_t gi = k->lo[0]; gi < k->hi[0]; gi++) {
                    int q = part[0][gi] +
                            b->src_parts[0] * (part[1][gj] + b->src_parts[1] * part[2][gk]);
                    if (q != last) { /* the source block changes only at block edges */
                        block s = block_of(b, b->src_parts, q);
                        ex = s.hi[0] - s.lo[0], ey = s.hi[1] - s.lo[1], count = block_count(&s),
                        last = q;
                    }
                    int64_t local = offset[0][gi] + ex * (offset[1][gj] + ey * offset[2][gk]);
                    from[n++] = ranges[q] + (PetscInt)(f * count + local);
                }
    for (int d = 0; d < 3; d++)
        free(part[d]), free(offset[d]);
    IS ix, iy;
    TRY(ISCreateGeneral(b->comm, ny, from, PETSC_OWN_POINTER, &ix));
    TRY(ISCreateStride(b->comm, ny, ystart, 1, &iy));
    TRY(VecScatterCreate(p->x, ix, p->y, iy, &p->scatter));
    TRY(ISDestroy(&ix));
    TRY(ISDestroy(&iy));
    return 0;
}

static int run(const bench *b, peer *p)
{
    (void)b;
    return VecScatterBegin(p->scatter, p->x, p->y, INSERT_VALUES, SCATTER_FORWARD) ||
           VecScatterEnd(p->scatter, p->x, p->y, INSERT_VALUES, SCATTER_FORWARD);
}

static void destroy(peer *p)
{
    if (!p)
        return;
    if (p->scatter)
        VecScatterDestroy(&p->scatter);
    if (p->x)
        VecDestroy(&p->x);
    if (p->y)
        VecDestroy(&p->y);
    free(p);
}

#else /* no PETSc in this build */

#ifndef ESM_PETSC_WHY
#define ESM_PETSC_WHY "PETSc was not found when this stack was built"
#endif

static void start(const bench *b)
{
    (void)b;
}
static void stop(void) {}
static const char *unavailable(const bench *b)
{
    (void)b;
    return ESM_PETSC_WHY;
}
static int setup(const bench *b, peer **out, char *why, size_t why_size)
{
    (void)b, (void)out;
    snprintf(why, why_size, "%s", ESM_PETSC_WHY);
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

#endif

const peer_ops petsc_peer = {.name = "petsc",
                             .setup = setup,
                             .run = run,
                             .destroy = destroy,
                             .unavailable = unavailable,
                             .start = start,
                             .stop = stop};
