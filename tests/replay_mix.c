/* A known mix for tests/test_replay.py (2 to 4 ranks), what a replay must get right: per step,
 * after a burst of (rank + 1) x 20 ms (so ranks wait for each other), rank 0 posts an
 * MPI_ANY_SOURCE receive for each of ranks 1 and 2 (one on 2 ranks), all completed by one
 * MPI_Waitall, matched by those ranks' sends (16 x rank doubles, tag 5);
 * an MPI_Alltoallv (rank i sends 8 (i + 1)(j + 1) doubles to rank j); a 10 ms burst; an
 * MPI_Allgatherv (rank i gives 16 (i + 1) doubles). Then once: MPI_Gatherv to the last rank (i + 2
 * doubles), MPI_Scatterv from rank 1 (3 (j + 1) doubles), MPI_Reduce_scatter (j + 1 doubles),
 * MPI_Scan (5 doubles), MPI_Exscan (6), on half of the ranks (even, odd: a communicator
 * SimGrid's replay cannot name) an MPI_Allreduce and an MPI_Alltoallv (rank i sends 4 (i + 1)
 * doubles to each), and an MPI_Barrier. Each rank then prints the time it waited
 * for a CPU inside its MPI calls (Linux's run delay, /proc/self/schedstat, read around each):
 * time the real run spent there that a replay, a core per rank, does not. */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

#define STEPS 3
#define MAX_RANKS 4

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static double burst(double seconds)
{
    double sum = 0, end = now() + seconds;
    while (now() < end)
        for (volatile int i = 0; i < 1000; i++)
            sum += 1e-9 * i;
    return sum;
}

static int size;
static unsigned long long mpi_run_delay; /* ns waited for a CPU inside MPI calls */

static unsigned long long run_delay(void)
{
    unsigned long long on_cpu = 0, delay = 0;
    FILE *schedstat = fopen("/proc/self/schedstat", "r");
    if (schedstat) {
        if (fscanf(schedstat, "%llu %llu", &on_cpu, &delay) != 2)
            delay = 0;
        fclose(schedstat);
    }
    return delay;
}

/* an MPI call, with the time the rank waited for a CPU in it counted */
#define WAITED(call)                                                                               \
    do {                                                                                           \
        unsigned long long before = run_delay();                                                   \
        call;                                                                                      \
        mpi_run_delay += run_delay() - before;                                                     \
    } while (0)

static void set_displs(const int *counts, int *displs)
{
    for (int j = 0, d = 0; j < size; d += counts[j++])
        displs[j] = d;
}

int main(int argc, char **argv)
{
    int rank;
    static double out[4096], in[4096];
    double sum = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || size > MAX_RANKS) {
        fprintf(stderr, "replay_mix: run it on 2 to %d ranks\n", MAX_RANKS);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int scounts[MAX_RANKS], rcounts[MAX_RANKS], sdispls[MAX_RANKS], rdispls[MAX_RANKS];
    for (int j = 0; j < size; j++) {
        scounts[j] = 8 * (rank + 1) * (j + 1);
        rcounts[j] = 8 * (j + 1) * (rank + 1);
    }
    set_displs(scounts, sdispls);
    set_displs(rcounts, rdispls);
    int vcounts[MAX_RANKS], vdispls[MAX_RANKS];
    for (int step = 0; step < STEPS; step++) {
        sum += burst(0.02 * (rank + 1));
        int senders = size > 2 ? 2 : 1;
        if (rank == 0) {
            MPI_Request req[2];
            MPI_Status status[2];
            for (int i = 0; i < senders; i++)
                MPI_Irecv(in + 64 * i, 64, MPI_DOUBLE, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &req[i]);
            WAITED(MPI_Waitall(senders, req, status));
        } else if (rank <= senders) {
            WAITED(MPI_Send(out, 16 * rank, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD));
        }
        WAITED(MPI_Alltoallv(out, scounts, sdispls, MPI_DOUBLE, in, rcounts, rdispls, MPI_DOUBLE,
                             MPI_COMM_WORLD));
        sum += burst(0.01);
        for (int j = 0; j < size; j++)
            vcounts[j] = 16 * (j + 1);
        set_displs(vcounts, vdispls);
        WAITED(MPI_Allgatherv(out, 16 * (rank + 1), MPI_DOUBLE, in, vcounts, vdispls, MPI_DOUBLE,
                              MPI_COMM_WORLD));
    }
    for (int j = 0; j < size; j++)
        vcounts[j] = j + 2;
    set_displs(vcounts, vdispls);
    WAITED(MPI_Gatherv(out, rank + 2, MPI_DOUBLE, in, vcounts, vdispls, MPI_DOUBLE, size - 1,
                       MPI_COMM_WORLD));
    for (int j = 0; j < size; j++)
        vcounts[j] = 3 * (j + 1);
    set_displs(vcounts, vdispls);
    WAITED(MPI_Scatterv(out, vcounts, vdispls, MPI_DOUBLE, in, 3 * (rank + 1), MPI_DOUBLE, 1,
                        MPI_COMM_WORLD));
    for (int j = 0; j < size; j++)
        vcounts[j] = j + 1;
    WAITED(MPI_Reduce_scatter(out, in, vcounts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    WAITED(MPI_Scan(out, in, 5, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    WAITED(MPI_Exscan(out, in, 6, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    WAITED(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, half));
    int hsend[MAX_RANKS] = {0}, hrecv[MAX_RANKS] = {0}, hsdispls[MAX_RANKS], hrdispls[MAX_RANKS];
    for (int j = 0; 2 * j + rank % 2 < size; j++) { /* member j of half: world rank 2j + rank%2 */
        hsend[j] = 4 * (rank + 1);
        hrecv[j] = 4 * (2 * j + rank % 2 + 1);
    }
    set_displs(hsend, hsdispls);
    set_displs(hrecv, hrdispls);
    WAITED(MPI_Alltoallv(out, hsend, hsdispls, MPI_DOUBLE, in, hrecv, hrdispls, MPI_DOUBLE, half));
    MPI_Comm_free(&half);
    WAITED(MPI_Barrier(MPI_COMM_WORLD));
    printf("rank %d mpi_run_delay_ns %llu\n", rank, mpi_run_delay);
    MPI_Finalize();
    return sum < 0;
}
