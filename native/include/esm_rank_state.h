/* esm_rank_state.h: state that belongs to one MPI rank, in code that runs under a real MPI (a
 * rank is a process) and under SimGrid SMPI (every simulated rank is a context of one process).
 *
 * A file keeps what its rank accumulates in one struct, declared with
 *
 *     typedef struct { int calls; int fd; } counter_state;
 *     ESM_RANK_STATE(counter_state, counters, .fd = -1)      use: counters()->calls++
 *
 * which defines `static counter_state *counters(void)`, its initial value the designated
 * initializers after the name (none: zeroes). Under a real MPI it is the address of one static
 * struct (ESM_THREAD_STATE: one per thread, as the profiler keeps its per-thread blocks); under
 * SMPI a block of this simulated rank, a copy of the initial value made at its first use, found
 * through SMPI's per-rank user data (smpi_process_get_user_data). So a program built from such
 * files keeps no mutable global state and SimGrid need not privatize its data segment at every
 * switch between ranks (smpi/privatization:no; docs/simulate.md, "Mutable global state"). The
 * build's check (src/esmperf/mpi/global_state.py) finds any global that is left.
 *
 * A global that every rank sets to the same value (a symbol resolved at first use, a table
 * computed once) may stay global: mark it ESM_RANK_INVARIANT, which the check lists apart.
 * Under SMPI the ranks run one at a time, and never between a test and a set of such a value.
 *
 * Under SMPI the per-rank state must not be touched before the rank's main starts (a
 * constructor runs in no rank). A program that sets SMPI's user data itself cannot be linked
 * with code that uses this: the next block asked for stops the run with a message. */
#ifndef ESM_RANK_STATE_H
#define ESM_RANK_STATE_H

#include <stddef.h>

#define ESM_RANK_INVARIANT __attribute__((section("esm_rank_invariant")))

#if defined(ESM_SMPI) || defined(ESM_SIMULATED)
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif
void *smpi_process_get_user_data(void);
void smpi_process_set_user_data(void *);
#ifdef __cplusplus
}
#endif

#define ESM_RANK_BLOCKS_MAGIC 0x65736d72616e6b73ULL /* "esmranks" */

typedef struct esm_rank_blocks {
    uint64_t magic;
    int count, capacity;
    const void **keys;
    void **blocks;
} esm_rank_blocks;

__attribute__((noinline, unused)) static void *esm_rank_block_new(esm_rank_blocks *t,
                                                                  const void *key, size_t size)
{
    if (!t) {
        t = (esm_rank_blocks *)calloc(1, sizeof *t);
        if (!t)
            abort();
        t->magic = ESM_RANK_BLOCKS_MAGIC;
        smpi_process_set_user_data(t);
    } else if (t->magic != ESM_RANK_BLOCKS_MAGIC) {
        fprintf(stderr, "esm: this program sets SMPI's per-rank user data itself "
                        "(smpi_process_set_user_data), where esmperf's profiler and workload "
                        "core keep each simulated rank's state: link it without them, or keep "
                        "its data elsewhere (sg_actor_set_data)\n");
        abort();
    }
    if (t->count == t->capacity) {
        int capacity = t->capacity ? 2 * t->capacity : 16;
        const void **keys = (const void **)realloc((void *)t->keys, capacity * sizeof *keys);
        void **blocks = (void **)realloc(t->blocks, capacity * sizeof *blocks);
        if (!keys || !blocks)
            abort();
        t->keys = keys, t->blocks = blocks, t->capacity = capacity;
    }
    void *block = malloc(size ? size : 1);
    if (!block)
        abort();
    memcpy(block, key, size); /* the key is the block's initial value */
    t->keys[t->count] = key;
    t->blocks[t->count++] = block;
    return block;
}

/* The block of `size` bytes this simulated rank keeps under `key`, at first a copy of *key. */
static inline void *esm_rank_block(const void *key, size_t size)
{
    esm_rank_blocks *t = (esm_rank_blocks *)smpi_process_get_user_data();
    if (t && t->magic == ESM_RANK_BLOCKS_MAGIC)
        for (int i = 0; i < t->count; i++)
            if (t->keys[i] == key)
                return t->blocks[i];
    return esm_rank_block_new(t, key, size);
}

/* A block's key is its initial value: a read-only object of its own. */
#define ESM_RANK_STATE(type, name, ...)                                                            \
    static const type name##_initial = {__VA_ARGS__};                                              \
    __attribute__((unused)) static inline type *name(void)                                         \
    {                                                                                              \
        return (type *)esm_rank_block(&name##_initial, sizeof(type));                              \
    }
#define ESM_THREAD_STATE(type, name, ...) ESM_RANK_STATE(type, name, __VA_ARGS__)

#else /* a real MPI: a rank is a process */

#define ESM_RANK_STATE(type, name, ...)                                                            \
    static type name##_storage = {__VA_ARGS__};                                                    \
    __attribute__((unused)) static inline type *name(void)                                         \
    {                                                                                              \
        return &name##_storage;                                                                    \
    }
#define ESM_THREAD_STATE(type, name, ...)                                                          \
    static __thread                                                                                \
        __attribute__((tls_model("initial-exec"))) type name##_storage = {__VA_ARGS__};            \
    __attribute__((unused)) static inline type *name(void)                                         \
    {                                                                                              \
        return &name##_storage;                                                                    \
    }
#endif

#endif
