// Errors and collective agreement: every user error of a collective call ends, on every rank,
// with the same status and the same message.
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "esm_rank_state.h"
#include "internal.hpp"

namespace esm {

// The last error's message (NULL: none): this thread's, or under SMPI this simulated rank's.
// A plain pointer: under SMPI a rank's block is a byte copy of its initial value, not a
// constructed object.
struct ErrorState {
    char *message;
};
ESM_THREAD_STATE(ErrorState, error_state)

static std::string vformat(const char *fmt, va_list args) {
    char small[512];
    va_list copy;
    va_copy(copy, args);
    int n = std::vsnprintf(small, sizeof small, fmt, copy);
    va_end(copy);
    if (n < 0) return fmt;
    if (n < (int)sizeof small) return std::string(small, n);
    std::string out(n, '\0');
    std::vsnprintf(out.data(), n + 1, fmt, args);
    return out;
}

std::string format(const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    std::string s = vformat(fmt, args);
    va_end(args);
    return s;
}

void fail(esm_status code, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    std::string s = vformat(fmt, args);
    va_end(args);
    throw Error{code, std::move(s)};
}

void check_mpi(int rc, const char *what) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, text, &len);
    fail(ESM_ERR_MPI, "%s failed: %s", what, text);
}

void set_error(esm_status code, const std::string &message) {
    ErrorState *e = error_state();
    std::free(e->message);
    e->message = code == ESM_OK ? nullptr : strdup(message.c_str());
}

uint64_t hash_bytes(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = static_cast<const unsigned char *>(data);
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

void agree(MPI_Comm comm, const Outcome &outcome, uint64_t hash, const char *what) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    // MAX of (lowest failing rank key, hash, -hash): a failure and a disagreement in one call.
    int64_t h = (int64_t)(hash >> 1);  // fits, and -h does too
    int64_t in[3] = {outcome.code == ESM_OK ? 0 : (int64_t)INT_MAX - rank, h, -h}, out[3];
    check_mpi(MPI_Allreduce(in, out, 3, MPI_INT64_T, MPI_MAX, comm), "MPI_Allreduce (agreement)");
    if (out[0] > 0) {
        int root = (int)(INT_MAX - out[0]);
        char message[1024] = {0};
        int code = outcome.code;
        if (rank == root) std::snprintf(message, sizeof message, "%s", outcome.message.c_str());
        check_mpi(MPI_Bcast(&code, 1, MPI_INT, root, comm), "MPI_Bcast (error)");
        check_mpi(MPI_Bcast(message, sizeof message, MPI_CHAR, root, comm), "MPI_Bcast (error)");
        message[sizeof message - 1] = '\0';
        std::string text = message;
        if (rank != root) text += format(" (found by rank %d)", root);
        throw Error{(esm_status)code, text};
    }
    if (out[1] != -out[2])
        fail(ESM_ERR_INCONSISTENT, "ranks passed different %s: every rank must pass the same", what);
}

size_t type_size(esm_type t) {
    switch (t) {
    case ESM_DOUBLE: return 8;
    case ESM_FLOAT: return 4;
    case ESM_INT32: return 4;
    case ESM_INT64: return 8;
    }
    return 0;
}

MPI_Datatype mpi_type(esm_type t) {
    switch (t) {
    case ESM_DOUBLE: return MPI_DOUBLE;
    case ESM_FLOAT: return MPI_FLOAT;
    case ESM_INT32: return MPI_INT32_T;
    case ESM_INT64: return MPI_INT64_T;
    }
    return MPI_DATATYPE_NULL;
}

const char *type_name(esm_type t) {
    switch (t) {
    case ESM_DOUBLE: return "double";
    case ESM_FLOAT: return "float";
    case ESM_INT32: return "int32";
    case ESM_INT64: return "int64";
    }
    return "unknown";
}

}  // namespace esm

extern "C" size_t esm_type_bytes(esm_type type) { return esm::type_size(type); }

extern "C" const char *esm_error_message(void) {
    const char *message = esm::error_state()->message;
    return message ? message : "";
}

extern "C" const char *esm_status_name(int status) {
    static const char *const names[] = {"ESM_OK", "ESM_ERR_ARGUMENT", "ESM_ERR_TILING", "ESM_ERR_MISMATCH",
                                        "ESM_ERR_INCONSISTENT", "ESM_ERR_UNSUPPORTED", "ESM_ERR_STATE",
                                        "ESM_ERR_MEMORY", "ESM_ERR_MPI", "ESM_ERR_SYSTEM"};
    return status >= 0 && status < (int)(sizeof names / sizeof *names) ? names[status] : "unknown status";
}
