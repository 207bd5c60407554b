/* esm_report.h: the bookkeeping every workload's result shares, under one vocabulary of keys
 * (docs/workloads.md, "Result keys"): the grid and its decomposition into blocks, the core's
 * halo and reduction counts over the timed steps, and the STREAM roofline with each kernel's
 * bandwidth against it. Each call adds keys to an esm_result (esm_result.h).
 *
 *     esm_report_grid(r, nx, ny, nz, bx, by);
 *     esm_report_decomp(r, &grid->d);
 *     esm_report_counts(r, &counts_at_start, esm_counts_mine(), steps);   // collective
 *     esm_stream s = esm_stream_triad(64.0, 10);                            // collective
 *     esm_report_stream(r, s);
 *     esm_report_kernel(r, "tracer", tracer_GBps, s);
 */
#ifndef ESM_REPORT_H
#define ESM_REPORT_H
#include "esm_comm.h"
#include "esm_decomp.h"
#include "esm_fold.h"
#include "esm_result.h"
#include "esm_stream.h"

/* verification.passed and .what; in a folded run (esm_fold.h) "not verified: folded run"
 * instead. Returns whether the run's norms mean something (false when folded). */
bool esm_report_verification(esm_result *r, bool passed, const char *what);

/* params.nx, params.ny, params.nz (vertical levels or layers), params.bx, params.by (the block
 * size; left out when 0). */
void esm_report_grid(esm_result *r, int nx, int ny, int nz, int bx, int by);

/* params.distribution, params.blocks (ocean blocks kept), params.land_blocks (dropped),
 * params.idle_ranks, params.blocks_per_rank_min, params.blocks_per_rank_max,
 * params.ocean_points, params.load_imbalance (ocean points of the busiest rank over the
 * mean). */
void esm_report_decomp(esm_result *r, const esm_decomp *d);

/* Over the timed steps (the counts at their start and end): model.messages_per_step,
 * model.halo_bytes_per_step and model.halo_updates_per_step as means per rank,
 * model.allreduces_per_step (every rank makes the same). Collective. */
void esm_report_counts(esm_result *r, const esm_counts *before, const esm_counts *after,
                       long steps);

/* stream.triad_GBps and stream.megabytes_per_array; nothing when STREAM was not run (0 GB/s). */
void esm_report_stream(esm_result *r, esm_stream stream);

/* kernels.<name>.GBps, and kernels.<name>.fraction of the STREAM triad when it ran. */
void esm_report_kernel(esm_result *r, const char *name, double GBps, esm_stream stream);
#endif
