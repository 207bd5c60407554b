/* Tables keyed by MPI handles (prof_handles.h). */
#include <stdlib.h>
#include <string.h>

#include "prof_handles.h"
#include "prof_state.h"

static size_t home(const table *t, uint64_t key)
{
    return (size_t)((key * 0xff51afd7ed558ccdull) >> 17) & (t->cap - 1);
}

slot *esm_table_find(table *t, uint64_t key)
{
    if (!t->cap)
        return NULL;
    for (size_t i = home(t, key);; i = (i + 1) & (t->cap - 1)) {
        if (t->s[i].key == key)
            return &t->s[i];
        if (!t->s[i].key)
            return NULL;
    }
}

slot *esm_table_insert(table *t, uint64_t key)
{
    slot *found = esm_table_find(t, key);
    if (found)
        return found;
    if (2 * (t->count + 1) > t->cap) {
        table grown = {esm_xcalloc(t->cap ? 2 * t->cap : 256, sizeof(slot)),
                       t->cap ? 2 * t->cap : 256, 0};
        for (size_t i = 0; i < t->cap; i++)
            if (t->s[i].key)
                *esm_table_insert(&grown, t->s[i].key) = t->s[i];
        free(t->s);
        *t = grown;
    }
    size_t i = home(t, key);
    while (t->s[i].key)
        i = (i + 1) & (t->cap - 1);
    memset(&t->s[i], 0, sizeof(slot));
    t->s[i].key = key;
    t->count++;
    return &t->s[i];
}

void esm_table_remove(table *t, slot *s)
{
    size_t i = (size_t)(s - t->s), j = i;
    t->count--;
    for (;;) {
        t->s[i].key = 0;
        for (;;) {
            j = (j + 1) & (t->cap - 1);
            if (!t->s[j].key)
                return;
            size_t h = home(t, t->s[j].key);
            if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j)))
                break;
        }
        t->s[i] = t->s[j];
        i = j;
    }
}
