/// @file multigpu_ipc.hpp
/// @brief Memory of every process's GPU, mapped into every other process (CUDA IPC), and a
/// barrier between GPUs that runs on the GPUs: what an all-reduce written by hand needs.
///
/// One process per GPU means one address space per GPU: a pointer of rank 1 means nothing
/// to rank 0. CUDA IPC bridges them: rank q exports its allocation
/// (cudaIpcGetMemHandle, a 64-byte handle), every rank receives the handles over MPI
/// (MPI_Allgather) and maps them (cudaIpcOpenMemHandle with
/// cudaIpcMemLazyEnablePeerAccess). On GPUs that are peers (NVLink, or PCIe with peer
/// access) a kernel of rank 0 then loads from and stores to rank 1's memory through the
/// mapped pointer, and cudaMemcpyAsync copies between them with the copy engines.
///
/// PeerBuffer<T> is such an allocation on every rank, with optional guard zones before
/// and after the payload (the checks fill them with a pattern and look for writes out of
/// bounds). PeerFlags is a small array per rank for the barrier: slot q of rank r's array
/// is written only by rank q. peer_barrier() (nvcc only) launches one tiny kernel that
/// stores the barrier's number into a slot of each partner's array and waits until each
/// partner has stored the same number into its own: a GPU-side barrier that needs no
/// trip through the host. PeerFlags also holds a few hundred slots per rank for a kernel
/// that signals its partners slice by slice while it runs, instead of between kernels.
///
/// The all-reduce lesson's variants share one signature (AllreduceCall, AllreduceVariant),
/// so the checks and main() call them the same way.
#pragma once

#include "check.hpp"
#include "multigpu_mpi.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#if defined(__CUDACC__)
#include <cuda/atomic>
#endif

namespace tut::mg {

/// Whether GPUs `a` and `b` (device numbers of this process) can read each other's
/// memory directly; false when either cannot (no peer path: IPC maps would fault).
inline bool can_access_peer(int a, int b) {
    if (a == b) return true;
    int ab = 0, ba = 0;
    if (cudaDeviceCanAccessPeer(&ab, a, b) != cudaSuccess || cudaDeviceCanAccessPeer(&ba, b, a) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return ab && ba;
}

/// True on every rank when every pair of the job's GPUs on this node are peers. Collective.
inline bool all_peers(const World& w) {
    bool ok = true;
    for (int q = 0; q < w.local_size && q < w.devices; ++q) ok = ok && can_access_peer(w.device, q);
    return all_ranks(w, ok);
}

/// `count` elements of T on every rank's GPU, each rank's mapped into every other rank.
/// Collective to make and to destroy. With `guard` > 0, `guard` elements before and after
/// the payload on every rank (same layout everywhere).
template <class T>
class PeerBuffer {
  public:
    PeerBuffer(const World& w, size_t count, size_t guard = 0) : world_(&w), count_(count), guard_(guard) {
        collective(w, "PeerBuffer (CUDA IPC handles exchanged with MPI_Allgather)");
        const size_t bytes = (count_ + 2 * guard_) * sizeof(T) + 256;  // never empty: IPC needs an allocation
        TUT_CUDA(cudaMalloc(&base_, bytes));
        bytes_ = bytes;
        cudaIpcMemHandle_t mine;
        TUT_CUDA(cudaIpcGetMemHandle(&mine, base_));
        std::vector<cudaIpcMemHandle_t> all(static_cast<size_t>(w.size));
        TUT_MPI(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, w.comm));
        bases_.assign(static_cast<size_t>(w.size), nullptr);
        for (int q = 0; q < w.size; ++q) {
            if (q == w.rank) {
                bases_[q] = base_;
                continue;
            }
            void* p = nullptr;
            TUT_CUDA(cudaIpcOpenMemHandle(&p, all[q], cudaIpcMemLazyEnablePeerAccess));
            bases_[q] = static_cast<T*>(p);
        }
    }
    ~PeerBuffer() {
        // Every rank must be done with the others' memory before any of it is freed. (After
        // MPI has finished, at a program's exit, the mappings simply go with the process.)
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (finalized) return;
        cudaDeviceSynchronize();
        MPI_Barrier(world_->comm);
        for (int q = 0; q < world_->size; ++q)
            if (q != world_->rank && bases_[q]) cudaIpcCloseMemHandle(bases_[q]);
        MPI_Barrier(world_->comm);
        cudaFree(base_);
    }
    PeerBuffer(const PeerBuffer&) = delete;
    PeerBuffer& operator=(const PeerBuffer&) = delete;

    size_t size() const { return count_; }
    size_t guard() const { return guard_; }
    T* local() const { return base_ + guard_; }                  ///< this rank's payload
    T* peer(int q) const { return bases_[q] + guard_; }          ///< rank q's payload, mapped here
    T* with_guards() const { return base_; }                     ///< this rank's allocation, guards included
    size_t total() const { return count_ + 2 * guard_; }         ///< elements, guards included

  private:
    const World* world_;
    size_t count_, guard_;
    size_t bytes_ = 0;
    T* base_ = nullptr;
    std::vector<T*> bases_;
};

/// The barrier's flags: on every rank an array of one 64-bit slot per rank, mapped into
/// every rank; `epoch` counts the barriers passed (the same on every rank, since every
/// rank passes the same barriers in the same order).
///
/// Beside them, kSignals more 64-bit slots per rank, also zeroed and mapped everywhere,
/// for a kernel that signals its partners itself while it runs (the all-reduce lesson's
/// pipelined ring); that kernel decides which rank writes which slot. `signal_calls`
/// counts such calls, the same on every rank as `epoch` is, so that the slots can hold
/// counters that only grow and never need resetting between calls.
class PeerFlags {
  public:
    static constexpr int kSignals = 256;

    explicit PeerFlags(const World& w)
        : rank(w.rank), size(w.size), buffer_(w, static_cast<size_t>(w.size)), signals_(w, static_cast<size_t>(kSignals)) {
        TUT_CUDA(cudaMemset(buffer_.local(), 0, sizeof(unsigned long long) * static_cast<size_t>(w.size)));
        TUT_CUDA(cudaMemset(signals_.local(), 0, sizeof(unsigned long long) * static_cast<size_t>(kSignals)));
        TUT_CUDA(cudaDeviceSynchronize());
        TUT_MPI(MPI_Barrier(w.comm));
        std::vector<unsigned long long*> peers(static_cast<size_t>(w.size));
        for (int q = 0; q < w.size; ++q) peers[q] = buffer_.peer(q);
        TUT_CUDA(cudaMalloc(&peer_table_, sizeof(unsigned long long*) * peers.size()));
        TUT_CUDA(cudaMemcpy(peer_table_, peers.data(), sizeof(unsigned long long*) * peers.size(), cudaMemcpyHostToDevice));
    }
    ~PeerFlags() { cudaFree(peer_table_); }
    PeerFlags(const PeerFlags&) = delete;
    PeerFlags& operator=(const PeerFlags&) = delete;

    unsigned long long* local() const { return buffer_.local(); }
    unsigned long long* const* peer_table() const { return peer_table_; }  ///< device array: rank q's flags
    unsigned long long* signals() const { return signals_.local(); }       ///< this rank's kSignals slots
    unsigned long long* signals_of(int q) const { return signals_.peer(q); }  ///< rank q's, mapped here
    unsigned long long epoch = 0;
    unsigned long long signal_calls = 0;
    int rank, size;

  private:
    PeerBuffer<unsigned long long> buffer_, signals_;
    unsigned long long** peer_table_ = nullptr;
};

/// One all-reduce (sum) of `count` elements of T: every rank's `in` summed into every
/// rank's `out` (out of place), on `stream`. `world`, `flags` and `nccl_comm` are what
/// the variants may use; `in` and `out` are mapped into every rank.
template <class T>
struct AllreduceCall {
    const World* world = nullptr;
    PeerBuffer<T>* in = nullptr;
    PeerBuffer<T>* out = nullptr;
    size_t count = 0;
    PeerFlags* flags = nullptr;
    void* nccl_comm = nullptr;  ///< an ncclComm_t (void* keeps nccl.h out of the checks' interface)
    cudaStream_t stream = nullptr;
};

/// A way to all-reduce, by name ("gather", "ring", "nccl").
struct AllreduceWay {
    std::string name;
    void (*run_float)(const AllreduceCall<float>&) = nullptr;
    void (*run_int)(const AllreduceCall<int>&) = nullptr;
};

#if defined(__CUDACC__)
namespace detail {
/// The partners of one barrier, passed by value as a kernel argument.
struct PartnerList {
    int q[32];
};

/// Thread i < count: tell partner q = partners.q[i] this rank reached barrier `epoch`, then
/// wait for q to say the same. The fence makes every write this GPU made before the
/// barrier (earlier kernels and copies of the stream included) visible to q first.
static __global__ void peer_barrier_kernel(unsigned long long* const* flags, unsigned long long* mine, int rank,
                                    PartnerList partners, int count, unsigned long long epoch) {
    const int i = threadIdx.x;
    if (i >= count) return;
    const int q = partners.q[i];
    __threadfence_system();
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> theirs(flags[q][rank]);
    theirs.store(epoch, cuda::memory_order_release);
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> from(mine[q]);
    while (from.load(cuda::memory_order_acquire) < epoch) {
    }
}
}  // namespace detail

/// A barrier between this GPU and `partners` (ranks, at most 32, not this one), enqueued
/// on `stream`: work enqueued after it starts only when every partner has reached the
/// same barrier, and sees everything they wrote before it. Every rank must call the same
/// sequence of barriers (each call advances flags.epoch), with partners that name each
/// other. Host-side, nothing waits.
inline void peer_barrier(PeerFlags& flags, const std::vector<int>& partners, cudaStream_t stream) {
    ++flags.epoch;
    if (partners.empty()) return;
    if (partners.size() > 32) throw Unsupported("peer_barrier: at most 32 partners");
    detail::PartnerList list{};
    for (size_t i = 0; i < partners.size(); ++i) list.q[i] = partners[i];
    detail::peer_barrier_kernel<<<1, 32, 0, stream>>>(flags.peer_table(), flags.local(), flags.rank, list,
                                                      static_cast<int>(partners.size()), flags.epoch);
    TUT_LAUNCH("peer_barrier_kernel");
}
#endif

}  // namespace tut::mg
