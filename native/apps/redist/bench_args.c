/* redist-bench's command line on esm_cli.h (docs/redist.md lists the options), and the seed's
 * layouts by rank count. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_driver.h"

static const esm_deck decks[] = {
    {"M", 512, 1024, 16, 0, 0, 50, "the seed's grid"},
    {"S", 128, 256, 16, 0, 0, 50, "seconds on 2 cores"},
    {"L", 2048, 4096, 8, 0, 0, 50, "the seed's large grid, 16 GB per bundle"},
};

/* The seed's Table 1 (512x1024x16), by rank count; beyond 2048 the same alternation continues
 * (src 2^floor(m/2) x 2^ceil(m/2), dst twice as many along i); other counts: Px1 -> 1xP. */
void seed_layout(int64_t n, int src[3], int dst[3])
{
    static const int table[][5] = {
        {4, 4, 1, 1, 4},        {8, 2, 4, 4, 2},       {16, 2, 8, 8, 2},     {32, 4, 8, 16, 2},
        {64, 4, 16, 16, 4},     {128, 8, 16, 32, 4},   {256, 16, 16, 32, 8}, {512, 32, 16, 16, 32},
        {1024, 32, 32, 64, 16}, {2048, 32, 64, 64, 32}};
    src[2] = dst[2] = 1;
    for (size_t t = 0; t < sizeof table / sizeof *table; t++)
        if (table[t][0] == n) {
            src[0] = table[t][1], src[1] = table[t][2], dst[0] = table[t][3], dst[1] = table[t][4];
            return;
        }
    int m = 0;
    while (((int64_t)1 << m) < n)
        m++;
    if (n > 2048 && ((int64_t)1 << m) == n) {
        src[0] = 1 << (m / 2), src[1] = 1 << (m - m / 2);
        dst[0] = 1 << (m / 2 + 1), dst[1] = 1 << (m - m / 2 - 1);
        return;
    }
    src[0] = (int)n, src[1] = 1, dst[0] = 1, dst[1] = (int)n;
}

/* "AxB" or "AxBxC" (missing extents are 1): the count of extents given, 0 when malformed. */
static int parse_extents(const char *text, int64_t out[3], int64_t most)
{
    int64_t v[3] = {1, 1, 1};
    int k = 0;
    for (const char *p = text; k < 3;) {
        char *end;
        errno = 0;
        long long x = strtoll(p, &end, 10);
        if (errno || end == p || x < 1 || x > most)
            return 0;
        v[k++] = x;
        if (*end == '\0')
            break;
        if (*end != 'x' || k == 3)
            return 0;
        p = end + 1;
    }
    memcpy(out, v, sizeof v);
    return k;
}

static int index_of(const char *value, const char *choices)
{
    int i = 0;
    for (const char *c = choices; *c; i++) {
        size_t n = strcspn(c, ",");
        if (n == strlen(value) && !strncmp(c, value, n))
            return i;
        c += n + (c[n] == ',');
    }
    return 0;
}

/* Layouts for the rank count: each has one block per rank, and no more blocks than points
 * along a dimension. */
static void check_layouts(esm_cli *cli, const config *c, int nranks)
{
    for (int s = 0; s < 2; s++) {
        const int *parts = s ? c->dst_parts : c->src_parts;
        const char *which = s ? "destination" : "source";
        int64_t blocks = (int64_t)parts[0] * parts[1] * parts[2];
        if (blocks != nranks)
            esm_cli_problem(cli,
                            "the %s layout %dx%dx%d has %" PRId64 " blocks for %d ranks: give "
                            "--src-parts and --dst-parts whose products are %d",
                            which, parts[0], parts[1], parts[2], blocks, nranks, nranks);
        for (int d = 0; d < 3; d++)
            if (parts[d] > c->dims[d])
                esm_cli_problem(cli,
                                "the %s layout has %d blocks along dimension %d of only %" PRId64
                                " points: use fewer ranks or a larger grid",
                                which, parts[d], d, c->dims[d]);
    }
}

/* --peers: all, none, or a comma-separated list of peer names (alltoallw,mct). */
static void parse_peers(esm_cli *cli, config *c)
{
    int all = !strcmp(c->peers_text, "all");
    if (all || !strcmp(c->peers_text, "none")) {
        for (int k = ALLTOALLW; k < METHODS; k++)
            c->peers[k] = all;
        return;
    }
    char copy[128];
    snprintf(copy, sizeof copy, "%s", c->peers_text);
    for (char *t = strtok(copy, ","); t; t = strtok(NULL, ",")) {
        int k = ALLTOALLW;
        while (k < METHODS && strcmp(t, method_names[k]))
            k++;
        if (k == METHODS) {
            esm_cli_problem(cli,
                            "invalid value --peers %s: use all, none or a comma-separated list of "
                            "alltoallw, petsc, mct",
                            c->peers_text);
            return;
        }
        c->peers[k] = 1;
    }
}

void bench_parse(int argc, char **argv, config *c, int nranks)
{
    memset(c, 0, sizeof *c);
    esm_cli *cli = esm_cli_begin(argc, argv,
                                 "redist-bench: the ESMF bundle-redistribution "
                                 "benchmark on libesmredist (docs/redist.md)");
    const esm_deck *deck = esm_cli_size(cli, decks, sizeof decks / sizeof *decks);
    c->size = deck->name;
    c->dims[0] = deck->nx, c->dims[1] = deck->ny, c->dims[2] = deck->nz;
    c->steps = (int)esm_cli_int(cli, "steps", deck->steps, 1, 1000000, "runs timed per repeat");
    c->repeats = (int)esm_cli_int(cli, "repeats", 10, 1, MAX_REPEATS, "repeats of store + runs");
    c->nfields = (int)esm_cli_int(cli, "fields", 8, 1, 64, "fields in the bundle");
    c->type_text = esm_cli_choice(cli, "type", "double,float,int32,int64", "element type");
    c->type = (esm_type)index_of(c->type_text, "double,float,int32,int64");
    static const char deck_grid[] = "the size's";
    const char *grid =
        esm_cli_text(cli, "grid", deck_grid, "NXxNYxNZ: any grid instead of --size's");
    if (grid != deck_grid) {
        if (parse_extents(grid, c->dims, INT64_MAX) != 3)
            esm_cli_problem(cli, "invalid value --grid %s: give three sizes, e.g. 512x1024x16",
                            grid);
        c->size = "custom";
    }
    static const char table[] = "Table 1";
    const char *parts[2] = {
        esm_cli_text(cli, "src-parts", table,
                     "AxB[xC] source blocks per dimension (the seed's Table 1 by rank count)"),
        esm_cli_text(cli, "dst-parts", table, "AxB[xC] destination blocks per dimension")};
    if ((parts[0] == table) != (parts[1] == table))
        esm_cli_problem(cli,
                        "give both --src-parts and --dst-parts, or neither (the seed's Table 1)");
    if (parts[0] == table)
        seed_layout(nranks, c->src_parts, c->dst_parts);
    for (int s = 0; s < 2 && parts[0] != table && parts[1] != table; s++) {
        int64_t ext[3];
        if (!parse_extents(parts[s], ext, 1 << 20))
            esm_cli_problem(cli,
                            "invalid value --%s %s: give blocks per dimension, e.g. 4x1 or 4x1x1",
                            s ? "dst-parts" : "src-parts", parts[s]);
        for (int d = 0; d < 3; d++)
            (s ? c->dst_parts : c->src_parts)[d] = (int)ext[d];
    }
    esm_route_options_default(&c->options);
    c->comm_text = esm_cli_choice(cli, "comm", "async,sync,persistent", "how routes communicate");
    c->options.comm = (esm_comm_mode)index_of(c->comm_text, "async,sync,persistent");
    c->pack_text = esm_cli_choice(cli, "pack", "pet,xp,none,datatype", "how messages are packed");
    c->options.pack = (esm_pack_mode)index_of(c->pack_text, "pet,xp,none,datatype");
    c->bundle_text = esm_cli_choice(cli, "bundle", "on,off", "one message per peer for all fields");
    c->options.bundle = !strcmp(c->bundle_text, "on");
    c->local_text = esm_cli_choice(cli, "local", "direct,mpi", "a rank's own part: copied or sent");
    c->options.local_direct = !strcmp(c->local_text, "direct");
    c->single_copy_text =
        esm_cli_choice(cli, "single-copy", "on,off", "node-shared peers copy directly");
    c->options.single_copy = !strcmp(c->single_copy_text, "on");
    c->peers_text = esm_cli_text(
        cli, "peers", "all", "peers run beside ours: all, none or a list of alltoallw,petsc,mct");
    parse_peers(cli, c);
    c->verify_text =
        esm_cli_choice(cli, "verify", "each,last", "check after every run or the last");
    c->verify_each = !strcmp(c->verify_text, "each");
    c->memory_text =
        esm_cli_choice(cli, "memory", "shared,private", "bundles node-shared or malloc'ed");
    c->shared_memory = !strcmp(c->memory_text, "shared");
    c->mode = esm_cli_choice(cli, "mode", "run,store,store-scaling", "what is timed");
    const char *ranks =
        esm_cli_text(cli, "store-ranks", "4,8,...,65536", "store-scaling: rank counts");
    if (ranks == esm_cli_given(cli, "store-ranks")) {
        char copy[512];
        snprintf(copy, sizeof copy, "%s", ranks);
        for (char *t = strtok(copy, ","); t; t = strtok(NULL, ",")) {
            int64_t n[3];
            if (c->n_store_ranks == MAX_STORE_RANKS || parse_extents(t, n, 1 << 24) != 1) {
                esm_cli_problem(cli,
                                "invalid value --store-ranks %s: give up to %d rank counts, "
                                "e.g. 4,8,16",
                                ranks, MAX_STORE_RANKS);
                break;
            }
            c->store_ranks[c->n_store_ranks++] = n[0];
        }
    } else {
        for (int64_t n = 4; n <= 65536; n *= 2)
            c->store_ranks[c->n_store_ranks++] = n;
    }
    if (strcmp(c->mode, "store-scaling"))
        check_layouts(cli, c, nranks);
    esm_cli_end(cli);
}
