/* The JSON result line: a small ordered tree of keys, printed once. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "esm_internal.h"
#include "esm_result.h"

typedef struct node {
    char key[64];
    char *value;            /* rendered JSON; NULL for an object */
    struct node **child;
    int nchild;
} node;

struct esm_result {
    node *root;
    bool passed;
};

static node *new_node(const char *key, int length)
{
    node *n = esm_calloc(1, sizeof *n);
    snprintf(n->key, sizeof n->key, "%.*s", length, key);
    return n;
}

/* The node at `path` (dotted), made with its parents when missing. */
static node *at(node *root, const char *path)
{
    node *n = root;
    while (*path) {
        int length = (int)strcspn(path, ".");
        node *found = NULL;
        for (int c = 0; c < n->nchild && !found; c++)
            if ((int)strlen(n->child[c]->key) == length && !strncmp(n->child[c]->key, path, length))
                found = n->child[c];
        if (!found) {
            found = new_node(path, length);
            n->child = esm_realloc(n->child, (n->nchild + 1) * sizeof *n->child);
            n->child[n->nchild++] = found;
        }
        n = found;
        path += length + (path[length] == '.');
    }
    return n;
}

static void set(esm_result *r, const char *path, const char *rendered)
{
    node *n = at(r->root, path);
    free(n->value);
    n->value = strdup(rendered);
}

void esm_result_json(esm_result *r, const char *path, const char *rendered)
{
    set(r, path, rendered);
}

/* "<path>": [v0, v1, ...] of one long per rank of the world, gathered to rank 0 (uncounted:
 * the figures it reports must not change by being reported). */
static void per_rank(esm_result *r, const char *path, long mine)
{
    int rank, ranks;
    MPI_Comm_rank(esm_comm_world(), &rank);
    MPI_Comm_size(esm_comm_world(), &ranks);
    long *all = rank == 0 ? esm_calloc((size_t)ranks, sizeof *all) : NULL;
    MPI_Gather(&mine, 1, MPI_LONG, all, 1, MPI_LONG, 0, esm_comm_world());
    if (rank == 0) {
        char *text = esm_calloc((size_t)ranks * 22 + 4, 1);
        size_t k = 0;
        text[k++] = '[';
        for (int i = 0; i < ranks; i++)
            k += (size_t)sprintf(text + k, i ? ", %ld" : "%ld", all[i]);
        text[k++] = ']';
        set(r, path, text);
        free(text);
        free(all);
    }
}

void esm_result_real(esm_result *r, const char *path, double value)
{
    char text[40];
    if (isfinite(value))
        snprintf(text, sizeof text, "%.17g", value);
    else
        snprintf(text, sizeof text, "null");
    set(r, path, text);
}

void esm_result_int(esm_result *r, const char *path, long value)
{
    char text[32];
    snprintf(text, sizeof text, "%ld", value);
    set(r, path, text);
}

void esm_result_bool(esm_result *r, const char *path, bool value)
{
    set(r, path, value ? "true" : "false");
}

void esm_result_text(esm_result *r, const char *path, const char *value)
{
    size_t size = 2 * strlen(value) + 8, k = 0;
    char *text = esm_calloc(size * 3, 1);
    text[k++] = '"';
    for (const unsigned char *c = (const unsigned char *)value; *c; c++) {
        if (*c == '"' || *c == '\\')
            k += sprintf(text + k, "\\%c", *c);
        else if (*c < 0x20)
            k += sprintf(text + k, "\\u%04x", *c);
        else
            text[k++] = (char)*c;
    }
    text[k++] = '"';
    set(r, path, text);
    free(text);
}

esm_result *esm_result_new(const char *workload, const char *size, long steps)
{
    esm_result *r = esm_calloc(1, sizeof *r);
    r->root = new_node("", 0);
    esm_result_text(r, "workload", workload);
    esm_result_text(r, "size", size);
    esm_result_int(r, "ranks", esm_ranks());
    esm_result_int(r, "steps", steps);
    esm_result_real(r, "wall", 0);
    esm_result_fom(r, 0, "", true);
    esm_result_verification(r, false, "not run");
    at(r->root, "verification.norms");
    at(r->root, "model");
    at(r->root, "params");
    return r;
}

void esm_result_wall(esm_result *r, double seconds)
{
    esm_result_real(r, "wall", seconds);
}

void esm_result_fom(esm_result *r, double value, const char *unit, bool higher_is_better)
{
    esm_result_real(r, "fom.value", value);
    esm_result_text(r, "fom.unit", unit);
    esm_result_bool(r, "fom.higher_is_better", higher_is_better);
}

void esm_result_verification(esm_result *r, bool passed, const char *what)
{
    r->passed = passed;
    esm_result_bool(r, "verification.passed", passed);
    esm_result_text(r, "verification.what", what);
}

void esm_result_unverified(esm_result *r, const char *why)
{
    r->passed = true; /* nothing failed */
    esm_result_json(r, "verification.passed", "null");
    esm_result_text(r, "verification.what", why);
}

void esm_result_norm(esm_result *r, const char *name, double value)
{
    char path[128];
    snprintf(path, sizeof path, "verification.norms.%s", name);
    esm_result_real(r, path, value);
}

void esm_result_timers(esm_result *r, esm_timer *const timers[], int n)
{
    double *max = esm_calloc(2 * n + 1, sizeof *max), *min = max + n;
    for (int t = 0; t < n; t++)
        max[t] = min[t] = timers[t]->total;
    double *in = esm_calloc(n + 1, sizeof *in);
    memcpy(in, max, n * sizeof *in);
    esm_allreduce(in, max, n, MPI_DOUBLE, MPI_MAX);
    memcpy(in, min, n * sizeof *in);
    esm_allreduce(in, min, n, MPI_DOUBLE, MPI_MIN);
    for (int t = 0; t < n; t++) {
        char path[128];
        snprintf(path, sizeof path, "timers.%s", timers[t]->name);
        esm_result_real(r, path, max[t]);
        snprintf(path, sizeof path, "timers_min.%s", timers[t]->name);
        esm_result_real(r, path, min[t]);
    }
    free(in);
    free(max);
}

static void print_node(const node *n, FILE *out)
{
    if (n->value) {
        fputs(n->value, out);
        return;
    }
    fputc('{', out);
    for (int c = 0; c < n->nchild; c++) {
        fprintf(out, "%s\"%s\": ", c ? ", " : "", n->child[c]->key);
        print_node(n->child[c], out);
    }
    fputc('}', out);
}

static void free_node(node *n)
{
    for (int c = 0; c < n->nchild; c++)
        free_node(n->child[c]);
    free(n->child);
    free(n->value);
    free(n);
}

int esm_result_finish(esm_result *r)
{
    esm_counts c = esm_counts_total();
    const char *names[] = {"isend",        "irecv",    "send_init", "recv_init",
                           "startall",     "waitall",  "allreduce", "barrier",
                           "halo_updates", "messages", "bytes_sent"};
    long values[] = {c.isend,     c.irecv,   c.send_init,    c.recv_init, c.startall,  c.waitall,
                     c.allreduce, c.barrier, c.halo_updates, c.messages,  c.bytes_sent};
    int world;
    MPI_Comm_size(esm_comm_world(), &world);
    long any = c.allreduce > world; /* esm_counts_total's own reduction does not count */
    for (int k = 0; k < 11; k++)
        any |= k != 6 && values[k];
    for (int k = 0; k < 11 && any; k++) {
        char path[64];
        snprintf(path, sizeof path, "comm.%s", names[k]);
        esm_result_int(r, path, values[k]);
    }
    esm_fold_report(r);
    const char *wanted = getenv("ESM_RESULT_PER_RANK");
    if (wanted && *wanted && strcmp(wanted, "0") != 0) {
        const esm_counts *mine = esm_counts_mine();
        per_rank(r, "comm_per_rank.messages", mine->messages);
        per_rank(r, "comm_per_rank.bytes_sent", mine->bytes_sent);
    }
    if (esm_rank() == 0) {
        fflush(stdout);
        print_node(r->root, stdout);
        fputc('\n', stdout);
        fflush(stdout);
    }
    int status = r->passed ? ESM_EXIT_OK : ESM_EXIT_VERIFY_FAILED;
    free_node(r->root);
    free(r);
    return status;
}
