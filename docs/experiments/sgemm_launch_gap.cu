// docs/experiments/sgemm_launch_gap.cu: how much of a timed SGEMM call is the host's launch.
// tut::time_gpu records the start event and then calls the work. On an idle GPU the event
// fires at once, and the clock runs while the host prepares the launch: a few microseconds for
// a kernel launched by hand, more for a library call that chooses its kernel first. The lessons
// time cuBLAS and their own kernels this way, so at small N the "% of cuBLAS" leans towards
// the lesson. This program times cuBLAS TF32, cuBLAS FP32 and lesson 18's kernel at several N,
// with TimingOptions::hold_launch off (as the lessons time) and on (each run queued behind a
// short host wait, so that the events bracket the GPU's work alone). Median of 20 after 3.
// Columns: us off / us on per call; lesson 18 / cuBLAS TF32 = t(cuBLAS) / t(lesson 18).
// Build (sm_90a: lesson 18's kernel uses wgmma):
//   nvcc -O3 -std=c++17 -arch=sm_90a -Icommon/include -I. docs/experiments/sgemm_launch_gap.cu -lcublas -o sgemm_launch_gap
#define main operand_swap_main
#include "solutions/sgemm/18_operand_swap/operand_swap.cu"
#undef main
#include "tut/random.hpp"
#include "tut/timer.hpp"

#include <cstdio>

int main() {
    if (tut::compute_capability() != 90) {
        std::printf("SKIPPED: lesson 18's kernel needs a compute capability 9.0 GPU\n");
        return 77;
    }
    tut::sgemm::Cublas tf32(CUBLAS_TF32_TENSOR_OP_MATH), fp32(CUBLAS_PEDANTIC_MATH);
    std::printf("%6s %24s %24s %26s %24s\n", "N", "cuBLAS TF32 us off/on", "lesson 18 us off/on",
                "lesson 18 / cuBLAS off/on", "cuBLAS FP32 us off/on");
    for (int n : {1024, 2048, 3000, 4096, 5000, 8192}) {
        const size_t count = size_t(n) * n;
        tut::DeviceBuffer<float> A(tut::random_vector<float>(count, 1)), B(tut::random_vector<float>(count, 2)), C(count);
        double t[3][2];
        for (int hold = 0; hold < 2; ++hold) {
            const tut::TimingOptions opt{3, 20, false, hold == 1};
            t[0][hold] = tut::time_gpu([&] { tf32.sgemm(n, A.get(), B.get(), C.get()); }, opt).median_ms * 1e3;
            t[1][hold] = tut::time_gpu([&] { run_operand_swap(n, A.get(), B.get(), C.get()); }, opt).median_ms * 1e3;
            t[2][hold] = tut::time_gpu([&] { fp32.sgemm(n, A.get(), B.get(), C.get()); }, opt).median_ms * 1e3;
        }
        std::printf("%6d %11.1f / %10.1f %11.1f / %10.1f %11.1f%% / %11.1f%% %11.1f / %10.1f\n", n, t[0][0], t[0][1],
                    t[1][0], t[1][1], 100 * t[0][0] / t[1][0], 100 * t[0][1] / t[1][1], t[2][0], t[2][1]);
    }
    return 0;
}
