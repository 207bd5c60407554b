/* The result bookkeeping the workloads share (esm_report.h). */
#include <stdio.h>
#include "esm_report.h"
#include "esm_sum.h"

bool esm_report_verification(esm_result *r, bool passed, const char *what)
{
    if (esm_folded()) { /* the fields are shared between ranks: their values mean nothing */
        esm_result_unverified(r, "not verified: folded run");
        return false;
    }
    esm_result_verification(r, passed, what);
    return true;
}

void esm_report_grid(esm_result *r, int nx, int ny, int nz, int bx, int by)
{
    esm_result_int(r, "params.nx", nx);
    esm_result_int(r, "params.ny", ny);
    esm_result_int(r, "params.nz", nz);
    if (bx > 0 && by > 0) {
        esm_result_int(r, "params.bx", bx);
        esm_result_int(r, "params.by", by);
    }
}

void esm_report_decomp(esm_result *r, const esm_decomp *d)
{
    esm_result_text(r, "params.distribution", d->method);
    esm_result_int(r, "params.blocks", d->nblocks);
    esm_result_int(r, "params.land_blocks", d->land_blocks);
    esm_result_int(r, "params.idle_ranks", d->idle_ranks);
    esm_result_int(r, "params.blocks_per_rank_min", d->min_blocks);
    esm_result_int(r, "params.blocks_per_rank_max", d->max_blocks);
    esm_result_int(r, "params.ocean_points", d->ocean_points);
    esm_result_real(r, "params.load_imbalance",
                    d->max_rank_points * (double)esm_ranks() / d->ocean_points);
}

void esm_report_counts(esm_result *r, const esm_counts *before, const esm_counts *after, long steps)
{
    long total[3] = {after->messages - before->messages, after->bytes_sent - before->bytes_sent,
                     after->halo_updates - before->halo_updates};
    esm_global_sum_long(total, 3);
    int ranks = esm_ranks();
    esm_result_real(r, "model.messages_per_step", (double)total[0] / ranks / steps);
    esm_result_real(r, "model.halo_bytes_per_step", (double)total[1] / ranks / steps);
    esm_result_real(r, "model.halo_updates_per_step", (double)total[2] / ranks / steps);
    esm_result_real(r, "model.allreduces_per_step",
                    (double)(after->allreduce - before->allreduce) / steps);
}

void esm_report_stream(esm_result *r, esm_stream stream)
{
    if (stream.triad_GBps <= 0)
        return;
    esm_result_real(r, "stream.triad_GBps", stream.triad_GBps);
    esm_result_real(r, "stream.megabytes_per_array", stream.megabytes);
}

void esm_report_kernel(esm_result *r, const char *name, double GBps, esm_stream stream)
{
    char path[96];
    snprintf(path, sizeof path, "kernels.%s.GBps", name);
    esm_result_real(r, path, GBps);
    if (stream.triad_GBps > 0) {
        snprintf(path, sizeof path, "kernels.%s.fraction", name);
        esm_result_real(r, path, GBps / stream.triad_GBps);
    }
}
