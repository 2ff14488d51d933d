// docs/experiments/multigpu_jor_share_epilogue.cu: why a quarter of the rows takes more than a quarter of the time.
// multigpu/03_jor's sweep with one warp per row (kSplit = 1) on ONE GPU, for the whole matrix
// (rows = N) and for one GPU's share of 4 (rows = N / 4), in variants that differ only in
// the epilogue (the stopping test's maxima):
//   lesson      the lesson's kernel: two atomicMax per row on the same two words
//   no-stats    no maxima at all (the floor: what the streaming alone costs)
//   block-max   the block's 8 rows' maxima meet in shared memory: two atomics per block
// and the lesson's kernel with the share read as 1 part instead of 4 (parts=1).
// Columns: us (median of 30 after 3), us (t10: 10 launches back to back, per launch), GB/s of
// A, and "x quarter" = t(rows = N / 4) x 4 / t(rows = N) of the same variant.
// Build: nvcc -O3 -std=c++17 -arch=native -Icommon/include -I. -ccbin mpicxx docs/experiments/multigpu_jor_share_epilogue.cu -lnccl -o jor_share_epilogue
#define main jor_lesson_main
#include "solutions/multigpu/03_jor/jor.cu"
#undef main
#include "tut/timer.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

using lesson::Blocks;
using lesson::kThreads;
using lesson::kWarp;

enum Mode { kLesson = 0, kNoStats = 1, kBlockMax = 2 };

template <class T, int M>
__global__ void __launch_bounds__(kThreads, lesson::kBlocksPerSm<T>) variant(const T* __restrict__ A, const T* __restrict__ b,
    const T* __restrict__ xg, long long stride, Blocks blocks, int rank, long long rows, long long n, T alpha,
    T* __restrict__ x_next, T* __restrict__ stats) {
    const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
    const long long j = (long long)blockIdx.x * (kThreads / kWarp) + warp;
    T acc = 0;
    const T* row = A + j * n;
    if (j < rows) {
        for (int q = 0; q < blocks.parts; ++q) {
            const T* a = row + blocks.begin[q];
            const T* x = xg + q * stride;
            const int len = int(blocks.begin[q + 1] - blocks.begin[q]);
            int k = lane;
            T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            for (; k + 3 * kWarp < len; k += 4 * kWarp) {
                const T a0 = a[k], a1 = a[k + kWarp], a2 = a[k + 2 * kWarp], a3 = a[k + 3 * kWarp];
                const T x0 = x[k], x1 = x[k + kWarp], x2 = x[k + 2 * kWarp], x3 = x[k + 3 * kWarp];
                s0 += a0 * x0; s1 += a1 * x1; s2 += a2 * x2; s3 += a3 * x3;
            }
            for (; k < len; k += kWarp) s0 += a[k] * x[k];
            acc += (s0 + s1) + (s2 + s3);
        }
        acc = lesson::warp_sum(acc);
    }
    T dx = 0, ax = 0;
    if (lane == 0 && j < rows) {
        const long long global = blocks.begin[rank] + j;
        const T xj = xg[rank * stride + j];
        const T xn = xj + alpha * (b[j] - acc) / row[global];
        x_next[j] = xn;
        dx = fabs(xn - xj);
        ax = fabs(xn);
        if (!isfinite(xn)) stats[2] = T(1);
        if (M == kLesson) {
            lesson::atomic_max_nonnegative(stats + 0, dx);
            lesson::atomic_max_nonnegative(stats + 1, ax);
        }
    }
    if constexpr (M == kBlockMax) {
        __shared__ T s_dx[kThreads / kWarp], s_ax[kThreads / kWarp];
        if (lane == 0) { s_dx[warp] = dx; s_ax[warp] = ax; }
        __syncthreads();
        if (threadIdx.x == 0) {
            for (int w = 1; w < kThreads / kWarp; ++w) { dx = max(dx, s_dx[w]); ax = max(ax, s_ax[w]); }
            lesson::atomic_max_nonnegative(stats + 0, dx);
            lesson::atomic_max_nonnegative(stats + 1, ax);
        }
    }
}

__device__ inline double hash01(unsigned long long i) {
    i ^= i >> 33; i *= 0xff51afd7ed558ccdull; i ^= i >> 33; i *= 0xc4ceb9fe1a85ec53ull; i ^= i >> 33;
    return double(i >> 11) * (1.0 / 9007199254740992.0);
}
template <class T>
__global__ void fill(T* A, T* b, T* xg, long long n, long long xlen) {
    const long long total = n * n;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        const long long r = i / n, c = i % n;
        A[i] = r == c ? T(2) : T((2 * hash01(i) - 1) / double(n));
        if (i < n) b[i] = T(2 * hash01(total + i) - 1);
        if (i < xlen) xg[i] = T(2 * hash01(2 * total + i) - 1);
    }
}

// Median of `repeats` timed runs after 3 untimed ones (tut::time_gpu), in microseconds.
template <class Work>
double time_us(int repeats, Work&& launch) {
    return 1e3 * tut::time_gpu(launch, tut::TimingOptions{3, repeats}).median_ms;
}

template <class T>
void bench(int repeats) {
    const char* tname = sizeof(T) == 4 ? "float" : "double";
    int sms = 0;
    TUT_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    for (long long n : {32768ll, 16384ll}) {
        T *A, *b, *xg, *xn, *stats;
        const long long xlen = n + lesson::kStats * 4;
        TUT_CUDA(cudaMalloc(&A, size_t(n) * n * sizeof(T)));
        TUT_CUDA(cudaMalloc(&b, size_t(n) * sizeof(T)));
        TUT_CUDA(cudaMalloc(&xg, size_t(xlen) * sizeof(T)));
        TUT_CUDA(cudaMalloc(&xn, size_t(n) * sizeof(T)));
        TUT_CUDA(cudaMalloc(&stats, 4 * sizeof(T)));
        fill<T><<<4 * sms * 8, 256>>>(A, b, xg, n, xlen);
        TUT_LAUNCH("fill");
        TUT_CUDA(cudaDeviceSynchronize());
        const char* names[] = {"lesson", "no-stats", "block-max", "lesson, share as 1 part"};
        for (int v = 0; v < 4; ++v) {
            double t_all = 0;
            for (int g : {1, 4}) {
                const long long rows = n / g;
                const int parts = v == 3 ? 1 : g;
                const long long stride = n / parts + lesson::kStats;
                Blocks blocks{};
                blocks.parts = parts;
                for (int q = 0; q <= parts; ++q) blocks.begin[q] = q * (n / parts);
                const unsigned grid = unsigned((rows + 7) / 8);
                auto launch = [&] {
                    switch (v) {
                        case 0: case 3: variant<T, kLesson><<<grid, kThreads>>>(A, b, xg, stride, blocks, 0, rows, n, T(0.8), xn, stats); break;
                        case 1: variant<T, kNoStats><<<grid, kThreads>>>(A, b, xg, stride, blocks, 0, rows, n, T(0.8), xn, stats); break;
                        case 2: variant<T, kBlockMax><<<grid, kThreads>>>(A, b, xg, stride, blocks, 0, rows, n, T(0.8), xn, stats); break;
                    }
                    TUT_LAUNCH("variant");
                };
                const double t = time_us(repeats, launch);
                // 10 sweeps back to back in one timing: the launch gaps overlap, the kernels do not
                const double t10 = time_us(std::max(3, repeats / 5), [&] { for (int i = 0; i < 10; ++i) launch(); }) / 10;
                if (g == 1) t_all = t;
                char quarter[16] = "-";
                if (g != 1) std::snprintf(quarter, sizeof quarter, "%.1f%%", 100.0 * 4 * t / t_all);
                std::printf("%-6s %6lld %6lld %-24s %9.1f %9.1f %7.0f %9s\n", tname, n, rows, names[v], t, t10,
                            double(rows) * n * sizeof(T) / (t * 1e-6) * 1e-9, quarter);
                std::fflush(stdout);
            }
        }
        cudaFree(A); cudaFree(b); cudaFree(xg); cudaFree(xn); cudaFree(stats);
    }
}

int main(int argc, char** argv) {
    const int repeats = argc > 1 ? std::max(5, std::atoi(argv[1])) : 30;
    cudaDeviceProp p{};
    TUT_CUDA(cudaGetDeviceProperties(&p, 0));
    std::printf("# multigpu_jor_share_epilogue: %s, %d SMs; one warp per row; median of %d after 3; t10 = 10 back to back / 10\n",
                p.name, p.multiProcessorCount, repeats);
    std::printf("%-6s %6s %6s %-24s %9s %9s %7s %9s\n", "type", "N", "rows", "variant", "us", "us (t10)", "GB/s", "x quarter");
    bench<float>(repeats);
    bench<double>(repeats);
    return 0;
}
