/* models.h: the four component models. Each owns a decomposition of its grid (made inside its
 * processor set), keeps its state in its own layout, and talks to the coupler only through
 * dense import/export vectors over its points (cesm_points), as CESM's components fill MCT
 * attribute vectors. No MPI here beyond the core's halo updates. */
#ifndef MODELS_H
#define MODELS_H
#include "cesm.h"

/* Each model counts the points it worked on (`work`, summed over its calls) and charges its
 * kernels by them: by the physics (work.c), or, `uniform`, every point every call.
 *
 * Atmosphere: a one-layer energy-balance model on the atmosphere grid: heat capacity,
 * outgoing longwave A + B T, the surface heat flux from the coupler, zonal advection by a
 * solid-body wind (upwind) and diffusion (the zonal diffusivity falls as cos^2 latitude, a
 * polar filter), in flux form: conservative. Sub-stepped; one halo update per sub-step.
 * Shortwave radiation (what it exports to the surfaces) as CAM's: every radiation step, on
 * the sunlit columns only, held in between. */
typedef struct atm_model {
    esm_decomp d;
    esm_layout l;
    esm_halo *halo;
    double *t, *t_next;
    double *ky_n, *ky_s;        /* per global row */
    double kx, courant, dt;
    int substeps;
    cesm_points pts;
    long *at;                   /* layout offset of each point */
    double *olr;                /* per point: J lost to space so far (a ledger, see cesm.h) */
    const cesm_grid *g;
    double *lon, *sw;           /* per point: longitude; shortwave at the surface, W m-2 */
    bool uniform;
    long work, work_radiation;  /* dynamics points; sunlit columns charged to this rank */
    cesm_cost cost;             /* of the dynamics sub-steps (the radiation: the proxy's) */
} atm_model;

/* Ocean: a slab mixed layer on the ocean grid, lateral diffusion between ocean cells (no flux
 * through coasts), the coupler's net heat flux; water colder than freezing gives its deficit
 * to the sea ice as frazil (o2x). Sub-stepped; one halo update per sub-step. */
typedef struct ocn_model {
    esm_decomp d;
    esm_layout l;
    esm_halo *halo;
    double *t, *t_next, *mask;
    double *kx, *ky_n, *ky_s;   /* per global row */
    double dt;
    int substeps;
    cesm_points pts;
    long *at;
    bool leak;                  /* fault injection: drop the forcing of one point */
    long work;
    cesm_cost cost;
} ocn_model;

/* Land: a soil heat bucket per land point of the atmosphere grid (area times land fraction). */
typedef struct lnd_model {
    esm_decomp d;
    cesm_points pts;
    double *t;
    double *sw;                 /* per point: J of sunlight absorbed so far */
    long total;                 /* land points of the whole grid */
    bool uniform;
    long work;                  /* points charged to this rank (CLM's even deal) */
    cesm_cost cost;
} lnd_model;

/* Sea ice: zero-layer thermodynamics (Semtner) per ocean point: thickness h (cell mean),
 * ice fraction min(1, h / 0.5 m), surface temperature from the conductive balance, top melt,
 * basal growth and melt by the ocean's heat, frazil from the ocean. Energy -rho L h. */
typedef struct ice_model {
    esm_decomp d;
    cesm_points pts;
    double *h;
    double *sw;                 /* per point: J of sunlight absorbed so far */
    bool uniform;
    long work;                  /* points under the climatological ice cover */
    cesm_cost cost;             /* CESM's: every point of its blocks (cost.c) */
} ice_model;

enum { A2X_T, A2X_SW, A2X_WIND, A2X_N };            /* atmosphere exports */
enum { X2A_FLUX, X2A_TSFC, X2A_IFRAC, X2A_N };      /* atmosphere imports */
enum { L2X_FLUX, L2X_T, L2X_N };
enum { X2L_T, X2L_SW, X2L_WIND, X2L_N };
enum { X2I_T, X2I_SW, X2I_WIND, X2I_TO, X2I_FRAZIL, X2I_N };
enum { I2X_FRAC, I2X_FLUX, I2X_QIO, I2X_TSFC, I2X_N };
enum { X2O_HEAT, X2O_N };
enum { O2X_T, O2X_FRAZIL, O2X_N };

void atm_create(atm_model *m, const cesm_grid *g, int bx, int by, int substeps, double dt);
/* The state and shortwave at model time `seconds`, CAM step `step` of `dt` seconds. */
void atm_export(atm_model *m, double seconds, long step, double dt, double *const a2x[]);
void atm_run(atm_model *m, const double *const x2a[]);
void atm_energy(const atm_model *m, esm_sum *e);

void ocn_create(ocn_model *m, const cesm_grid *g, int bx, int by, int substeps, double dt);
void ocn_export(const ocn_model *m, double *const o2x[]);
void ocn_run(ocn_model *m, const double *const x2o[], double *const o2x[]);
void ocn_energy(const ocn_model *m, esm_sum *e);

void lnd_create(lnd_model *m, const cesm_grid *atm, const double *land_fraction, int bx, int by);
void lnd_run(lnd_model *m, const double *const x2l[], double *const l2x[], double dt);
void lnd_energy(const lnd_model *m, esm_sum *e);

void ice_create(ice_model *m, const cesm_grid *ocn, int bx, int by);
/* `edge`: the climatological ice edges now (cesm_ice_edges). */
void ice_run(ice_model *m, const double *const x2i[], double *const i2x[], double dt,
             const double edge[2]);
void ice_energy(const ice_model *m, esm_sum *e);

/* The points of a decomposition's local blocks where `active` (NULL: all), in block, row,
 * column order; `at` (may be NULL) receives each point's offset in `layout`. */
void points_of(const esm_decomp *d, const cesm_grid *g, const unsigned char *active,
               const double *area_factor, const esm_layout *layout, cesm_points *pts, long **at);
#endif
