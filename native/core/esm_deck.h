/* esm_deck.h: named problem sizes, shared by every workload in the same shape (like
 * CloverLeaf's input decks): S runs in seconds on 2 cores, M and L grow from there, and the
 * seeds' production grids keep their own names (gx3, gx1, tenth, glb0.08, ...). */
#ifndef ESM_DECK_H
#define ESM_DECK_H

typedef struct esm_deck {
    const char *name;
    int nx, ny, nz;  /* global grid points (nz: levels or layers) */
    int bx, by;      /* block (tile) size */
    int steps;       /* default time steps */
    const char *about;
} esm_deck;

/* The deck named `name`, or NULL. */
const esm_deck *esm_deck_find(const esm_deck *decks, int ndecks, const char *name);

/* "S, M, L, gx3" into `out` (for messages). */
void esm_deck_names(const esm_deck *decks, int ndecks, char *out, int size);
#endif
