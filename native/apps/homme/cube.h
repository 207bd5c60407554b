/* cube.h: the cubed sphere of HOMME, its spectral elements and their partition.
 *
 * The sphere is the gnomonic (equiangular) projection of a cube: each of the 6 faces is cut
 * into ne x ne elements of equal angle, and each element carries NP x NP = 4 x 4 Gauss-Lobatto-
 * Legendre (GLL) points. Points on element edges and corners are shared by 2, 3 or 4 elements;
 * a "node" is one such geometric point.
 *
 * Element ids are global and geometric: g = face*ne*ne + je*ne + ie. Point p = i + NP*j of an
 * element has reference coordinates (xi_i, xi_j) in [-1,1]^2, i along the face's first axis.
 *
 * Topology is computed, not stored: the copies of a node (cube_copies) and the neighbours of an
 * element (cube_neighbours) follow from the node's integer lattice position on the cube, so a
 * rank keeps only its own elements and asks about their neighbours (as HOMME keeps its local
 * elements and their neighbours' metadata).
 *
 * Elements are dealt to ranks in contiguous pieces of a space-filling curve that visits the
 * six faces one after the other (Hilbert / Peano / Cinco on each face, HOMME's spacecurve):
 * each rank owns a compact patch. As HOMME's genspacepart does, with nelem = q ranks + extra,
 * the first `extra` ranks take q + 1 elements and the others q. The curve is one face's order
 * (ne^2 cells, as HOMME's ne x ne mesh) and how the faces follow each other: the same on every
 * rank, built once and shared between simulated ranks when folded (esm_shared). No MPI. */
#ifndef HOMME_CUBE_H
#define HOMME_CUBE_H
#include <stdbool.h>

enum { NP = 4, NPTS = NP * NP, MAX_COPIES = 4, MAX_NEIGHBOURS = 12 };

/* GLL points, weights and the derivative matrix deriv[a][b] = l_b'(xi_a) on [-1,1]. */
extern const double gll_xi[NP], gll_w[NP];
extern double gll_deriv[NP][NP];
void gll_init(void);

/* The curve over the cube: the same on every rank. */
typedef struct homme_curve {
    int ne;
    int *order;        /* [ne*ne]: the cells i + ne*j of a face in curve order ... */
    int *position;     /* ... and each cell's place in it */
    int face[6], sym[6]; /* the k-th face along the curve and the symmetry of its cells */
    int slot[6];       /* where each face comes along the curve */
    int breaks;        /* consecutive curve elements that are not edge neighbours */
    char name[64];
} homme_curve;

typedef struct homme_cube {
    int ne, nelem, nnodes, ranks;
    const homme_curve *curve;
    bool curve_owned;  /* not shared (unfolded): cube_free frees it */
    int per_rank, extra; /* HOMME's partition: ranks below `extra` hold per_rank + 1 */
} homme_cube;

/* The curve and partition over `ranks` (1 <= ranks <= 6 ne^2, checked by the caller). */
void cube_create(homme_cube *c, int ne, int ranks);
void cube_free(homme_cube *c);

/* Place of an element along the curve, and the element at a place. */
int cube_position(const homme_cube *c, int element);
int cube_element(const homme_cube *c, int position);
/* Curve place of rank r's first element (r = ranks: nelem); the rank owning an element. */
int cube_first(const homme_cube *c, int rank);
int cube_owner(const homme_cube *c, int element);

/* The element points (g*NPTS + p) at the node of point p of element g, ascending: g's own
 * among them. Returns how many (1 inside an element, 2 on an edge, 3 or 4 at a corner). */
int cube_copies(int ne, int element, int p, int copy[MAX_COPIES]);
/* Elements sharing at least one node with `element` (edge and corner neighbours), ascending. */
int cube_neighbours(int ne, int element, int nbr[MAX_NEIGHBOURS]);

/* Geometry of one element point on a sphere of radius `radius`: the unit position x, the
 * tangent vectors d1 = dX/dxi_1, d2 = dX/dxi_2 (metres per unit reference coordinate) and the
 * area element jac = |d1 x d2|. Computed from the node's lattice position, so every element
 * sharing a node gets the same x bit for bit. */
typedef struct point_geometry {
    double x[3], d1[3], d2[3], jac;
} point_geometry;
point_geometry cube_point(int ne, int element, int p, double radius);
#endif
