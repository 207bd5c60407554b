/* coupler.h: the coupler (cpl7 with MCT): its own decompositions of both grids (contiguous
 * segments of the global index over its ranks, MCT's simple GlobalSegMap), the rearrangers
 * between it and every component, the two conservative maps, the atmosphere-ocean fluxes and
 * the merges; and the history and restart files. */
#ifndef COUPLER_H
#define COUPLER_H
#include "models.h"

typedef struct coupler {
    const cesm_grid *atm_g, *ocn_g;
    cesm_points a, o;            /* coupler points of each grid (empty off the coupler's ranks) */
    cesm_points l;               /* the land points among `a` ... */
    long *l_in_a;                /* ... and where each sits in `a` */
    double *lfrac;               /* land fraction of each point of `a` */
    cesm_map a2o, o2a;
    /* rearrangers: component <-> coupler */
    esm_rearranger *a2c, *c2a, *c2l, *l2c, *c2i, *i2c, *c2o, *o2c;
    /* bundles on the coupler's points */
    double *a2x[A2X_N], *x2a[X2A_N], *l2x[L2X_N], *ao[A2X_N], *x2i[X2I_N], *i2x[I2X_N];
    double *x2o[X2O_N], *o2x[O2X_N], *fo[3], *oa[3];
    /* ledgers (per point, summed over the run; cesm.h): sunlight absorbed by open water (o);
     * what each map took and gave: a2o shortwave (src, gross on a; dst on o), o2a heat flux
     * (src, gross on o; dst on a) */
    double *ocean_sw, *map_src[2], *map_dst[2], *map_gross[2];
    cesm_cost cost;              /* of its flux, ice-preparation and merge kernels (cost.c) */
} coupler;

/* Set up on every rank (collective over the world): maps on the coupler's ranks `cpl_ranks`
 * (world ranks 0 .. cpl_ranks-1), rearrangers to the components' points (empty lists on ranks
 * without the component). */
void coupler_create(coupler *c, const cesm_grid *atm_g, const cesm_grid *ocn_g,
                    const cesm_overlaps *ov, const double *land_fraction, int cpl_ranks,
                    const cesm_points *atm, const cesm_points *lnd, const cesm_points *ice,
                    const cesm_points *ocn, bool fault_map);
/* Map the atmosphere's state to the ocean grid and build the ice's import. */
void coupler_ice_prep(coupler *c);
/* Atmosphere-ocean fluxes on the ocean grid, the ocean's forcing for the next interval, the
 * map back to the atmosphere grid and the merge with land: the atmosphere's import. */
void coupler_atm_prep(coupler *c, double dt);
/* Largest deviation of a constant mapped both ways (collective over the world). */
double coupler_constant_error(coupler *c);
/* Energy held by the coupler between components (the ocean's pending forcing, frazil). */
void coupler_energy(const coupler *c, double dt, esm_sum *e);

/* History and restart: gather fields to a root (rearranger), the root writes one binary file:
 * a 64-byte header ("ESMPERF-CESM" magic, kind, nx, ny, nfields, interval, time), 16-byte
 * field names, then each field over the whole grid (float64, zeros off the component's points). */
typedef struct cesm_file_plan {
    const char *component;
    const cesm_grid *g;
    int nfields, root;          /* world rank that writes */
    long n;                     /* points gathered at the root */
    long *global;
    esm_rearranger *gather;
    double **at_root;
} cesm_file_plan;
void file_plan_create(cesm_file_plan *f, const char *component, const cesm_grid *g,
                      const cesm_points *src, const unsigned char *active, int nfields, int root);
/* Collective over the world (ranks without the component pass their empty bundle). Returns
 * the bytes this rank wrote. */
long file_write(cesm_file_plan *f, const char *dir, const char *kind, long interval, double seconds,
                const char *const names[], const double *const fields[]);
#endif
