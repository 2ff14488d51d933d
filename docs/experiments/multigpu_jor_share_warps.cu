// docs/experiments/multigpu_jor_share_warps.cu: multigpu/03_jor's sweep kernel alone, on ONE GPU, for the row
// counts one GPU's share has on 1, 2, 4 (and 8) GPUs: rows = N / G at N = 32768 and 16384,
// float and double, each the share of rank 0 of G (its row read in G blocks of x, as in the
// lesson). Kernels: "before" (the lesson's sweep kernel as it was: one warp per row, no
// launch bounds; a verbatim copy), and the lesson's sweep_kernel<T, k> for k = 1, 2, 4
// warps per row (included from the solution, main renamed), plus what the lesson's
// rule (sweep_warps_per_row) picks for that share.
//
// The question: does a share of N / G rows take 1 / G of the whole sweep's time? The
// column "share eff" = t(before, all N rows) / (G x t(kernel, N / G rows)): 100% is "a G-th
// of the rows in a G-th of the time" against the lesson's one-GPU kernel as it was.
//
// Build (repo root):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include -I. -ccbin mpicxx docs/experiments/multigpu_jor_share_warps.cu -lnccl -o mg_jor_share_warps
// Run:  ./mg_jor_share_warps [repeats=30]
#define main jor_lesson_main
#include "solutions/multigpu/03_jor/jor.cu"
#undef main
#include "tut/timer.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace before {
using lesson::Blocks;
using lesson::kThreads;
using lesson::kWarp;
// The lesson's sweep kernel before the split (verbatim but for the name).
template <class T>
__global__ void sweep_kernel(const T* __restrict__ A, const T* __restrict__ b, const T* __restrict__ xg, long long stride,
                             Blocks blocks, int rank, long long rows, long long n, T alpha, T* __restrict__ x_next,
                             T* __restrict__ stats) {
    const long long j = (long long)blockIdx.x * (kThreads / kWarp) + threadIdx.x / kWarp;
    const int lane = threadIdx.x % kWarp;
    if (j >= rows) return;
    const T* row = A + j * n;
    T acc = 0;
    for (int q = 0; q < blocks.parts; ++q) {
        const T* a = row + blocks.begin[q];
        const T* x = xg + q * stride;
        const long long len = blocks.begin[q + 1] - blocks.begin[q];
        long long k = lane;
        T s0 = 0, s1 = 0, s2 = 0, s3 = 0;  // four loads of A in flight per lane
        for (; k + 3 * kWarp < len; k += 4 * kWarp) {
            s0 += a[k] * x[k];
            s1 += a[k + kWarp] * x[k + kWarp];
            s2 += a[k + 2 * kWarp] * x[k + 2 * kWarp];
            s3 += a[k + 3 * kWarp] * x[k + 3 * kWarp];
        }
        for (; k < len; k += kWarp) s0 += a[k] * x[k];
        acc += (s0 + s1) + (s2 + s3);
    }
    acc = lesson::warp_sum(acc);
    if (lane == 0) {
        const long long global = blocks.begin[rank] + j;
        const T xj = xg[rank * stride + j];
        const T xn = xj + alpha * (b[j] - acc) / row[global];
        x_next[j] = xn;
        lesson::atomic_max_nonnegative(stats + 0, fabs(xn - xj));
        lesson::atomic_max_nonnegative(stats + 1, fabs(xn));
        if (!isfinite(xn)) stats[2] = T(1);
    }
}
}  // namespace before

__device__ inline double hash01(unsigned long long i) {  // [0, 1)
    i ^= i >> 33; i *= 0xff51afd7ed558ccdull; i ^= i >> 33; i *= 0xc4ceb9fe1a85ec53ull; i ^= i >> 33;
    return double(i >> 11) * (1.0 / 9007199254740992.0);
}
// Diagonally dominant rows: off-diagonal in [-1, 1) / n, diagonal 2; b and x in [-1, 1).
template <class T>
__global__ void fill(T* A, T* b, T* xg, long long n, long long stride, int parts, long long share) {
    const long long total = n * n;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        const long long r = i / n, c = i % n;
        A[i] = r == c ? T(2) : T((2 * hash01(i) - 1) / double(n));
        if (i < n) b[i] = T(2 * hash01(total + i) - 1);
        if (i < stride * parts) {
            const long long q = i / stride, k = i % stride;
            xg[i] = k < share ? T(2 * hash01(2 * total + q * share + k) - 1) : T(0);
        }
    }
}

struct Kernel {
    const char* name;
    int split;  // 0: before
};

template <class T>
void bench_type(int repeats) {
    const char* tname = sizeof(T) == 4 ? "float" : "double";
    int device = 0, sms = 0;
    TUT_CUDA(cudaGetDevice(&device));
    TUT_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const std::vector<Kernel> kernels{{"before", 0}, {"k=1", 1}, {"k=2", 2}, {"k=4", 4}};
    for (long long n : {32768ll, 16384ll}) {
        // Largest share (G = 1) first: the "all rows" time each row of G > 1 is judged against.
        std::vector<int> gs = n == 32768 ? std::vector<int>{1, 2, 4} : std::vector<int>{1, 2, 4, 8};
        T *A, *b, *xg, *xn, *stats;
        const int max_parts = gs.back();
        TUT_CUDA(cudaMalloc(&A, size_t(n) * n * sizeof(T)));
        TUT_CUDA(cudaMalloc(&b, size_t(n) * sizeof(T)));
        TUT_CUDA(cudaMalloc(&xg, size_t(n + lesson::kStats * max_parts) * sizeof(T)));
        TUT_CUDA(cudaMalloc(&xn, size_t(n) * sizeof(T)));
        TUT_CUDA(cudaMalloc(&stats, 4 * sizeof(T)));
        double t_before_all = 0;
        std::vector<T> ref(static_cast<size_t>(n)), got(static_cast<size_t>(n));
        for (int g : gs) {
            const long long rows = n / g, stride = rows + lesson::kStats;
            lesson::Blocks blocks{};
            blocks.parts = g;
            for (int q = 0; q <= g; ++q) blocks.begin[q] = q * rows;
            fill<T><<<4 * sms * 8, 256>>>(A, b, xg, n, stride, g, rows);
            TUT_LAUNCH("fill");
            TUT_CUDA(cudaDeviceSynchronize());
            const int pick = lesson::sweep_warps_per_row<T>(rows, 0);
            for (const Kernel& kern : kernels) {
                cudaFuncAttributes attr{};
                int per_sm = 0;
                const void* fn = kern.split == 0 ? (const void*)before::sweep_kernel<T>
                                 : kern.split == 1 ? (const void*)lesson::sweep_kernel<T, 1>
                                 : kern.split == 2 ? (const void*)lesson::sweep_kernel<T, 2>
                                                   : (const void*)lesson::sweep_kernel<T, 4>;
                TUT_CUDA(cudaFuncGetAttributes(&attr, fn));
                TUT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, lesson::kThreads, 0));
                const long long resident = 1ll * per_sm * sms * (lesson::kThreads / 32);
                const long long warps = rows * std::max(1, kern.split);
                auto launch = [&] {
                    if (kern.split == 0) {
                        before::sweep_kernel<T><<<unsigned((rows + 7) / 8), lesson::kThreads>>>(
                            A, b, xg, stride, blocks, 0, rows, n, T(0.8), xn, stats);
                        TUT_LAUNCH("before::sweep_kernel");
                    } else {
                        lesson::sweep<T>(kern.split, A, b, xg, stride, blocks, 0, rows, n, T(0.8), xn, stats, nullptr);
                    }
                };
                TUT_CUDA(cudaMemset(xn, 0, size_t(n) * sizeof(T)));
                const tut::Timing timing = tut::time_gpu(launch, tut::TimingOptions{3, repeats});
                const double t = 1e3 * timing.median_ms, tmin = 1e3 * timing.min_ms;  // us
                // The new x against the "before" kernel's (the same sums, another order).
                TUT_CUDA(cudaMemcpy(got.data(), xn, size_t(rows) * sizeof(T), cudaMemcpyDeviceToHost));
                double diff = 0, big = 0;
                if (kern.split == 0) std::copy(got.begin(), got.begin() + rows, ref.begin());
                for (long long j = 0; j < rows; ++j) {
                    diff = std::max(diff, std::fabs(double(got[j]) - double(ref[j])));
                    big = std::max(big, std::fabs(double(ref[j])));
                }
                if (g == 1 && kern.split == 0) t_before_all = t;
                const double gbs = double(rows) * n * sizeof(T) / (t * 1e-6) * 1e-9;
                std::printf("%-6s %6lld %6lld %2d  %-7s%s %4d %6d %7lld %7lld %6.2f %9.1f %9.1f %9.1f %7.0f %8.1f%% %10.2e\n",
                            tname, n, rows, g, kern.name, kern.split == pick ? "*" : " ", attr.numRegs, per_sm, warps,
                            resident, double(warps) / double(resident), t, tmin, t * g, gbs,
                            100.0 * t_before_all / (g * t), big > 0 ? diff / big : diff);
                std::fflush(stdout);
            }
        }
        cudaFree(A); cudaFree(b); cudaFree(xg); cudaFree(xn); cudaFree(stats);
    }
}

int main(int argc, char** argv) {
    const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 30;
    cudaDeviceProp p{};
    TUT_CUDA(cudaGetDeviceProperties(&p, 0));
    std::printf("# multigpu_jor_share_warps: %s, %d SMs, %.0f MiB L2; median of %d launches after 3; A not flushed (>= 256 MiB)\n",
                p.name, p.multiProcessorCount, p.l2CacheSize / 1048576.0, repeats);
    std::printf("# rows = N / G: rank 0's share on G GPUs (its row read in G blocks of x). '*': the lesson's rule picks this k.\n");
    std::printf("# share eff = t(before, G = 1) / (G x t): 100%% = a G-th of the rows in a G-th of the one-GPU time.\n");
    std::printf("%-6s %6s %6s %2s  %-8s %4s %6s %7s %7s %6s %9s %9s %9s %7s %9s %10s\n", "type", "N", "rows", "G", "kernel",
                "regs", "blk/SM", "warps", "resid", "waves", "us", "us min", "G x us", "GB/s", "share eff", "rel diff");
    bench_type<float>(repeats);
    bench_type<double>(repeats);
    return 0;
}
