/// @file multigpu_nccl.hpp
/// @brief NCCL for the multigpu track: checked calls, a communicator over the MPI job
/// (the unique id made by rank 0 and broadcast with MPI: the form that also works across
/// nodes), a one-GPU communicator for the same run's single-GPU baseline, and the data
/// type of each C++ type.
///
///     tut::mg::Nccl nccl(world);                 // every rank of the job, one GPU each
///     TUT_NCCL(ncclAllReduce(in, out, n, ncclFloat, ncclSum, nccl.comm, stream));
///
/// NCCL's collectives are enqueued on a CUDA stream like kernels and run as kernels on
/// every GPU of the communicator; a rank that calls them in another order than the others
/// hangs the job (NCCL's own rule, not checked here).
#pragma once

#include "check.hpp"
#include "multigpu_mpi.hpp"

#include <nccl.h>

#include <string>

namespace tut::mg {
namespace detail {
inline void check_nccl(ncclResult_t status, const char* call, const char* file, int line) {
    if (status == ncclSuccess || status == ncclInProgress) return;
    std::string what = std::string("'") + ncclGetErrorString(status) + "'";
    const char* last = ncclGetLastError(nullptr);
    if (last && *last) what += " (" + std::string(last) + ")";
    ::tut::detail::throw_call_error("NCCL", what, call, file, line);
}
}  // namespace detail
}  // namespace tut::mg

/// Checks an NCCL call, throwing tut::CudaError "NCCL error '...' (NCCL's last error) in CALL at FILE:LINE".
#define TUT_NCCL(call) ::tut::mg::detail::check_nccl((call), #call, __FILE__, __LINE__)

namespace tut::mg {

template <class T>
ncclDataType_t nccl_type();
template <>
inline ncclDataType_t nccl_type<float>() { return ncclFloat32; }
template <>
inline ncclDataType_t nccl_type<double>() { return ncclFloat64; }
template <>
inline ncclDataType_t nccl_type<int>() { return ncclInt32; }

/// "2.28.9": the NCCL library this program runs with.
inline std::string nccl_version_text() {
    int v = 0;
    if (ncclGetVersion(&v) != ncclSuccess) return "?";
    return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
}

/// An NCCL communicator: every rank of the MPI job (Nccl(world)), or this process alone
/// (Nccl::single(), the one-GPU baseline). Destroyed with the object.
class Nccl {
  public:
    ncclComm_t comm = nullptr;
    int rank = 0, size = 1;

    /// Collective over the MPI job: rank 0 makes the unique id, MPI_Bcast hands it to the
    /// others, every rank joins with its own rank number.
    explicit Nccl(const World& w) {
        collective(w, "Nccl(world) (ncclCommInitRank over every rank)");
        progress("ncclCommInitRank over " + std::to_string(w.size) + " rank(s)");
        ncclUniqueId id;
        if (w.rank == 0) TUT_NCCL(ncclGetUniqueId(&id));
        TUT_MPI(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, w.comm));
        TUT_NCCL(ncclCommInitRank(&comm, w.size, id, w.rank));
        rank = w.rank;
        size = w.size;
        progress("NCCL communicator ready");
    }
    /// This process alone, on its current GPU: the same code path on one GPU. Not
    /// collective: rank 0 may make it on its own (inside a RankLocal section).
    static Nccl single() { return Nccl(); }

    Nccl(Nccl&& o) noexcept : comm(o.comm), rank(o.rank), size(o.size) { o.comm = nullptr; }
    Nccl& operator=(Nccl&&) = delete;
    Nccl(const Nccl&) = delete;
    Nccl& operator=(const Nccl&) = delete;
    ~Nccl() {
        if (comm) ncclCommDestroy(comm);
    }

  private:
    Nccl() {
        ncclUniqueId id;
        TUT_NCCL(ncclGetUniqueId(&id));
        TUT_NCCL(ncclCommInitRank(&comm, 1, id, 0));
    }
};

}  // namespace tut::mg
