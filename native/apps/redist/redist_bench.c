/* redist-bench: the ESMF bundle-redistribution benchmark (P. Li, 2007; ../shared/seeds/003) on
 * libesmredist, with MPI_Alltoallw and PETSc VecScatter as peers in the same run.
 *
 * As the seed: a 3D grid (512x1024x16 by default) and a bundle of 8 double fields filled with
 * sums of sine waves of different frequencies and amplitudes; a source and a destination block
 * decomposition chosen to move as much as possible (Table 1: 4 ranks 4x1 -> 1x4, 8: 2x4 -> 4x2,
 * 16: 2x8 -> 8x2, ...). Timed: the route store (max over ranks), then 50 runs (each the max
 * over ranks, after a barrier; their mean is the run time), the whole repeated R times (default
 * 10): min and median over the repeats. Before each run the destination is poisoned (NaN);
 * after it every destination value is checked against the formula. The bytes moved between
 * different ranks must equal Table 1.
 * In the same run, timed the same way: the copy bound (every rank memcpy's its destination
 * bundle's bytes at once: the least memory traffic any redistribution needs) and the peers.
 *
 * Modes: run (default); store (store only, no fields); store-scaling (one process computes the
 * route of every rank of a layout of n ranks, n = 4 ... 65,536: block routes need no
 * communication). Command line (esm_cli.h) and result (esm_result.h): docs/workloads.md;
 * figures: docs/redist.md. It calls MPI itself where it measures MPI (barriers, the timing
 * reductions, the peers): it benchmarks libraries, it is not a model on the core. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "esm.h"

static const char *method_names[METHODS] = {"ours", "copy", "alltoallw", "petsc"};
static int rank, nranks;

/* A bundle's memory: node-shared (esm_shared_alloc, collective) or private (malloc). */
static void *alloc_bundle(const config *c, const esm_distgrid *d, size_t bytes)
{
    void *p = NULL;
    if (c->shared_memory)
        return esm_shared_alloc(d, bytes, &p) == ESM_OK ? p : NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 64))
        return NULL;
    return p;
}

static void free_bundle(const config *c, void *p)
{
    if (c->shared_memory)
        esm_shared_free(&p);
    else
        free(p);
}

/* ---- statistics and output (esm_result.h) --------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct {
    double min, median, max;
} spread;

static spread spread_of(const double *v, int n)
{
    double *s = malloc(n * sizeof(double));
    memcpy(s, v, n * sizeof(double));
    qsort(s, n, sizeof(double), cmp_double);
    spread r = {s[0], n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]), s[n - 1]};
    free(s);
    return r;
}

/* "<path>.min", ".median", ".max", times scale. */
static void put_spread(esm_result *r, const char *path, spread s, double scale)
{
    const char *names[3] = {"min", "median", "max"};
    double values[3] = {s.min * scale, s.median * scale, s.max * scale};
    for (int k = 0; k < 3; k++) {
        char key[128];
        snprintf(key, sizeof key, "%s.%s", path, names[k]);
        esm_result_real(r, key, values[k]);
    }
}

/* Text rendered bit by bit (a JSON array, a list of objects) for esm_result_json. */
typedef struct {
    char *text;
    size_t length, size;
} text;

__attribute__((format(printf, 2, 3))) static void add(text *t, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    int n = vsnprintf(NULL, 0, format, args);
    va_end(args);
    if (t->length + n + 1 > t->size) {
        t->size = 2 * (t->length + n + 1);
        t->text = realloc(t->text, t->size);
    }
    va_start(args, format);
    vsnprintf(t->text + t->length, t->size - t->length, format, args);
    va_end(args);
    t->length += n;
}

static void put_values(esm_result *r, const char *path, const double *v, int n)
{
    text t = {0};
    add(&t, "[");
    for (int i = 0; i < n; i++)
        add(&t, "%s%.17g", i ? ", " : "", v[i]);
    add(&t, "]");
    esm_result_json(r, path, t.text);
    free(t.text);
}

static void put_params(esm_result *r, const config *c)
{
    char grid[80], src[48], dst[48];
    snprintf(grid, sizeof grid, "%" PRId64 "x%" PRId64 "x%" PRId64, c->dims[0], c->dims[1],
             c->dims[2]);
    snprintf(src, sizeof src, "%dx%dx%d", c->src_parts[0], c->src_parts[1], c->src_parts[2]);
    snprintf(dst, sizeof dst, "%dx%dx%d", c->dst_parts[0], c->dst_parts[1], c->dst_parts[2]);
    esm_result_text(r, "params.grid", grid);
    esm_result_int(r, "params.fields", c->nfields);
    esm_result_text(r, "params.type", c->type_text);
    esm_result_text(r, "params.src_parts", src);
    esm_result_text(r, "params.dst_parts", dst);
    const char *keys[] = {"comm", "pack", "bundle", "local", "single_copy"};
    const char *values[] = {c->comm_text, c->pack_text, c->bundle_text, c->local_text,
                            c->single_copy_text};
    for (int k = 0; k < 5; k++) {
        char key[64];
        snprintf(key, sizeof key, "params.%s", keys[k]);
        esm_result_text(r, key, values[k]);
    }
    esm_result_int(r, "params.repeats", c->repeats);
    esm_result_text(r, "params.peers", c->peers_text);
    esm_result_text(r, "params.verify", c->verify_text);
    esm_result_text(r, "params.memory", c->memory_text);
    esm_result_text(r, "params.mode", c->mode);
}

/* The machine's state: load, cores, ranks per node (oversubscribed when more than cores). */
typedef struct {
    double load;
    long cores;
    int node_ranks;
} machine;

static machine machine_state(void)
{
    machine m = {0, sysconf(_SC_NPROCESSORS_ONLN), 1};
    double load[1] = {0};
    if (getloadavg(load, 1) == 1)
        m.load = load[0];
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &m.node_ranks);
    MPI_Comm_free(&node);
    MPI_Bcast(&m.load, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return m;
}

static void put_machine(esm_result *r, const machine *m)
{
    esm_result_real(r, "machine.load_1min", round(m->load * 100) / 100);
    esm_result_int(r, "machine.cores", m->cores);
    esm_result_int(r, "machine.ranks_per_node", m->node_ranks);
    esm_result_bool(r, "machine.oversubscribed", m->node_ranks > m->cores);
}

static void fatal(const char *what, int status)
{
    fprintf(stderr, "redist-bench: rank %d: %s: %s (%s)\n", rank, what, esm_error_message(),
            esm_status_name(status));
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* ---- mode store-scaling: one process, every rank of a layout of n ranks in turn ------------- */

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
    add(list, "[");
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
            fatal("layout", st);
        if ((st = esm_distgrid_create_blocks(MPI_COMM_NULL, 3, c->dims, dp, NULL, &dst)))
            fatal("layout", st);
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
                    fatal("esm_route_store_as", st);
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
        add(list,
            "%s{\"n\": %" PRId64
            ", \"src_parts\": \"%dx%d\", \"dst_parts\": \"%dx%d\", \"bytes_moved\": %" PRId64 ", ",
            first ? "" : ", ", n, sp[0], sp[1], dp[0], dp[1], moved);
        add(list, "\"store_us\": {\"median_rank\": %.17g, \"max_rank\": %.17g}, ",
            per_rank.median * 1e6, per_rank.max * 1e6);
        add(list,
            "\"store_us_median_rank_repeats\": {\"min\": %.17g, \"median\": %.17g, \"max\": %.17g}",
            repeats.min * 1e6, repeats.median * 1e6, repeats.max * 1e6);
        add(list,
            ", \"peers_max\": %d, \"segments_max\": %" PRId64 ", \"route_bytes_max\": %" PRId64 "}",
            peers_max, segments_max, route_bytes_max);
        first = 0;
        fom = per_rank.median * 1e6;
        free(times);
        free(best);
        esm_distgrid_free(&src);
        esm_distgrid_free(&dst);
    }
    add(list, "]");
    return fom;
}

static int store_scaling(const config *c, const machine *m)
{
    esm_result *r = esm_result_new("redist", c->size, 0);
    double wall = now_seconds();
    if (rank == 0) {
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

/* ---- modes run and store: the real thing on nranks ranks ------------------------------------ */

typedef struct {
    int enabled, available, passed;
    char why[256];
    double store[MAX_REPEATS], run[MAX_REPEATS];
    double max_error;
} method_result;

/* The timed runs are regions of the profile (MPI_Pcontrol, IPM's convention: 1 enters, -1
 * leaves); SimGrid SMPI aborts on MPI_Pcontrol and runs no profiler: nothing there. */
static void region(int level, const char *name)
{
#ifdef SMPI_H
    (void)level, (void)name;
#else
    MPI_Pcontrol(level, name);
#endif
}

static double max_over_ranks(double v)
{
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return v;
}

/* Times `steps` runs of method m (after one warm-up run), each the max over ranks after a
 * barrier, and returns their mean; checks the destination after every run (or the last). */
static double time_runs(const config *c, bench *b, int m, esm_route *route, const peer_ops *ops,
                        peer *state, const waves *w, double *worst)
{
    size_t dst_bytes = (size_t)b->dst_count * b->nfields * b->esz,
           src_bytes = (size_t)b->src_count * b->nfields * b->esz;
    double *times = malloc(c->steps * sizeof(double));
    void *const *srcs = NULL;
    void **dsts = NULL;
    if (m == OURS) {
        srcs = malloc(b->nfields * sizeof(void *));
        dsts = malloc(b->nfields * sizeof(void *));
        for (int f = 0; f < b->nfields; f++) {
            ((void **)srcs)[f] = (char *)b->src + (size_t)f * b->src_count * b->esz;
            dsts[f] = (char *)b->dst + (size_t)f * b->dst_count * b->esz;
        }
    }
    for (int s = -1; s < c->steps; s++) { /* s = -1: warm-up */
        int check = m != COPY && (c->verify_each || s == c->steps - 1 || s == -1);
        if (check ||
            c->verify_each) /* NaN: an element never written fails; the copy bound gets the same */
            memset(b->dst, 0xff, dst_bytes);
        MPI_Barrier(b->comm);
        if (s >= 0) { /* the timed runs, per method */
            region(1, "timed");
            region(1, method_names[m]);
        }
        double t0 = MPI_Wtime();
        int rc = 0;
        if (m == OURS)
            rc = esm_route_run(route, (const void *const *)srcs, dsts);
        else if (m == COPY) {
            for (size_t done = 0;
                 done < dst_bytes;) { /* the destination's bytes, from the source */
                size_t n = dst_bytes - done < src_bytes ? dst_bytes - done : src_bytes;
                if (n == 0)
                    break;
                memcpy((char *)b->dst + done, b->src, n);
                done += n;
            }
        } else
            rc = ops->run(b, state);
        double t = MPI_Wtime() - t0;
        if (s >= 0) {
            region(-1, method_names[m]);
            region(-1, "timed");
        }
        if (rc) {
            fprintf(stderr, "redist-bench: rank %d: the %s run failed: %s\n", rank, method_names[m],
                    m == OURS ? esm_error_message() : "see above");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (s >= 0)
            times[s] = t;
        if (check) {
            double e = check_destination(b, w);
            if (!(e <= *worst))
                *worst = e;
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, times, c->steps, MPI_DOUBLE, MPI_MAX, b->comm);
    double mean = 0;
    for (int s = 0; s < c->steps; s++)
        mean += times[s] / c->steps;
    free(times);
    free((void *)srcs);
    free(dsts);
    return mean;
}

typedef struct {
    int64_t moved, messages, route_bytes_max, segments_max;
    int peers_max, single_copy;
} totals;

/* The table on rank 0's stdout and the result line; the exit status. Collective. */
static int report_run(const config *c, const machine *m, const method_result res[],
                      const totals *all, int passed, double wall)
{
    const int store_only = !strcmp(c->mode, "store"), R = c->repeats;
    spread ours = spread_of(res[OURS].run, R), store = spread_of(res[OURS].store, R);
    spread copy = store_only ? (spread){0, 0, 0} : spread_of(res[COPY].run, R);
    double bandwidth = store_only ? 0 : all->moved / ours.median / 1e9;
    if (rank == 0) {
        printf("redist-bench: %" PRId64 "x%" PRId64 "x%" PRId64
               " grid, %d %s fields, %d ranks (%s on %ld cores, load %.2f), %dx%dx%d -> %dx%dx%d\n",
               c->dims[0], c->dims[1], c->dims[2], c->nfields, c->type_text, nranks,
               m->node_ranks > m->cores ? "oversubscribed" : "not oversubscribed", m->cores,
               m->load, c->src_parts[0], c->src_parts[1], c->src_parts[2], c->dst_parts[0],
               c->dst_parts[1], c->dst_parts[2]);
        printf("bytes moved between ranks per run: %" PRId64
               "; options: comm %s, pack %s, bundle %s, local %s, single copy %s\n",
               all->moved, c->comm_text, c->pack_text, c->bundle_text, c->local_text,
               c->single_copy_text);
        printf("%-10s %12s %36s %8s %9s %s\n", "method", "store ms",
               "run ms (min / median / max of repeats)", "GB/s", "vs ours", "check");
        for (int k = 0; k < METHODS; k++) {
            if (!res[k].enabled)
                continue;
            if (!res[k].available) {
                printf("%-10s unavailable: %s\n", method_names[k], res[k].why);
                continue;
            }
            spread s = spread_of(res[k].store, R),
                   t = store_only ? (spread){0, 0, 0} : spread_of(res[k].run, R);
            printf("%-10s %12.3f %11.3f / %9.3f / %9.3f %8.2f %9.2f %s\n", method_names[k],
                   s.median * 1e3, t.min * 1e3, t.median * 1e3, t.max * 1e3,
                   t.median > 0 ? all->moved / t.median / 1e9 : 0,
                   ours.median > 0 ? t.median / ours.median : 0,
                   k == COPY               ? "-"
                   : res[k].max_error == 0 ? "PASS"
                                           : "FAIL");
        }
    }
    esm_result *r = esm_result_new("redist", c->size, store_only ? 0 : c->steps);
    esm_result_wall(r, wall);
    if (store_only)
        esm_result_fom(r, store.median * 1e3, "ms (store, median)", false);
    else
        esm_result_fom(r, bandwidth, "GB/s", true);
    esm_result_verification(
        r, passed,
        store_only ? "store only: nothing moved"
        : c->verify_each
            ? "every destination value against the sine-wave formula after every run (destination "
              "poisoned before)"
            : "every destination value against the sine-wave formula after the last run");
    esm_result_norm(r, "max_abs", res[OURS].max_error);
    esm_result_int(r, "model.bytes_moved", all->moved);
    esm_result_int(r, "model.messages_per_run", all->messages);
    esm_result_int(r, "model.single_copy_pairs", all->single_copy);
    esm_result_int(r, "model.peers_max", all->peers_max);
    esm_result_int(r, "model.segments_max", all->segments_max);
    esm_result_int(r, "model.route_bytes_max", all->route_bytes_max);
    put_params(r, c);
    put_machine(r, m);
    put_spread(r, "redist.store_s", store, 1);
    if (!store_only) {
        put_spread(r, "redist.run_s", ours, 1);
        put_spread(r, "redist.copy_s", copy, 1);
        esm_result_real(r, "redist.bandwidth_GBps", bandwidth);
        esm_result_real(r, "redist.copy_ratio", ours.median / copy.median);
        put_values(r, "redist.run_s_repeats", res[OURS].run, R);
        put_values(r, "redist.store_s_repeats", res[OURS].store, R);
    }
    if (!res[ALLTOALLW].enabled && !res[PETSC].enabled)
        esm_result_json(r, "peers", "{}");
    for (int k = ALLTOALLW; k < METHODS; k++) {
        if (!res[k].enabled)
            continue;
        char path[96];
        snprintf(path, sizeof path, "peers.%s.available", method_names[k]);
        esm_result_bool(r, path, res[k].available);
        snprintf(path, sizeof path, "peers.%s", method_names[k]);
        char *end = path + strlen(path);
        if (!res[k].available) {
            strcpy(end, ".why");
            esm_result_text(r, path, res[k].why);
            continue;
        }
        spread s = spread_of(res[k].store, R), t = spread_of(res[k].run, R);
        strcpy(end, ".store_s");
        put_spread(r, path, s, 1);
        strcpy(end, ".run_s");
        put_spread(r, path, t, 1);
        strcpy(end, ".ratio_to_ours");
        esm_result_real(r, path, t.median / ours.median);
        strcpy(end, ".passed");
        esm_result_bool(r, path, res[k].passed);
        strcpy(end, ".max_abs");
        esm_result_real(r, path, res[k].max_error);
    }
    return esm_result_finish(r);
}

static int run_mode(const config *c, const machine *m)
{
    const int store_only = !strcmp(c->mode, "store");
    bench b;
    memset(&b, 0, sizeof b);
    b.comm = MPI_COMM_WORLD, b.rank = rank, b.nranks = nranks;
    memcpy(b.dims, c->dims, sizeof b.dims);
    memcpy(b.src_parts, c->src_parts, sizeof b.src_parts);
    memcpy(b.dst_parts, c->dst_parts, sizeof b.dst_parts);
    b.nfields = c->nfields, b.type = c->type;
    b.esz = c->type == ESM_DOUBLE || c->type == ESM_INT64 ? 8 : 4;
    b.src_block = block_of(&b, b.src_parts, rank);
    b.dst_block = block_of(&b, b.dst_parts, rank);
    b.src_count = block_count(&b.src_block), b.dst_count = block_count(&b.dst_block);
    esm_fields fields = {c->nfields, c->type};
    int st;
    esm_distgrid *src, *dst;
    if ((st = esm_distgrid_create_blocks(MPI_COMM_WORLD, 3, c->dims, c->src_parts, NULL, &src)) ||
        (st = esm_distgrid_create_blocks(MPI_COMM_WORLD, 3, c->dims, c->dst_parts, NULL, &dst))) {
        if (rank == 0)
            fprintf(stderr, "redist-bench: %s\n", esm_error_message());
        return 1;
    }
    waves w = {{NULL}};
    method_result res[METHODS];
    memset(res, 0, sizeof res);
    res[OURS].enabled = res[OURS].available = 1;
    res[COPY].enabled = res[COPY].available = !store_only;
    const peer_ops *ops[METHODS] = {NULL, NULL, &alltoallw_peer, &petsc_peer};
    for (int k = ALLTOALLW; k < METHODS; k++) {
        res[k].enabled = c->peers[k] && !store_only;
        const char *why = res[k].enabled ? ops[k]->unavailable(&b) : "not asked for (--peers)";
        res[k].available = res[k].enabled && !why;
        if (why)
            snprintf(res[k].why, sizeof res[k].why, "%s", why);
    }
    int petsc_started = res[PETSC].available;
    if (petsc_started)
        petsc_start();
    if (!store_only) {
        size_t src_bytes = (size_t)b.src_count * b.nfields * b.esz,
               dst_bytes = (size_t)b.dst_count * b.nfields * b.esz;
        b.src = alloc_bundle(c, src, src_bytes);
        b.dst = alloc_bundle(c, dst, dst_bytes);
        int ok = b.src && b.dst, all_ok;
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (!all_ok) {
            if (rank == 0)
                fprintf(stderr,
                        "redist-bench: cannot allocate the bundles (%zu + %zu bytes per rank%s): "
                        "use a smaller --size or more ranks%s\n",
                        src_bytes, dst_bytes, c->shared_memory ? ", node-shared" : "",
                        c->shared_memory ? ", or --memory private" : "");
            return 1;
        }
        w = make_waves(&b);
        fill_source(&b, &w);
    }
    esm_route_info info = {0};
    double wall = MPI_Wtime();
    for (int r = 0; r < c->repeats; r++) {
        for (int k = 0; k < METHODS; k++) {
            method_result *mr = &res[k];
            if (!mr->available)
                continue;
            esm_route *route = NULL;
            peer *state = NULL;
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (k == OURS) {
                if ((st = esm_route_store(src, dst, fields, fields, &c->options, &route))) {
                    if (rank == 0)
                        fprintf(stderr, "redist-bench: esm_route_store: %s\n", esm_error_message());
                    return 1;
                }
            } else if (k != COPY) {
                char why[256] = "";
                int failed = ops[k]->setup(&b, &state, why, sizeof why), any;
                MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
                if (any) { /* a peer that cannot set up is reported, not fatal */
                    snprintf(mr->why, sizeof mr->why, "set-up failed: %s",
                             why[0] ? why : "on another rank");
                    mr->available = 0;
                    ops[k]->destroy(state);
                    continue;
                }
            }
            mr->store[r] = max_over_ranks(MPI_Wtime() - t0);
            if (k == OURS && r == 0)
                esm_route_get_info(route, &info);
            if (!store_only)
                mr->run[r] = time_runs(c, &b, k, route, ops[k], state, &w, &mr->max_error);
            if (route)
                esm_route_free(&route);
            if (state)
                ops[k]->destroy(state);
        }
    }
    wall = MPI_Wtime() - wall;
    if (petsc_started)
        petsc_stop();
    /* totals over ranks */
    int64_t moved = 0, messages = 0, route_bytes_max = 0, segments_max = 0;
    int peers_max = 0, single_copy = 0;
    MPI_Allreduce(&info.send_bytes, &moved, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&info.messages, &messages, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&info.route_bytes, &route_bytes_max, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&info.segments, &segments_max, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    int peers = info.send_peers > info.recv_peers ? info.send_peers : info.recv_peers;
    MPI_Allreduce(&peers, &peers_max, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&info.single_copy_peers, &single_copy, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int passed = 1;
    for (int k = 0; k < METHODS; k++) {
        res[k].passed = !res[k].available || k == COPY || store_only || res[k].max_error == 0;
        passed = passed && res[k].passed;
    }
    if (b.src)
        free_bundle(c, b.src);
    if (b.dst)
        free_bundle(c, b.dst);
    for (int d = 0; d < 3; d++)
        free(w.t[d]);
    esm_distgrid_free(&src);
    esm_distgrid_free(&dst);
    totals all = {moved, messages, route_bytes_max, segments_max, peers_max, single_copy};
    return report_run(c, m, res, &all, passed, wall);
}

int main(int argc, char **argv)
{
    esm_init(&argc, &argv, "redist-bench");
    rank = esm_rank(), nranks = esm_ranks();
    config cfg;
    bench_parse(argc, argv, &cfg, nranks);
    machine m = machine_state();
    esm_exit(!strcmp(cfg.mode, "store-scaling") ? store_scaling(&cfg, &m) : run_mode(&cfg, &m));
}
