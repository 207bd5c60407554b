/* driver.h: what the CESM proxy's driver files share: the run (cesm.c: decks, options,
 * processor sets, set-up, the time loop), one coupling interval and the history and restart
 * files (interval.c), the energy budget and the result line (report.c). */
#ifndef DRIVER_H
#define DRIVER_H
#include "coupler.h"

/* The points each component worked on so far on this rank (the models' `work`): atmosphere
 * dynamics, its radiation's sunlit columns, land, sea ice, ocean (0 off a component's set). */
enum { CESM_WORK_ATM, CESM_WORK_RAD, CESM_WORK_LND, CESM_WORK_ICE, CESM_WORK_OCN, CESM_WORK_N };

typedef struct cesm_run {
    const esm_deck *deck;
    long steps, warmup;
    double dt, ocean_fraction;
    const char *layout, *barriers, *output, *output_dir, *fault, *work, *cost, *input;
    int atm_substeps, ocn_substeps, ranks, cpl_ranks, ocn_first, ocn_ranks;
    int block[4][2];               /* bx, by of the atmosphere, land, sea ice and ocean */
    cesm_grid atm_g, ocn_g;
    cesm_overlaps ov;
    const double *land_fraction;
    esm_group *g_atm, *g_ocn;      /* atm, lnd, ice and the coupler; the ocean */
    bool in_atm, in_ocn;
    atm_model atm;
    ocn_model ocn;
    lnd_model lnd;
    ice_model ice;
    coupler cpl;
    double *a2x[A2X_N], *x2a[X2A_N], *x2l[X2L_N], *l2x[L2X_N], *x2i[X2I_N], *i2x[I2X_N];
    double *x2o[X2O_N], *o2x[O2X_N];
    cesm_file_plan h_atm, h_lnd, h_ice, h_ocn, r_cpl;
    cesm_info info_atm, info_lnd, info_ice, info_ocn;
    esm_timer t_atm, t_lnd, t_ice, t_ocn, t_cpl, t_rearrange, t_barrier, t_bcast, t_io, t_input;
    long map_weights;              /* of the atmosphere-ocean map, all ranks' (--input) */
    void *input_buffer;            /* --input: what a broadcast moves ... */
    long input_capacity, input_broadcasts, input_bytes; /* ... its size; broadcasts; read */
    bool input_bad;                /* a broadcast arrived changed on this rank */
    long bytes_written, files_written, barrier_phases;
    double wall;
    esm_counts counts0, counts1;
    esm_rearrange_counts rc0, rc1;
    esm_group_counts gc0, gc1;
    long work0[CESM_WORK_N], work1[CESM_WORK_N]; /* cesm_work_mine at timing start, end */
} cesm_run;

void cesm_work_mine(const cesm_run *run, long out[CESM_WORK_N]);

/* One coupling interval of the driver (ccsm_comp_mod's run loop, the ocean lagged by one). */
void coupling_interval(cesm_run *run, const cesm_info *info);
/* The start-up input CESM 1.0.3 reads on a root and broadcasts (input.c, --input cesm). */
void read_input(cesm_run *run);
/* History (kind "h0") or restart ("r") files of every component and, for restarts, the
 * coupler's fluxes in transit. */
void write_files(cesm_run *run, const cesm_info *info, bool restart);
/* Energy of every component and of the coupler's in-transit fluxes, and the external forcing
 * so far: [atm, lnd, ice, ocn, cpl, sw_lnd, sw_ice, sw_ocn, olr]. Collective. */
void energies(cesm_run *run, double out[9]);
/* Verification (maps conserve, energy budget closed), checksums, counts, parameters and
 * timers into the result line; returns the exit status. Collective. */
int report(cesm_run *run, const double e0[9], const double e1[9], double constant_error);
#endif
