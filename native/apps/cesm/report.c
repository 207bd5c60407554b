/* The CESM proxy's result line: the verification (the maps conserve and keep constants; the
 * coupled system's energy changes by the sunlight absorbed minus the longwave lost), checksums
 * of every component's state, the communication over the timed intervals summed over ranks,
 * the parameters and the timers. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "driver.h"

/* Energy of every component and of the coupler's in-transit fluxes, and the external forcing
 * so far: [atm, lnd, ice, ocn, cpl, sw_lnd, sw_ice, sw_ocn, olr]. Collective. */
void energies(cesm_run *run, double out[9])
{
    esm_sum s[9] = {{0}};
    atm_energy(&run->atm, &s[0]);
    lnd_energy(&run->lnd, &s[1]);
    ice_energy(&run->ice, &s[2]);
    ocn_energy(&run->ocn, &s[3]);
    coupler_energy(&run->cpl, run->dt, &s[4]);
    esm_sum_add_array(&s[5], run->lnd.sw, run->lnd.pts.n);
    esm_sum_add_array(&s[6], run->ice.sw, run->ice.pts.n);
    esm_sum_add_array(&s[7], run->cpl.ocean_sw, run->cpl.o.n);
    esm_sum_add_array(&s[8], run->atm.olr, run->atm.pts.n);
    esm_global_sums(s, 9, out);
}

static void checksum_of(esm_result *r, const char *name, const cesm_points *pts, const double *v,
                        const long *at)
{
    uint64_t sum = 0;
    for (long p = 0; p < pts->n; p++)
        esm_checksum_add(&sum, pts->global[p], v[at ? at[p] : p]);
    char hex[24], path[64];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)esm_global_checksum(sum));
    snprintf(path, sizeof path, "checksum.%s", name);
    esm_result_text(r, path, hex);
}

/* Per component: the points each of its ranks worked on per timed interval, min, mean and
 * max over its ranks, and their load balance mean / max (the POP metric's definition). */
static void work_figures(esm_result *r, const cesm_run *run)
{
    static const char *names[CESM_WORK_N] = {"atm", "atm_radiation", "lnd", "ice", "ocn"};
    double hi[CESM_WORK_N], lo[CESM_WORK_N]; /* max of v and of -v over the members */
    long sum[2 * CESM_WORK_N];               /* points over the members; members */
    for (int c = 0; c < CESM_WORK_N; c++) {
        bool member = c == CESM_WORK_OCN ? run->in_ocn : run->in_atm;
        double v = (double)(run->work1[c] - run->work0[c]) / run->steps;
        hi[c] = member ? v : -1.0;
        lo[c] = member ? -v : -1e300;
        sum[c] = member ? run->work1[c] - run->work0[c] : 0;
        sum[CESM_WORK_N + c] = member;
    }
    esm_global_max(hi, CESM_WORK_N);
    esm_global_max(lo, CESM_WORK_N);
    esm_global_sum_long(sum, 2 * CESM_WORK_N);
    for (int c = 0; c < CESM_WORK_N; c++) {
        double mean = (double)sum[c] / run->steps / sum[CESM_WORK_N + c];
        char path[64];
        snprintf(path, sizeof path, "work.%s.min", names[c]);
        esm_result_real(r, path, -lo[c]);
        snprintf(path, sizeof path, "work.%s.mean", names[c]);
        esm_result_real(r, path, mean);
        snprintf(path, sizeof path, "work.%s.max", names[c]);
        esm_result_real(r, path, hi[c]);
        snprintf(path, sizeof path, "work.%s.load_balance", names[c]);
        esm_result_real(r, path, hi[c] > 0 ? mean / hi[c] : 1.0);
    }
}

int report(cesm_run *run, const double e0[9], const double e1[9], double constant_error)
{
    long steps = run->steps, intervals = run->steps + run->warmup;
    esm_result *r = esm_result_new("cesm", run->deck->name, steps);

    /* verification */
    double content0 = e0[0] + e0[1] + e0[2] + e0[3] + e0[4];
    double content1 = e1[0] + e1[1] + e1[2] + e1[3] + e1[4];
    double sw = e1[5] + e1[6] + e1[7], olr = e1[8];
    double residual = (content1 - content0) - (sw - olr);
    double closure = fabs(residual) / (sw + olr);
    double magnitude = fabs(e1[0]) + fabs(e1[1]) + fabs(e1[2]) + fabs(e1[3]) + fabs(e1[4]);
    esm_sum parts[6] = {{0}};
    const coupler *c = &run->cpl;
    long source_points[2] = {c->a.n, c->o.n}, destination_points[2] = {c->o.n, c->a.n};
    for (int k = 0; k < 2; k++) { /* map k: a2o shortwave, o2a heat flux */
        esm_sum_add_array(&parts[k], c->map_src[k], source_points[k]);
        esm_sum_add_array(&parts[2 + k], c->map_dst[k], destination_points[k]);
        esm_sum_add_array(&parts[4 + k], c->map_gross[k], source_points[k]);
    }
    double m[6];
    esm_global_sums(parts, 6, m);
    double map_sw = fabs(m[2] - m[0]) / m[4], map_flux = fabs(m[3] - m[1]) / m[5];
    bool passed =
        map_sw <= 1e-12 && map_flux <= 1e-12 && constant_error <= 1e-13 && closure <= 1e-11;
    if (esm_folded()) /* the kernels ran on their first calls only: the values mean nothing */
        esm_result_unverified(r, "not verified: folded run");
    else {
        esm_result_verification(r, passed,
                                "conservative maps (global integrals equal on both "
                                "grids, constants kept); coupled energy budget closed: change = "
                                "absorbed sunlight - outgoing longwave");
        esm_result_norm(r, "map_a2o_conservation", map_sw);
        esm_result_norm(r, "map_o2a_conservation", map_flux);
        esm_result_norm(r, "map_constant_error", constant_error);
        esm_result_norm(r, "energy_closure", closure);
        esm_result_norm(r, "energy_closure_of_content", fabs(residual) / magnitude);
    }
    esm_result_real(r, "energy.residual_J", residual);
    esm_result_real(r, "energy.change_J", content1 - content0);
    esm_result_real(r, "energy.sw_absorbed_J", sw);
    esm_result_real(r, "energy.olr_J", olr);
    const char *names[] = {"atm", "lnd", "ice", "ocn", "cpl_in_transit"};
    for (int k = 0; k < 5; k++) {
        char path[64];
        snprintf(path, sizeof path, "energy.%s_J", names[k]);
        esm_result_real(r, path, e1[k]);
    }
    checksum_of(r, "atm", &run->atm.pts, run->atm.t, run->atm.at);
    checksum_of(r, "lnd", &run->lnd.pts, run->lnd.t, NULL);
    checksum_of(r, "ice", &run->ice.pts, run->ice.h, NULL);
    checksum_of(r, "ocn", &run->ocn.pts, run->ocn.t, run->ocn.at);
    checksum_of(r, "cpl_x2o", &run->cpl.o, run->cpl.x2o[X2O_HEAT], NULL);

    /* performance: counts over the timed intervals, summed over ranks */
    long mine[] = {
        run->counts1.isend - run->counts0.isend,
        run->counts1.irecv - run->counts0.irecv,
        run->rc1.wait - run->rc0.wait,
        run->counts1.waitall - run->counts0.waitall,
        run->counts1.barrier - run->counts0.barrier,
        run->gc1.bcast - run->gc0.bcast,
        run->counts1.allreduce - run->counts0.allreduce,
        (run->rc1.messages - run->rc0.messages) + (run->counts1.messages - run->counts0.messages),
        (run->rc1.bytes_sent - run->rc0.bytes_sent) +
            (run->counts1.bytes_sent - run->counts0.bytes_sent),
        run->bytes_written,
        run->files_written,
        esm_rearranger_bytes(run->cpl.a2o.gather) + esm_rearranger_bytes(run->cpl.o2a.gather),
        run->cpl.a2o.nnz + run->cpl.o2a.nnz,
        run->lnd.pts.n,
        run->input_bytes,
        run->input_broadcasts,
        run->input_bad,
    };
    enum { N = sizeof mine / sizeof *mine };
    long total[N];
    memcpy(total, mine, sizeof mine);
    esm_global_sum_long(total, N);
    double slowest = run->wall;
    esm_global_max(&slowest, 1);
    esm_result_wall(r, slowest);
    double years = steps * run->dt / (365.0 * 86400.0);
    esm_result_fom(r, years / (slowest / 86400.0), "SYPD", true);
    const char *per[] = {"isend", "irecv",     "wait",     "waitall",   "barrier",
                         "bcast", "allreduce", "messages", "bytes_sent"};
    for (int k = 0; k < 9; k++) {
        char path[96];
        snprintf(path, sizeof path, "model.%s_per_interval", per[k]);
        esm_result_real(r, path, (double)total[k] / steps);
    }
    esm_result_real(r, "model.map_bytes_per_interval",
                    8.0 *
                        (A2X_N * (double)run->ocn_g.nactive + 3.0 * run->atm_g.nx * run->atm_g.ny));
    esm_result_real(r, "model.map_gather_bytes_per_interval", (double)total[11]);
    esm_result_int(r, "model.map_nonzeros", total[12]);
    esm_result_real(r, "model.simulated_days", steps * run->dt / 86400.0);

    esm_result_int(r, "driver.intervals", intervals);
    esm_result_int(r, "driver.barriers", total[4]);
    esm_result_int(r, "driver.bcasts", total[5]);
    esm_result_int(r, "io.bytes_written", total[9]);
    esm_result_int(r, "io.files", total[10]);
    if (total[16]) /* the start-up input's check (input.c), in this reduction: no call of its own */
        esm_fail("the start-up input's broadcasts arrived changed on %ld ranks", total[16]);
    if (!strcmp(run->input, "cesm")) { /* the start-up input (input.c) */
        double waited = esm_fold_counts_mine()->file_system_seconds;
        esm_global_max(&waited, 1);
        esm_result_int(r, "input.bytes_read", total[14]);
        esm_result_int(r, "input.broadcasts", total[15]);
        esm_result_int(r, "input.map_weights", run->map_weights);
        esm_result_real(r, "input.file_system_seconds_max", waited);
    }

    esm_rearrange_counts rc = esm_rearrange_counts_mine();
    esm_group_counts gc = esm_group_counts_mine();
    long all[] = {rc.wait,      rc.rearranges, rc.messages, rc.bytes_sent,
                  rc.allgather, rc.allgatherv, gc.bcast,    gc.comm_split};
    esm_global_sum_long(all, 8);
    const char *cn[] = {"wait",      "rearranges", "messages", "bytes_sent",
                        "allgather", "allgatherv", "bcast",    "comm_split"};
    for (int k = 0; k < 8; k++) {
        char path[64];
        snprintf(path, sizeof path, "coupling_comm.%s", cn[k]);
        esm_result_int(r, path, all[k]);
    }

    esm_result_text(r, "params.layout", run->layout);
    esm_result_text(r, "params.barriers", run->barriers);
    esm_result_text(r, "params.output", run->output);
    esm_result_text(r, "params.fault", run->fault);
    esm_result_text(r, "params.work", run->work);
    esm_result_text(r, "params.cost", run->cost);
    esm_result_text(r, "params.input", run->input);
    work_figures(r, run);
    esm_result_int(r, "params.warmup", run->warmup);
    esm_result_real(r, "params.dt", run->dt);
    esm_result_int(r, "params.atm_nx", run->atm_g.nx);
    esm_result_int(r, "params.atm_ny", run->atm_g.ny);
    esm_result_int(r, "params.ocn_nx", run->ocn_g.nx);
    esm_result_int(r, "params.ocn_ny", run->ocn_g.ny);
    const char *blocked[] = {"atm", "lnd", "ice", "ocn"};
    for (int c = 0; c < 4; c++) {
        char path[40], size[24];
        snprintf(path, sizeof path, "params.%s_block", blocked[c]);
        snprintf(size, sizeof size, "%dx%d", run->block[c][0], run->block[c][1]);
        esm_result_text(r, path, size);
    }
    esm_result_int(r, "params.ocean_points", run->ocn_g.nactive);
    esm_result_int(r, "params.land_points", total[13]);
    esm_result_int(r, "params.cpl_ranks", run->cpl_ranks);
    esm_result_int(r, "params.ocn_ranks", run->ocn_ranks);
    esm_result_int(r, "params.ocn_first_rank", run->ocn_first);
    esm_result_int(r, "params.atm_substeps", run->atm_substeps);
    esm_result_int(r, "params.ocn_substeps", run->ocn_substeps);
    esm_timer *timers[] = {&run->t_atm, &run->t_lnd,       &run->t_ice,     &run->t_ocn,
                           &run->t_cpl, &run->t_rearrange, &run->t_barrier, &run->t_bcast,
                           &run->t_io,  &run->t_input};
    esm_result_timers(r, timers, 10);
    return esm_result_finish(r);
}
