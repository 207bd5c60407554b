/* cube.h: the cubed sphere of HOMME, its spectral elements and their partition.
 *
 * The sphere is the gnomonic (equiangular) projection of a cube: each of the 6 faces is cut
 * into ne x ne elements of equal angle, and each element carries NP x NP = 4 x 4 Gauss-Lobatto-
 * Legendre (GLL) points. Points on element edges and corners are shared by 2, 3 or 4 elements;
 * a "node" is one such geometric point, numbered globally.
 *
 * Element ids are global and geometric: g = face*ne*ne + je*ne + ie. Point p = i + NP*j of an
 * element has reference coordinates (xi_i, xi_j) in [-1,1]^2, i along the face's first axis.
 *
 * Elements are dealt to ranks in contiguous pieces of a space-filling curve that visits the
 * six faces one after the other (Hilbert / Peano / Cinco on each face, HOMME's spacecurve):
 * each rank owns a compact patch. Every rank holds the whole topology (as HOMME does). No MPI. */
#ifndef HOMME_CUBE_H
#define HOMME_CUBE_H

enum { NP = 4, NPTS = NP * NP };

/* GLL points, weights and the derivative matrix deriv[a][b] = l_b'(xi_a) on [-1,1]. */
extern const double gll_xi[NP], gll_w[NP];
extern double gll_deriv[NP][NP];
void gll_init(void);

typedef struct homme_cube {
    int ne, nelem, nnodes, ranks;
    int *node;         /* [nelem*NPTS]: the global node of each element point */
    int *member_start; /* [nnodes+1] ... */
    int *member;       /* ... the element points g*NPTS+p of each node, in ascending order */
    int *nbr_start;    /* [nelem+1] ... */
    int *nbr;          /* ... the elements sharing a node with each element, ascending */
    int *curve;        /* [nelem]: elements in space-filling-curve order */
    int *owner;        /* [nelem]: owning rank */
    int *first;        /* [ranks+1]: curve position of each rank's first element */
    int curve_breaks;  /* consecutive curve elements that are not edge neighbours */
    char curve_name[64];
} homme_cube;

/* Topology, curve and partition over `ranks` (1 <= ranks <= 6 ne^2, checked by the caller). */
void cube_create(homme_cube *c, int ne, int ranks);
void cube_free(homme_cube *c);

/* Geometry of one element point on a sphere of radius `radius`: the unit position x, the
 * tangent vectors d1 = dX/dxi_1, d2 = dX/dxi_2 (metres per unit reference coordinate) and the
 * area element jac = |d1 x d2|. Computed from the node's lattice position, so every element
 * sharing a node gets the same x bit for bit. */
typedef struct point_geometry {
    double x[3], d1[3], d2[3], jac;
} point_geometry;
point_geometry cube_point(int ne, int element, int p, double radius);
#endif
