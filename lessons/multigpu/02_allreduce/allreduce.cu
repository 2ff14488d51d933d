// multigpu/02_allreduce: all-reduce by hand, then NCCL. After lesson 1's copies between two
// GPUs, the operation that multi-GPU training and solvers are made of: every GPU holds a
// vector, every GPU must end with the sum of all of them. First the obvious way (gather
// to GPU 0, sum there, copy back), then the ring that nccl-tests' bus bandwidth is named
// after (reduce-scatter, then all-gather: every link busy, no GPU a bottleneck), then
// ncclAllReduce. One process per GPU (mpirun); the GPUs reach each other's buffers
// through CUDA IPC, and wait for each other with a barrier that runs on the GPUs.
//
// Build alone (from the repository root; needs MPI and NCCL):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include -ccbin mpicxx \
//        lessons/multigpu/02_allreduce/allreduce.cu -lnccl -o allreduce
// Run:  mpirun -np 2 ./allreduce          (4 KiB .. 1 GiB of floats; --max-bytes to stop earlier;
//                                          --sweep: the pipelined ring's block counts and slice sizes)
//
// In this file:
//   add_kernel         out = a + b, 16 bytes per load: one step of the reduce-scatter,
//                      b read from the neighbour's memory
//   sum_kernel         out = in_0 + in_1 + ... + in_{n-1}: the gather's sum on GPU 0
//   allreduce_gather   every GPU's vector read by GPU 0, summed, copied back by everyone
//   allreduce_ring     reduce-scatter + all-gather around the ring               (the exercise)
//   ring_pipelined_kernel, allreduce_ring_pipelined
//                      the same ring in one kernel per GPU, each chunk in slices, each slice
//                      signalled to the next GPU as it is stored there   (given: the next step)
//   allreduce_nccl     ncclAllReduce
//   variants "gather", "ring", "ring, pipelined", "nccl" (float; the checks also run them on int)
//
// Sources: nccl-tests' doc/PERFORMANCE.md (algorithm and bus bandwidth); P. Patarasuk and
// X. Yuan, "Bandwidth optimal all-reduce algorithms for clusters of workstations" (JPDC
// 2009); NVIDIA/multi-gpu-programming-models (the IPC and NCCL variants of its Jacobi).
#include "tut/check.hpp"
#include "tut/cli.hpp"
#include "tut/lesson.hpp"
#include "tut/multigpu.hpp"
#include "tut/multigpu_ipc.hpp"
#include "tut/multigpu_mpi.hpp"
#include "tut/multigpu_nccl.hpp"
#include "tut/multigpu_ring.hpp"
#include "tut/multigpu_topology.hpp"
#include "tut/nvtx.hpp"
#include "tut/report.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace lesson {

using tut::mg::AllreduceCall;  // world, in, out (PeerBuffers mapped into every rank), count, flags, nccl_comm, stream

constexpr int kThreads = 256;
constexpr size_t kAlign = 4;  // chunk boundaries every 4 elements: 16-byte loads stay inside a chunk

/// Four elements of T in one 16-byte load or store.
template <class T>
struct Vec4;
template <>
struct Vec4<float> {
    using type = float4;
};
template <>
struct Vec4<int> {
    using type = int4;
};
template <class V>
__device__ V add4(V a, V b) {
    return {a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w};
}

/// out[i] = a[i] + b[i] for n elements, 16 bytes per load. With b on the neighbour's GPU
/// each load of b crosses the link; two loads in flight per thread hide part of its latency.
/// Pointers must be 16-byte aligned (the chunks are).
template <class T>
__global__ void add_kernel(T* __restrict__ out, const T* __restrict__ a, const T* __restrict__ b, size_t n) {
    using V = typename Vec4<T>::type;
    const size_t n4 = n / 4, stride = size_t(gridDim.x) * blockDim.x;
    const V* a4 = reinterpret_cast<const V*>(a);
    const V* b4 = reinterpret_cast<const V*>(b);
    V* o4 = reinterpret_cast<V*>(out);
    size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + stride < n4; i += 2 * stride) {
        const V x = b4[i], y = b4[i + stride];
        o4[i] = add4(a4[i], x);
        o4[i + stride] = add4(a4[i + stride], y);
    }
    for (; i < n4; i += stride) o4[i] = add4(a4[i], b4[i]);
    for (size_t j = n4 * 4 + size_t(blockIdx.x) * blockDim.x + threadIdx.x; j < n; j += stride) out[j] = a[j] + b[j];
}

/// Up to 32 inputs, passed by value.
template <class T>
struct Inputs {
    const T* p[32];
};

/// out[i] = in[0][i] + ... + in[count-1][i], 16 bytes per load (aligned pointers).
template <class T>
__global__ void sum_kernel(T* __restrict__ out, Inputs<T> in, int count, size_t n) {
    using V = typename Vec4<T>::type;
    const size_t n4 = n / 4, stride = size_t(gridDim.x) * blockDim.x;
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n4; i += stride) {
        V s = reinterpret_cast<const V*>(in.p[0])[i];
        for (int k = 1; k < count; ++k) s = add4(s, reinterpret_cast<const V*>(in.p[k])[i]);
        reinterpret_cast<V*>(out)[i] = s;
    }
    for (size_t j = n4 * 4 + size_t(blockIdx.x) * blockDim.x + threadIdx.x; j < n; j += stride) {
        T s = in.p[0][j];
        for (int k = 1; k < count; ++k) s += in.p[k][j];
        out[j] = s;
    }
}

/// A grid for n elements: enough blocks to fill the GPU twice over, no more than the work.
inline unsigned grid_for(size_t n) {
    static const int sms = tut::sm_count();
    const size_t wanted = (n / 4 + kThreads - 1) / kThreads;
    return static_cast<unsigned>(std::max<size_t>(1, std::min<size_t>(wanted, size_t(sms) * 8)));
}

template <class T>
void launch_add(T* out, const T* a, const T* b, size_t n, cudaStream_t s) {
    if (n == 0) return;
    add_kernel<T><<<grid_for(n), kThreads, 0, s>>>(out, a, b, n);
    TUT_LAUNCH("add_kernel");
}

/// The ranks next to this one in the ring (prev and next; one rank when n = 2, none when 1).
inline std::vector<int> ring_neighbours(int rank, int n) {
    std::vector<int> v;
    if (n > 1) v.push_back(tut::mg::ring::prev(rank, n));
    if (n > 2) v.push_back(tut::mg::ring::next(rank, n));
    return v;
}

/// Everyone's vector to GPU 0, summed there, copied back by every other GPU. GPU 0's links
/// carry (n - 1) vectors in and (n - 1) out; the others' links wait.
template <class T>
void allreduce_gather(const AllreduceCall<T>& c) {
    const tut::mg::World& w = *c.world;
    if (w.size > 32) throw tut::Unsupported("gather: at most 32 GPUs (the inputs travel as one kernel argument)");
    std::vector<int> everyone;
    for (int q = 0; q < w.size; ++q)
        if (q != w.rank) everyone.push_back(q);
    tut::mg::peer_barrier(*c.flags, everyone, c.stream);  // every rank's input is written
    if (w.rank == 0 && c.count > 0) {
        Inputs<T> in{};
        for (int q = 0; q < w.size; ++q) in.p[q] = c.in->peer(q);
        sum_kernel<T><<<grid_for(c.count), kThreads, 0, c.stream>>>(c.out->local(), in, w.size, c.count);
        TUT_LAUNCH("sum_kernel");
    }
    tut::mg::peer_barrier(*c.flags, everyone, c.stream);  // GPU 0's sum is complete
    if (w.rank != 0 && c.count > 0)
        TUT_CUDA(cudaMemcpyAsync(c.out->local(), c.out->peer(0), c.count * sizeof(T), cudaMemcpyDeviceToDevice, c.stream));
    tut::mg::peer_barrier(*c.flags, everyone, c.stream);  // everyone has its copy: GPU 0's output may change
}

/// The ring: reduce-scatter, then all-gather, every GPU reading only from the one before
/// it. Each step moves 1/n of the vector over every link at once.
template <class T>
void allreduce_ring(const AllreduceCall<T>& c) {
    const tut::mg::World& w = *c.world;
    const int n = w.size, r = w.rank, prev = tut::mg::ring::prev(r, n);
    const tut::mg::AlignedChunks chunks(c.count, n, kAlign);
    const std::vector<int> neighbours = ring_neighbours(r, n);
    if (n == 1) {
        if (c.count) TUT_CUDA(cudaMemcpyAsync(c.out->local(), c.in->local(), c.count * sizeof(T), cudaMemcpyDeviceToDevice, c.stream));
        return;
    }
    // TODO(exercise): the ring. Reduce-scatter: n - 1 steps after which this rank holds the
    //   complete sum of one chunk (tut::mg::ring::owned_chunk); then all-gather: n - 1
    //   steps after which it holds every chunk's sum in c.out->local().
    //   The constraint: this rank only ever reads from prev (c.in->peer(prev),
    //   c.out->peer(prev)) and writes its own memory, and every link must be busy at every
    //   step; no chunk may be read before prev has finished writing it, nor overwritten
    //   before next has finished reading it. Nothing on the host waits: the waiting is
    //   tut::mg::peer_barrier(*c.flags, neighbours, c.stream), a barrier the GPUs pass
    //   together, which every rank must call the same number of times.
    //   Hints: tut::mg::ring (multigpu_ring.hpp) says which chunk to work on at step s;
    //   chunks.begin(k) and chunks.size(k) where it is. At the first reduce-scatter step
    //   prev has not added anything yet: what do you read from it then? launch_add()
    //   adds; cudaMemcpyAsync with two device pointers copies between GPUs. Before the
    //   first read, has prev finished writing its input?
    (void)prev;
    (void)chunks;
    (void)neighbours;
    TUT_CUDA(cudaMemcpyAsync(c.out->local(), c.in->local(), c.count * sizeof(T), cudaMemcpyDeviceToDevice, c.stream));
}

// ---- Given, not part of the exercise: the ring pipelined in one kernel ----------------
// The ring above runs 2 (n - 1) kernels and copies with a barrier after each, so no step
// starts before the slowest GPU has finished the whole step before it. Here one kernel per
// GPU runs every step. Block b owns the b-th contiguous part of every chunk and walks it
// in slices; after each slice it raises a counter in the next GPU's memory, and the next
// GPU's block b starts that slice's next step as soon as the counter says it has arrived.
// The ring pushes: a block stores its result into the next GPU's output (a store over
// NVLink is posted, a load waits for its round trip), so each step reads local memory only:
//
//   step i = 0 .. 2n-2, chunk c = r - i (mod n), this rank's own input in[c]:
//     i = 0              next.out[c] = in[c]
//     0 < i < n - 1      next.out[c] = in[c] + out[c]            (out[c] came from prev)
//     i = n - 1          out[c] = next.out[c] = in[c] + out[c]    (c is complete here)
//     n - 1 < i < 2n - 2 next.out[c] = out[c]                    (a complete chunk, passed on)
//     i = 2n - 2         wait until the last complete chunk from prev has arrived
//
// Chunk r - i at step i is the chunk prev sent at step i - 1, so a slice's counter value
// names the same data on both sides. The sums are added in the same order as the ring's.

constexpr int kPipelineThreads = 512;
constexpr int kPipelineBlocks = 64;                // per GPU: each owns 1/64 of every chunk
constexpr size_t kSliceBytes = size_t(2) << 20;    // of a block's part of a chunk, per signal
constexpr int kMaxPipelineBlocks = tut::mg::PeerFlags::kSignals / 2;
constexpr unsigned long long kWaitLimitNs = 60ull * 1000 * 1000 * 1000;

/// The chunk boundaries, passed by value: chunk k is [at[k], at[k + 1]).
struct ChunkBounds {
    size_t at[33];
};

__device__ inline unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/// Tells a partner `value` (system-scope release: every store of this block ordered before
/// it by __syncthreads, remote ones included, is visible to whoever acquires it).
__device__ inline void signal(unsigned long long* slot, unsigned long long value) {
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> s(*slot);
    s.store(value, cuda::memory_order_release);
}

/// Waits until *slot >= value (the counters only grow), then acquires. A partner that
/// never comes is a bug or a dead rank: after a minute the kernel traps, so the host
/// reports an error instead of waiting for ever.
__device__ inline void wait_for(const unsigned long long* slot, unsigned long long value) {
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> s(*const_cast<unsigned long long*>(slot));
    const unsigned long long start = global_ns();
    for (unsigned polls = 1; s.load(cuda::memory_order_relaxed) < value; ++polls) {
        if (polls % 1024 == 0 && global_ns() - start > kWaitLimitNs) {
            printf("ring_pipelined_kernel: block %d waited a minute for %llx (slot holds %llx)\n", blockIdx.x, value,
                   s.load(cuda::memory_order_relaxed));
            __trap();
        }
    }
    cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_system);
}

__device__ inline size_t smaller(size_t a, size_t b) { return a < b ? a : b; }

enum class Step { kFirst, kAdd, kFinish, kPass };

/// One slice [s0, s1) of one step, by the whole block, 16 bytes per load and store, four
/// in flight per thread. `out` holds what prev sent (read past L1: it was written by
/// another GPU, and the same address is read again at a later step).
template <class T>
__device__ void ring_slice(Step step, const T* __restrict__ in, T* out, T* next_out, size_t s0, size_t s1) {
    using V = typename Vec4<T>::type;
    const V* in4 = reinterpret_cast<const V*>(in);
    V* out4 = reinterpret_cast<V*>(out);
    V* next4 = reinterpret_cast<V*>(next_out);
    const size_t v1 = s1 / 4, stride = blockDim.x;
    size_t k = s0 / 4 + threadIdx.x;
    for (; k + 3 * stride < v1; k += 4 * stride) {
        V v[4];
        for (int u = 0; u < 4; ++u) {
            const size_t j = k + u * stride;
            if (step == Step::kFirst) v[u] = in4[j];
            else if (step == Step::kPass) v[u] = __ldcg(out4 + j);
            else v[u] = add4(in4[j], __ldcg(out4 + j));
        }
        for (int u = 0; u < 4; ++u) {
            const size_t j = k + u * stride;
            if (step == Step::kFinish) out4[j] = v[u];
            next4[j] = v[u];
        }
    }
    for (; k < v1; k += stride) {
        const V v = step == Step::kFirst ? in4[k] : step == Step::kPass ? __ldcg(out4 + k) : add4(in4[k], __ldcg(out4 + k));
        if (step == Step::kFinish) out4[k] = v;
        next4[k] = v;
    }
    for (size_t j = v1 * 4 + threadIdx.x; j < s1; j += stride) {  // the last chunk's last 1-3 elements
        const T v = step == Step::kFirst ? in[j] : step == Step::kPass ? __ldcg(out + j) : in[j] + __ldcg(out + j);
        if (step == Step::kFinish) out[j] = v;
        next_out[j] = v;
    }
}

/// One call of the pipelined ring on rank r of n, by block b of gridDim.x (every block
/// resident: see ring_pipelined). Signal slots (PeerFlags::signals): [b] counts the slices
/// prev has delivered to this rank's block b, [kMaxPipelineBlocks + b] says that next has
/// entered call `call`. Values carry the call in their upper 32 bits, so they only grow.
template <class T>
__global__ void __launch_bounds__(kPipelineThreads)
    ring_pipelined_kernel(const T* __restrict__ in, T* out, T* next_out, unsigned long long* signals,
                          unsigned long long* next_signals, unsigned long long* prev_signals, ChunkBounds bounds, int n,
                          int r, unsigned long long call, size_t slice) {
    const int b = blockIdx.x;
    const unsigned long long tag = call << 32;
    // Before this block stores into next's output: next has entered this call, so the work
    // its stream did before (a reader of the same output, say) is finished. And tell prev
    // the same.
    if (threadIdx.x == 0) {
        signal(&prev_signals[kMaxPipelineBlocks + b], call);
        wait_for(&signals[kMaxPipelineBlocks + b], call);
    }
    __syncthreads();
    unsigned long long sent = 0, received = 0;
    for (int i = 0; i <= 2 * n - 2; ++i) {
        const int c = ((r - i) % n + n) % n;
        const size_t c0 = bounds.at[c], c1 = bounds.at[c + 1];
        const size_t part = ((c1 - c0 + gridDim.x - 1) / gridDim.x + 3) / 4 * 4;  // a multiple of 4: 16-byte aligned
        const size_t p0 = smaller(c1, c0 + b * part), p1 = smaller(c1, p0 + part);
        if (i == 2 * n - 2) {  // nothing to send: wait for the whole of the last chunk
            const unsigned long long slices = (p1 - p0 + slice - 1) / slice;
            if (threadIdx.x == 0 && slices > 0) wait_for(&signals[b], tag | (received + slices));
            break;
        }
        const Step step = i == 0 ? Step::kFirst : i < n - 1 ? Step::kAdd : i == n - 1 ? Step::kFinish : Step::kPass;
        for (size_t s0 = p0; s0 < p1; s0 += slice) {
            if (i > 0) {  // this slice of the step before, from prev
                ++received;
                if (threadIdx.x == 0) wait_for(&signals[b], tag | received);
                __syncthreads();
            }
            ring_slice(step, in, out, next_out, s0, smaller(p1, s0 + slice));
            __syncthreads();  // every thread's stores of the slice, before thread 0's release
            ++sent;
            if (threadIdx.x == 0) signal(&next_signals[b], tag | sent);
        }
    }
}

/// The pipelined ring with `blocks` blocks per GPU and slices of `slice_bytes`. Every
/// rank's blocks wait for the neighbours' blocks, so all of them must run at once: one
/// block per SM at most (kPipelineThreads threads each fit any SM), nothing else on the
/// GPU that holds SMs for ever.
template <class T>
void ring_pipelined(const AllreduceCall<T>& c, int blocks, size_t slice_bytes) {
    const tut::mg::World& w = *c.world;
    const int n = w.size, r = w.rank;
    static const int sms = tut::sm_count();
    if (blocks < 1 || blocks > std::min(sms, kMaxPipelineBlocks))
        throw tut::Unsupported(tut::fmt("ring, pipelined: %d blocks; 1 to %d on this GPU (one per SM, every block "
                                        "resident at once)", blocks, std::min(sms, kMaxPipelineBlocks)));
    if (n > 32) throw tut::Unsupported("ring, pipelined: at most 32 GPUs (the chunk bounds travel as one kernel argument)");
    if (n == 1) {
        if (c.count) TUT_CUDA(cudaMemcpyAsync(c.out->local(), c.in->local(), c.count * sizeof(T), cudaMemcpyDeviceToDevice, c.stream));
        return;
    }
    const unsigned long long call = ++c.flags->signal_calls;  // every rank counts every call, empty ones too
    if (c.count == 0) return;
    const tut::mg::AlignedChunks chunks(c.count, n, kAlign);
    ChunkBounds bounds{};
    for (int k = 0; k < n; ++k) bounds.at[k] = chunks.begin(k);
    bounds.at[n] = c.count;
    const size_t slice = std::max<size_t>(4, slice_bytes / sizeof(T) / 4 * 4);
    const int prev = tut::mg::ring::prev(r, n), next = tut::mg::ring::next(r, n);
    ring_pipelined_kernel<T><<<blocks, kPipelineThreads, 0, c.stream>>>(
        c.in->local(), c.out->local(), c.out->peer(next), c.flags->signals(), c.flags->signals_of(next),
        c.flags->signals_of(prev), bounds, n, r, call, slice);
    TUT_LAUNCH("ring_pipelined_kernel");
}

/// The variant: ring_pipelined with the block count and slice size as template arguments,
/// so that a sweep of them (main's --sweep) names each setting as a variant of its own.
template <class T, int kBlocks = kPipelineBlocks, size_t kSlice = kSliceBytes>
void allreduce_ring_pipelined(const AllreduceCall<T>& c) {
    ring_pipelined(c, kBlocks, kSlice);
}

/// The library: NCCL picks the algorithm (ring or tree), the protocol and the number of
/// channels (SMs) for the size and the topology.
template <class T>
void allreduce_nccl(const AllreduceCall<T>& c) {
    TUT_NCCL(ncclAllReduce(c.in->local(), c.out->local(), c.count, tut::mg::nccl_type<T>(), ncclSum,
                           static_cast<ncclComm_t>(c.nccl_comm), c.stream));
}

std::vector<tut::mg::AllreduceWay> allreduce_variants() {
    return {{"gather", allreduce_gather<float>, allreduce_gather<int>},
            {"ring", allreduce_ring<float>, allreduce_ring<int>},
            {"ring, pipelined", allreduce_ring_pipelined<float>, allreduce_ring_pipelined<int>},
            {"nccl", allreduce_nccl<float>, allreduce_nccl<int>}};
}

}  // namespace lesson

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace {

/// Rank r's element i: a float in [-1, 1) made of 20 random bits (hash of seed, r, i).
__host__ __device__ inline float input_value(uint64_t seed, int r, size_t i) {
    uint64_t z = seed + 0x9E3779B97F4A7C15ull * (uint64_t(r) * 0x100000001ull + i + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return float(int64_t(z >> 44) - (1 << 19)) / float(1 << 19);
}

__global__ void fill_kernel(float* x, size_t n, uint64_t seed, int r) {
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        x[i] = input_value(seed, r, i);
}

/// Counts the elements whose sum is off: |got - exact| > (ranks - 1) 2^-24 sum|x| + tiny,
/// the exact sum in double (the float sum of n terms has n - 1 roundings). Also remembers
/// the first bad index.
__global__ void verify_kernel(const float* got, size_t n, uint64_t seed, int ranks, unsigned long long* bad,
                              unsigned long long* first) {
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        double sum = 0, mag = 0;
        for (int r = 0; r < ranks; ++r) {
            const double v = input_value(seed, r, i);
            sum += v;
            mag += fabs(v);
        }
        const double bound = (ranks - 1) * 0x1p-24 * mag + 1e-30;
        if (!(fabs(double(got[i]) - sum) <= bound)) {
            atomicAdd(bad, 1ull);
            atomicMin(first, (unsigned long long)i);
        }
    }
}

struct Sizes {
    std::vector<size_t> bytes;
    explicit Sizes(long long max_bytes) {
        for (size_t b = 4096; b <= size_t(max_bytes); b *= 4) bytes.push_back(b);
        if (bytes.empty()) bytes.push_back(size_t(max_bytes));
    }
};

/// The run: the communicators, the stream, the IPC-mapped buffers and the flags.
struct Setup {
    const tut::mg::World& world;
    tut::mg::Nccl nccl;
    cudaStream_t stream = nullptr;
    tut::mg::PeerFlags flags;
    tut::mg::PeerBuffer<float> in, out;
    uint64_t seed;
    Setup(const tut::mg::World& w, size_t max_count, uint64_t s)
        : world(w), nccl(w), flags(w), in(w, max_count), out(w, max_count), seed(s) {
        TUT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        fill_kernel<<<1024, 256, 0, stream>>>(in.local(), max_count, seed, w.rank);
        TUT_LAUNCH("fill_kernel");
        TUT_CUDA(cudaStreamSynchronize(stream));
        tut::mg::barrier(w);
    }
    ~Setup() { cudaStreamDestroy(stream); }
    tut::mg::AllreduceCall<float> call(size_t count) {
        tut::mg::AllreduceCall<float> c;
        c.world = &world;
        c.in = &in;
        c.out = &out;
        c.count = count;
        c.flags = &flags;
        c.nccl_comm = nccl.comm;
        c.stream = stream;
        return c;
    }
    /// Poisons the output, runs `v` once and counts wrong elements on this rank ("" when none).
    std::string check(const tut::mg::AllreduceWay& v, size_t count) {
        TUT_CUDA(cudaMemsetAsync(out.local(), 0xFF, count * sizeof(float), stream));
        v.run_float(call(count));
        unsigned long long* d = nullptr;
        TUT_CUDA(cudaMallocAsync(&d, 2 * sizeof(unsigned long long), stream));
        const unsigned long long init[2] = {0, ~0ull};
        TUT_CUDA(cudaMemcpyAsync(d, init, sizeof init, cudaMemcpyHostToDevice, stream));
        verify_kernel<<<1024, 256, 0, stream>>>(out.local(), count, seed, world.size, d, d + 1);
        TUT_LAUNCH("verify_kernel");
        unsigned long long h[2];
        TUT_CUDA(cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, stream));
        TUT_CUDA(cudaFreeAsync(d, stream));
        TUT_CUDA(cudaStreamSynchronize(stream));
        return h[0] ? tut::fmt("%llu of %zu sums wrong, the first at element %llu", h[0], count, h[1]) : "";
    }
    /// Time of one call, the largest over the ranks of each rank's median.
    double time(const tut::mg::AllreduceWay& v, size_t count, const tut::RunOptions& run) {
        tut::NvtxRange range("multigpu/02_allreduce/" + v.name);
        const size_t bytes = count * sizeof(float);
        const int batch = bytes <= (size_t(1) << 20) ? 20 : bytes <= (size_t(64) << 20) ? 4 : 1;
        const tut::mg::AllreduceCall<float> c = call(count);
        return tut::mg::time_across_ranks(world, [&] { v.run_float(c); }, run.warmup, run.repeats, batch, stream);
    }
};

/// One setting of the pipelined ring, for --sweep.
struct PipelineSetting {
    int blocks;
    size_t slice_bytes;
    tut::mg::AllreduceWay way;
};
template <int kBlocks, size_t kSlice>
PipelineSetting pipeline_setting() {
    return {kBlocks, kSlice,
            {tut::fmt("ring, pipelined, blocks=%d slice=%zu KiB", kBlocks, kSlice >> 10),
             lesson::allreduce_ring_pipelined<float, kBlocks, kSlice>, lesson::allreduce_ring_pipelined<int, kBlocks, kSlice>}};
}
template <int kBlocks>
void add_slices(std::vector<PipelineSetting>& settings) {
    settings.push_back(pipeline_setting<kBlocks, size_t(32) << 10>());
    settings.push_back(pipeline_setting<kBlocks, size_t(128) << 10>());
    settings.push_back(pipeline_setting<kBlocks, size_t(512) << 10>());
    settings.push_back(pipeline_setting<kBlocks, size_t(2) << 20>());
}

/// --sweep: the pipelined ring with 8 to 128 blocks per GPU (as many as the GPU has SMs
/// for) and slices of 32 KiB to 2 MiB, at 256 MiB and at the largest size, each checked
/// and timed beside ncclAllReduce of the same run. Printed only: the records stay the
/// variants' (kPipelineBlocks and kSliceBytes are the setting they run).
void sweep_pipeline(Setup& setup, const tut::mg::AllreduceWay& nccl, size_t max_bytes, const tut::RunOptions& run) {
    std::vector<PipelineSetting> settings;
    add_slices<8>(settings);
    add_slices<16>(settings);
    add_slices<32>(settings);
    add_slices<64>(settings);
    add_slices<128>(settings);
    const size_t at = size_t(256) << 20;
    std::vector<size_t> sizes{std::min(at, max_bytes)};
    if (max_bytes > at) sizes.push_back(max_bytes);
    const int sms = tut::sm_count();
    const int n = setup.world.size;
    tut::Table table({"size", "setting", "time", "busbw GB/s", "% of NCCL"});
    for (size_t bytes : sizes) {
        const size_t count = bytes / sizeof(float);
        tut::mg::progress("02_allreduce: sweep, nccl at " + tut::mg::bytes_text(double(bytes)));
        const double nccl_ms = setup.time(nccl, count, run);
        table.add_row({tut::mg::bytes_text(double(bytes)), "nccl", tut::fmt("%.1f us", nccl_ms * 1e3),
                       tut::fmt("%.1f", tut::mg::allreduce_busbw_gbs(double(bytes), nccl_ms, n)), tut::percent(1.0)});
        for (const PipelineSetting& s : settings) {
            if (s.blocks > std::min(sms, lesson::kMaxPipelineBlocks)) continue;
            tut::mg::progress("02_allreduce: sweep, " + s.way.name + " at " + tut::mg::bytes_text(double(bytes)));
            const std::string wrong = run.check() ? tut::mg::first_message(setup.world, setup.check(s.way, count)) : "";
            if (!wrong.empty()) throw tut::CudaError(s.way.name + " at " + tut::mg::bytes_text(double(bytes)) + ": " + wrong);
            const double ms = setup.time(s.way, count, run);
            table.add_row({tut::mg::bytes_text(double(bytes)), s.way.name, tut::fmt("%.1f us", ms * 1e3),
                           tut::fmt("%.1f", tut::mg::allreduce_busbw_gbs(double(bytes), ms, n)), tut::percent(nccl_ms / ms)});
        }
    }
    if (setup.world.root()) {
        std::printf("\nsweep of the pipelined ring (blocks per GPU, slice per signal) on %d GPU(s); the variant runs "
                    "blocks=%d slice=%zu KiB\n", n, lesson::kPipelineBlocks, lesson::kSliceBytes >> 10);
        table.print();
    }
}

}  // namespace

int main(int argc, char** argv) {
    long long max_bytes = 1ll << 30;
    bool sweep = false;
    tut::RunOptions run;
    run.repeats = 10;
    tut::Cli cli("allreduce", "all-reduce (sum of floats) by hand, gather, ring and pipelined ring, beside ncclAllReduce");
    cli.add_int("max-bytes", &max_bytes, "largest message; sizes 4 KiB, 16 KiB, ... up to it", 16, 4ll << 30);
    cli.add_flag("sweep", &sweep, "also the pipelined ring's block counts and slice sizes (printed, not recorded)");
    tut::add_run_options(cli, run);
    cli.parse_or_exit(argc, argv);
    tut::finish_run_options(run);
    const std::vector<tut::mg::AllreduceWay> variants = lesson::allreduce_variants();
    if (!tut::variant_is_known("allreduce", run.variant, variants)) return tut::kUsageExitCode;

    tut::mg::Mpi mpi(argc, argv);
    const tut::mg::World& world = mpi.world();
    return tut::mg::guarded(world, "allreduce", [&] {
        if (world.size > 1 && !tut::mg::all_peers(world))
            tut::mg::skip_all(world, "the hand-written all-reduces read the other GPUs' memory, and these GPUs cannot be peers");
        const Sizes sizes(max_bytes);
        Setup setup(world, sizes.bytes.back() / sizeof(float), uint64_t(run.seed));
        const tut::mg::Link link = tut::mg::link_between(world.device, (world.device + 1) % std::max(1, world.local_size));
        if (world.root())
            std::printf("%d GPU(s), one process each | NCCL %s | link to the next GPU: %s\n", world.size,
                        tut::mg::nccl_version_text().c_str(), world.size > 1 ? link.text().c_str() : "none");
        tut::Table table({"size", "variant", "time", "algbw GB/s", "busbw GB/s", "% of NCCL", "% of line rate"});
        const tut::mg::AllreduceWay& nccl = variants.back();  // the yardstick: "nccl"
        std::vector<const tut::mg::AllreduceWay*> order{&nccl};  // first: the others' share of it is of the same run
        for (const tut::mg::AllreduceWay& v : variants)
            if (&v != &nccl) order.push_back(&v);
        for (size_t bytes : sizes.bytes) {
            const size_t count = bytes / sizeof(float);
            double nccl_ms = NAN;
            for (const tut::mg::AllreduceWay* v : order) {
                if (!run.variant.empty() && v->name != run.variant && v != &nccl) continue;
                tut::mg::progress("02_allreduce: " + v->name + " at " + tut::mg::bytes_text(double(bytes)) + " on " +
                                  std::to_string(world.size) + " GPU(s)");
                const std::string wrong = run.check() ? tut::mg::first_message(world, setup.check(*v, count)) : "";
                if (!wrong.empty()) throw tut::CudaError(v->name + " at " + tut::mg::bytes_text(double(bytes)) + ": " + wrong);
                const double ms = setup.time(*v, count, run);
                if (v == &nccl) nccl_ms = ms;
                tut::Record r = tut::mg::make_record("02_allreduce", v->name, std::to_string(bytes), world.size);
                r.value = tut::mg::allreduce_busbw_gbs(double(bytes), ms, world.size);
                r.unit = "GB/s";
                r.time_ms = ms;
                r.library = "ncclAllReduce (NCCL " + tut::mg::nccl_version_text() + ")";
                r.library_value = tut::mg::allreduce_busbw_gbs(double(bytes), nccl_ms, world.size);
                r.peak = link.kind + " line rate, one direction";
                r.peak_value = world.size > 1 ? link.line_rate_gbs : NAN;
                r.checked = run.check();
                const double algbw = double(bytes) / (ms * 1e-3) * 1e-9;
                r.extra.add("algbw_gbs", algbw);
                r.extra.add("busbw_gbs", r.value);
                r.extra.add("bytes", static_cast<long long>(bytes));
                if (!world.root()) continue;
                tut::append_record("allreduce", run.json, r);
                table.add_row({tut::mg::bytes_text(double(bytes)), v->name, tut::fmt("%.1f us", ms * 1e3), tut::fmt("%.1f", algbw),
                               tut::fmt("%.1f", r.value), tut::percent(nccl_ms / ms), tut::percent(r.ratio_to_peak())});
            }
        }
        if (world.root()) {
            std::printf("\nall-reduce (sum) of floats on %d GPU(s); busbw = algbw x 2(n-1)/n (nccl-tests)\n", world.size);
            table.print();
        }
        if (sweep) sweep_pipeline(setup, nccl, sizes.bytes.back(), run);
        return 0;
    });
}
