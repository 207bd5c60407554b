/* Ping-pong over message sizes: for each size, one synchronising round trip, then ROUNDS timed
 * round trips; prints one JSON line with the one-way time per size (seconds). Rank r plays with
 * rank r + ranks/2, every pair at once (with 2 ranks: 0 and 1), so that with more ranks the
 * pairs share the network (a bisection test); an odd last rank only joins the barriers. The
 * line gives rank 0's pair ("one_way_s") and the slowest pair ("slowest_one_way_s"), each timed
 * by its first rank. The synchronising round trip leaves the partner waiting in MPI_Recv when
 * the clock starts, so under SimGrid's CM02 model each one-way time is exactly alpha + n/beta.
 * Usage: pingpong [rounds [size ...]] (default: 10 rounds, 0 B to 4 MiB). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { MAX_SIZES = 32 };

static void round_trip(int rank, int half, char *buffer, int bytes)
{
    if (rank < half) {
        MPI_Send(buffer, bytes, MPI_CHAR, rank + half, 0, MPI_COMM_WORLD);
        MPI_Recv(buffer, bytes, MPI_CHAR, rank + half, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank < 2 * half) {
        MPI_Recv(buffer, bytes, MPI_CHAR, rank - half, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buffer, bytes, MPI_CHAR, rank - half, 0, MPI_COMM_WORLD);
    }
}

static void print_list(const char *key, const double *values, int count)
{
    printf(",\"%s\":[", key);
    for (int k = 0; k < count; k++)
        printf("%s%.12e", k ? "," : "", values[k]);
    printf("]");
}

int main(int argc, char **argv)
{
    int sizes[MAX_SIZES] = {0, 8, 1024, 65536, 1048576, 4194304};
    int count = 6, rounds = argc > 1 ? atoi(argv[1]) : 10, rank, ranks, largest = 0;
    double one_way[MAX_SIZES] = {0}, slowest[MAX_SIZES];
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
            fprintf(stderr, "pingpong: run with 2 or more ranks (r plays with r + ranks/2) "
                            "and rounds >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int half = ranks / 2;
    for (int k = 0; k < count; k++)
        largest = sizes[k] > largest ? sizes[k] : largest;
    char *buffer = calloc((size_t)largest + 1, 1);
    for (int k = 0; k < count; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        round_trip(rank, half, buffer, sizes[k]);
        double start = MPI_Wtime();
        for (int r = 0; r < rounds; r++)
            round_trip(rank, half, buffer, sizes[k]);
        if (rank < half)
            one_way[k] = (MPI_Wtime() - start) / rounds / 2;
    }
    /* after the timed loops: the reduction's messages are not timed */
    MPI_Reduce(one_way, slowest, count, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("{\"rounds\":%d,\"pairs\":%d,\"bytes\":[", rounds, half);
        for (int k = 0; k < count; k++)
            printf("%s%d", k ? "," : "", sizes[k]);
        printf("]");
        print_list("one_way_s", one_way, count);
        print_list("slowest_one_way_s", slowest, count);
        printf("}\n");
    }
    free(buffer);
    MPI_Finalize();
    return 0;
}
