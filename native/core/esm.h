/* esm.h: the whole workload core in one include. Each concern has its own header:
 *
 *   esm_comm.h    start/stop, rank, clean exits on bad input, counts of MPI operations
 *   esm_cli.h     the uniform command line (--size, --steps, --<option> <value>, --help)
 *   esm_deck.h    named problem sizes (S, M, L and the seeds' grids)
 *   esm_sfc.h     space-filling curves (Hilbert, Peano, Cinco and their mixtures)
 *   esm_decomp.h  blocks, land-block elimination, block-to-rank distribution
 *   esm_halo.h    halo exchange: Isend/Irecv/Waitall or persistent Startall/Waitall
 *   esm_scatter.h VecScatter-style ghost updates (Startall, Start, Waitany), global dots
 *   esm_sum.h     reproducible global sums, max/min, bitwise field checksums
 *   esm_timer.h   wall-clock timers
 *   esm_phase.h   phases and the timed loop, as regions of the profile (MPI_Pcontrol)
 *   esm_result.h  the one-line JSON result (docs/workloads.md)
 *   esm_report.h  the result's shared bookkeeping: grid, decomposition, counts, STREAM, kernels
 *   esm_stream.h  STREAM triad, for the memory-bandwidth roofline
 *   esm_geo.h     an analytic Earth: continents and ocean depth on a longitude-latitude grid
 *   esm_group.h   processor sets: run a model on a sub-communicator; the driver's broadcast
 *   esm_rearrange.h  MCT-style rearrangement between index-list decompositions (Irecv/Isend/Wait)
 *   esm_fold.h    folded simulation (SMPI at scale): shared fields and data, sampled kernels,
 *                 the node model
 *   esm_simd.h    ESM_SIMD: hot loops built for AVX-512, AVX2 and baseline, chosen at run time
 *
 * Compute code includes this and never <mpi.h> (like HYCOM's mod_xc). */
#ifndef ESM_H
#define ESM_H
#include "esm_comm.h"
#include "esm_cli.h"
#include "esm_deck.h"
#include "esm_sfc.h"
#include "esm_decomp.h"
#include "esm_halo.h"
#include "esm_scatter.h"
#include "esm_sum.h"
#include "esm_timer.h"
#include "esm_phase.h"
#include "esm_result.h"
#include "esm_report.h"
#include "esm_stream.h"
#include "esm_geo.h"
#include "esm_simd.h"
#include "esm_group.h"
#include "esm_rearrange.h"
#include "esm_fold.h"
#endif
