/* redist-bench's blocks and fields: the even block layouts, the sine-wave bundle written into
 * the source and checked in the destination after every run. */
#include <math.h>
#include <stdlib.h>

#include "bench.h"

block block_of(const bench *b, const int parts[3], int q)
{
    block k;
    for (int d = 0; d < 3; d++) {
        int p = q % parts[d];
        q /= parts[d];
        k.lo[d] = b->dims[d] * p / parts[d];
        k.hi[d] = b->dims[d] * (p + 1) / parts[d];
    }
    return k;
}

int64_t block_count(const block *k)
{
    return (k->hi[0] - k->lo[0]) * (k->hi[1] - k->lo[1]) * (k->hi[2] - k->lo[2]);
}

int intersect(const block *a, const block *b, block *out)
{
    for (int d = 0; d < 3; d++) {
        out->lo[d] = a->lo[d] > b->lo[d] ? a->lo[d] : b->lo[d];
        out->hi[d] = a->hi[d] < b->hi[d] ? a->hi[d] : b->hi[d];
        if (out->lo[d] >= out->hi[d])
            return 0;
    }
    return 1;
}

waves make_waves(const bench *b)
{
    waves w;
    const double two_pi = 6.283185307179586;
    for (int d = 0; d < 3; d++) {
        int64_t n = b->dims[d];
        w.t[d] = malloc((size_t)b->nfields * n * sizeof(double));
        for (int f = 0; f < b->nfields; f++)
            for (int64_t x = 0; x < n; x++) {
                double u = (double)x / (double)n;
                w.t[d][f * n + x] =
                    (1.0 + 0.25 * f) * sin(two_pi * (0.37 + 0.11 * f + 0.05 * d) * u + 0.3 * d) +
                    0.5 / (1 + d) * sin(two_pi * (2.3 + 0.7 * f + 1.3 * d) * u + 0.1 * f);
            }
    }
    return w;
}

static void put_value(esm_type t, void *a, int64_t i, double v)
{
    switch (t) {
    case ESM_DOUBLE:
        ((double *)a)[i] = v;
        break;
    case ESM_FLOAT:
        ((float *)a)[i] = (float)v;
        break;
    case ESM_INT32:
        ((int32_t *)a)[i] = (int32_t)lrint(v * 1e6);
        break;
    case ESM_INT64:
        ((int64_t *)a)[i] = (int64_t)llrint(v * 1e12);
        break;
    }
}

/* |stored - expected| in the stored type's units; infinite for NaN (an element never written). */
static double value_error(esm_type t, const void *a, int64_t i, double v)
{
    double e;
    switch (t) {
    case ESM_DOUBLE:
        e = fabs(((const double *)a)[i] - v);
        break;
    case ESM_FLOAT:
        e = fabs((double)((const float *)a)[i] - (double)(float)v);
        break;
    case ESM_INT32:
        e = fabs((double)((const int32_t *)a)[i] - (double)(int32_t)lrint(v * 1e6));
        break;
    default:
        e = fabs((double)((const int64_t *)a)[i] - (double)(int64_t)llrint(v * 1e12));
        break;
    }
    return e == e ? e : INFINITY;
}

/* Calls the body for every element of field f of a block laid out densely (i fastest). */
#define FOR_BLOCK(b, w, k, f, idx, v, body)                                                        \
    do {                                                                                           \
        int64_t idx = (int64_t)(f) * block_count(k);                                               \
        const double *t0 = (w)->t[0] + (f) * (b)->dims[0], *t1 = (w)->t[1] + (f) * (b)->dims[1],   \
                     *t2 = (w)->t[2] + (f) * (b)->dims[2];                                         \
        for (int64_t gk = (k)->lo[2]; gk < (k)->hi[2]; gk++)                                       \
            for (int64_t gj = (k)->lo[1]; gj < (k)->hi[1]; gj++) {                                 \
                double base = t1[gj] + t2[gk];                                                     \
                for (int64_t gi = (k)->lo[0]; gi < (k)->hi[0]; gi++, idx++) {                      \
                    double v = t0[gi] + base;                                                      \
                    body;                                                                          \
                }                                                                                  \
            }                                                                                      \
    } while (0)

void fill_source(const bench *b, const waves *w)
{
    for (int f = 0; f < b->nfields; f++)
        FOR_BLOCK(b, w, &b->src_block, f, idx, v, put_value(b->type, b->src, idx, v));
}

double check_destination(const bench *b, const waves *w)
{
    double worst = 0;
    for (int f = 0; f < b->nfields; f++) {
        if (b->type == ESM_DOUBLE) {
            const double *d = b->dst;
            FOR_BLOCK(b, w, &b->dst_block, f, idx, v, {
                double e = fabs(d[idx] - v);
                if (!(e <= worst))
                    worst = e == e ? e : INFINITY;
            });
        } else {
            FOR_BLOCK(b, w, &b->dst_block, f, idx, v, {
                double e = value_error(b->type, b->dst, idx, v);
                if (e > worst)
                    worst = e;
            });
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, b->comm);
    return worst;
}
