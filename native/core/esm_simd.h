/* esm_simd.h: hot loops compiled for several vector widths, the widest the CPU has chosen when
 * the program starts (GCC function multiversioning): one binary runs on any x86-64 node and
 * uses AVX2 or AVX-512 where they exist. Every path gives the same bits: the core builds with
 * -ffp-contract=off (no fused multiply-adds formed differently per path) and no loop here
 * reassociates a sum.
 *
 *     ESM_SIMD static void level_update(int n, const double *restrict a, double *restrict b)
 */
#ifndef ESM_SIMD_H
#define ESM_SIMD_H
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define ESM_SIMD __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ESM_SIMD
#endif
#endif
