/* esm_stream.h: the STREAM triad a[i] = b[i] + s c[i] (McCalpin), run by every rank at once
 * so the figure is the node's sustainable memory bandwidth as the workload's ranks share it:
 * the roofline against which each workload reports its kernels' bandwidth.
 *
 * Bytes counted as STREAM does: 24 per element (read b and c, write a; no write-allocate).
 * Arrays of `megabytes` MiB each per rank (use several times the last-level cache); the best
 * of `repeats` timed passes, each timed from a barrier to the slowest rank. A folded run
 * (esm_fold.h) makes the passes' barriers and reductions but not the triad: triad_GBps 0. */
#ifndef ESM_STREAM_H
#define ESM_STREAM_H

typedef struct esm_stream {
    double triad_GBps;   /* all ranks together, 1e9 bytes per second */
    double megabytes;    /* per array per rank */
    int repeats;
} esm_stream;

esm_stream esm_stream_triad(double megabytes, int repeats); /* collective */
#endif
