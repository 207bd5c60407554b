/* What recording one MPI call costs, without waiting on another rank: on one rank, BATCHES
 * batches of ITERS calls of MPI_Comm_rank (local: the generic recording path) and of an 8-byte
 * MPI_Sendrecv to itself (a message each way: bytes, peers, histogram); prints one JSON line with
 * the cheapest batch's mean (ns per call) of each, the figure least disturbed by a busy machine.
 *
 *     record_cost [ITERS] [regions]
 *
 * "regions": the batches run inside the region "timed" (MPI_Pcontrol, IPM's convention).
 * benchmarks/record_cost.py runs it with and without profilers, and under valgrind to count
 * instructions. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BATCHES = 30 };

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 20000, rank;
    int regions = argc > 2 && strcmp(argv[2], "regions") == 0;
    double best_rank = 1e30, best_sendrecv = 1e30;
    char out[8] = {0}, in[8];
    MPI_Init(&argc, &argv);
    if (regions)
        MPI_Pcontrol(1, "timed");
    for (int b = 0; b < BATCHES; b++) {
        double t = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        t = (MPI_Wtime() - t) / iters * 1e9;
        best_rank = t < best_rank ? t : best_rank;
        t = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            MPI_Sendrecv(out, 8, MPI_BYTE, 0, 0, in, 8, MPI_BYTE, 0, 0, MPI_COMM_SELF,
                         MPI_STATUS_IGNORE);
        t = (MPI_Wtime() - t) / iters * 1e9;
        best_sendrecv = t < best_sendrecv ? t : best_sendrecv;
    }
    if (regions)
        MPI_Pcontrol(-1, "timed");
    printf("{\"comm_rank_ns\":%.3f,\"sendrecv_ns\":%.3f}\n", best_rank, best_sendrecv);
    MPI_Finalize();
    return 0;
}
