/* Tables keyed by an MPI handle's bits (requests, probed messages, communicators): open
 * addressing with linear probing and backward-shift deletion. Not thread-safe: each table's
 * owner takes its own lock (prof_requests.c, prof_comms.c). */
#ifndef PROF_HANDLES_H
#define PROF_HANDLES_H

#include "esmprof.h"

typedef struct slot {
    uint64_t key;                   /* 0: empty */
    int kind, post_fid, rank, active;
    uint64_t bytes, recv_bytes;     /* recv_bytes: persistent collectives */
    esm_comm *comm;
} slot;

typedef struct table {
    slot *s;
    size_t cap, count;
} table;

/* The key of a handle (its first 8 bytes, never 0 for a real handle). */
uint64_t esm_handle_key(const void *handle, size_t size);
/* The slot of `key`, or NULL. */
slot *esm_table_find(table *t, uint64_t key);
/* The slot of `key`, a new zeroed one when it has none (the table grows at half full). */
slot *esm_table_insert(table *t, uint64_t key);
void esm_table_remove(table *t, slot *s);

#endif
