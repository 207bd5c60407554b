/* Self-test of folding and the node model (esm_fold.h), run by tests/test_fold.py and
 * tests/test_frequency.py under SMPI and on the real stacks: a ring of ranks, each with a field
 * of its own (uneven) size, a kernel over it each step and one global sum. The kernel is a
 * triad (--kernel triad, memory-bound: 2 flops for 24 bytes a point) or a Horner polynomial
 * of degree HORNER_DEGREE (--kernel horner, compute-bound: 2 flops a degree for 16 bytes a
 * point), for the node model's frequency scaling. Prints one JSON result line with what
 * folding must keep (the sum over ranks of the work done, the core's message counts) and
 * what it changes (kernel calls run and charged, whether fields are shared). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "esm.h"

enum { HORNER_DEGREE = 32 };

/* Rank r's field: 1000 + 100 r points, so that sizes differ between ranks. */
static long points_of(int rank)
{
    return 1000 + 100L * rank;
}

static void *build_table(const void *context)
{
    long n = *(const long *)context;
    long *table = esm_calloc((size_t)n, sizeof *table);
    for (long i = 0; i < n; i++)
        table[i] = points_of((int)i);
    return table;
}

/* Recorded histories (esm_fold.h): which one a rank count and options get, and a step's
 * counts, past the recorded steps too, in the text form they are recorded in. */
static void check_histories(esm_result *r)
{
    static const esm_fold_history histories[] = {{"T", "", 16, 3, "1/2 2/7"},
                                                 {"T", "", 4, 2, "3 4/5"},
                                                 {"U", "", 8, 1, "9"},
                                                 {"T", "--o x", 32, 1, "6"}};
    enum { N = sizeof histories / sizeof *histories };
    char nearest[64] = "";
    const int asked[] = {1, 5, 8, 9, 100};
    for (int a = 0, used = 0; a < 5; a++) {
        const esm_fold_history *h = esm_fold_history_nearest(histories, N, "T", "", asked[a]);
        used += snprintf(nearest + used, sizeof nearest - used, "%s%d:%d", a ? " " : "", asked[a],
                         h->ranks);
    }
    esm_result_text(r, "history.nearest", nearest);
    const esm_fold_history *with_options = esm_fold_history_nearest(histories, N, "T", "--o x", 4);
    esm_result_int(r, "history.with_options_ranks", with_options ? with_options->ranks : 0);
    esm_result_bool(r, "history.none_for_other_decks",
                    !esm_fold_history_nearest(histories, N, "V", "", 8) &&
                        !esm_fold_history_nearest(histories, N, "U", "--o x", 8));
    char *steps = NULL;
    for (long s = 0; s < 5; s++) {
        int counts[4];
        int k = esm_fold_history_step(&histories[0], s, counts, 4);
        esm_fold_history_append(&steps, counts, k);
    }
    esm_result_text(r, "history.steps", steps);
    free(steps);
}

int main(int argc, char **argv)
{
    esm_init(&argc, &argv, "esm_fold_test");
    esm_cli *cli = esm_cli_begin(argc, argv, "Self-test of folding and the node model");
    long steps = esm_cli_int(cli, "steps", 10, 1, 1000000, "time steps");
    bool horner = !strcmp(esm_cli_choice(cli, "kernel", "triad,horner", "the kernel"), "horner");
    esm_cli_end(cli);
    esm_result *r = esm_result_new("fold_test", "S", steps);

    long ranks = esm_ranks();
    char key[64];
    snprintf(key, sizeof key, "fold_test.table.%ld", ranks);
    const long *table = esm_shared(key, build_table, &ranks);
    long n = table[esm_rank()];
    double *a = esm_field_alloc((size_t)n * sizeof *a), *b = esm_field_alloc((size_t)n * sizeof *b);
    double *same = esm_field_alloc(4096 * sizeof *same); /* one size on every rank */
    for (long i = 0; i < n; i++)
        b[i] = 1.0;

    static const esm_kernel triad = {.name = "fold_test.triad", .flops = 2};
    static const esm_kernel polynomial = {.name = "fold_test.horner", .flops = 2 * HORNER_DEGREE};
    esm_sum total = {0};
    double t0 = esm_wtime();
    for (long s = 0; s < steps; s++) {
        if (horner && esm_kernel_begin(&polynomial, (double)n, 16.0 * (double)n)) {
            for (long i = 0; i < n; i++) { /* reads b, writes a */
                double value = 1.0;
                for (int d = 0; d < HORNER_DEGREE; d++)
                    value = value * b[i] + 0.5;
                a[i] = value;
            }
            esm_kernel_end(&polynomial);
        } else if (!horner && esm_kernel_begin(&triad, (double)n, 24.0 * (double)n)) {
            for (long i = 0; i < n; i++)
                a[i] = b[i] + 0.5 * a[i];
            esm_kernel_end(&triad);
        }
        esm_sum_add(&total, (double)n);
    }
    double work = esm_global_sum(&total); /* the same folded or not: no field values in it */
    esm_result_wall(r, esm_wtime() - t0);
    esm_result_real(r, "work", work);

    /* Folded fields of one size are the same memory on every rank: the addresses agree. */
    double address[2] = {(double)(uintptr_t)same, -(double)(uintptr_t)same};
    esm_global_max(address, 2);
    if (esm_folded())
        esm_result_bool(r, "fields_shared", address[0] == -address[1]);
    esm_result_bool(r, "table_owned", esm_shared_owned());
    check_histories(r);
    esm_result_verification(r,
                            work == (double)steps * (1000.0 * ranks + 50.0 * ranks * (ranks - 1)),
                            "work summed over ranks and steps");
    esm_field_free(a);
    esm_field_free(b);
    esm_field_free(same);
    if (esm_shared_owned())
        free((void *)table);
    esm_exit(esm_result_finish(r));
}
