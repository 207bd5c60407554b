/* Optional modes, off by default: timeline traces (prof_trace.c) and call sites (prof_callsite.c).
 * Off, the hot path pays three predictable branches on esm_trace_modes: in esm_call_begin (call
 * site, CPU clock), in the generated accounting of point-to-point calls, in esm_leave. */
#ifndef PROF_TRACE_H
#define PROF_TRACE_H

#include "esmprof.h"

#define ESM_MODE_TRACE 1
#define ESM_MODE_CALLSITES 2
/* esm_trace_modes (esmprof.h): ESM_MODE_* bits, set at MPI_Init */
#ifndef ESM_SIMULATED /* else fields of the rank's esm_rank_globals (esmprof.h) */
extern double esm_trace_ns_per_event, esm_callsite_ns_per_call;  /* calibrated at MPI_Init */
#endif

void esm_modes_start(void);             /* read ESMPROF_TRACE, ESMPROF_CALLSITES (init hook) */
void esm_modes_leave(esm_call *c);      /* a wrapped call ends (esm_leave) */
void esm_posted_from(esm_call *c, int source);  /* a receive names its source (comm rank) */
uint64_t esm_req_key(MPI_Request req);

/* prof_trace.c: MPI_Pcontrol(1, "name") enters a region, MPI_Pcontrol(-1, "name") leaves it */
void esm_trace_region(int level, const char *name);
/* MPI_Start(all) started a persistent send or receive: one event per request (kind 3) */
void esm_trace_started(esm_call *c, MPI_Request req, int kind, esm_comm *comm, int rank,
                       uint64_t bytes);
/* a point-to-point receive completed in c: source (world rank) and tag from its status (kind 4) */
void esm_trace_received(esm_call *c, esm_comm *comm, int world_source, int tag, uint64_t bytes);
/* a collective's bytes to and from one peer (world rank), after its call (kind 5) */
void esm_trace_peer_bytes(esm_call *c, int world_peer, uint64_t sent, uint64_t recv);
void esm_trace_write(const char *partial);      /* OUT.trace/RANK.bin; no MPI call */

/* prof_callsite.c */
void esm_callsites_start(int depth);
void esm_callsite_record(esm_call *c);
void esm_callsites_reset(void);        /* drop what was recorded (calibration) */
char *esm_callsites_json(void);         /* the rank line's "callsites" value (malloc'd) or NULL */

#endif
