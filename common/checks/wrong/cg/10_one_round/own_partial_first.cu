// wrong: cg/10_one_round: gather_totals adds the partials starting from the block's own (b, b + 1, ..., wrapping round): an order of its own in each block
// caught by: cg/10_one_round: the one-round variants solve small problems to tolerance
// kind: other
// Floating-point addition is not associative: the blocks' totals differ in their last bits, so
// the host's comparison of the blocks' fingerprints of their totals fails after the solve ('the
// blocks computed different sums'), or blocks stop on different iterations and the others give up waiting;
// the bit-for-bit case fails too.
// cg/10_one_round: one communication round per iteration: pipelined PCG with no grid barrier in its loop.
// Starts from: lesson 08's persistent kernel (one block of 512 threads per SM, each block's
// tile of the matrix in registers). Lesson 08 needs two grid barriers per iteration, because
// each of its two phases ends with a global sum and a vector that other blocks gather. Here
// an iteration communicates once, and waits for no grid barrier:
//   - pipelined PCG (Ghysels & Vanroose 2014): the vector the next SpMV gathers (m = M^-1 w)
//     is formed without this iteration's sums, so an iteration's three dot products are
//     reduced together, and their wait comes after the SpMV that hides it;
//   - every value that crosses blocks is one 64-bit word that carries its epoch's tag (the
//     idea of NCCL's LL protocol): a reader that sees the tag it waits for holds the value,
//     with no fence, counter or reset. The sums are all-reduced that way (each block
//     publishes its partial sums; every block reads all of them and adds them in the same
//     order, so all take the same decisions), and the vector is exchanged between
//     neighbours only: a block waits for the blocks that own the rows its tile reads.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/cg/10_one_round/one_round.cu -o one_round
// Run:  ./one_round               (--help for options; after lesson 08 with the same
//       --share FILE, the table shows the time per iteration against lesson 08's)
//
// In this file:
//   tagged words      enc, dec, tag_of, wait_word: a value and its epoch in one 64-bit word
//   the all-reduce    publish_sums, gather_start, gather_finish, gather_totals (the exercise)
//   the exchange      stage_window: the rows a tile's columns span, read as tagged words
//   the window SpMV   seg_setup, seg_spmv, seg_spmv2: each thread a contiguous run of nonzeros
//   one_round_pcg     Ghysels-Vanroose PCG, vectors in double. Per iteration:
//                       stage m (neighbours); n = A m, the sums' loads in flight; wait for the
//                       sums; alpha, beta, stop?; the updates; publish m and the sums
//   predict_recompute_pcg  Chen-Carson predict-and-recompute PCG in float: 5 sums, two SpMVs,
//                       optionally the residual replaced every 50 iterations (Cools et al. 2018)
//   barrier_pcg       the same pipelined PCG with atomics and one grid.sync() per iteration
//   variants "pipelined, grid barrier", "pipelined, one round" (the lesson),
//            "predict-recompute, one round", "predict-recompute + replacement, one round"
// Small helpers of its own (warp_sum for float and double, the status of a solve that gave up)
// live here, not in tut/cg_persistent.hpp, which lessons 08 and 09 share.
#include "tut/cg.hpp"
#include "tut/cooperative.hpp"

#include <cooperative_groups.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace coop = cooperative_groups;

namespace {

using tut::cg::DeviceCsr;
using tut::cg::kConverged;
using tut::cg::kNotPositiveDefinite;
using tut::cg::kRunning;
using tut::cg::SolveResult;
using u64 = unsigned long long;

constexpr int kThreads = 512;                                 // threads per block (one block per SM)
constexpr int kNonzerosPerThread = 16;                        // the tile's nonzeros per thread, in registers
constexpr int kTileNonzeros = kThreads * kNonzerosPerThread;  // 8192 per block
constexpr int kMaxSums = 8;                                   // all-reduce slots per block and epoch
constexpr int kWindowMax = 12288;                             // columns a tile may span (16-bit offsets)
constexpr long long kSpinLimit = 2000000000ll;                // cycles (about 1 s) before a wait gives up
constexpr int kReplacementPeriod = 50;                        // the replacement variant's period
constexpr int kAborted = 3;                                   // a status beside tut::cg's: a wait gave up
static_assert(kThreads % 32 == 0 && kThreads / 32 >= kMaxSums, "warp k adds sum k: at least kMaxSums warps");
static_assert(kNonzerosPerThread % 2 == 0, "two 16-bit window offsets per register");
static_assert(kWindowMax <= 65536, "window offsets are 16 bits");

// The sum of v over the 32 lanes of a warp, in every lane (float or double).
template <class T>
__device__ __forceinline__ T warp_sum(T v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

// ---------------------------------------------------------------------------------------
// Tagged words: a value and the epoch it belongs to, in one 64-bit word
// ---------------------------------------------------------------------------------------
// An aligned 64-bit load or store at gpu scope is single-copy atomic: a reader sees the
// whole word of one store or of another, never half of each. So a reader that sees the
// tag it waits for holds the value that came with it, with no fence and no flag to reset.
// (Relaxed, not volatile and not __ldg: the read-only path could serve a stale copy.)
__device__ __forceinline__ u64 ld_relaxed(const u64* p) {
    u64 v;
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(v) : "l"(p));
    return v;
}
__device__ __forceinline__ void st_relaxed(u64* p, u64 v) {
    asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(p), "l"(v));
}
__device__ __forceinline__ int ld_relaxed32(const int* p) {
    int v;
    asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}
__device__ __forceinline__ void st_relaxed32(int* p, int v) {
    asm volatile("st.relaxed.gpu.global.b32 [%0], %1;" ::"l"(p), "r"(v));
}

// A float travels as (tag << 32) | its bits; a double with its low 12 mantissa bits replaced
// by a 12-bit tag (a relative change of 2^-40: far below float's 2^-24). Epochs start at -1
// (the start-up exchange); tag 0 is the cleared state, which no reader waits for.
struct Tag {
    u64 mask, want;
    __device__ __forceinline__ bool ok(u64 w) const { return (w & mask) == want; }
};
__device__ __forceinline__ unsigned tag32(int e) { return unsigned(e + 2); }
__device__ __forceinline__ unsigned tag12(int e) { return 1u + unsigned(e + 2) % 4095u; }

template <class T>
__device__ __forceinline__ Tag tag_of(int e);
template <>
__device__ __forceinline__ Tag tag_of<float>(int e) {
    return Tag{0xFFFFFFFF00000000ull, u64(tag32(e)) << 32};
}
template <>
__device__ __forceinline__ Tag tag_of<double>(int e) {
    return Tag{0xFFFull, u64(tag12(e))};
}
__device__ __forceinline__ u64 enc(float v, int e) { return (u64(tag32(e)) << 32) | u64(__float_as_uint(v)); }
__device__ __forceinline__ u64 enc(double v, int e) {
    return (u64(__double_as_longlong(v)) & ~0xFFFull) | u64(tag12(e));
}
template <class T>
__device__ __forceinline__ T dec(u64 w);
template <>
__device__ __forceinline__ float dec<float>(u64 w) {
    return __uint_as_float(unsigned(w));
}
template <>
__device__ __forceinline__ double dec<double>(u64 w) {
    return __longlong_as_double((long long)(w & ~0xFFFull));
}
// The value as its readers will see it (a double loses its tag bits): the writer uses the
// same value, so that every block computes with the same m.
__device__ __forceinline__ double as_published(double v) {
    return __longlong_as_double((long long)(u64(__double_as_longlong(v)) & ~0xFFFull));
}

// Waits until *p carries `tag` (w: the word already loaded) and returns the word. A wait
// that lasts about a second, or sees that another block gave up, sets `bad` and the grid's
// abort flag: a bug ends the solve with a message instead of hanging the GPU. The caller
// turns `bad` into a break with __syncthreads_or(bad), so the whole block leaves together.
__device__ __forceinline__ u64 wait_word(const u64* p, u64 w, Tag tag, int* gabort, bool& bad) {
    if (tag.ok(w)) return w;
    const long long t0 = clock64();
    for (unsigned n = 1;; ++n) {
        w = ld_relaxed(p);
        if (tag.ok(w)) return w;
        if (n > 16) __nanosleep(32);
        if ((n & 63u) == 0) {
            if (ld_relaxed32(gabort) != 0 || clock64() - t0 > kSpinLimit) {
                st_relaxed32(gabort, 1);
                bad = true;
                return w;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// The all-reduce: the grid's sums in one round of tagged words, with no barrier
// ---------------------------------------------------------------------------------------
// The buffer holds two epochs of slots, chosen by the epoch's parity: sum k of block b in
// epoch e is the word sum_slots(ar, e, nb)[k * nb + b].
__device__ __forceinline__ u64* sum_slots(u64* ar, int e, int nb) { return ar + size_t(e & 1) * kMaxSums * nb; }

// Shared memory the kernels lend publish_sums (`part`), free again at its return.
constexpr int kPartBytes = 16384;

// Publishes this block's totals of v[0..K) (each thread's values) in its slots of epoch e,
// as tagged words. Transposed, to spend few shuffles (the SM issues one per clock): every
// thread writes its K values to part ([warp][k][lane], conflict-free); after one
// __syncthreads warp k adds the 16 warps' values of sum k lane by lane, then one warp_sum.
template <class T, int K>
__device__ __forceinline__ void publish_sums(T (&v)[K], u64* slots, int nb, int e, T* part) {
    static_assert(K <= kThreads / 32 && (kThreads / 32) * K * 32 * sizeof(T) <= size_t(kPartBytes), "part too small");
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int i = 0; i < K; ++i) part[(warp * K + i) * 32 + lane] = v[i];
    __syncthreads();
    if (warp < K) {
        T acc = T(0);
#pragma unroll
        for (int w = 0; w < kThreads / 32; ++w) acc += part[(w * K + warp) * 32 + lane];
        acc = warp_sum(acc);
        if (lane == 0) st_relaxed(slots + warp * nb + blockIdx.x, enc(acc, e));
    }
}

// Issues the loads of the count = K nb words of an epoch (thread t: words t and t + 512),
// without waiting for them: the kernels call it before the SpMV, which hides their latency.
__device__ __forceinline__ void gather_start(u64 (&w)[2], const u64* slots, int count) {
    const int t = threadIdx.x;
    w[0] = t < count ? ld_relaxed(slots + t) : 0ull;
    w[1] = t + kThreads < count ? ld_relaxed(slots + t + kThreads) : 0ull;
}

// Waits for the words gather_start loaded and keeps their values, as double, in
// partials[k * nb + b]. The caller then ends the phase with __syncthreads_or(bad).
template <class T>
__device__ __forceinline__ void gather_finish(u64 (&w)[2], const u64* slots, int count, Tag tag, double* partials,
                                              int* gabort, bool& bad) {
    const int t = threadIdx.x;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        const int idx = t + i * kThreads;
        if (idx < count) partials[idx] = double(dec<T>(wait_word(slots + idx, w[i], tag, gabort, bad)));
    }
}

// The K totals, in every thread: warp k adds the nb partials of sum k, starting from this
// block's own.
template <int K>
__device__ __forceinline__ void gather_totals(const double* partials, int nb, double (&tot)[K]) {
    __shared__ double totals[K];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (warp < K) {
        double acc = 0.0;
        for (int i = lane; i < nb; i += 32) acc += partials[warp * nb + (int(blockIdx.x) + i) % nb];
        acc = warp_sum(acc);
        if (lane == 0) totals[warp] = acc;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < K; ++k) tot[k] = totals[k];
}

// ---------------------------------------------------------------------------------------
// The neighbour exchange and the window SpMV
// ---------------------------------------------------------------------------------------
extern __shared__ __align__(16) unsigned char dynamic_smem[];

// This thread's share of its block's tile. The tile's columns span the window lo .. lo + W - 1
// (host-computed: the rows of the neighbours it reads). Each thread holds a contiguous run
// of C = ceil(nnz / 512) <= 16 of the tile's nonzeros: the values, and their columns as
// 16-bit offsets into the window; `starts` marks where a new row begins inside the run.
struct SegTile {
    int begin, nnz, C, base, cnt;            // the tile's first nonzero and count; run length; this thread's run
    unsigned starts;                         // bit j >= 1: run element j begins a row
    int row, row_begin, row_end, row_inner;  // the owner's row, its local range, its first run start inside it
    bool owner;
    int first_row, rows;
    int lo, W;
};

// Loads this thread's run (values, window offsets) and marks the row starts. scratch:
// kTileNonzeros bytes of shared memory, free again on return.
__device__ inline SegTile seg_setup(const DeviceCsr& A, int tile_rows, const int* win, float (&val)[kNonzerosPerThread],
                                    unsigned (&off)[kNonzerosPerThread / 2], unsigned char* scratch) {
    SegTile s;
    const int t = threadIdx.x;
    s.first_row = blockIdx.x * tile_rows;
    s.rows = max(0, min(tile_rows, A.n - s.first_row));
    s.begin = s.rows ? __ldg(A.row_ptr + s.first_row) : 0;
    const int end = s.rows ? __ldg(A.row_ptr + s.first_row + s.rows) : 0;
    s.nnz = end - s.begin;
    s.owner = t < s.rows;
    s.row = s.first_row + t;
    s.row_begin = s.owner ? __ldg(A.row_ptr + s.row) - s.begin : 0;
    s.row_end = s.owner ? __ldg(A.row_ptr + s.row + 1) - s.begin : 0;
    s.C = max(1, (s.nnz + kThreads - 1) / kThreads);
    s.base = t * s.C;
    s.cnt = max(0, min(s.C, s.nnz - s.base));
    s.row_inner = (s.row_begin / s.C + 1) * s.C;
    s.lo = win[2 * blockIdx.x];
    s.W = win[2 * blockIdx.x + 1];
    for (int i = t; i < kTileNonzeros; i += kThreads) scratch[i] = 0;
    __syncthreads();
    if (s.owner && s.row_end > s.row_begin) scratch[s.row_begin] = 1;
    __syncthreads();
    s.starts = 0;
#pragma unroll
    for (int j = 0; j < kNonzerosPerThread / 2; ++j) off[j] = 0;
#pragma unroll
    for (int j = 0; j < kNonzerosPerThread; ++j) {
        float v = 0.0f;
        unsigned o = 0;
        if (j < s.cnt) {
            const int k = s.base + j;
            v = __ldg(A.values + s.begin + k);
            o = unsigned(__ldg(A.col_idx + s.begin + k) - s.lo) & 0xFFFFu;
            if (j > 0 && scratch[k]) s.starts |= 1u << j;
        }
        val[j] = v;
        off[j >> 1] |= o << ((j & 1) * 16);
    }
    __syncthreads();
    return s;
}

__device__ __forceinline__ unsigned seg_off(const unsigned (&off)[kNonzerosPerThread / 2], int j) {
    return (off[j >> 1] >> ((j & 1) * 16)) & 0xFFFFu;
}

// (A v)_row for the owner, from the window `win` (shared memory, complete before the call):
// each thread sums its run's products per row segment in a register and writes one partial
// per segment to `seg` (kTileNonzeros T's of shared memory); the row's owner adds the 1-3
// partials of its row. One __syncthreads inside.
template <class T, class WT>
__device__ __forceinline__ T seg_spmv(const SegTile& s, const float (&val)[kNonzerosPerThread],
                                      const unsigned (&off)[kNonzerosPerThread / 2], const WT* win, T* seg) {
    T acc = T(0);
    int first = s.base;
#pragma unroll
    for (int j = 0; j < kNonzerosPerThread; ++j) {
        if (j < s.cnt) {
            if ((s.starts >> j) & 1u) {
                seg[first] = acc;
                acc = T(0);
                first = s.base + j;
            }
            acc += T(val[j]) * T(win[seg_off(off, j)]);
        }
    }
    if (s.cnt > 0) seg[first] = acc;
    __syncthreads();
    T q = T(0);
    if (s.owner && s.row_end > s.row_begin) {
        q = seg[s.row_begin];
        for (int k = s.row_inner; k < s.row_end; k += s.C) q += seg[k];
    }
    return q;
}

// Two vectors at once (a window of float2): ((A v.x)_row, (A v.y)_row).
__device__ __forceinline__ float2 seg_spmv2(const SegTile& s, const float (&val)[kNonzerosPerThread],
                                            const unsigned (&off)[kNonzerosPerThread / 2], const float2* win,
                                            float2* seg) {
    float2 acc = make_float2(0.0f, 0.0f);
    int first = s.base;
#pragma unroll
    for (int j = 0; j < kNonzerosPerThread; ++j) {
        if (j < s.cnt) {
            if ((s.starts >> j) & 1u) {
                seg[first] = acc;
                acc = make_float2(0.0f, 0.0f);
                first = s.base + j;
            }
            const float2 e = win[seg_off(off, j)];
            acc.x += val[j] * e.x;
            acc.y += val[j] * e.y;
        }
    }
    if (s.cnt > 0) seg[first] = acc;
    __syncthreads();
    float2 q = make_float2(0.0f, 0.0f);
    if (s.owner && s.row_end > s.row_begin) {
        q = seg[s.row_begin];
        for (int k = s.row_inner; k < s.row_end; k += s.C) {
            const float2 e = seg[k];
            q.x += e.x;
            q.y += e.y;
        }
    }
    return q;
}

// Reads the window lo .. lo + W - 1 of NV tagged vectors (all loads of a round issued
// before any wait), waits for each word's tag, and hands the words to store(idx, words).
// No __syncthreads: the caller ends the phase with __syncthreads_or(bad).
template <int NV, int kPer, class Store>
__device__ __forceinline__ void stage_window(const u64* const (&src)[NV], const Tag (&tag)[NV], int lo, int W,
                                             int* gabort, bool& bad, Store&& store) {
    for (int base = 0; base < W; base += kThreads * kPer) {
        u64 w[kPer][NV];
#pragma unroll
        for (int i = 0; i < kPer; ++i) {
            const int idx = base + i * kThreads + int(threadIdx.x);
#pragma unroll
            for (int v = 0; v < NV; ++v) w[i][v] = idx < W ? ld_relaxed(src[v] + lo + idx) : 0ull;
        }
#pragma unroll
        for (int i = 0; i < kPer; ++i) {
            const int idx = base + i * kThreads + int(threadIdx.x);
            if (idx < W) {
#pragma unroll
                for (int v = 0; v < NV; ++v) w[i][v] = wait_word(src[v] + lo + idx, w[i][v], tag[v], gabort, bad);
                store(idx, w[i]);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// The one-round solvers
// ---------------------------------------------------------------------------------------
struct RoundState {
    int abort;  // a wait gave up (set by the block that gave up; the others follow)
    int iterations, status, converged_at;
    double rr_last, bb;
    // A fingerprint of the bits of every total each block computed, in every iteration; the
    // largest fingerprint and the largest complement are equal (max == ~complement) only
    // when every block computed the same sums all the way through the solve.
    u64 sums_fingerprint_max, sums_fingerprint_complement_max;
};

struct RoundArgs {
    DeviceCsr A;
    const float* b = nullptr;
    const float* dinv = nullptr;
    float* x = nullptr;
    u64* xch = nullptr;        // exchanged vectors: [vector][parity][n] tagged words
    u64* ar = nullptr;         // the all-reduce: [parity][kMaxSums][nb] tagged words
    const int* win = nullptr;  // [nb][2]: each tile's window, lo and W
    RoundState* state = nullptr;
    double tol2 = 0.0;
    int max_iterations = 0;
    int tile_rows = 0;
    int rr_period = 0;  // predict-recompute: replace the residual every rr_period iterations (0: never)
    int win_cap = 0;    // window entries in shared memory (the widest W, rounded up)
};

// Dynamic shared memory: the segment partials (64 KB), publish_sums' part (16 KB), the
// window (win_cap x 8 B), the all-reduce's partials (kMaxSums x nb doubles).
constexpr size_t kSegBytes = size_t(kTileNonzeros) * 8;
inline size_t round_smem(int win_cap, int nb) {
    return kSegBytes + kPartBytes + size_t(win_cap) * 8 + size_t(kMaxSums) * size_t(nb) * 8;
}
struct Smem {
    unsigned char* seg;
    unsigned char* part;
    unsigned char* win;
    double* red;
};
__device__ __forceinline__ Smem smem_layout(int win_cap) {
    Smem m;
    m.seg = dynamic_smem;
    m.part = dynamic_smem + kSegBytes;
    m.win = dynamic_smem + kSegBytes + kPartBytes;
    m.red = reinterpret_cast<double*>(dynamic_smem + kSegBytes + kPartBytes + size_t(win_cap) * 8);
    return m;
}

// Exchanged vector v, the half of epoch parity `parity`.
__device__ __forceinline__ u64* exchanged(const RoundArgs& a, int v, int parity) {
    return a.xch + (size_t(v) * 2 + size_t(parity & 1)) * size_t(a.A.n);
}

// Clears this block's rows of vectors 0 .. nvec - 1 (both parities) and its all-reduce
// slots: the last solve left words whose tags this one will wait for again.
__device__ inline void clear_words(const RoundArgs& a, int nvec, const SegTile& s, int nb) {
    if (s.owner)
        for (int v = 0; v < nvec; ++v) {
            st_relaxed(exchanged(a, v, 0) + s.row, 0ull);
            st_relaxed(exchanged(a, v, 1) + s.row, 0ull);
        }
    for (int i = threadIdx.x; i < 2 * kMaxSums; i += kThreads) st_relaxed(a.ar + size_t(i) * nb + blockIdx.x, 0ull);
}

// Folds the bits of this iteration's totals into a block's fingerprint of its sums (FNV-1a
// style): one total that differs between blocks, in any iteration, changes the fingerprint.
template <int K>
__device__ __forceinline__ void fold_totals(u64& fingerprint, const double (&tot)[K]) {
#pragma unroll
    for (int k = 0; k < K; ++k) fingerprint = (fingerprint ^ u64(__double_as_longlong(tot[k]))) * 0x100000001b3ull;
}

// What the solve ends with, for the host. The iteration that found p.Ap <= 0 counts, as
// in lesson 08 (whose loop counts it before the test). Every block also leaves the
// fingerprint of all the sums it computed, so that the host can tell whether every block
// computed the same sums in every iteration.
__device__ inline void round_finish(const RoundArgs& a, int it, int status, int converged_at, double rr, double bb,
                                    u64 fingerprint) {
    if (threadIdx.x == 0) {
        atomicMax(&a.state->sums_fingerprint_max, fingerprint);
        atomicMax(&a.state->sums_fingerprint_complement_max, ~fingerprint);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        RoundState* st = a.state;
        st->iterations = status == kNotPositiveDefinite ? it + 1 : it;
        st->status = status;
        st->converged_at = converged_at;
        st->rr_last = rr;
        st->bb = bb;
    }
}

// Ghysels & Vanroose's pipelined PCG, vectors in double (the matrix in float), one
// all-reduce per iteration whose wait comes after the SpMV it overlaps. In exact
// arithmetic, with u = M^-1 r, w = A u, m = M^-1 w, n = A m:
//   gamma = (r,u), delta = (w,u); beta = gamma / gamma_old; alpha = gamma / (delta - beta gamma / alpha_old)
//   z = n + beta z; q = m + beta q; s = w + beta s; p = u + beta p
//   x += alpha p; r -= alpha s; u -= alpha q; w -= alpha z; m = M^-1 w
// m does not depend on the next sums: it is published before them, and the next SpMV can
// start while the sums are on their way.
__global__ void __launch_bounds__(kThreads, 1) one_round_pcg(RoundArgs a) {
    const Smem sm = smem_layout(a.win_cap);
    const int nb = gridDim.x;
    int* gabort = &a.state->abort;
    bool bad = false;
    float val[kNonzerosPerThread];
    unsigned off[kNonzerosPerThread / 2];
    const SegTile s = seg_setup(a.A, a.tile_rows, a.win, val, off, sm.seg);
    clear_words(a, 1, s, nb);
    coop::this_grid().sync();  // the only grid barrier: every word cleared before any is published
    double* win = reinterpret_cast<double*>(sm.win);
    double* seg = reinterpret_cast<double*>(sm.seg);
    double* part = reinterpret_cast<double*>(sm.part);

    const double dinv = s.owner ? double(a.dinv[s.row]) : 0.0;
    double x = 0, r = s.owner ? double(a.b[s.row]) : 0.0, u = as_published(dinv * r), p = 0, sv = 0, q = 0, z = 0;
    // m(-1) := u, exchanged for the start-up w = A u.
    if (s.owner) st_relaxed(exchanged(a, 0, -1) + s.row, enc(u, -1));
    {
        const u64* src[1] = {exchanged(a, 0, -1)};
        const Tag tg[1] = {tag_of<double>(-1)};
        stage_window<1, 4>(src, tg, s.lo, s.W, gabort, bad,
                           [&](int i, const u64(&wd)[1]) { win[i] = dec<double>(wd[0]); });
    }
    int status = kRunning;
    if (__syncthreads_or(bad)) status = kAborted;
    double w = status == kRunning ? seg_spmv<double>(s, val, off, win, seg) : 0.0;
    double m = as_published(dinv * w);
    if (s.owner) st_relaxed(exchanged(a, 0, 0) + s.row, enc(m, 0));
    {
        double v[3] = {r * u, w * u, r * r};
        publish_sums<double, 3>(v, sum_slots(a.ar, 0, nb), nb, 0, part);
    }
    double rr = 0.0, bb = 0.0, threshold = 0.0, gamma_old = 1.0, alpha_old = 1.0;
    int it = 0, e = 0, converged_at = -1;
    u64 fingerprint = 0xcbf29ce484222325ull;
    while (status == kRunning) {
        // The exchange: m of this epoch, from the neighbours only.
        {
            const u64* src[1] = {exchanged(a, 0, e)};
            const Tag tg[1] = {tag_of<double>(e)};
            stage_window<1, 4>(src, tg, s.lo, s.W, gabort, bad,
                               [&](int i, const u64(&wd)[1]) { win[i] = dec<double>(wd[0]); });
        }
        if (__syncthreads_or(bad)) {
            status = kAborted;
            break;
        }
        // The SpMV, with the sums' loads in flight.
        u64 words[2];
        gather_start(words, sum_slots(a.ar, e, nb), 3 * nb);
        const double n = seg_spmv<double>(s, val, off, win, seg);
        gather_finish<double>(words, sum_slots(a.ar, e, nb), 3 * nb, tag_of<double>(e), sm.red, gabort, bad);
        if (__syncthreads_or(bad)) {
            status = kAborted;
            break;
        }
        double tot[3];
        gather_totals<3>(sm.red, nb, tot);
        fold_totals(fingerprint, tot);
        const double gamma = tot[0], delta = tot[1];
        rr = tot[2];
        if (e == 0) {
            bb = rr;
            threshold = a.tol2 * bb;
        }
        // Every block holds the same totals: every block takes the same decisions.
        if (rr <= threshold) {
            status = kConverged;
            converged_at = it;
            break;
        }
        if (it >= a.max_iterations) break;
        double alpha, beta = 0.0;
        if (it == 0) {
            if (!(delta > 0.0)) {
                status = kNotPositiveDefinite;
                break;
            }
            alpha = gamma / delta;
        } else {
            beta = gamma / gamma_old;
            const double pap = delta - beta * gamma / alpha_old;  // (p, A p) of this iteration
            if (!(pap > 0.0)) {
                status = kNotPositiveDefinite;
                break;
            }
            alpha = gamma / pap;
        }
        z = n + beta * z;
        q = m + beta * q;
        sv = w + beta * sv;
        p = u + beta * p;
        x += alpha * p;
        r -= alpha * sv;
        u -= alpha * q;
        w -= alpha * z;
        m = as_published(dinv * w);
        if (s.owner) st_relaxed(exchanged(a, 0, e + 1) + s.row, enc(m, e + 1));
        ++it;
        gamma_old = gamma;
        alpha_old = alpha;
        {
            double v[3] = {r * u, w * u, r * r};
            publish_sums<double, 3>(v, sum_slots(a.ar, e + 1, nb), nb, e + 1, part);
        }
        ++e;
    }
    if (s.owner) a.x[s.row] = float(x);
    round_finish(a, it, status, converged_at, rr, bb, fingerprint);
}

// Chen & Carson's pipelined predict-and-recompute PCG in float, one all-reduce per
// iteration (5 sums) overlapped with two SpMVs (u = A st, w = A rt, one pass over a float2
// window). With rt = M^-1 r, st = M^-1 s, wt = M^-1 w, ut = M^-1 u:
//   nu = (rt,r), mu = (p,s), delta = (s,rt), gamma = (s,st); alpha = nu / mu
//   nu' = nu - 2 alpha delta + alpha^2 gamma (the prediction); beta = nu' / nu
//   w = A rt (the recompute); x += alpha p; r -= alpha s; rt -= alpha st; w -= alpha u;
//   wt -= alpha ut; p = rt + beta p; s = w + beta s; st = wt + beta st
// With rr_period > 0, every rr_period iterations r = b - A x and s = A p are recomputed
// from a neighbour exchange of x and p (no grid barrier either).
// Exchanged vectors: 0 st, 1 rt, 2 x, 3 p (the last two for the replacement).
__global__ void __launch_bounds__(kThreads, 1) predict_recompute_pcg(RoundArgs a) {
    const Smem sm = smem_layout(a.win_cap);
    const int nb = gridDim.x;
    int* gabort = &a.state->abort;
    bool bad = false;
    float val[kNonzerosPerThread];
    unsigned off[kNonzerosPerThread / 2];
    const SegTile s = seg_setup(a.A, a.tile_rows, a.win, val, off, sm.seg);
    clear_words(a, 4, s, nb);
    coop::this_grid().sync();  // the only grid barrier: every word cleared before any is published
    float2* win = reinterpret_cast<float2*>(sm.win);
    float2* seg = reinterpret_cast<float2*>(sm.seg);
    float* part = reinterpret_cast<float*>(sm.part);

    const float dinv = s.owner ? a.dinv[s.row] : 0.0f;
    const float bi = s.owner ? __ldg(a.b + s.row) : 0.0f;
    float x = 0.0f, r = bi, rt = dinv * r, p = rt, w = 0.0f, wt = 0.0f, sv = 0.0f, st = 0.0f;
    // rt(-1) exchanged for the start-up w = A rt.
    if (s.owner) st_relaxed(exchanged(a, 1, -1) + s.row, enc(rt, -1));
    {
        const u64* src[1] = {exchanged(a, 1, -1)};
        const Tag tg[1] = {tag_of<float>(-1)};
        stage_window<1, 4>(src, tg, s.lo, s.W, gabort, bad,
                           [&](int i, const u64(&wd)[1]) { win[i] = make_float2(0.0f, dec<float>(wd[0])); });
    }
    int status = kRunning;
    if (__syncthreads_or(bad)) status = kAborted;
    if (status == kRunning) w = seg_spmv2(s, val, off, win, seg).y;
    wt = dinv * w;
    sv = w;
    st = wt;
    if (s.owner) {
        st_relaxed(exchanged(a, 0, 0) + s.row, enc(st, 0));
        st_relaxed(exchanged(a, 1, 0) + s.row, enc(rt, 0));
    }
    {
        float v[5] = {rt * r, p * sv, sv * rt, sv * st, r * r};
        publish_sums<float, 5>(v, sum_slots(a.ar, 0, nb), nb, 0, part);
    }
    double rr = 0.0, bb = 0.0, threshold = 0.0;
    int it = 0, e = 0, converged_at = -1;
    u64 fingerprint = 0xcbf29ce484222325ull;
    while (status == kRunning) {
        {
            const u64* src[2] = {exchanged(a, 0, e), exchanged(a, 1, e)};
            const Tag tg[2] = {tag_of<float>(e), tag_of<float>(e)};
            stage_window<2, 2>(src, tg, s.lo, s.W, gabort, bad, [&](int i, const u64(&wd)[2]) {
                win[i] = make_float2(dec<float>(wd[0]), dec<float>(wd[1]));
            });
        }
        if (__syncthreads_or(bad)) {
            status = kAborted;
            break;
        }
        u64 words[2];
        gather_start(words, sum_slots(a.ar, e, nb), 5 * nb);
        const float2 uw = seg_spmv2(s, val, off, win, seg);
        gather_finish<float>(words, sum_slots(a.ar, e, nb), 5 * nb, tag_of<float>(e), sm.red, gabort, bad);
        if (__syncthreads_or(bad)) {
            status = kAborted;
            break;
        }
        double tot[5];
        gather_totals<5>(sm.red, nb, tot);
        fold_totals(fingerprint, tot);
        const double nu = tot[0], mu = tot[1], delta = tot[2], gamma = tot[3];
        rr = tot[4];
        if (e == 0) {
            bb = rr;
            threshold = a.tol2 * bb;
        }
        if (rr <= threshold) {
            status = kConverged;
            converged_at = it;
            break;
        }
        if (it >= a.max_iterations) break;
        if (!(mu > 0.0)) {
            status = kNotPositiveDefinite;
            break;
        }
        const float u = uw.x, ut = dinv * u;
        w = uw.y;  // recompute
        wt = dinv * w;
        const double alpha_d = nu / mu;
        const double nu_next = nu - 2.0 * alpha_d * delta + alpha_d * alpha_d * gamma;  // predict
        const float alpha = float(alpha_d), beta = float(nu_next / nu);
        x += alpha * p;
        r -= alpha * sv;
        rt -= alpha * st;
        w -= alpha * u;
        wt -= alpha * ut;
        p = rt + beta * p;
        sv = w + beta * sv;
        st = wt + beta * st;
        ++it;
        if (a.rr_period > 0 && it % a.rr_period == 0) {
            // Residual replacement: r = b - A x, s = A p from the neighbours' x and p.
            if (s.owner) {
                st_relaxed(exchanged(a, 2, it) + s.row, enc(x, it));
                st_relaxed(exchanged(a, 3, it) + s.row, enc(p, it));
            }
            {
                const u64* src[2] = {exchanged(a, 2, it), exchanged(a, 3, it)};
                const Tag tg[2] = {tag_of<float>(it), tag_of<float>(it)};
                stage_window<2, 2>(src, tg, s.lo, s.W, gabort, bad, [&](int i, const u64(&wd)[2]) {
                    win[i] = make_float2(dec<float>(wd[0]), dec<float>(wd[1]));
                });
            }
            if (__syncthreads_or(bad)) {
                status = kAborted;
                break;
            }
            const float2 axp = seg_spmv2(s, val, off, win, seg);
            r = bi - axp.x;
            sv = axp.y;
            rt = dinv * r;
            st = dinv * sv;
            // The window and seg are rewritten by the next stage only after publish_sums
            // below (its __syncthreads) and the next phase.
            __syncthreads();
        }
        if (s.owner) {
            st_relaxed(exchanged(a, 0, e + 1) + s.row, enc(st, e + 1));
            st_relaxed(exchanged(a, 1, e + 1) + s.row, enc(rt, e + 1));
        }
        {
            float v[5] = {rt * r, p * sv, sv * rt, sv * st, r * r};
            publish_sums<float, 5>(v, sum_slots(a.ar, e + 1, nb), nb, e + 1, part);
        }
        ++e;
    }
    if (s.owner) a.x[s.row] = x;
    round_finish(a, it, status, converged_at, rr, bb, fingerprint);
}

// ---------------------------------------------------------------------------------------
// For comparison: the same pipelined PCG with one grid barrier per iteration
// ---------------------------------------------------------------------------------------
// Lesson 08's tile layout (slot j of thread t holds nonzero begin + j * 512 + t; products
// through shared memory in CSR order), atomics for the sums, and one grid.sync() that both
// completes the reduction and publishes m. Sums of epoch e live in slot e % 3; block 0's
// thread 0 zeroes slot (e + 2) % 3 after the barrier that completes epoch e: its last
// readers read it before that barrier, its next writers write after the next one.
struct BarrierState {
    double slot[3][kMaxSums];
    double rr_last, bb;
    int iterations, status, converged_at;
};

struct BarrierArgs {
    DeviceCsr A;
    const float* b = nullptr;
    const float* dinv = nullptr;
    float* x = nullptr;
    double* ex0 = nullptr;  // m, double-buffered: written while others still gather the last one
    double* ex1 = nullptr;
    BarrierState* state = nullptr;
    double tol2 = 0.0;
    int max_iterations = 0;
    int tile_rows = 0;
};

struct Tile {
    int begin, end, row, row_begin, row_end;
    bool owner;
};

__device__ inline Tile make_tile(const DeviceCsr& A, int tile_rows) {
    Tile tl;
    const int t = threadIdx.x;
    const int first_row = blockIdx.x * tile_rows;
    const int rows = max(0, min(tile_rows, A.n - first_row));
    tl.begin = rows ? __ldg(A.row_ptr + first_row) : 0;
    tl.end = rows ? __ldg(A.row_ptr + first_row + rows) : 0;
    tl.owner = t < rows;
    tl.row = first_row + t;
    tl.row_begin = tl.owner ? __ldg(A.row_ptr + tl.row) - tl.begin : 0;
    tl.row_end = tl.owner ? __ldg(A.row_ptr + tl.row + 1) - tl.begin : 0;
    return tl;
}

__device__ inline void load_tile(const DeviceCsr& A, const Tile& tl, float (&value)[kNonzerosPerThread],
                                 int (&column)[kNonzerosPerThread]) {
#pragma unroll
    for (int j = 0; j < kNonzerosPerThread; ++j) {
        const int k = tl.begin + j * kThreads + threadIdx.x;
        value[j] = k < tl.end ? __ldg(A.values + k) : 0.0f;
        column[j] = k < tl.end ? __ldg(A.col_idx + k) : 0;
    }
}

// The row's (A v)_row: products to shared memory in CSR order, then the row's run summed.
// The products are free again after the next __syncthreads.
__device__ inline double spmv_row(const Tile& tl, const float (&value)[kNonzerosPerThread],
                                  const int (&column)[kNonzerosPerThread], const double* v, double* products) {
    const int t = threadIdx.x;
#pragma unroll
    for (int j = 0; j < kNonzerosPerThread; ++j)
        if (tl.begin + j * kThreads + t < tl.end) products[j * kThreads + t] = double(value[j]) * v[column[j]];
    __syncthreads();
    double q = 0.0;
    for (int k = tl.row_begin; k < tl.row_end; ++k) q += products[k];
    return q;
}

// Adds the block's sums of v[0..N) to dst[0..N) (one atomicAdd per value per block). No
// trailing __syncthreads: every call is followed by grid.sync(), which begins with one.
template <int N>
__device__ inline void block_sums(double (&v)[N], double* dst) {
    __shared__ double warp_part[N][kThreads / 32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
    for (int i = 0; i < N; ++i) v[i] = warp_sum(v[i]);
    if (lane == 0)
#pragma unroll
        for (int i = 0; i < N; ++i) warp_part[i][warp] = v[i];
    __syncthreads();
    if (warp == 0) {
#pragma unroll
        for (int i = 0; i < N; ++i) {
            double w = lane < kThreads / 32 ? warp_part[i][lane] : 0.0;
            w = warp_sum(w);
            if (lane == i) atomicAdd(dst + i, w);  // lane i adds sum i: N lanes, one atomic each
        }
    }
}

__global__ void __launch_bounds__(kThreads, 1) barrier_pcg(BarrierArgs a) {
    double* products = reinterpret_cast<double*>(dynamic_smem);
    coop::grid_group grid = coop::this_grid();
    BarrierState* ps = a.state;
    const Tile tl = make_tile(a.A, a.tile_rows);
    float value[kNonzerosPerThread];
    int column[kNonzerosPerThread];
    load_tile(a.A, tl, value, column);

    const double dinv = tl.owner ? double(a.dinv[tl.row]) : 0.0;
    double x = 0, r = tl.owner ? double(a.b[tl.row]) : 0.0, u = dinv * r, p = 0, s = 0, q = 0, z = 0;
    if (tl.owner) a.ex1[tl.row] = u;
    grid.sync();
    double w = spmv_row(tl, value, column, a.ex1, products);
    double m = dinv * w;
    if (tl.owner) a.ex0[tl.row] = m;  // m_0 in ex0, gathered at e = 0
    {
        double v[3] = {r * u, w * u, r * r};
        block_sums(v, ps->slot[0]);
    }
    grid.sync();

    const double bb = __ldcg(&ps->slot[0][2]), threshold = a.tol2 * bb;
    double rr = bb, gamma_old = 1.0, alpha_old = 1.0;
    int status = bb <= threshold ? kConverged : kRunning;
    int it = 0, e = 0, converged_at = status == kConverged ? 0 : -1;
    while (status == kRunning) {
        const double* ex_read = e % 2 ? a.ex1 : a.ex0;
        double* ex_write = e % 2 ? a.ex0 : a.ex1;
        const double* cur = ps->slot[e % 3];
        const double gamma = __ldcg(cur + 0), delta = __ldcg(cur + 1);
        rr = __ldcg(cur + 2);
        if (blockIdx.x == 0 && threadIdx.x == 0)
            for (int i = 0; i < kMaxSums; ++i) ps->slot[(e + 2) % 3][i] = 0.0;
        // The SpMV does not depend on the sums: its gathers go out with the sums' loads.
        const double n = spmv_row(tl, value, column, ex_read, products);
        if (rr <= threshold) {
            status = kConverged;
            converged_at = it;
            break;
        }
        if (it >= a.max_iterations) break;
        double alpha, beta = 0.0;
        if (it == 0) {
            if (!(delta > 0.0)) {
                status = kNotPositiveDefinite;
                break;
            }
            alpha = gamma / delta;
        } else {
            beta = gamma / gamma_old;
            const double pap = delta - beta * gamma / alpha_old;
            if (!(pap > 0.0)) {
                status = kNotPositiveDefinite;
                break;
            }
            alpha = gamma / pap;
        }
        z = n + beta * z;
        q = m + beta * q;
        s = w + beta * s;
        p = u + beta * p;
        x += alpha * p;
        r -= alpha * s;
        u -= alpha * q;
        w -= alpha * z;
        m = dinv * w;
        if (tl.owner) ex_write[tl.row] = m;
        ++it;
        gamma_old = gamma;
        alpha_old = alpha;
        double v[3] = {r * u, w * u, r * r};
        block_sums(v, ps->slot[(e + 1) % 3]);
        grid.sync();  // m exchanged and the reduction completed: one barrier
        ++e;
    }
    if (tl.owner) a.x[tl.row] = float(x);
    if (blockIdx.x == 0 && threadIdx.x == 0) {  // the iteration that found p.Ap <= 0 counts, as in lesson 08
        ps->iterations = status == kNotPositiveDefinite ? it + 1 : it;
        ps->status = status;
        ps->converged_at = converged_at;
        ps->rr_last = rr;
        ps->bb = bb;
    }
}

// ---------------------------------------------------------------------------------------
// The host side
// ---------------------------------------------------------------------------------------
// The tiles, as lesson 08 lays them out: one block per SM (512 threads of up to 128
// registers fill an SM's register file), block b owning rows b * tile_rows ..; refused,
// before any launch, when a tile has more rows than threads or more nonzeros than registers.
int tile_rows_on_chip(const tut::cg::Csr& A, int blocks) {
    const int tile_rows = (A.rows + blocks - 1) / blocks;
    int largest = 0;
    for (int first = 0; first < A.rows; first += tile_rows) {
        const int last = std::min(A.rows, first + tile_rows);
        largest = std::max(largest, A.row_ptr[last] - A.row_ptr[first]);
    }
    if (tile_rows > kThreads || largest > kTileNonzeros)
        throw tut::Unsupported("the matrix does not fit on chip: " + std::to_string(blocks) + " blocks of " +
                               std::to_string(tile_rows) + " rows (at most " + std::to_string(kThreads) +
                               "), the fullest with " + std::to_string(largest) + " nonzeros (at most " +
                               std::to_string(kTileNonzeros) + "); lesson 09 (09_streaming) streams such a matrix");
    return tile_rows;
}

// Throws Unsupported unless a block of `kernel` with `bytes` of dynamic shared memory fits
// an SM (and lets it have them).
template <class Args>
void require_shared_memory(void (*kernel)(Args), size_t bytes) {
    int optin = 0;
    if (!tut::read_device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, optin) || size_t(optin) < bytes)
        throw tut::Unsupported("a block needs " + std::to_string(bytes / 1024) +
                               " KB of shared memory; this GPU offers " + std::to_string(optin / 1024) + " KB");
    tut::allow_dynamic_shared_memory(kernel, bytes);
    tut::resident_blocks_per_sm(kernel, kThreads, bytes);  // throws when none fits
}

class OneRoundSolver final : public tut::cg::Solver {
  public:
    // vectors: how many vectors the kernel exchanges; sums: how many it all-reduces.
    OneRoundSolver(void (*kernel)(RoundArgs), int vectors, int sums, int rr_period, const tut::cg::Csr& host_A,
                   const tut::cg::DeviceMatrix& A, const tut::cg::SolveOptions& opt)
        : kernel_(kernel), A_(A.view()), opt_(opt), rr_period_(rr_period) {
        tut::refuse_without_cooperative_launch();
        dinv_ = tut::DeviceBuffer<float>(tut::cg::inverse_diagonal(host_A));
        blocks_ = tut::sm_count();
        tile_rows_ = tile_rows_on_chip(host_A, blocks_);
        if (sums * blocks_ > 2 * kThreads)
            throw tut::Unsupported("the all-reduce reads at most " + std::to_string(2 * kThreads) +
                                   " words per block; " + std::to_string(blocks_) + " blocks of " +
                                   std::to_string(sums) + " sums are more");
        // Each tile's window: the columns its nonzeros span.
        std::vector<int> windows(2 * size_t(blocks_), 0);
        int widest = 0;
        for (int bl = 0; bl < blocks_; ++bl) {
            const int first = std::min(host_A.rows, bl * tile_rows_), last = std::min(host_A.rows, first + tile_rows_);
            int lo = first, hi = first - 1;  // a tile without rows: an empty window
            if (host_A.row_ptr[last] > host_A.row_ptr[first]) {
                lo = host_A.rows;
                hi = -1;
                for (int k = host_A.row_ptr[first]; k < host_A.row_ptr[last]; ++k) {
                    lo = std::min(lo, host_A.col_idx[k]);
                    hi = std::max(hi, host_A.col_idx[k]);
                }
            }
            windows[2 * size_t(bl)] = lo;
            windows[2 * size_t(bl) + 1] = hi - lo + 1;
            widest = std::max(widest, hi - lo + 1);
        }
        if (widest > kWindowMax)
            throw tut::Unsupported("a tile's columns span " + std::to_string(widest) +
                                   " rows of the vectors (at most " + std::to_string(kWindowMax) +
                                   " fit a block's window)");
        win_cap_ = (std::max(widest, 1) + 63) / 64 * 64;
        smem_ = round_smem(win_cap_, blocks_);
        require_shared_memory(kernel_, smem_);
        windows_ = tut::DeviceBuffer<int>(windows);
        xch_ = tut::DeviceBuffer<u64>(size_t(vectors) * 2 * size_t(A_.n));
        ar_ = tut::DeviceBuffer<u64>(size_t(2) * kMaxSums * size_t(blocks_));
        TUT_CUDA(cudaMemset(xch_.get(), 0, xch_.size() * sizeof(u64)));
        TUT_CUDA(cudaMemset(ar_.get(), 0, ar_.size() * sizeof(u64)));
        state_ = tut::DeviceBuffer<RoundState>(1);
    }

    SolveResult solve(const float* b, float* x) override {
        RoundArgs a;
        a.A = A_;
        a.b = b;
        a.dinv = dinv_.get();
        a.x = x;
        a.xch = xch_.get();
        a.ar = ar_.get();
        a.win = windows_.get();
        a.state = state_.get();
        a.tol2 = opt_.tolerance * opt_.tolerance;
        a.max_iterations = opt_.max_iterations;
        a.tile_rows = tile_rows_;
        a.rr_period = rr_period_;
        a.win_cap = win_cap_;
        TUT_CUDA(cudaMemsetAsync(a.state, 0, sizeof(RoundState)));
        tut::launch_cooperative(kernel_, blocks_, kThreads, smem_, cudaAccessPolicyWindow{}, a);
        RoundState h{};
        TUT_CUDA(cudaMemcpy(&h, a.state, sizeof h, cudaMemcpyDeviceToHost));  // the only wait
        if (h.abort || h.status == kAborted)
            throw std::runtime_error("the solve gave up: a block waited about a second for a tagged word that never "
                                     "came (a sum or a vector not published, or published with another epoch's tag)");
        if (h.sums_fingerprint_max != ~h.sums_fingerprint_complement_max)
            throw std::runtime_error("the blocks computed different sums (in some iteration their totals differ in "
                                     "their bits): every block must add the same partials in the same order");
        return tut::cg::solve_result(tut::cg::outcome_of(h.status), h.iterations, h.converged_at, h.rr_last, h.bb);
    }

  private:
    void (*kernel_)(RoundArgs);
    DeviceCsr A_;
    tut::cg::SolveOptions opt_;
    int rr_period_;
    int blocks_ = 1, tile_rows_ = 1, win_cap_ = 64;
    size_t smem_ = 0;
    tut::DeviceBuffer<float> dinv_;
    tut::DeviceBuffer<int> windows_;
    tut::DeviceBuffer<u64> xch_, ar_;
    tut::DeviceBuffer<RoundState> state_;
};

class BarrierSolver final : public tut::cg::Solver {
  public:
    BarrierSolver(const tut::cg::Csr& host_A, const tut::cg::DeviceMatrix& A, const tut::cg::SolveOptions& opt)
        : A_(A.view()), opt_(opt) {
        tut::refuse_without_cooperative_launch();
        dinv_ = tut::DeviceBuffer<float>(tut::cg::inverse_diagonal(host_A));
        blocks_ = tut::sm_count();
        tile_rows_ = tile_rows_on_chip(host_A, blocks_);
        require_shared_memory(barrier_pcg, kSmemBytes);
        ex0_ = tut::DeviceBuffer<double>(size_t(A_.n));
        ex1_ = tut::DeviceBuffer<double>(size_t(A_.n));
        state_ = tut::DeviceBuffer<BarrierState>(1);
    }

    SolveResult solve(const float* b, float* x) override {
        BarrierArgs a;
        a.A = A_;
        a.b = b;
        a.dinv = dinv_.get();
        a.x = x;
        a.ex0 = ex0_.get();
        a.ex1 = ex1_.get();
        a.state = state_.get();
        a.tol2 = opt_.tolerance * opt_.tolerance;
        a.max_iterations = opt_.max_iterations;
        a.tile_rows = tile_rows_;
        TUT_CUDA(cudaMemsetAsync(a.state, 0, sizeof(BarrierState)));
        tut::launch_cooperative(barrier_pcg, blocks_, kThreads, kSmemBytes, cudaAccessPolicyWindow{}, a);
        BarrierState h{};
        TUT_CUDA(cudaMemcpy(&h, a.state, sizeof h, cudaMemcpyDeviceToHost));  // the only wait
        return tut::cg::solve_result(tut::cg::outcome_of(h.status), h.iterations, h.converged_at, h.rr_last, h.bb);
    }

  private:
    static constexpr size_t kSmemBytes = size_t(kTileNonzeros) * sizeof(double);  // the products, 64 KB
    DeviceCsr A_;
    tut::cg::SolveOptions opt_;
    int blocks_ = 1, tile_rows_ = 1;
    tut::DeviceBuffer<float> dinv_;
    tut::DeviceBuffer<double> ex0_, ex1_;
    tut::DeviceBuffer<BarrierState> state_;
};

std::unique_ptr<tut::cg::Solver> make_barrier(const tut::cg::Csr& A, const tut::cg::DeviceMatrix& dA,
                                              const tut::cg::SolveOptions& opt) {
    return std::make_unique<BarrierSolver>(A, dA, opt);
}
std::unique_ptr<tut::cg::Solver> make_one_round(const tut::cg::Csr& A, const tut::cg::DeviceMatrix& dA,
                                                const tut::cg::SolveOptions& opt) {
    return std::make_unique<OneRoundSolver>(one_round_pcg, 1, 3, 0, A, dA, opt);
}
std::unique_ptr<tut::cg::Solver> make_predict_recompute(const tut::cg::Csr& A, const tut::cg::DeviceMatrix& dA,
                                                        const tut::cg::SolveOptions& opt) {
    return std::make_unique<OneRoundSolver>(predict_recompute_pcg, 4, 5, 0, A, dA, opt);
}
std::unique_ptr<tut::cg::Solver> make_replacement(const tut::cg::Csr& A, const tut::cg::DeviceMatrix& dA,
                                                  const tut::cg::SolveOptions& opt) {
    return std::make_unique<OneRoundSolver>(predict_recompute_pcg, 4, 5, kReplacementPeriod, A, dA, opt);
}

// A solver that remembers how its last solve ended (for the time per iteration, below).
class Remembering final : public tut::cg::Solver {
  public:
    explicit Remembering(std::unique_ptr<tut::cg::Solver> solver) : solver_(std::move(solver)) {}
    SolveResult solve(const float* b, float* x) override { return last_ = solver_->solve(b, x); }
    const SolveResult& last() const { return last_; }

  private:
    std::unique_ptr<tut::cg::Solver> solver_;
    SolveResult last_;
};

// Lesson 08's time per iteration on this problem, from the --share file that lesson 08
// wrote earlier in the same tour (NaN without one). Call it before the Problem takes the
// --matrix file's matrix.
double lesson8_us_per_iter(const tut::cg::Options& options, const std::string& name) {
    if (options.share.empty()) return NAN;
    const tut::cg::Csr A = name == options.matrix ? options.file_matrix : tut::cg::load_matrix(name);
    const tut::SharedTime t = tut::read_shared_time(options.share, "08_persistent/resident",
                                                    tut::cg::problem_key(A, options.tolerance, options.run.seed));
    const double us = t.iterations > 0 ? t.ms * 1e3 / t.iterations : NAN;
    if (std::isfinite(us)) std::printf("Lesson 08 (from --share): %.2f us per iteration\n", us);
    return us;
}

// The lesson's own table: iterations and time per iteration against lesson 08's, and the
// residual each variant carries when it stops (the main table has the true one beside it).
tut::Table round_table() {
    return tut::Table({"variant", "problem", "iters", "us/iter", "x L8/iter", "carried resid"});
}

// Adds the ratio to lesson 08 to the record (extra.per_iter_speedup_over_lesson8), marks
// every variant but the lesson's own outside the track's progression (the README's results
// table shows one variant per lesson), and returns round_table's row.
std::vector<std::string> round_row(tut::Result& result, const tut::cg::Variant& v, const std::string& problem,
                                   const tut::Timing& timing, const SolveResult& last, double l8_us) {
    const double us = timing.median_ms * 1e3 / std::max(1, last.iterations);
    result.record.extra.add("per_iter_speedup_over_lesson8", l8_us / us).add("lesson8_us_per_iter", l8_us);
    if (v.name != "pipelined, one round") result.record.extra.add("progression", false);
    return {v.name, problem, std::to_string(last.iterations), tut::fmt("%.2f", us),
            std::isfinite(l8_us) ? tut::fmt("%.2fx", l8_us / us) : "-", tut::fmt("%.2e", last.residual)};
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::cg::Variant> variants() {
    return {{"pipelined, grid barrier", make_barrier, tut::kernel_of(barrier_pcg, kThreads)},
            {"pipelined, one round", make_one_round, tut::kernel_of(one_round_pcg, kThreads)},
            {"predict-recompute, one round", make_predict_recompute, tut::kernel_of(predict_recompute_pcg, kThreads)},
            {"predict-recompute + replacement, one round", make_replacement,
             tut::kernel_of(predict_recompute_pcg, kThreads)}};
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"cg", "10_one_round", "one communication round per iteration, no grid barrier"};
    const std::vector<tut::cg::Variant> variants = lesson::variants();
    tut::cg::Options options(lesson, tut::cg::Preconditioner::jacobi);  // --problem, --matrix, --tol, ...
    options.parse(argc, argv, tut::names_of(variants));
    tut::require_cooperative_launch(lesson.lesson);  // exits 77 without cooperative launches
    return tut::guarded_main(lesson.lesson, [&] {
        tut::Bench bench(lesson, options.run);
        const double d2d_gbs = tut::cg::measure_floor_bandwidth();
        tut::Table table = tut::cg::table(), rounds = round_table();
        for (const std::string& name : tut::cg::problem_names(options)) {
            const double l8_us = lesson8_us_per_iter(options, name);  // lesson 08's us/iter, same tour
            tut::cg::Problem problem(bench, options, name, d2d_gbs);  // A, b = A x*, Eigen's time from --share
            for (const tut::cg::Variant& v : variants) {
                if (!bench.runs(v)) continue;
                Remembering solver(problem.solver(v));  // all set-up, untimed
                const tut::Verdict verdict = bench.check(v.name, [&] { return problem.check(solver); });
                const tut::Timing timing = problem.time(v.name, solver);  // wall clock, as lesson 08
                const tut::Verdict again = bench.check(v.name, [&] { return problem.check_last(); });  // no stale state
                const double spmv_gbs = problem.spmv_gbs(v.name, solver);  // none: the SpMV lives in the kernel
                tut::Result result = problem.result(v, timing, spmv_gbs, verdict, again);
                rounds.add_row(round_row(result, v, name, timing, solver.last(), l8_us));  // + x L8/iter
                table.add_row(bench.record(result));
            }
        }
        tut::cg::print(table);
        std::printf("\n");
        rounds.print();
        std::printf("x L8/iter: lesson 08's us/iter (run ./persistent --share FILE first, then this with the same "
                    "FILE) over this one's. carried resid: the ||r|| / ||b|| the iteration carries when it stops (the "
                    "table above has the true one, ||b - A x|| / ||b||).\n");
        return bench.exit_code();
    });
}
