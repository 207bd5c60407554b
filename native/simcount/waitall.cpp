// MPI_Waitall in one pass: loaded into SimGrid's smpimain with the message counter
// (message_count.cpp), it defines PMPI_Waitall, which every MPI_Waitall of a simulated rank
// reaches (SMPI's own MPI_Waitall, the C and Fortran bindings and the profiler's wrapper call it
// through the loader, and a preloaded library comes first), as one MPI_Wait per request in order.
//
// Why (docs/simulate.md, "What a simulation costs"): SMPI's Request::waitall (SimGrid 3.32 and
// 4.1, src/smpi/mpi/smpi_request.cpp) completes n requests with n calls of waitany over all n,
// each collecting every request still active and registering on it: n^2/2 steps for one call,
// where an MPI waits on each request once (Open MPI's ompi_request_default_wait_all). A program
// that posts thousands of requests at once and waits for them all (the redistribution's NOPACK:
// 8,192 a rank at 64 ranks of size S) spends the simulation there.
//
// The simulated times are the same: a wait does not drive the simulation (the network model
// moves every posted message whatever the rank waits on), so the rank resumes when its last
// request completes either way, and each request's status is the one its own wait returns
// (tests/test_waitall.py holds both to the last digit, statuses included). SMPI's waitall also
// sorts the receives of one-sided accumulates before finishing them; only SMPI's windows post
// those, and they complete them with Request::waitall itself, never through this symbol.
#include <smpi/smpi.h>

extern "C" int PMPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    if (count < 0)
        return MPI_ERR_COUNT;
    if (count > 0 && requests == nullptr)
        return MPI_ERR_ARG;
    int result = MPI_SUCCESS;
    for (int i = 0; i < count; i++) {
        MPI_Status *status = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
        int code = PMPI_Wait(&requests[i], status);
        if (code != MPI_SUCCESS)
            result = code;
        else if (status != MPI_STATUS_IGNORE && status->MPI_ERROR == MPI_ERR_TRUNCATE)
            result = MPI_ERR_IN_STATUS; // as SMPI's waitall: a truncated receive is in its status
    }
    return result;
}
