/* redist-bench: the ESMF bundle-redistribution benchmark (P. Li, 2007; ../shared/seeds/003) on
 * libesmredist, with MPI_Alltoallw, PETSc VecScatter and MCT's Rearranger as peers in the same
 * run.
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
 * Modes: run (default); store (store only, no fields); store-scaling (bench_store_scaling.c: one
 * process computes the route of every rank of a layout of n ranks, n = 4 ... 65,536: block
 * routes need no communication). The table and the result line: bench_output.c. Command line
 * (esm_cli.h) and result (esm_result.h): docs/workloads.md; figures: docs/redist.md. It calls MPI itself where it measures MPI (barriers, the timing
 * reductions, the peers): it benchmarks libraries, it is not a model on the core. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_driver.h"

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

/* ---- modes run and store: the real thing on nranks ranks ------------------------------------ */

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
        if (check && ops && ops->prepare) /* the peer's own storage: source in, destination NaN */
            ops->prepare(b, state);
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
            fprintf(stderr, "redist-bench: rank %d: the %s run failed: %s\n", b->rank,
                    method_names[m], m == OURS ? esm_error_message() : "see above");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (s >= 0)
            times[s] = t;
        if (check && ops && ops->deliver)
            ops->deliver(b, state);
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

static int run_mode(const config *c, const machine *m)
{
    const int store_only = !strcmp(c->mode, "store"), rank = esm_rank();
    bench b;
    memset(&b, 0, sizeof b);
    b.comm = MPI_COMM_WORLD, b.rank = rank, b.nranks = esm_ranks();
    memcpy(b.dims, c->dims, sizeof b.dims);
    memcpy(b.src_parts, c->src_parts, sizeof b.src_parts);
    memcpy(b.dst_parts, c->dst_parts, sizeof b.dst_parts);
    b.nfields = c->nfields, b.type = c->type;
    b.esz = esm_type_bytes(c->type);
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
    const peer_ops *ops[METHODS] = {NULL, NULL, &alltoallw_peer, &petsc_peer, &mct_peer};
    for (int k = ALLTOALLW; k < METHODS; k++) {
        res[k].enabled = c->peers[k] && !store_only;
        const char *why = res[k].enabled ? ops[k]->unavailable(&b) : "not asked for (--peers)";
        res[k].available = res[k].enabled && !why;
        if (why)
            snprintf(res[k].why, sizeof res[k].why, "%s", why);
    }
    for (int k = ALLTOALLW; k < METHODS; k++)
        if (res[k].available && ops[k]->start)
            ops[k]->start(&b);
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
    for (int k = ALLTOALLW; k < METHODS; k++)
        if (res[k].available && ops[k]->stop)
            ops[k]->stop();
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
    config cfg;
    bench_parse(argc, argv, &cfg, esm_ranks());
    machine m = machine_state();
    esm_exit(!strcmp(cfg.mode, "store-scaling") ? store_scaling(&cfg, &m) : run_mode(&cfg, &m));
}
