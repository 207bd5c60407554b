/* Named problem sizes. */
#include <stdio.h>
#include <string.h>
#include "esm_deck.h"

const esm_deck *esm_deck_find(const esm_deck *decks, int ndecks, const char *name)
{
    for (int d = 0; d < ndecks; d++)
        if (strcmp(decks[d].name, name) == 0)
            return &decks[d];
    return NULL;
}

void esm_deck_names(const esm_deck *decks, int ndecks, char *out, int size)
{
    int used = 0;
    out[0] = '\0';
    for (int d = 0; d < ndecks && used < size; d++)
        used += snprintf(out + used, size - used, "%s%s", d ? ", " : "", decks[d].name);
}
