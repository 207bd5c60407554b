/* redist-bench's mode store-scaling: one process computes the route of every rank of a layout
 * of n ranks in turn (block routes need no communication), for n = 4 ... 65,536 (--store-ranks):
 * per rank the least of R stores, then the median and max over ranks. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_driver.h"

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* Rank 0 times the store of every rank of each layout: the table on stdout, the list (JSON)
 * for the result; returns the median store time per rank of the largest n, in us. */
static double store_table(const config *c, text *list)
{
    esm_fields fields = {c->nfields, c->type};
    double fom = 0;
    printf("store scaling: %" PRId64 "x%" PRId64 "x%" PRId64
           " grid, %d %s fields, one process computes every rank's route\n",
           c->dims[0], c->dims[1], c->dims[2], c->nfields, c->type_text);
    printf("per rank: the least of %d stores; median and max over ranks; spread: the median over "
           "ranks in each repeat\n",
           c->repeats);
    printf("%8s %10s %10s %16s %12s %12s %12s %6s %8s %10s\n", "ranks", "src", "dst", "bytes moved",
           "median us", "max us", "spread", "peers", "segments", "route B");
    text_add(list, "[");
    int first = 1;
    for (int t = 0; t < c->n_store_ranks; t++) {
        int64_t n = c->store_ranks[t];
        int sp[3], dp[3];
        seed_layout(n, sp, dp);
        int fits = 1;
        for (int d = 0; d < 3; d++)
            fits = fits && sp[d] <= c->dims[d] && dp[d] <= c->dims[d];
        if (!fits) {
            printf("%8lld skipped: the layout %dx%d -> %dx%d has more blocks than grid points "
                   "along a dimension\n",
                   (long long)n, sp[0], sp[1], dp[0], dp[1]);
            continue;
        }
        esm_distgrid *src, *dst;
        int st;
        if ((st = esm_distgrid_create_blocks(MPI_COMM_NULL, 3, c->dims, sp, NULL, &src)))
            bench_fatal("layout", st);
        if ((st = esm_distgrid_create_blocks(MPI_COMM_NULL, 3, c->dims, dp, NULL, &dst)))
            bench_fatal("layout", st);
        /* each rank's store timed R times; its time is the least (the cost without the
         * machine's interruptions); then the median and the max over ranks */
        double *best = malloc(n * sizeof(double)), *times = malloc(n * sizeof(double)),
               medians[MAX_REPEATS];
        int64_t moved = 0, segments_max = 0, route_bytes_max = 0;
        int peers_max = 0;
        for (int r = 0; r < c->repeats; r++) {
            for (int64_t q = 0; q < n; q++) {
                esm_route *route;
                double t0 = now_seconds();
                st = esm_route_store_as(src, dst, (int)q, fields, fields, &c->options, &route);
                times[q] = now_seconds() - t0;
                if (st)
                    bench_fatal("esm_route_store_as", st);
                if (r == 0 || times[q] < best[q])
                    best[q] = times[q];
                if (r == 0) {
                    esm_route_info info;
                    esm_route_get_info(route, &info);
                    moved += info.send_bytes;
                    int peers =
                        info.send_peers > info.recv_peers ? info.send_peers : info.recv_peers;
                    if (peers > peers_max)
                        peers_max = peers;
                    if (info.segments > segments_max)
                        segments_max = info.segments;
                    if (info.route_bytes > route_bytes_max)
                        route_bytes_max = info.route_bytes;
                }
                esm_route_free(&route);
            }
            medians[r] = spread_of(times, (int)n).median;
        }
        spread per_rank = spread_of(best, (int)n), repeats = spread_of(medians, c->repeats);
        char sp_text[32], dp_text[32];
        snprintf(sp_text, sizeof sp_text, "%dx%d", sp[0], sp[1]);
        snprintf(dp_text, sizeof dp_text, "%dx%d", dp[0], dp[1]);
        printf("%8" PRId64 " %10s %10s %16" PRId64 " %12.3f %12.3f %5.3f-%-6.3f %6d %8" PRId64
               " %10" PRId64 "\n",
               n, sp_text, dp_text, moved, per_rank.median * 1e6, per_rank.max * 1e6,
               repeats.min * 1e6, repeats.max * 1e6, peers_max, segments_max, route_bytes_max);
        text_add(list,
                 "%s{\"n\": %" PRId64
                 ", \"src_parts\": \"%dx%d\", \"dst_parts\": \"%dx%d\", \"bytes_moved\": %" PRId64
                 ", ",
                 first ? "" : ", ", n, sp[0], sp[1], dp[0], dp[1], moved);
        text_add(list, "\"store_us\": {\"median_rank\": %.17g, \"max_rank\": %.17g}, ",
                 per_rank.median * 1e6, per_rank.max * 1e6);
        text_add(
            list,
            "\"store_us_median_rank_repeats\": {\"min\": %.17g, \"median\": %.17g, \"max\": %.17g}",
            repeats.min * 1e6, repeats.median * 1e6, repeats.max * 1e6);
        text_add(list,
                 ", \"peers_max\": %d, \"segments_max\": %" PRId64 ", \"route_bytes_max\": %" PRId64
                 "}",
                 peers_max, segments_max, route_bytes_max);
        first = 0;
        fom = per_rank.median * 1e6;
        free(times);
        free(best);
        esm_distgrid_free(&src);
        esm_distgrid_free(&dst);
    }
    text_add(list, "]");
    return fom;
}

int store_scaling(const config *c, const machine *m)
{
    esm_result *r = esm_result_new("redist", c->size, 0);
    double wall = now_seconds();
    if (esm_rank() == 0) {
        text list = {0};
        double fom = store_table(c, &list);
        esm_result_json(r, "store_scaling", list.text);
        free(list.text);
        esm_result_wall(r, now_seconds() - wall);
        esm_result_fom(r, fom, "us per rank (store, largest n)", false);
    }
    esm_result_verification(r, true, "store only: nothing moved");
    put_params(r, c);
    put_machine(r, m);
    return esm_result_finish(r);
}
