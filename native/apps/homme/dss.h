/* dss.h: direct stiffness summation (DSS), the one communication of a spectral-element step.
 *
 * A field is stored element by element, NPTS values per element, so a node shared by k
 * elements has k copies. The DSS makes them one again: every copy becomes the sum of all of
 * them, optionally times the inverse assembled mass (rspheremp) to turn mass-weighted
 * tendencies into point values. As HOMME does it (edgeVpack, bndry_exchangeV, edgeVunpack):
 *
 *   1. pack, for each element edge (4 points) or corner (1 point) facing an element of another
 *      rank, the element's values; everything bound for one rank goes in ONE message
 *      (MPI_Isend), one MPI_Irecv per neighbour rank, one MPI_Waitall;
 *   2. unpack and sum.
 *
 * The exchange is a plan of the core's halo module (esm_halo_spec_*): received edges land in
 * ghost slots after each field's element values, so a field array holds nlocal*NPTS + nghost
 * doubles. The sum at each node runs over its copies in the order of their global element
 * ids, whichever rank holds them, so the result has the same bits for any number of ranks.
 *
 * A rank plans from its own elements and their neighbours only (cube_copies,
 * cube_neighbours): nothing here grows with the number of elements or ranks. Fields come from
 * esm_field_alloc (shared between simulated ranks when folded); the sums are a kernel of the
 * fold API (esm_kernel), charged unrun once sampled. */
#ifndef HOMME_DSS_H
#define HOMME_DSS_H
#include "cube.h"
#include "esm.h"

enum { DSS_MAX_FIELDS = 4 };

typedef struct homme_dss {
    int nlocal;          /* this rank's elements ... */
    int *element;        /* ... their global ids, in curve order */
    int first;           /* curve place of the first */
    long npoints;        /* nlocal * NPTS */
    long nghost;         /* ghost slots per field */
    long length;         /* doubles per field array: npoints + nghost */
    int *start;          /* while planning: [npoints+1] the copies of each point's node ... */
    long *from;          /* ... as offsets into a field array, in global element order */
    long nshared;        /* points on element edges (shared with other elements) ... */
    int *shared;         /* ... their local index, */
    int *shared_start;   /* ... [nshared+1] and their copies, */
    int *shared_from;    /* ... as offsets into a field array, in global element order */
    double *rmp;         /* [npoints]: 1 / assembled mass (set by dss_set_mass) */
    double *scratch;
    esm_halo *plan[DSS_MAX_FIELDS + 1]; /* exchange plans for 1 .. DSS_MAX_FIELDS fields */
    const homme_cube *cube;
    esm_halo_engine engine;
    int peers;           /* neighbour ranks */
    long edge_points;    /* element-edge points sent per field per DSS */
    double sum_bytes;    /* memory traffic of the sums per field (the kernel's byte model) */
} homme_dss;

/* The plans for this rank (collective). */
void dss_create(homme_dss *d, const homme_cube *c, esm_halo_engine engine);
void dss_free(homme_dss *d);

/* Each point of fields[0..nfields-1] becomes the sum of its node's copies. Collective. */
void dss_sum(homme_dss *d, int nfields, double *const fields[]);

/* The same, then times the inverse assembled mass: for tendencies multiplied by the local
 * mass (spheremp) in the element kernels. Collective. */
void dss_apply(homme_dss *d, int nfields, double *const fields[]);

/* rmp = 1 / (DSS of the local mass spheremp). Collective. */
void dss_set_mass(homme_dss *d, const double *spheremp);
#endif
