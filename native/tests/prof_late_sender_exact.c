/* Late senders and on-time senders, for the exact late-sender time from a trace
 * (tests/test_late_sender.py, src/esmperf/profile/late_sender.py) and the receive wait per region
 * (tests/test_profiler_regions.py).
 *
 *     prof_late_sender_exact [S_MS]        (S, default 100 ms; 2 ranks or more)
 *
 * Rank 0 receives, rank 1 sends 4-byte messages (eager: a send never waits for its receive).
 * Every receive is late or on time by causality, whatever the scheduling of the ranks:
 *   1. late:    rank 0 MPI_Sendrecv(go to 1, receive from MPI_ANY_SOURCE with MPI_ANY_TAG); rank 1
 *               polls with MPI_Iprobe until go is there, receives it (on time: it was sent), sleeps
 *               S and sends tag 1. Its sleep starts after rank 0 entered the Sendrecv: late by
 *               at least S.
 *   2. late:    rank 0 MPI_Irecv tag 2, MPI_Barrier, MPI_Wait; rank 1 MPI_Barrier, sleeps S,
 *               sends tag 2. Rank 1 leaves the barrier after rank 0 entered it: late by at least
 *               S minus rank 0's time from entering the barrier to entering the Wait.
 *   3. on time: rank 1 sends tag 3, then MPI_Barrier; rank 0 MPI_Barrier, sleeps S, MPI_Recv: the
 *               send started before rank 0 left the barrier: 0.
 *   4. one MPI_Waitall of two receives: rank 0 MPI_Irecv tags 4 and 5, MPI_Barrier, MPI_Waitall;
 *               rank 1 sends tag 4 (on time, as 3), MPI_Barrier, sleeps S, sends tag 5 (late, as 2).
 * So rank 0 has 5 receives, 3 of them late (tags 1, 2, 5), in 3 late blocking calls (Sendrecv,
 * Wait, Waitall); rank 1 has 1 receive (go), on time. Every rank calls MPI_Barrier 5 times.
 *
 * Regions (MPI_Pcontrol, for the receive wait per region): all four parts are inside "cases";
 * parts 1 and 2 inside "cases/late", part 3 inside "cases/ontime", part 4 in "cases" only.
 * Rank 0's receive wait: cases/late MPI_Sendrecv 1 + MPI_Wait 1, cases/ontime MPI_Recv 1,
 * cases 4 (those and the MPI_Waitall); rank 1's: cases/late MPI_Recv 1 (go). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

int main(int argc, char **argv)
{
    int rank, size, value = 0, go = 1, got[2], flag = 0;
    long s = argc > 1 ? atol(argv[1]) : 100;
    MPI_Request requests[2];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || s <= 0) {
        fprintf(stderr, "prof_late_sender_exact: needs at least 2 ranks and S_MS > 0\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(1, "cases");
    MPI_Pcontrol(1, "late");
    if (rank == 0) { /* 1. late */
        MPI_Sendrecv(&go, 1, MPI_INT, 1, 9, &value, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        for (MPI_Iprobe(0, 9, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE); !flag;
             MPI_Iprobe(0, 9, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE))
            sleep_ms(1);
        MPI_Recv(&go, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        sleep_ms(s);
        MPI_Send(&value, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    }
    if (rank == 0) { /* 2. late */
        MPI_Irecv(&value, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &requests[0]);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            sleep_ms(s);
            MPI_Send(&value, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
        }
    }
    MPI_Pcontrol(-1, "late");
    MPI_Pcontrol(1, "ontime");
    if (rank == 1) /* 3. on time */
        MPI_Send(&value, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        sleep_ms(s);
        MPI_Recv(&value, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Pcontrol(-1, "ontime");
    if (rank == 0) { /* 4. one on time, one late, in one MPI_Waitall */
        MPI_Irecv(&got[0], 1, MPI_INT, 1, 4, MPI_COMM_WORLD, &requests[0]);
        MPI_Irecv(&got[1], 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &requests[1]);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
    } else if (rank == 1) {
        MPI_Send(&value, 1, MPI_INT, 0, 4, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        sleep_ms(s);
        MPI_Send(&value, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Pcontrol(-1, "cases");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
