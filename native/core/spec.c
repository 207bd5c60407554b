/* Exchange specs: who sends which runs of doubles to whom. One description serves the halo
 * engines (halo.c) and the VecScatter-style engine (scatter.c). */
#include <stdlib.h>
#include <string.h>
#include "esm_halo.h"
#include "esm_internal.h"

void esm_runs_add_unmerged(esm_runs *list, long offset, int length)
{
    list->doubles += length;
    if (list->count == list->capacity) {
        list->capacity = list->capacity ? 2 * list->capacity : 64;
        list->at = esm_realloc(list->at, list->capacity * sizeof *list->at);
    }
    list->at[list->count++] = (esm_run){offset, length};
}

void esm_runs_add(esm_runs *list, long offset, int length)
{
    if (length <= 0)
        return;
    esm_run *last = list->count ? &list->at[list->count - 1] : NULL;
    if (last && last->offset + last->length == offset) { /* contiguous with the last run */
        last->length += length;
        list->doubles += length;
        return;
    }
    esm_runs_add_unmerged(list, offset, length);
}

/* Runs of one element (scattered points: a map's gathered columns) skip memcpy's call. */
void esm_runs_pack(const esm_runs *list, double *buffer, const double *field)
{
    for (int r = 0; r < list->count; r++) {
        const esm_run *run = &list->at[r];
        if (run->length == 1)
            *buffer = field[run->offset];
        else
            memcpy(buffer, field + run->offset, run->length * sizeof(double));
        buffer += run->length;
    }
}

void esm_runs_unpack(const esm_runs *list, const double *buffer, double *field)
{
    for (int r = 0; r < list->count; r++) {
        const esm_run *run = &list->at[r];
        if (run->length == 1)
            field[run->offset] = *buffer;
        else
            memcpy(field + run->offset, buffer, run->length * sizeof(double));
        buffer += run->length;
    }
}

esm_halo_spec *esm_halo_spec_new(void)
{
    return esm_calloc(1, sizeof(esm_halo_spec));
}

static esm_spec_peer *peer_of(esm_halo_spec *s, int rank)
{
    int p = 0;
    while (p < s->npeers && s->peers[p].rank < rank)
        p++;
    if (p < s->npeers && s->peers[p].rank == rank)
        return &s->peers[p];
    s->peers = esm_realloc(s->peers, (s->npeers + 1) * sizeof *s->peers);
    memmove(&s->peers[p + 1], &s->peers[p], (s->npeers - p) * sizeof *s->peers);
    s->npeers++;
    s->peers[p] = (esm_spec_peer){.rank = rank};
    return &s->peers[p];
}

void esm_halo_spec_send(esm_halo_spec *s, int rank, long offset, int length)
{
    esm_runs_add(&peer_of(s, rank)->send, offset, length);
}

void esm_halo_spec_recv(esm_halo_spec *s, int rank, long offset, int length)
{
    esm_runs_add(&peer_of(s, rank)->recv, offset, length);
}

void esm_halo_spec_copy(esm_halo_spec *s, long from, long to, int length)
{
    if (length <= 0)
        return;
    esm_copies *list = &s->copies;
    if (list->count) { /* extend the last copy when both ends are contiguous with it */
        esm_copy *last = &list->at[list->count - 1];
        if (last->from + last->length == from && last->to + last->length == to) {
            last->length += length;
            return;
        }
    }
    if (list->count == list->capacity) {
        list->capacity = list->capacity ? 2 * list->capacity : 64;
        list->at = esm_realloc(list->at, list->capacity * sizeof *list->at);
    }
    list->at[list->count++] = (esm_copy){from, to, length};
}

void esm_halo_spec_zero(esm_halo_spec *s, long offset, int length)
{
    esm_runs_add(&s->zero, offset, length);
}

long esm_spec_send_doubles(const esm_halo_spec *s)
{
    long doubles = 0;
    for (int p = 0; p < s->npeers; p++)
        doubles += s->peers[p].send.doubles;
    return doubles;
}

void esm_spec_free_lists(esm_halo_spec *s)
{
    for (int p = 0; p < s->npeers; p++) {
        free(s->peers[p].send.at);
        free(s->peers[p].recv.at);
    }
    free(s->peers);
    free(s->copies.at);
    free(s->zero.at);
    *s = (esm_halo_spec){0};
}
