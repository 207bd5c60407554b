/* Many requests completed by one MPI_Waitall (tests/test_waitall.py): each rank posts `count`
 * receives from its two ring neighbours, then `count` sends of 1 to 3 ints to them in the
 * reverse order (tags descending), and waits for all 2 x count requests at once, with statuses. Rank 0 prints the simulated time of the exchange, and every rank checks each
 * receive's data and status (source, tag, count) and fails on a mismatch.
 *
 *     waitall COUNT [ROUNDS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int count = argc > 1 ? atoi(argv[1]) : 0, rounds = argc > 2 ? atoi(argv[2]) : 1;
    if (count < 2 || rounds < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: waitall COUNT(>=2) [ROUNDS]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    MPI_Request *requests = malloc(2 * (size_t)count * sizeof *requests);
    MPI_Status *statuses = malloc(2 * (size_t)count * sizeof *statuses);
    int *in = malloc(3 * (size_t)count * sizeof *in),
        *out = malloc(3 * (size_t)count * sizeof *out);
    int bad = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int round = 0; round < rounds; round++) {
        /* message i: tag i, 1 to 3 ints (i % 3 + 1); even ones go right, odd ones left */
        for (int i = 0; i < count; i++)
            MPI_Irecv(&in[3 * i], 3, MPI_INT, i % 2 ? right : left, i, MPI_COMM_WORLD,
                      &requests[i]);
        for (int k = 0; k < count; k++) {
            int i = count - 1 - k; /* sent in the reverse order of the receives */
            for (int j = 0; j < 3; j++)
                out[3 * i + j] = rank * 1000003 + i * 3 + j + round;
            MPI_Isend(&out[3 * i], 1 + i % 3, MPI_INT, i % 2 ? left : right, i, MPI_COMM_WORLD,
                      &requests[count + k]);
        }
        MPI_Waitall(2 * count, requests, statuses);
        for (int i = 0; i < count; i++) {
            int from = i % 2 ? right : left, got = -1;
            MPI_Get_count(&statuses[i], MPI_INT, &got);
            bad += statuses[i].MPI_SOURCE != from || statuses[i].MPI_TAG != i || got != 1 + i % 3 ||
                   requests[i] != MPI_REQUEST_NULL;
            for (int j = 0; j < got && j < 3; j++)
                bad += in[3 * i + j] != from * 1000003 + i * 3 + j + round;
        }
    }
    double elapsed = MPI_Wtime() - start;
    int all = 0;
    MPI_Reduce(&bad, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("waitall: %d ranks, %d requests, %d rounds: %.17g s, %d bad statuses\n", size,
               2 * count, rounds, elapsed, all);
    free(requests), free(statuses), free(in), free(out);
    MPI_Finalize();
    return all ? 1 : 0;
}
