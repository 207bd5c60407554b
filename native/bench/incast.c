/* Incast: every rank but 0 sends one message of the same size to rank 0 at once (rank 0 posts
 * all its receives first, then a barrier releases the senders), ROUNDS times. Prints one JSON
 * line with the time of each round as rank 0 sees it (seconds, from the barrier to its last
 * receive). Under SimGrid's CM02 the round is the receiver's link draining senders x bytes;
 * under ns-3 the switch port's queue overflows and TCP's retransmission timer decides.
 * Usage: incast [rounds [bytes]] (default: 1 round of 32768 bytes). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 1, bytes = argc > 2 ? atoi(argv[2]) : 32768;
    int rank, ranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (ranks < 2 || rounds < 1 || rounds > 64 || bytes < 0) {
        if (rank == 0)
            fprintf(stderr, "incast: run with 2 or more ranks, 1-64 rounds, bytes >= 0\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    char *buffer = calloc((size_t)bytes * (size_t)ranks + 1, 1);
    MPI_Request *requests = calloc((size_t)ranks, sizeof *requests);
    double seconds[64];
    for (int r = 0; r < rounds; r++) {
        if (rank == 0)
            for (int peer = 1; peer < ranks; peer++)
                MPI_Irecv(buffer + (size_t)peer * (size_t)bytes, bytes, MPI_CHAR, peer, r,
                          MPI_COMM_WORLD, &requests[peer - 1]);
        MPI_Barrier(MPI_COMM_WORLD);
        double start = MPI_Wtime();
        if (rank == 0)
            MPI_Waitall(ranks - 1, requests, MPI_STATUSES_IGNORE);
        else
            MPI_Send(buffer, bytes, MPI_CHAR, 0, r, MPI_COMM_WORLD);
        seconds[r] = MPI_Wtime() - start;
    }
    if (rank == 0) {
        printf("{\"senders\":%d,\"bytes\":%d,\"round_s\":[", ranks - 1, bytes);
        for (int r = 0; r < rounds; r++)
            printf("%s%.12e", r ? "," : "", seconds[r]);
        printf("]}\n");
    }
    free(requests);
    free(buffer);
    MPI_Finalize();
    return 0;
}
