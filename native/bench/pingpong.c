/* Ping-pong between ranks 0 and 1 over message sizes: for each size, one synchronising round
 * trip, then ROUNDS timed round trips; prints one JSON line with the one-way time per size
 * (seconds). The synchronising round trip leaves rank 1 waiting in MPI_Recv when rank 0 starts
 * its clock, so under SimGrid's CM02 model each one-way time is exactly alpha + n/beta.
 * Usage: pingpong [rounds [size ...]] (default: 10 rounds, 0 B to 4 MiB). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { MAX_SIZES = 32 };

static void round_trip(int rank, char *buffer, int bytes)
{
    int peer = 1 - rank;
    if (rank == 0) {
        MPI_Send(buffer, bytes, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
        MPI_Recv(buffer, bytes, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        MPI_Recv(buffer, bytes, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buffer, bytes, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    int sizes[MAX_SIZES] = {0, 8, 1024, 65536, 1048576, 4194304};
    int count = 6, rounds = argc > 1 ? atoi(argv[1]) : 10, rank, ranks, largest = 0;
    double one_way[MAX_SIZES];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (argc > 2) {
        count = 0;
        for (int i = 2; i < argc && count < MAX_SIZES; i++)
            sizes[count++] = atoi(argv[i]);
    }
    if (ranks < 2 || rounds < 1) {
        if (rank == 0)
            fprintf(stderr, "pingpong: run with 2 or more ranks (ranks 0 and 1 play) and rounds >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int k = 0; k < count; k++)
        largest = sizes[k] > largest ? sizes[k] : largest;
    char *buffer = calloc((size_t)largest + 1, 1);
    for (int k = 0; k < count; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        round_trip(rank, buffer, sizes[k]);
        double start = MPI_Wtime();
        for (int r = 0; r < rounds; r++)
            round_trip(rank, buffer, sizes[k]);
        one_way[k] = (MPI_Wtime() - start) / rounds / 2;
    }
    if (rank == 0) {
        printf("{\"rounds\":%d,\"bytes\":[", rounds);
        for (int k = 0; k < count; k++)
            printf("%s%d", k ? "," : "", sizes[k]);
        printf("],\"one_way_s\":[");
        for (int k = 0; k < count; k++)
            printf("%s%.12e", k ? "," : "", one_way[k]);
        printf("]}\n");
    }
    free(buffer);
    MPI_Finalize();
    return 0;
}
