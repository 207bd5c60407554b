/* redist-bench's statistics and output (esm_result.h): the spread of repeats, the parameters
 * and the machine's state in the result line, and the run and store modes' table and result. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_driver.h"

const char *const method_names[METHODS] = {"ours", "copy", "alltoallw", "petsc", "mct"};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

spread spread_of(const double *v, int n)
{
    double *s = malloc(n * sizeof(double));
    memcpy(s, v, n * sizeof(double));
    qsort(s, n, sizeof(double), cmp_double);
    spread r = {s[0], n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]), s[n - 1]};
    free(s);
    return r;
}

/* "<path>.min", ".median", ".max", times scale. */
void put_spread(esm_result *r, const char *path, spread s, double scale)
{
    const char *names[3] = {"min", "median", "max"};
    double values[3] = {s.min * scale, s.median * scale, s.max * scale};
    for (int k = 0; k < 3; k++) {
        char key[128];
        snprintf(key, sizeof key, "%s.%s", path, names[k]);
        esm_result_real(r, key, values[k]);
    }
}

__attribute__((format(printf, 2, 3))) void text_add(text *t, const char *format, ...)
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

void put_values(esm_result *r, const char *path, const double *v, int n)
{
    text t = {0};
    text_add(&t, "[");
    for (int i = 0; i < n; i++)
        text_add(&t, "%s%.17g", i ? ", " : "", v[i]);
    text_add(&t, "]");
    esm_result_json(r, path, t.text);
    free(t.text);
}

void put_params(esm_result *r, const config *c)
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

machine machine_state(void)
{
    machine m = {0, sysconf(_SC_NPROCESSORS_ONLN), 1};
    double load[1] = {0};
    if (getloadavg(load, 1) == 1)
        m.load = load[0];
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, esm_rank(), MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &m.node_ranks);
    MPI_Comm_free(&node);
    MPI_Bcast(&m.load, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return m;
}

void put_machine(esm_result *r, const machine *m)
{
    esm_result_real(r, "machine.load_1min", round(m->load * 100) / 100);
    esm_result_int(r, "machine.cores", m->cores);
    esm_result_int(r, "machine.ranks_per_node", m->node_ranks);
    esm_result_bool(r, "machine.oversubscribed", m->node_ranks > m->cores);
}

void bench_fatal(const char *what, int status)
{
    fprintf(stderr, "redist-bench: rank %d: %s: %s (%s)\n", esm_rank(), what, esm_error_message(),
            esm_status_name(status));
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* The table on rank 0's stdout and the result line; the exit status. Collective. */
int report_run(const config *c, const machine *m, const method_result res[], const totals *all,
               int passed, double wall)
{
    const int store_only = !strcmp(c->mode, "store"), R = c->repeats;
    spread ours = spread_of(res[OURS].run, R), store = spread_of(res[OURS].store, R);
    spread copy = store_only ? (spread){0, 0, 0} : spread_of(res[COPY].run, R);
    double bandwidth = store_only ? 0 : all->moved / ours.median / 1e9;
    /* The figure of merit: the whole bundle redistributed per second (every destination value,
     * moved between ranks or copied on one), so that one rank is a scaling base too. */
    double bundle =
        (double)c->dims[0] * c->dims[1] * c->dims[2] * c->nfields * esm_type_bytes(c->type);
    double rate = store_only ? 0 : bundle / ours.median / 1e9;
    if (esm_rank() == 0) {
        printf("redist-bench: %" PRId64 "x%" PRId64 "x%" PRId64
               " grid, %d %s fields, %d ranks (%s on %ld cores, load %.2f), %dx%dx%d -> %dx%dx%d\n",
               c->dims[0], c->dims[1], c->dims[2], c->nfields, c->type_text, esm_ranks(),
               m->node_ranks > m->cores ? "oversubscribed" : "not oversubscribed", m->cores,
               m->load, c->src_parts[0], c->src_parts[1], c->src_parts[2], c->dst_parts[0],
               c->dst_parts[1], c->dst_parts[2]);
        printf("bytes moved between ranks per run: %" PRId64
               "; options: comm %s, pack %s, bundle %s, local %s, single copy %s\n",
               all->moved, c->comm_text, c->pack_text, c->bundle_text, c->local_text,
               c->single_copy_text);
        printf("%-10s %12s %36s %8s %9s %s\n", "method", "store ms",
               "run ms (min / median / max of repeats)", "GB/s", "vs ours", "check");
        /* GB/s: bytes moved between ranks per second (the figure of merit is the bundle's) */
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
        esm_result_fom(r, rate, "GB/s", true);
    esm_result_verification(
        r, passed,
        store_only ? "store only: nothing moved"
        : c->verify_each
            ? "every destination value against the sine-wave formula after every run (destination "
              "poisoned before)"
            : "every destination value against the sine-wave formula after the last run");
    esm_result_norm(r, "max_abs", res[OURS].max_error);
    esm_result_int(r, "model.bytes_moved", all->moved);
    esm_result_real(r, "model.bytes_redistributed", bundle);
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
        esm_result_real(r, "redist.bandwidth_GBps", bandwidth); /* between ranks */
        esm_result_real(r, "redist.rate_GBps", rate);
        esm_result_real(r, "redist.copy_ratio", ours.median / copy.median);
        put_values(r, "redist.run_s_repeats", res[OURS].run, R);
        put_values(r, "redist.store_s_repeats", res[OURS].store, R);
    }
    int any_peer = 0;
    for (int k = ALLTOALLW; k < METHODS; k++)
        any_peer = any_peer || res[k].enabled;
    if (!any_peer)
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
        strcpy(end, ".run_s_repeats"); /* per repeat: ratios to another method in the same repeat */
        put_values(r, path, res[k].run, R);
        strcpy(end, ".store_s_repeats");
        put_values(r, path, res[k].store, R);
    }
    return esm_result_finish(r);
}
