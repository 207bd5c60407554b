/* Tables keyed by an MPI handle's bits (requests, probed messages, communicators): open
 * addressing with linear probing and backward-shift deletion. Not thread-safe: each table's
 * owner takes its own lock (prof_requests.c, prof_comms.c). */
#ifndef PROF_HANDLES_H
#define PROF_HANDLES_H

#include <string.h>

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

/* The key of a handle (its first 8 bytes, never 0 for a real handle). Inline, and read at the
 * handle's own width: MPICH's handles are 4-byte ints, and copying one into the low half of an
 * 8-byte word in memory, then loading the word, stalls the store-to-load forwarding (about 84 %
 * of this function's samples under perf, 4-6 ns per non-blocking call on MPICH). */
static inline uint64_t esm_handle_key(const void *handle, size_t size)
{
    const uint64_t mix = 0x9e3779b97f4a7c15ull;  /* never 0 for a real handle */
    if (size >= sizeof(uint64_t)) {
        uint64_t k;
        memcpy(&k, handle, sizeof k);
        return k ^ mix;
    }
    if (size == sizeof(uint32_t)) {
        uint32_t k;
        memcpy(&k, handle, sizeof k);
        return k ^ mix;
    }
    uint64_t k = 0;
    memcpy(&k, handle, size);
    return k ^ mix;
}
/* The slot of `key`, or NULL. */
slot *esm_table_find(table *t, uint64_t key);
/* The slot of `key`, a new zeroed one when it has none (the table grows at half full). */
slot *esm_table_insert(table *t, uint64_t key);
void esm_table_remove(table *t, slot *s);

#endif
