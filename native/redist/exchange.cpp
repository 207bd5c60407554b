// Sparse data exchange without knowing the senders: NBX (Hoefler, Siebert, Lumsdaine, PPoPP 2010).
// Each rank sends its messages with MPI_Issend; a synchronous send completes only once matched,
// so when all of a rank's sends completed it enters a non-blocking barrier, and keeps receiving
// until the barrier completes: then every message of every rank has been received. Cost: the
// messages plus one barrier, O(log P), instead of an all-to-all of counts, O(P).
#include "internal.hpp"

namespace esm {

std::vector<std::pair<int, Records>> sparse_exchange(MPI_Comm comm, int tag,
                                                     std::vector<std::pair<int, Records>> &&out) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    std::vector<std::pair<int, Records>> received;
    std::vector<MPI_Request> sends;
    sends.reserve(out.size());
    for (auto &[dest, records] : out) {
        if (dest == rank) {
            received.emplace_back(rank, std::move(records));
            continue;
        }
        if (records.size() > (size_t)INT32_MAX) fail(ESM_ERR_UNSUPPORTED, "directory message over 2^31 records");
        sends.emplace_back();
        check_mpi(MPI_Issend(records.data(), (int)records.size(), MPI_INT64_T, dest, tag, comm, &sends.back()),
                  "MPI_Issend (directory)");
    }
    MPI_Request barrier = MPI_REQUEST_NULL;
    bool in_barrier = false;
    for (;;) {
        int arrived = 0;
        MPI_Status status;
        check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, tag, comm, &arrived, &status), "MPI_Iprobe (directory)");
        if (arrived) {
            int n = 0;
            MPI_Get_count(&status, MPI_INT64_T, &n);
            Records records(n);
            check_mpi(MPI_Recv(records.data(), n, MPI_INT64_T, status.MPI_SOURCE, tag, comm, MPI_STATUS_IGNORE),
                      "MPI_Recv (directory)");
            received.emplace_back(status.MPI_SOURCE, std::move(records));
            continue;
        }
        int done = 0;
        if (!in_barrier) {
            check_mpi(MPI_Testall((int)sends.size(), sends.data(), &done, MPI_STATUSES_IGNORE), "MPI_Testall (directory)");
            if (done) {
                check_mpi(MPI_Ibarrier(comm, &barrier), "MPI_Ibarrier (directory)");
                in_barrier = true;
            }
        } else {
            check_mpi(MPI_Test(&barrier, &done, MPI_STATUS_IGNORE), "MPI_Test (directory barrier)");
            if (done) break;
        }
    }
    return received;
}

}  // namespace esm
