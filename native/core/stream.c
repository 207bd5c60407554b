/* STREAM triad on every rank at once (not measured in a folded run). */
#include <stdbool.h>
#include <stdlib.h>
#include "esm_internal.h"
#include "esm_stream.h"
#include "esm_fold.h"

esm_stream esm_stream_triad(double megabytes, int repeats)
{
    esm_stream result = {.megabytes = megabytes, .repeats = repeats};
    long n = (long)(megabytes * 1048576.0 / sizeof(double));
    if (n < 1 || repeats < 1)
        return result;
    /* Folded, every simulated rank's arrays would be the same shared memory and the figure
     * would mean nothing (and 13,824 ranks would each stream 192 MiB for real): the passes
     * keep their barriers and reductions, a full run's messages, but not their loops, and
     * the bandwidth is reported as not measured (0). */
    bool folded = esm_folded();
    double *a = NULL, *b = NULL, *c = NULL;
    if (!folded) {
        a = esm_field_alloc(n * sizeof *a), b = esm_field_alloc(n * sizeof *b);
        c = esm_field_alloc(n * sizeof *c);
        for (long i = 0; i < n; i++) { /* first touch by this rank */
            b[i] = 1.0;
            c[i] = 2.0;
        }
    }
    double best = 1e300, scalar = 3.0;
    for (int r = 0; r <= repeats; r++) { /* pass 0 warms up */
        esm_barrier();
        double t = esm_wtime();
        for (long i = 0; !folded && i < n; i++)
            a[i] = b[i] + scalar * c[i];
        t = esm_wtime() - t;
        double slowest;
        esm_allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX);
        if (r > 0 && slowest < best)
            best = slowest;
        if (!folded)
            b[r % n] = a[(r * 7) % n]; /* keep the passes from being merged or dropped */
    }
    if (folded)
        return result;
    result.triad_GBps = esm_ranks() * 3.0 * n * sizeof(double) / best / 1e9;
    esm_field_free(a);
    esm_field_free(b);
    esm_field_free(c);
    return result;
}
