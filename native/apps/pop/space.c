/* The two layouts of the barotropic vectors: POP 2's blocks with halos, and POPperf's
 * compressed 1D vector of ocean points. Both apply the operator with the same products in
 * the same order and sum dot products block by block in the same order: same bits. */
#include <stdlib.h>
#include <string.h>
#include "barotropic.h"

/* Sum count pairs: partial[block * count + k] in block order, then exactly across ranks. */
static void reduce_partials(space *s, int count, int nblocks, const double *partial, double *out)
{
    esm_sum sums[8] = {{0}};
    for (int b = 0; b < nblocks; b++)
        for (int k = 0; k < count; k++)
            esm_sum_add(&sums[k], partial[b * count + k]);
    esm_timer_stop(&s->compute);
    esm_timer_start(&s->reduce);
    esm_global_sums(sums, count, out);
    esm_timer_stop(&s->reduce);
    s->bytes += count * s->dot_bytes;
}

/* ---- blocks --------------------------------------------------------------------------- */

typedef struct {
    const pop_grid *g;
    const pop_operator *a;
    esm_halo *halo;
    double *partial;
} blocks;

static void blocks_halo(space *s, double *x)
{
    blocks *b = s->data;
    esm_timer_start(&s->halo_time);
    esm_halo_update(b->halo, &x);
    esm_timer_stop(&s->halo_time);
}

static void blocks_apply(space *s, const double *x, double *y)
{
    blocks *b = s->data;
    static const esm_kernel kernel = {.name = "pop.barotropic.apply", .flops = 17}; /* 9 x, 8 + */
    esm_timer_start(&s->compute);
    if (esm_kernel_begin(&kernel, (double)s->owned, s->apply_bytes)) {
        pop_operator_apply(b->a, b->g, x, y);
        esm_kernel_end(&kernel);
    }
    esm_timer_stop(&s->compute);
    s->bytes += s->apply_bytes;
}

static void blocks_dots(space *s, int count, const double *const a[], const double *const c[],
                        double *out)
{
    blocks *bl = s->data;
    const pop_grid *g = bl->g;
    static const esm_kernel kernel = {.name = "pop.barotropic.dots", .flops = 2};
    esm_timer_start(&s->compute);
    if (esm_kernel_begin(&kernel, (double)count * s->owned, count * s->dot_bytes)) {
        for (int lb = 0; lb < g->d.nlocal; lb++) {
            const esm_block *b = &g->d.block[g->d.local[lb]];
            for (int k = 0; k < count; k++) {
                double sum = 0;
                for (int j = 0; j < b->nj; j++) {
                    long p0 = esm_at(&g->l2, lb, 0, j, 0);
                    for (long p = p0; p < p0 + b->ni; p++)
                        sum += a[k][p] * c[k][p];
                }
                bl->partial[lb * count + k] = sum;
            }
        }
        esm_kernel_end(&kernel);
    }
    reduce_partials(s, count, g->d.nlocal, bl->partial, out);
}

static void blocks_from_blocks(space *s, const double *field, double *v)
{
    memcpy(v, field, s->n * sizeof *v);
}

static void blocks_to_blocks(space *s, const double *v, double *field)
{
    memcpy(field, v, s->n * sizeof *v);
}

space *space_blocks(const pop_grid *g, const pop_operator *a, esm_halo_engine engine)
{
    space *s = esm_calloc(1, sizeof *s);
    blocks *b = esm_calloc(1, sizeof *b);
    *b = (blocks){.g = g,
                  .a = a,
                  .halo = esm_halo_blocks(&g->d, &g->l2, 1, 1, engine),
                  .partial = esm_calloc(8 * (g->d.nlocal + 1), sizeof(double))};
    s->data = b;
    s->n = esm_layout_doubles(&g->l2, g->d.nlocal);
    for (int lb = 0; lb < g->d.nlocal; lb++)
        s->owned += (long)g->d.block[g->d.local[lb]].ni * g->d.block[g->d.local[lb]].nj;
    s->dinv = a->dinv;
    s->halo = blocks_halo;
    s->apply = blocks_apply;
    s->dots = blocks_dots;
    s->from_blocks = blocks_from_blocks;
    s->to_blocks = blocks_to_blocks;
    s->apply_bytes = s->owned * 6.0 * sizeof(double); /* a0 an ae ane x, y */
    s->dot_bytes = s->owned * 2.0 * sizeof(double);
    s->compute.name = "compute";
    return s;
}

/* ---- compressed ----------------------------------------------------------------------- */

enum { N, S, E, W, NE, SW, NW, SE, NEIGHBOURS };
static const int step_i[NEIGHBOURS] = {0, 0, 1, -1, 1, -1, -1, 1};
static const int step_j[NEIGHBOURS] = {1, -1, 0, 0, 1, -1, 1, -1};

typedef struct {
    const pop_grid *g;
    long owned, ghosts;      /* slots: owned points, then ghosts, then one zero slot */
    double *c0, *c[NEIGHBOURS];
    int *at[NEIGHBOURS];     /* slot of each neighbour */
    long *block_start;       /* owned points of local block lb: [start[lb], start[lb+1]) */
    long *source;            /* l2 offset of each owned point */
    int nblocks;
    esm_halo *halo;
    double *partial;
} compressed;

typedef struct {
    int rank;
    long gid;
    long slot;
} request;

static int by_rank_then_gid(const void *x, const void *y)
{
    const request *a = x, *b = y;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return (a->gid > b->gid) - (a->gid < b->gid);
}

static void compressed_halo(space *s, double *x)
{
    compressed *c = s->data;
    esm_timer_start(&s->halo_time);
    esm_halo_update(c->halo, &x);
    esm_timer_stop(&s->halo_time);
}

/* The compressed operator's loop: gathers through the neighbour slots. */
ESM_SIMD static void
compressed_rows(long n, const double *restrict c0, const double *restrict cn,
                const double *restrict cs, const double *restrict ce, const double *restrict cw,
                const double *restrict cne, const double *restrict csw, const double *restrict cnw,
                const double *restrict cse, const int *restrict an, const int *restrict as,
                const int *restrict ae, const int *restrict aw, const int *restrict ane,
                const int *restrict asw, const int *restrict anw, const int *restrict ase,
                const double *restrict x, double *restrict y)
{
    for (long p = 0; p < n; p++) /* the block operator's products, in its order */
        y[p] = c0[p] * x[p] + cn[p] * x[an[p]] + cs[p] * x[as[p]] + ce[p] * x[ae[p]] +
               cw[p] * x[aw[p]] + cne[p] * x[ane[p]] + csw[p] * x[asw[p]] + cnw[p] * x[anw[p]] +
               cse[p] * x[ase[p]];
}

static void compressed_apply(space *s, const double *x, double *y)
{
    const compressed *c = s->data;
    static const esm_kernel kernel = {.name = "pop.barotropic.apply_compressed", .flops = 17};
    esm_timer_start(&s->compute);
    if (esm_kernel_begin(&kernel, (double)c->owned, s->apply_bytes)) {
        compressed_rows(c->owned, c->c0, c->c[N], c->c[S], c->c[E], c->c[W], c->c[NE], c->c[SW],
                        c->c[NW], c->c[SE], c->at[N], c->at[S], c->at[E], c->at[W], c->at[NE],
                        c->at[SW], c->at[NW], c->at[SE], x, y);
        esm_kernel_end(&kernel);
    }
    esm_timer_stop(&s->compute);
    s->bytes += s->apply_bytes;
}

static void compressed_dots(space *s, int count, const double *const a[], const double *const b[],
                            double *out)
{
    compressed *c = s->data;
    static const esm_kernel kernel = {.name = "pop.barotropic.dots_compressed", .flops = 2};
    esm_timer_start(&s->compute);
    if (esm_kernel_begin(&kernel, (double)count * c->owned, count * s->dot_bytes)) {
        for (int lb = 0; lb < c->nblocks; lb++)
            for (int k = 0; k < count; k++) {
                double sum = 0;
                for (long p = c->block_start[lb]; p < c->block_start[lb + 1]; p++)
                    sum += a[k][p] * b[k][p];
                c->partial[lb * count + k] = sum;
            }
        esm_kernel_end(&kernel);
    }
    reduce_partials(s, count, c->nblocks, c->partial, out);
}

static void compressed_from_blocks(space *s, const double *field, double *v)
{
    compressed *c = s->data;
    memset(v, 0, s->n * sizeof *v);
    for (long p = 0; p < c->owned; p++)
        v[p] = field[c->source[p]];
}

static void compressed_to_blocks(space *s, const double *v, double *field)
{
    compressed *c = s->data;
    memset(field, 0, esm_layout_doubles(&c->g->l2, c->g->d.nlocal) * sizeof *field);
    for (long p = 0; p < c->owned; p++)
        field[c->source[p]] = v[p];
}

space *space_compressed(const pop_grid *g, const pop_operator *a, esm_halo_engine engine)
{
    const esm_decomp *d = &g->d;
    const esm_layout *l = &g->l2;
    compressed *c = esm_calloc(1, sizeof *c);
    c->g = g;
    c->nblocks = d->nlocal;
    c->block_start = esm_calloc(d->nlocal + 1, sizeof *c->block_start);

    /* Slots of the rank's ocean points: block by block, row by row. */
    long n2 = esm_layout_doubles(l, d->nlocal);
    long *slot_of = esm_calloc(n2, sizeof *slot_of); /* l2 offset -> slot, or -1 */
    for (long p = 0; p < n2; p++)
        slot_of[p] = -1;
    for (int lb = 0; lb < d->nlocal; lb++) {
        const esm_block *b = &d->block[d->local[lb]];
        c->block_start[lb] = c->owned;
        for (int j = 0; j < b->nj; j++)
            for (int i = 0; i < b->ni; i++)
                if (g->kmt[esm_at(l, lb, i, j, 0)] > 0)
                    slot_of[esm_at(l, lb, i, j, 0)] = c->owned++;
    }
    c->block_start[d->nlocal] = c->owned;
    c->source = esm_calloc(c->owned + 1, sizeof *c->source);
    c->c0 = esm_calloc(c->owned + 1, sizeof(double));
    for (int n = 0; n < NEIGHBOURS; n++) {
        c->c[n] = esm_calloc(c->owned + 1, sizeof(double));
        c->at[n] = esm_calloc(c->owned + 1, sizeof(int));
    }

    /* Neighbours: an own slot, a ghost (owned elsewhere), or the zero slot (land). */
    long nreq = 0, capacity = 1024;
    request *ghost = esm_calloc(capacity, sizeof *ghost), *send = NULL;
    long nsend = 0, send_capacity = 1024;
    send = esm_calloc(send_capacity, sizeof *send);
    const long sj = l->stride_j;
    for (int lb = 0; lb < d->nlocal; lb++) {
        const esm_block *b = &d->block[d->local[lb]];
        for (int j = 0; j < b->nj; j++)
            for (int i = 0; i < b->ni; i++) {
                long p = esm_at(l, lb, i, j, 0), slot = slot_of[p];
                if (slot < 0)
                    continue;
                c->source[slot] = p;
                c->c0[slot] = a->a0[p];
                const double coef[NEIGHBOURS] = {a->an[p],      a->an[p - sj], a->ae[p],
                                                 a->ae[p - 1],  a->ane[p],     a->ane[p - sj - 1],
                                                 a->ane[p - 1], a->ane[p - sj]};
                for (int n = 0; n < NEIGHBOURS; n++) {
                    c->c[n][slot] = coef[n];
                    int ni = i + step_i[n], nj = j + step_j[n], gi, gj;
                    long q = esm_at(l, lb, ni, nj, 0);
                    c->at[n][slot] = -1; /* the zero slot, fixed below */
                    if (g->kmt[q] == 0 || !esm_decomp_global(d, b, ni, nj, &gi, &gj))
                        continue;
                    const esm_block *nb =
                        &d->block[d->index_of[gi / d->bx + d->nbx * (gj / d->by)]];
                    if (nb->owner == d->rank) {
                        c->at[n][slot] =
                            (int)slot_of[esm_at(l, nb->local, gi - nb->i0, gj - nb->j0, 0)];
                        continue;
                    }
                    long gid = gi + (long)d->nx * gj,
                         mine = (b->i0 + i) + (long)d->nx * (b->j0 + j);
                    if (nreq == capacity)
                        ghost = esm_realloc(ghost, (capacity *= 2) * sizeof *ghost);
                    /* the ghost's slot is not known yet: remember who asks (slot, direction) */
                    ghost[nreq++] = (request){nb->owner, gid, slot * NEIGHBOURS + n};
                    if (nsend == send_capacity)
                        send = esm_realloc(send, (send_capacity *= 2) * sizeof *send);
                    send[nsend++] = (request){nb->owner, mine, slot};
                }
            }
    }
    /* Ghost slots: one per distinct (owner, point), ordered by owner then global index. */
    qsort(ghost, nreq, sizeof *ghost, by_rank_then_gid);
    esm_halo_spec *spec = esm_halo_spec_new();
    for (long r = 0; r < nreq; r++) {
        bool fresh =
            r == 0 || ghost[r].rank != ghost[r - 1].rank || ghost[r].gid != ghost[r - 1].gid;
        if (fresh) {
            esm_halo_spec_recv(spec, ghost[r].rank, c->owned + c->ghosts, 1);
            c->ghosts++;
        }
        long asker = ghost[r].slot / NEIGHBOURS;
        c->at[ghost[r].slot % NEIGHBOURS][asker] = (int)(c->owned + c->ghosts - 1);
    }
    long zero = c->owned + c->ghosts;
    for (int n = 0; n < NEIGHBOURS; n++)
        for (long p = 0; p < c->owned; p++)
            if (c->at[n][p] < 0)
                c->at[n][p] = (int)zero;
    /* What the other ranks need of ours: the same pairs seen from this side, same order. */
    qsort(send, nsend, sizeof *send, by_rank_then_gid);
    for (long r = 0; r < nsend; r++)
        if (r == 0 || send[r].rank != send[r - 1].rank || send[r].gid != send[r - 1].gid)
            esm_halo_spec_send(spec, send[r].rank, send[r].slot, 1);
    esm_halo_spec_zero(spec, zero, 1);
    c->halo = esm_halo_create(spec, 1, 1, engine);
    c->partial = esm_calloc(8 * (d->nlocal + 1), sizeof(double));
    free(ghost);
    free(send);
    free(slot_of);

    space *s = esm_calloc(1, sizeof *s);
    s->data = c;
    s->n = zero + 1;
    s->owned = c->owned;
    s->dinv = esm_calloc(s->n, sizeof(double));
    for (long p = 0; p < s->n; p++)
        s->dinv[p] = p < c->owned ? 1.0 / c->c0[p] : 1.0;
    s->halo = compressed_halo;
    s->apply = compressed_apply;
    s->dots = compressed_dots;
    s->from_blocks = compressed_from_blocks;
    s->to_blocks = compressed_to_blocks;
    /* 9 coefficients, 8 neighbour slots (4 bytes), x (own and gathered, once), y */
    s->apply_bytes = c->owned * (9.0 * sizeof(double) + 8.0 * sizeof(int) + 2.0 * sizeof(double));
    s->dot_bytes = c->owned * 2.0 * sizeof(double);
    return s;
}
