/// @file multigpu_nvshmem.hpp
/// @brief NVSHMEM for the multigpu track: started over MPI (rank 0 makes a unique id,
/// MPI_Bcast hands it to the others: the bootstrap that also spans nodes, and needs no
/// MPI plugin built against this machine's MPI), stopped at the end; checked calls.
///
///     tut::mg::Nvshmem shmem(world);   // after tut::mg::Mpi: every process's GPU is chosen
///     float* p = shmem.alloc<float>(n); // symmetric: the same size on every PE, collectively
///
/// NVSHMEM makes each GPU's symmetric heap addressable from every other GPU of the job
/// (over NVLink, a store to another GPU's memory; over a network, an RDMA write), and
/// gives kernels puts, gets, signals and waits: communication started by the GPU itself.
/// NVLink SHARP (multicast) stays off: NVSHMEM_DISABLE_NVLS=1 (tut/multigpu.hpp).
#pragma once

#include "check.hpp"
#include "multigpu_mpi.hpp"

#include <nvshmem.h>
#include <nvshmemx.h>

#include <algorithm>
#include <string>
#include <vector>

namespace tut::mg {
namespace detail {
inline void check_nvshmem(int status, const char* call, const char* file, int line) {
    if (status == 0) return;
    ::tut::detail::throw_call_error("NVSHMEM", "status " + std::to_string(status), call, file, line);
}
}  // namespace detail
}  // namespace tut::mg

/// Checks an NVSHMEM host call that returns a status (0: success).
#define TUT_NVSHMEM(call) ::tut::mg::detail::check_nvshmem((call), #call, __FILE__, __LINE__)

namespace tut::mg {

/// NVSHMEM over the MPI job: PE number = MPI rank. Collective to make and to destroy.
class Nvshmem {
  public:
    explicit Nvshmem(const World& w) : world_(&w) {
        collective(w, "Nvshmem(world) (nvshmemx_init_attr over every rank)");
        progress("NVSHMEM start-up over " + std::to_string(w.size) + " PE(s)");
        apply_safety_defaults(false);
        // Every PE on one node: NVLink (or PCIe peer access) carries everything, so no
        // network transport is started (and none is looked for). Across nodes NVSHMEM picks one.
        if (w.local_size == w.size) setenv("NVSHMEM_REMOTE_TRANSPORT", "none", 0);
        nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
        if (w.rank == 0) TUT_NVSHMEM(nvshmemx_get_uniqueid(&id));
        TUT_MPI(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, w.comm));
        nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
        TUT_NVSHMEM(nvshmemx_set_attr_uniqueid_args(w.rank, w.size, &id, &attr));
        TUT_NVSHMEM(nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr));
        if (nvshmem_my_pe() != w.rank || nvshmem_n_pes() != w.size)
            throw CudaError("NVSHMEM started with PE " + std::to_string(nvshmem_my_pe()) + " of " +
                            std::to_string(nvshmem_n_pes()) + " for MPI rank " + std::to_string(w.rank) + " of " +
                            std::to_string(w.size));
        progress("NVSHMEM ready");
    }
    /// Collective: every PE destroys its Nvshmem together, and before MPI_Finalize (never
    /// from a static destructor: NVSHMEM's own statics may be gone by then, and
    /// nvshmem_finalize then fails with "mutex lock failed" and exit code 255).
    ~Nvshmem() {
        progress("nvshmem_finalize");
        cudaDeviceSynchronize();
        for (void* p : allocations_) nvshmem_free(p);
        nvshmem_finalize();
    }
    Nvshmem(const Nvshmem&) = delete;
    Nvshmem& operator=(const Nvshmem&) = delete;

    /// `count` elements of symmetric memory (the same count on every PE: collective), zeroed.
    template <class T>
    T* alloc(size_t count) {
        collective(*world_, "nvshmem_malloc (symmetric memory)");
        const size_t bytes = std::max<size_t>(count, 1) * sizeof(T);
        void* p = nvshmem_malloc(bytes);
        if (!p) throw CudaError("nvshmem_malloc(" + std::to_string(bytes) + ") failed (the symmetric heap is "
                                "NVSHMEM_SYMMETRIC_SIZE, 1 GB by default)");
        TUT_CUDA(cudaMemset(p, 0, bytes));
        allocations_.push_back(p);
        return static_cast<T*>(p);
    }
    /// A piece of a symmetric arena of `bytes` (allocated at the first call, collectively)
    /// handed out in order: the same sequence of take() calls after reset() gives the same
    /// addresses on every PE, which is what symmetric objects need. reset() is local.
    template <class T>
    T* take(size_t count, size_t arena_bytes = size_t(512) << 20) {
        if (!arena_) {
            arena_ = alloc<unsigned char>(arena_bytes);
            arena_bytes_ = arena_bytes;
        }
        const size_t bytes = (std::max<size_t>(count, 1) * sizeof(T) + 255) / 256 * 256;
        if (used_ + bytes > arena_bytes_)
            throw Unsupported("the symmetric arena of " + std::to_string(arena_bytes_ >> 20) + " MiB is too small for " +
                              std::to_string((used_ + bytes) >> 20) + " MiB");
        T* p = reinterpret_cast<T*>(arena_ + used_);
        used_ += bytes;
        return p;
    }
    void reset() { used_ = 0; }

    /// Frees everything alloc() gave (collective).
    void free_all() {
        collective(*world_, "Nvshmem::free_all (nvshmem_free)");
        TUT_CUDA(cudaDeviceSynchronize());
        nvshmem_barrier_all();
        for (void* p : allocations_) nvshmem_free(p);
        allocations_.clear();
        arena_ = nullptr;
        used_ = 0;
    }

  private:
    const World* world_;
    std::vector<void*> allocations_;
    unsigned char* arena_ = nullptr;
    size_t arena_bytes_ = 0, used_ = 0;
};

}  // namespace tut::mg
