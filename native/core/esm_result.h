/* esm_result.h: the one JSON line every workload prints last on rank 0 (docs/workloads.md):
 *
 *   {"workload": "pop", "size": "S", "ranks": 4, "steps": 20, "wall": 1.23,
 *    "fom": {"value": 16.2, "unit": "steps/s", "higher_is_better": true},
 *    "verification": {"passed": true, "what": "...", "norms": {"l2": 1.2e-12}},
 *    "model": {...}, "params": {...}, "comm": {...}, "timers": {...}, ...}
 *
 * Values go in at dotted paths ("model.bytes_per_point", "kernels.tracer.GBps"); objects are
 * made on the way and keep the order in which their keys first appeared. Reals are printed
 * with 17 significant digits (they round-trip exactly, so runs compare bit for bit);
 * infinities and NaN print as null. */
#ifndef ESM_RESULT_H
#define ESM_RESULT_H
#include <stdbool.h>
#include "esm_timer.h"

typedef struct esm_result esm_result;

esm_result *esm_result_new(const char *workload, const char *size, long steps);
void esm_result_wall(esm_result *r, double seconds);
void esm_result_fom(esm_result *r, double value, const char *unit, bool higher_is_better);
void esm_result_verification(esm_result *r, bool passed, const char *what);
void esm_result_norm(esm_result *r, const char *name, double value);
/* No verification was possible: the run's values mean nothing (a folded simulation,
 * esm_fold.h). "verification.passed" is null, "verification.what" says why ("not verified:
 * folded run"), and the exit status stays 0: never PASS, never FAIL. */
void esm_result_unverified(esm_result *r, const char *why);

void esm_result_real(esm_result *r, const char *path, double value);
void esm_result_int(esm_result *r, const char *path, long value);
void esm_result_text(esm_result *r, const char *path, const char *value);
void esm_result_bool(esm_result *r, const char *path, bool value);
/* A value already rendered as JSON (an array, a list of objects), put in as it is. */
void esm_result_json(esm_result *r, const char *path, const char *rendered);

/* "timers.<name>": each timer's maximum over ranks, and "timers_min.<name>" its minimum (the
 * spread between them is the load imbalance). Collective. */
void esm_result_timers(esm_result *r, esm_timer *const timers[], int n);

/* Add "comm" (the core's MPI operations summed over ranks: isend, irecv, waitall, startall,
 * allreduce, send_init, recv_init, barrier, halo_updates, messages, bytes_sent; left out when
 * the core made none, as in a benchmark that calls MPI itself), print the line on
 * rank 0, free r, and return the exit status: 0, or 2 when verification failed. Collective;
 * the last MPI communication of the run. */
int esm_result_finish(esm_result *r);
#endif
