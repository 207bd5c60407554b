/* Latency of a 0-byte ping-pong (one way), an 8-byte MPI_Allreduce and a non-blocking 0-byte
 * exchange (MPI_Irecv + MPI_Isend + MPI_Waitall of both, each rank) on 2 ranks: warm-up,
 * then BATCHES batches of ITERS operations; prints one JSON line with every batch mean (us) so
 * the driver (benchmarks/profiler_overhead.py) can take medians and spreads.
 *
 *     latency [ITERS] [regions]
 *
 * "regions": the batches run inside the region "timed" (MPI_Pcontrol, IPM's convention), so a
 * profiler records every timed call into a region too. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { WARMUP = 2000, BATCHES = 30 };

static double pingpong(int rank, int iters)
{
    char byte = 0;
    int peer = 1 - rank;
    double t = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (rank == 0) {
            MPI_Send(&byte, 0, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
            MPI_Recv(&byte, 0, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&byte, 0, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&byte, 0, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t) / iters / 2 * 1e6;
}

static double allreduce(int iters)
{
    double in = 1.0, out;
    double t = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return (MPI_Wtime() - t) / iters * 1e6;
}

static double exchange(int rank, int iters)
{
    char in = 0, out = 0;
    MPI_Request reqs[2];
    double t = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        MPI_Irecv(&in, 0, MPI_CHAR, 1 - rank, 0, MPI_COMM_WORLD, &reqs[0]);
        MPI_Isend(&out, 0, MPI_CHAR, 1 - rank, 0, MPI_COMM_WORLD, &reqs[1]);
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    }
    return (MPI_Wtime() - t) / iters * 1e6;
}

int main(int argc, char **argv)
{
    int rank, size, iters = argc > 1 ? atoi(argv[1]) : 5000;
    double pp[BATCHES], ar[BATCHES], ex[BATCHES];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "latency: run with 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int regions = argc > 2 && strcmp(argv[2], "regions") == 0;
    pingpong(rank, WARMUP);
    allreduce(WARMUP);
    exchange(rank, WARMUP);
    if (regions)
        MPI_Pcontrol(1, "timed");
    for (int b = 0; b < BATCHES; b++) {
        MPI_Barrier(MPI_COMM_WORLD);
        pp[b] = pingpong(rank, iters);
        MPI_Barrier(MPI_COMM_WORLD);
        ar[b] = allreduce(iters);
        MPI_Barrier(MPI_COMM_WORLD);
        ex[b] = exchange(rank, iters);
    }
    if (regions)
        MPI_Pcontrol(-1, "timed");
    if (rank == 0) {
        printf("{\"pingpong_us\":[");
        for (int b = 0; b < BATCHES; b++)
            printf("%s%.6f", b ? "," : "", pp[b]);
        printf("],\"allreduce_us\":[");
        for (int b = 0; b < BATCHES; b++)
            printf("%s%.6f", b ? "," : "", ar[b]);
        printf("],\"exchange_us\":[");
        for (int b = 0; b < BATCHES; b++)
            printf("%s%.6f", b ? "," : "", ex[b]);
        printf("]}\n");
    }
    MPI_Finalize();
    return 0;
}
