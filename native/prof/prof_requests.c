/* Requests and probed messages: what a non-blocking or persistent call posted (its kind, the
 * posting call, communicator, peer and bytes), found again when the request starts, completes
 * or is freed, so that the bytes received are counted at completion (from the status) and
 * credited to the call that posted the receive, and the completion call's time goes to the
 * request's communicator (non-blocking sends and collectives are kept for that alone). One table for requests and matched messages
 * (MPI_Mprobe), shared by the threads under one spin lock. */
#include <sched.h>

#include "esm_rank_state.h"
#include "prof_handles.h"
#include "prof_state.h"
#include "prof_trace.h"

typedef struct {
    table requests;
    int requests_busy;
} requests_state;
ESM_RANK_STATE(requests_state, requests_of_rank)

/* The table's lock: held for a few hash-table steps, never across an MPI call, so a spin lock
 * (yielding when taken: ranks may share cores) costs one atomic exchange where a mutex costs
 * two atomic operations and two calls, on every non-blocking call and every completion. */
static inline void lock_requests(void)
{
    while (__atomic_exchange_n(&requests_of_rank()->requests_busy, 1, __ATOMIC_ACQUIRE))
        sched_yield();
}
static inline void unlock_requests(void)
{
    __atomic_store_n(&requests_of_rank()->requests_busy, 0, __ATOMIC_RELEASE);
}

void esm_req_post(esm_call *c, MPI_Request req, int kind, uint64_t bytes, int rank)
{
    if (req == MPI_REQUEST_NULL)
        return;
    lock_requests();
    slot *s = esm_table_insert(&requests_of_rank()->requests, esm_handle_key(&req, sizeof req));
    s->kind = kind;
    s->post_fid = c->fid;
    s->comm = c->comm;
    s->bytes = bytes;
    s->rank = rank;
    s->active = kind == ESM_REQ_RECV;
    unlock_requests();
}

void esm_req_post_coll(esm_call *c, MPI_Request req, uint64_t sent, uint64_t recv)
{
    if (req == MPI_REQUEST_NULL)
        return;
    lock_requests();
    slot *s = esm_table_insert(&requests_of_rank()->requests, esm_handle_key(&req, sizeof req));
    s->kind = ESM_REQ_PCOLL;
    s->post_fid = c->fid;
    s->comm = c->comm;
    s->bytes = sent;
    s->recv_bytes = recv;
    unlock_requests();
}

void esm_req_start(esm_call *c, MPI_Request req)
{
    lock_requests();
    slot *s = esm_table_find(&requests_of_rank()->requests, esm_handle_key(&req, sizeof req));
    slot copy = s ? *s : (slot){0};
    if (s && s->kind == ESM_REQ_PRECV) {
        s->active = 1;
        s->post_fid = c->fid;
    }
    unlock_requests();
    if (esm_trace_modes)
        esm_trace_started(c, req, copy.kind, copy.comm, copy.rank, copy.bytes);
    if (copy.kind == ESM_REQ_PSEND && copy.rank != MPI_PROC_NULL)
        esm_record_sent(c, copy.comm, copy.rank, copy.bytes);
    if (copy.kind == ESM_REQ_PCOLL) /* a persistent collective runs once more */
        esm_coll_started(c, copy.comm, copy.bytes, copy.recv_bytes);
}

esm_comm *esm_req_complete(esm_call *c, MPI_Request req, const MPI_Status *status)
{
    if (req == MPI_REQUEST_NULL)
        return NULL;
    if (esm_trace_modes)
        esm_tc.req = esm_req_key(req);
    lock_requests();
    slot *s = esm_table_find(&requests_of_rank()->requests, esm_handle_key(&req, sizeof req));
    slot copy = s ? *s : (slot){0};
    if (s && (s->kind == ESM_REQ_RECV || s->kind == ESM_REQ_NONBLOCKING))
        esm_table_remove(&requests_of_rank()->requests, s); /* not persistent: the handle is gone */
    else if (s)
        s->active = 0;
    unlock_requests();
    if ((copy.kind != ESM_REQ_RECV && copy.kind != ESM_REQ_PRECV) || !copy.active)
        return copy.comm;
    int cancelled = 0;
    PMPI_Test_cancelled(status, &cancelled);
    if (!cancelled)
        esm_recv_status(c, copy.post_fid, copy.comm, status);
    return copy.comm;
}

void esm_req_free(MPI_Request req)
{
    lock_requests();
    slot *s = esm_table_find(&requests_of_rank()->requests, esm_handle_key(&req, sizeof req));
    if (s)
        esm_table_remove(&requests_of_rank()->requests, s);
    unlock_requests();
}

void esm_msg_probed(esm_call *c, MPI_Message msg)
{
    if (msg == MPI_MESSAGE_NULL || msg == MPI_MESSAGE_NO_PROC)
        return;
    lock_requests();
    slot *s = esm_table_insert(&requests_of_rank()->requests, esm_handle_key(&msg, sizeof msg));
    s->kind = ESM_REQ_MESSAGE;
    s->comm = c->comm;
    unlock_requests();
}

static esm_comm *message_comm(MPI_Message msg)
{
    lock_requests();
    slot *s = esm_table_find(&requests_of_rank()->requests, esm_handle_key(&msg, sizeof msg));
    esm_comm *comm = s ? s->comm : NULL;
    if (s)
        esm_table_remove(&requests_of_rank()->requests, s);
    unlock_requests();
    return comm;
}

void esm_msg_received(esm_call *c, MPI_Message msg, const MPI_Status *status)
{
    esm_comm *comm = message_comm(msg);
    c->comm = comm;
    esm_recv_status(c, c->fid, comm, status);
}

void esm_msg_ireceived(esm_call *c, MPI_Message msg, MPI_Request req)
{
    c->comm = message_comm(msg);
    esm_req_post(c, req, ESM_REQ_RECV, 0, 0);
}
