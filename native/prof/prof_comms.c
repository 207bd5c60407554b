/* Communicators: each one the program uses, registered on first sight with its size, its
 * ranks' world ranks (unless it is the world), how it was created and its name; an id for the
 * per-thread statistics (esm_commstat); a per-thread cache of the last one looked up,
 * invalidated when any communicator is freed. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof_handles.h"
#include "prof_state.h"

static pthread_mutex_t comms_lock = PTHREAD_MUTEX_INITIALIZER;
static table comm_table;                /* handle -> index into comms (in slot.rank) */
static esm_comm **comms;
static int ncomms, comms_cap;
static volatile unsigned comm_generation;
static ESM_TLS uint64_t cached_key;
static ESM_TLS unsigned cached_generation;
static ESM_TLS esm_comm *cached;

static esm_comm *comm_register(MPI_Comm comm, uint64_t key, int created_by)
{
    esm_comm *e = esm_xcalloc(1, sizeof *e);
    MPI_Group group, world;
    int inter = 0, result;
    PMPI_Comm_test_inter(comm, &inter);
    e->inter = inter;
    if (inter) {
        PMPI_Comm_remote_size(comm, &e->size);
        PMPI_Comm_remote_group(comm, &group);
    } else {
        PMPI_Comm_size(comm, &e->size);
        PMPI_Comm_group(comm, &group);
    }
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    PMPI_Group_compare(group, world, &result);
    if (result != MPI_IDENT) {
        int *ranks = esm_xcalloc((size_t)e->size, sizeof(int));
        e->world = esm_xcalloc((size_t)e->size, sizeof(int));
        for (int i = 0; i < e->size; i++)
            ranks[i] = i;
        PMPI_Group_translate_ranks(group, e->size, ranks, world, e->world);
        free(ranks);
        e->nworld = e->size;
    }
    PMPI_Group_free(&group);
    PMPI_Group_free(&world);
    if (created_by == ESM_CREATED_UNKNOWN) {
        PMPI_Comm_compare(comm, MPI_COMM_WORLD, &result);
        if (result == MPI_IDENT)
            created_by = ESM_CREATED_WORLD;
        PMPI_Comm_compare(comm, MPI_COMM_SELF, &result);
        if (result == MPI_IDENT)
            created_by = ESM_CREATED_SELF;
    }
    e->created_by = created_by;
    int len = 0;
    char name[MPI_MAX_OBJECT_NAME] = "";
    PMPI_Comm_get_name(comm, name, &len);
    snprintf(e->name, sizeof e->name, "%s", name);
    if (ncomms == comms_cap) {
        comms_cap = comms_cap ? 2 * comms_cap : 16;
        esm_comm **grown = esm_xcalloc((size_t)comms_cap, sizeof *grown);
        if (comms)
            memcpy(grown, comms, sizeof *grown * (size_t)ncomms);
        comms = grown;  /* the old array is retired, not freed: a snapshot may read it */
    }
    e->id = ncomms;
    comms[ncomms++] = e;
    esm_table_insert(&comm_table, key)->rank = e->id;
    return e;
}

static esm_comm *comm_lookup(MPI_Comm comm, int created_by)
{
    uint64_t key = esm_handle_key(&comm, sizeof comm);
    pthread_mutex_lock(&comms_lock);
    slot *s = esm_table_find(&comm_table, key);
    esm_comm *e = s ? comms[s->rank] : comm_register(comm, key, created_by);
    pthread_mutex_unlock(&comms_lock);
    return e;
}

esm_comm *esm_comm_of(MPI_Comm comm)
{
    if (comm == MPI_COMM_NULL)
        return NULL;
    uint64_t key = esm_handle_key(&comm, sizeof comm);
    if (cached && cached_key == key && cached_generation == comm_generation)
        return cached;
    esm_comm *e = comm_lookup(comm, ESM_CREATED_UNKNOWN);
    cached_key = key;
    cached_generation = comm_generation;
    return cached = e;
}

void esm_comm_created(esm_call *c, MPI_Comm comm)
{
    if (comm != MPI_COMM_NULL)
        comm_lookup(comm, c->fid);
}

/* The handle is already freed: look it up, never register it (that would query MPI with it). */
void esm_comm_freed(esm_call *c, MPI_Comm comm)
{
    pthread_mutex_lock(&comms_lock);
    slot *s = esm_table_find(&comm_table, esm_handle_key(&comm, sizeof comm));
    if (s) {
        c->comm = comms[s->rank];
        esm_table_remove(&comm_table, s);
    }
    comm_generation++;
    pthread_mutex_unlock(&comms_lock);
}

void esm_comm_named(MPI_Comm comm, const char *name)
{
    esm_comm *e = esm_comm_of(comm);
    if (e)
        snprintf(e->name, sizeof e->name, "%s", name);
}

void esm_comm_register_world(void)
{
    esm_comm_of(MPI_COMM_WORLD);
    esm_comm_of(MPI_COMM_SELF);
}

int esm_comm_count(void)
{
    return ncomms;
}
esm_comm *esm_comm_get(int id)
{
    return comms[id];
}
