/* Reproducible sums (exact integer limbs), max/min, bitwise checksums. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "esm_internal.h"
#include "esm_sum.h"

enum { BITS = 46, TOP = 162, CARRY_EVERY = 1 << 16 };
#define LIMB ((int64_t)1 << BITS)

/* Carry so that limbs 1.. are in [0, 2^46) and limb 0 holds the sign and the rest. */
static void carry(int64_t *limb)
{
    for (int i = ESM_SUM_LIMBS - 1; i > 0; i--) {
        int64_t c = limb[i] >> BITS; /* floor division (arithmetic shift) */
        limb[i] -= c * LIMB;
        limb[i - 1] += c;
    }
}

void esm_sum_add(esm_sum *s, double x)
{
    if (!(fabs(x) < 0x1p162)) { /* also NaN */
        s->bad = 1;
        return;
    }
    double y = x * 0x1p-116; /* |y| < 2^46: limb 0 holds the bits of weight 2^116 .. 2^161 */
    for (int i = 0; i < ESM_SUM_LIMBS; i++) {
        int64_t part = (int64_t)y;   /* truncation: exact, |part| < 2^46 */
        s->limb[i] += part;
        y = (y - (double)part) * 0x1p46; /* the fraction, exactly, scaled to the next limb */
    }
    if (++s->adds == CARRY_EVERY) {
        carry(s->limb);
        s->adds = 0;
    }
}

void esm_sum_add_array(esm_sum *s, const double *x, long n)
{
    for (long k = 0; k < n; k++)
        esm_sum_add(s, x[k]);
}

/* The double nearest (within an ulp or so) to the carried limbs. A negative sum is turned
 * positive first: with every limb >= 0, adding from the smallest loses nothing to cancellation. */
static double value_of(const int64_t *carried, int bad)
{
    if (bad)
        return NAN;
    int64_t limb[ESM_SUM_LIMBS];
    int negative = carried[0] < 0;
    for (int i = 0; i < ESM_SUM_LIMBS; i++)
        limb[i] = negative ? -carried[i] : carried[i];
    carry(limb);
    double v = 0;
    for (int i = ESM_SUM_LIMBS - 1; i >= 0; i--) /* smallest first */
        v += ldexp((double)limb[i], TOP - BITS * (i + 1));
    return negative ? -v : v;
}

double esm_sum_value(const esm_sum *s)
{
    int64_t limb[ESM_SUM_LIMBS];
    memcpy(limb, s->limb, sizeof limb);
    carry(limb);
    return value_of(limb, s->bad);
}

void esm_global_sums(const esm_sum *sums, int n, double *out)
{
    enum { WIDTH = ESM_SUM_LIMBS + 1 };
    int64_t local[16 * WIDTH] = {0}, total[16 * WIDTH] = {0};
    int64_t *in = n <= 16 ? local : esm_calloc((size_t)n * WIDTH, sizeof *in);
    int64_t *sum = n <= 16 ? total : esm_calloc((size_t)n * WIDTH, sizeof *sum);
    for (int k = 0; k < n; k++) {
        memcpy(&in[k * WIDTH], sums[k].limb, sizeof sums[k].limb);
        carry(&in[k * WIDTH]); /* each rank adds < 2^46 per limb: no overflow below 2^16 ranks */
        in[k * WIDTH + ESM_SUM_LIMBS] = sums[k].bad;
    }
    esm_allreduce(in, sum, n * WIDTH, MPI_INT64_T, MPI_SUM);
    for (int k = 0; k < n; k++) {
        int64_t *limb = &sum[k * WIDTH];
        carry(limb);
        out[k] = value_of(limb, limb[ESM_SUM_LIMBS] != 0 || llabs(limb[0]) >= LIMB);
    }
    if (n > 16) {
        free(in);
        free(sum);
    }
}

double esm_global_sum(const esm_sum *s)
{
    double out;
    esm_global_sums(s, 1, &out);
    return out;
}

static void global_extreme(double *values, int n, MPI_Op op)
{
    double local[64];
    double *in = n <= 64 ? local : esm_calloc(n, sizeof *in);
    memcpy(in, values, n * sizeof *values);
    esm_allreduce(in, values, n, MPI_DOUBLE, op);
    if (n > 64)
        free(in);
}

void esm_global_max(double *values, int n)
{
    global_extreme(values, n, MPI_MAX);
}
void esm_global_min(double *values, int n)
{
    global_extreme(values, n, MPI_MIN);
}

static uint64_t splitmix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void esm_checksum_add(uint64_t *checksum, long global_index, double value)
{
    uint64_t bits;
    if (value == 0.0) /* +0 and -0 add nothing: land points count alike, stored or dropped */
        return;
    memcpy(&bits, &value, sizeof bits);
    *checksum += splitmix64(bits ^ splitmix64((uint64_t)global_index));
}

uint64_t esm_global_checksum(uint64_t local)
{
    uint64_t total;
    esm_allreduce(&local, &total, 1, MPI_UINT64_T, MPI_SUM);
    return total;
}

void esm_global_sum_long(long *values, int n)
{
    long *in = esm_calloc(n ? n : 1, sizeof *in);
    memcpy(in, values, n * sizeof *values);
    esm_allreduce(in, values, n, MPI_LONG, MPI_SUM);
    free(in);
}
