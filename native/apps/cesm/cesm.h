/* cesm.h: the CESM proxy's grids, conservative maps and component models, shared by its files.
 *
 * Two grids, as in a B compset: the atmosphere's (and land's) regular longitude-latitude grid,
 * and the ocean's (and sea ice's), offset in longitude and refined towards the equator (as
 * POP's gx1 is), with the analytic continents of esm_geo.h. Temperatures are in degrees
 * Celsius, energies in joules relative to 0 C liquid water, areas in m^2.
 *
 * Ledgers: what the budget and map checks integrate over the run (sunlight absorbed, longwave
 * lost, what each map took and gave) is kept per point in double, each point adding its own
 * terms in time order, and summed exactly (esm_sum) once at the end: the same bits on any
 * decomposition, at the cost of one add per point and step instead of an exact sum's ~25. */
#ifndef CESM_H
#define CESM_H
#include "esm.h"

#define EARTH_RADIUS 6.371e6         /* m */
#define HEAT_CAPACITY_ATM 1.0e7      /* J m-2 K-1: a column of air */
#define HEAT_CAPACITY_OCN 2.04e8     /* J m-2 K-1: a 50 m mixed layer */
#define HEAT_CAPACITY_LND 2.0e6      /* J m-2 K-1: the active soil layer */
#define ICE_LATENT 3.06e8            /* J m-3: rho_ice L_f */
#define FREEZING (-1.8)              /* C: sea water */
#define OLR_A 210.0                  /* W m-2: outgoing longwave A + B T (Budyko) */
#define OLR_B 2.0                    /* W m-2 K-1 */
#define SOLAR 1361.0                 /* W m-2 */
#define ALBEDO_OCN 0.08
#define ALBEDO_ICE 0.60
#define ALBEDO_LND 0.25
#define EXCHANGE_0 10.0              /* W m-2 K-1: surface-air exchange k0 + k1 |U| */
#define EXCHANGE_1 0.8
#define ICE_CONDUCTIVITY 2.0         /* W m-1 K-1 */
#define ICE_OCEAN_EXCHANGE 50.0      /* W m-2 K-1 */
#define ICE_FULL 0.5                 /* m: thickness at which ice covers the whole cell */
#define LAND_MIN 1e-3                /* a cell with less land fraction has no land model */

typedef struct cesm_grid {
    const char *name;
    int nx, ny;
    double lon0, dlon;       /* degrees: west edge of column 0, column width */
    double *lat_edge;        /* ny + 1, degrees */
    double *lat;             /* ny cell centres, degrees */
    double *area;            /* ny: m^2 of a cell of row j */
    unsigned char *active;   /* nx * ny: ocean points (ocean grid), every point (atmosphere) */
    long nactive;
    long *row_active;        /* ny: active points of each row */
} cesm_grid;

void cesm_grid_atm(cesm_grid *g, int nx, int ny);
void cesm_grid_ocn(cesm_grid *g, int nx, int ny);
double cesm_lon(const cesm_grid *g, int i);

/* One-dimensional overlaps of the two grids: for each column (row) of one grid, the columns
 * (rows) of the other it overlaps and by how much (radians of longitude; difference of the
 * sines of latitude). A cell pair's overlap area is the product: exact on the sphere. */
typedef struct cesm_overlap {
    int n;
    int *index;
    double *length;
} cesm_overlap;
typedef struct cesm_overlaps {
    cesm_overlap *lon_of_ocn, *lat_of_ocn; /* per ocean column / row: atmosphere ones */
    cesm_overlap *lon_of_atm,
        *lat_of_atm; /* per atmosphere column / row: ocean ones (the same numbers) */
} cesm_overlaps;
void cesm_overlaps_create(cesm_overlaps *o, const cesm_grid *atm, const cesm_grid *ocn);
/* Ocean-covered area of atmosphere cell (I, J), m^2, summed in the map's order. */
double cesm_ocean_area(const cesm_overlaps *o, const cesm_grid *atm, const cesm_grid *ocn, int I,
                       int J);

/* A conservative map (sparse matrix of overlap areas) applied on the coupler's decomposition:
 * the source values its rows need are first gathered by a rearranger (MCT's sMatAvMult with
 * the source rearranged, "Xonly"). */
typedef enum { MAP_CONSERVE, MAP_NORMALIZE } cesm_map_norm;
typedef struct cesm_map {
    long nrows, ncols;       /* local rows; gathered source columns */
    long *start, *col;       /* CSR over local rows; col indexes the gathered columns */
    double *w;               /* overlap areas, m^2 */
    double *row_area;        /* destination cell area */
    double *row_cover;       /* sum of the row's weights: area of the row covered by the source */
    long nnz;
    esm_rearranger *gather;  /* source (coupler decomposition) -> gathered columns */
    int nfields;
    double **columns;        /* nfields gathered source vectors */
} cesm_map;
/* dst[f][r] = sum_c w(r, c) src(c) / (row area | covered area), per field's norm. */
void cesm_map_apply(cesm_map *m, const double *const src[], double *const dst[],
                    const cesm_map_norm norm[]);

/* A component's points, in its own decomposition: global indices in local storage order. */
typedef struct cesm_points {
    long n;
    long *global;
    double *lat;             /* degrees */
    double *area;            /* m^2 (land: times the land fraction) */
} cesm_points;

/* The clock and shared state the driver broadcasts each coupling interval ("infodata"). */
typedef struct cesm_info {
    long interval;           /* coupling intervals since the start */
    double seconds;          /* model time at the start of the interval */
    double dt;               /* coupling interval, s */
    int history, restart, stop, fault;
} cesm_info;

/* A model's or the coupler's values: n + 1 zeroed doubles (one field, or nfields into dst),
 * shared between simulated ranks when folded (esm_field_alloc; the values then mean nothing).
 * Index arrays (points, maps, rearrangers) stay private: they steer the messages. */
double *cesm_values(long n);
void cesm_values_into(double *dst[], long n, int nfields);

double cesm_wind(double lat);                         /* m s-1 */
double cesm_exchange(double wind);                    /* W m-2 K-1 */

/* Where the components work (work.c; docs/cesm.md, "Where the components work"). */
double cesm_calendar_day(double seconds);             /* of a 365-day year, 0: 1 January */
double cesm_ice_extent(int hemisphere, double seconds); /* m^2; 0 north, 1 south (NSIDC) */
void cesm_ice_edges(const cesm_grid *ocn, double seconds, double edge[2]);
bool cesm_icy(double lat, const double edge[2]);
double cesm_cos_zenith(double lat, double lon, double seconds);
bool cesm_radiation_due(long step, double dt);        /* CAM's radiation_do('sw') */
long cesm_share(long total, int ranks, int rank);     /* an even deal of `total` */
long cesm_share_first(long total, int ranks, int rank); /* where a contiguous share starts */
long cesm_icy_points(const cesm_points *pts, const double edge[2]);
long cesm_sunlit_columns(const cesm_grid *g, double seconds, long first, long count);

/* What the kernels are charged in a simulated run (cost.c, --cost; docs/cesm.md, "What the
 * components cost"): the proxy's byte model (end 0), or CESM 1.0.3's measured core-seconds per
 * model day of each component spread evenly over its points, at the low (1) or high (2) end. */
enum { CESM_COST_ATM, CESM_COST_LND, CESM_COST_ICE, CESM_COST_OCN, CESM_COST_CPL, CESM_COST_N };
typedef struct cesm_cost {
    int end;
    double core_seconds; /* per point of a call, on the measured machine's core */
} cesm_cost;
/* For `component` ("proxy", "cesm-low" or "cesm-high"), whose kernels work on
 * `points_per_interval` points in all over its whole grid each coupling interval of `dt` s. */
void cesm_cost_set(cesm_cost *c, const char *choice, int component, double points_per_interval,
                   double dt);
/* esm_kernel_begin charging `points` at cost `c` (end 0: the proxy's `bytes`). */
bool cesm_kernel_begin(const esm_kernel *k, const cesm_cost *c, double points, double bytes);
#endif
