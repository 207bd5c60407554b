/* MPI's matching rules with thousands of receives pending at one rank (tests/test_matching.py):
 * every rank but 0 sends COUNT messages to rank 0, which has posted (or posts late) receives of
 * every kind, so that a message must be matched past many others: by source and tag, by source
 * with MPI_ANY_TAG, and by MPI_ANY_SOURCE with a tag. Sender s's message j carries (s, j, round):
 *
 *   j < COUNT/2   tag j; rank 0 posts one receive (s, tag j) per message, tags descending, so
 *                 each message is matched past the receives of its source's later tags
 *   j >= COUNT/2  odd s: tag 2 COUNT + j, received by (s, MPI_ANY_TAG) receives, in send order
 *                 even s: tag COUNT + j, received by (MPI_ANY_SOURCE, tag) receives, one per
 *                 even sender and tag
 *
 * Every receive of the first half is posted before any of the second, so each message has one
 * receive it can match by MPI's rules and the run cannot deadlock. With LATE set, rank 0 posts its
 * receives after the messages have arrived (they wait unmatched). Rank 0 checks each receive's
 * source, tag and data, that every message arrives once and the (s, MPI_ANY_TAG) receives get
 * their sender's messages in its sending order, and prints the simulated time and a hash of which
 * receive got which message (the same under any correct matching order of equal messages).
 *
 *     matching COUNT [ROUNDS] [LATE]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { WORDS = 3 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int count = argc > 1 ? atoi(argv[1]) : 0, rounds = argc > 2 ? atoi(argv[2]) : 1,
        late = argc > 3 && atoi(argv[3]);
    if (count < 2 || count % 2 || rounds < 1 || size < 3) {
        if (rank == 0)
            fprintf(stderr,
                    "usage: matching COUNT(even, >=2) [ROUNDS] [LATE] on 3 or more ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int half = count / 2, senders = size - 1, total = senders * count;
    MPI_Request *requests = malloc((size_t)(rank ? count : total) * sizeof *requests);
    MPI_Status *statuses = malloc((size_t)(rank ? count : total) * sizeof *statuses);
    int *data = malloc((size_t)WORDS * (rank ? count : total) * sizeof *data);
    char *seen = calloc((size_t)size * count, 1);
    int *last = malloc((size_t)size * sizeof *last);
    long bad = 0;
    uint64_t hash = 1469598103934665603u; /* FNV-1a over (receive, source, tag, message) */
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int round = 0; round < rounds; round++) {
        if (rank) {
            for (int j = 0; j < count; j++) {
                int tag = j < half ? j : (rank % 2 ? 2 * count : count) + j;
                int *m = &data[WORDS * j];
                m[0] = rank, m[1] = j, m[2] = round;
                MPI_Isend(m, WORDS, MPI_INT, 0, tag, MPI_COMM_WORLD, &requests[j]);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Waitall(count, requests, MPI_STATUSES_IGNORE);
            continue;
        }
        if (late)
            MPI_Barrier(
                MPI_COMM_WORLD); /* the senders' messages are out before a receive is posted */
        int n = 0;
        for (int s = 1; s < size; s++)
            for (int j = half - 1; j >= 0; j--, n++)
                MPI_Irecv(&data[WORDS * n], WORDS, MPI_INT, s, j, MPI_COMM_WORLD, &requests[n]);
        for (int j = half; j < count; j++)
            for (int s = 1; s < size; s++, n++)
                MPI_Irecv(&data[WORDS * n], WORDS, MPI_INT, s % 2 ? s : MPI_ANY_SOURCE,
                          s % 2 ? MPI_ANY_TAG : count + j, MPI_COMM_WORLD, &requests[n]);
        MPI_Waitall(total, requests, statuses);
        if (!late)
            MPI_Barrier(MPI_COMM_WORLD);
        for (int s = 0; s < size; s++)
            last[s] = half - 1;
        for (int i = 0; i < total; i++) {
            const int *m = &data[WORDS * i];
            int source = statuses[i].MPI_SOURCE, tag = statuses[i].MPI_TAG, got = -1;
            MPI_Get_count(&statuses[i], MPI_INT, &got);
            int ok = got == WORDS && m[0] == source && source > 0 && source < size && m[1] >= 0 &&
                     m[1] < count && m[2] == round;
            if (ok) {
                int j = m[1], want = j < half ? j : (source % 2 ? 2 * count : count) + j;
                ok = tag == want && !seen[(size_t)source * count + j];
                seen[(size_t)source * count + j] = 1;
                if (i < senders * half) /* (s, tag) receives: source and tag as posted */
                    ok = ok && source == 1 + i / half && j == half - 1 - i % half;
                else if (source % 2) { /* (s, MPI_ANY_TAG): its sender's messages in order */
                    ok = ok && j == last[source] + 1;
                    last[source] = j;
                }
            }
            bad += !ok;
            uint64_t fields[4] = {(uint64_t)i, (uint64_t)source, (uint64_t)tag, (uint64_t)m[1]};
            for (int f = 0; f < 4; f++)
                hash = (hash ^ fields[f]) * 1099511628211u;
        }
        for (size_t k = 0; k < (size_t)size * count; k++)
            seen[k] = 0;
    }
    double elapsed = MPI_Wtime() - start;
    if (rank == 0)
        printf("matching: %d ranks, %d receives pending, %d rounds%s: %.17g s, hash %016llx, %ld "
               "bad\n",
               size, total, rounds, late ? ", posted late" : "", elapsed, (unsigned long long)hash,
               bad);
    free(requests), free(statuses), free(data), free(seen), free(last);
    MPI_Finalize();
    return bad ? 1 : 0;
}
