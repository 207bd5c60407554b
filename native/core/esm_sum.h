/* esm_sum.h: global reductions that give the same bits whatever the decomposition.
 *
 * Reproducible sums use exact fixed-point accumulation (Hallberg & Adcroft, "An order-
 * invariant real-to-integer conversion sum", Parallel Computing 2014, as in MOM6): every
 * double added is cut into ESM_SUM_LIMBS integers of 46 bits covering 2^-206 .. 2^162, the
 * integers are added exactly (int64 with carries), summed over ranks by one MPI_Allreduce on
 * integers, and only then turned back into a double. Integer addition is associative, so the
 * result does not depend on the order of the additions, the number of ranks or the
 * distribution of blocks. Bits below 2^-206 are dropped; a value of magnitude 2^162 or more,
 * an infinity or a NaN makes the sum NaN.
 *
 * Adding every point costs ~25 operations per point; kernels that need speed (the POP solver's
 * dot products) sum each block in a fixed order in double and add ONE partial per block:
 * still the same bits for any rank count and distribution of the same blocks.
 *
 * Several sums travel in one allreduce (ChronGear's fused 2-scalar reduction). */
#ifndef ESM_SUM_H
#define ESM_SUM_H
#include <stdint.h>

enum { ESM_SUM_LIMBS = 8 };

typedef struct esm_sum {
    int32_t adds;                /* additions since the last carry */
    int32_t bad;                 /* an addend was out of range or not finite */
    int64_t limb[ESM_SUM_LIMBS]; /* limb[0] carries the sign and the highest bits */
} esm_sum;

/* Add x exactly (limbs of 46 bits down to 2^-206). Start from zero: esm_sum s = {0};
 * esm_sum several[2] = {{0}}; */
void esm_sum_add(esm_sum *s, double x);
void esm_sum_add_array(esm_sum *s, const double *x, long n);

/* The local value. */
double esm_sum_value(const esm_sum *s);

/* out[k] = the sum over all ranks of sums[k], for k < n: one MPI_Allreduce. Collective. */
void esm_global_sums(const esm_sum *sums, int n, double *out);
double esm_global_sum(const esm_sum *s);

/* values[k] = max (min) over ranks, in place: one MPI_Allreduce. Collective. */
void esm_global_max(double *values, int n);
void esm_global_min(double *values, int n);

/* values[k] = the sum over ranks of values[k], k < n, as exact integers (counts, bytes): one
 * MPI_Allreduce. Collective. */
void esm_global_sum_long(long *values, int n);

/* A bitwise fingerprint of a distributed field, independent of the decomposition: add every
 * point with its global index, then combine (one allreduce, sum modulo 2^64). Equal
 * checksums mean equal bits (up to a 2^-64 chance). Zeros (+0.0 and -0.0) add nothing, so
 * points a decomposition drops (land blocks, all zero) leave the checksum unchanged. */
void esm_checksum_add(uint64_t *checksum, long global_index, double value);
uint64_t esm_global_checksum(uint64_t local);
#endif
