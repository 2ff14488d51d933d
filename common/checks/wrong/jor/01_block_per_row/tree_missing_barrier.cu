// wrong: jor/01_block_per_row: the shared-memory tree has no barrier between its steps (only the one before it)
// caught by: sanitizer: racecheck
// kind: race
// From the step half = 32 on, warp 0 reads partial sums warp 1 writes in the step before, with
// nothing ordering them: racecheck reports the hazard on every launch (and the sums, hence x, may
// come out wrong when the warps run apart).
// jor/01_block_per_row: the 2015 port: a block of 128 threads per row, three kernels and a copy per sweep.
// Starts from: the CPU baseline (common/checks/jor/cpu_baseline.cpp). Adds: the report's
// CUDA version. One block of 128 threads per row sums that row's off-diagonal products
// with a shared-memory tree; two more kernels update x and reduce the sweep's convergence
// values, which the host copies back after every sweep to decide whether to go on: three
// launches and one copy per sweep.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/jor/01_block_per_row/block_per_row.cu -o block_per_row
// Run:  ./block_per_row            (--help for options; --sizes 8192 --type float for one size)
//
// Kernels and variants:
//   offdiag_sums_block_per_row   block j: s_j = sum over k != j of A(j, k) x_k, thread t taking
//                                columns t, t + 128, ...; then a shared-memory tree
//                                (the exercise: the loop that skips the diagonal, and the tree)
//   RestrictLoad, TextureLoad    how the kernel reads A: plain loads through a const
//                                __restrict__ pointer, or a texture object (the report read
//                                float A through a texture reference, removed in CUDA 12)
//   BlockPerRowSolver            per sweep: the sums, update_x, sweep_stats, one copy back
//                                (tut::jor::solve_sweep_by_sweep)
//   variants "restrict", "texture" (float only), "min rule" (the report's stopping rule)
// Shared (tut/jor_device.cuh): update_x, sweep_stats, the sweep loop, the generator.
// The harness below the divider: Options, Report and Problem (tut/jor_gpu.hpp).
#include "tut/jor_device.cuh"
#include "tut/jor_gpu.hpp"

#include <memory>
#include <string>
#include <vector>

// Reads A through a const __restrict__ pointer: the compiler may route the loads through
// the read-only (non-coherent) path, which on today's GPUs is the same unified L1/texture
// cache a texture fetch goes through.
template <class T>
struct RestrictLoad {
    const T* __restrict__ A;
    __device__ T operator()(size_t i) const { return A[i]; }
};

// Reads float A through a texture object bound to linear memory (tex1Dfetch).
struct TextureLoad {
    cudaTextureObject_t texture;
    __device__ float operator()(size_t i) const { return tex1Dfetch<float>(texture, static_cast<int>(i)); }
};

namespace {

constexpr int kThreads = 128;  // threads per block: per row (the report's choice)
static_assert(kThreads % 32 == 0 && (kThreads & (kThreads - 1)) == 0,
              "the tree halves the block's threads until one is left: whole warps, a power of two");

// Block j computes s_j = sum over k != j of A(j, k) x_k into sums[j].
template <class T, class Load>
__global__ void offdiag_sums_block_per_row(Load load_A, const T* __restrict__ x, T* __restrict__ sums, int n) {
    __shared__ T partial[kThreads];
    const int j = blockIdx.x, t = threadIdx.x;
    const size_t row_start = size_t(j) * size_t(n);
    T s = T(0);
    for (int k = t; k < n; k += kThreads)
        if (k != j) s += load_A(row_start + k) * x[k];
    partial[t] = s;
    __syncthreads();
    // Halve the active threads each step; every read of a partner's value happens before
    // the barrier that lets anyone overwrite it.
    for (int half = kThreads / 2; half > 0; half /= 2) {
        if (t < half) partial[t] += partial[t + half];
    }
    if (t == 0) sums[j] = partial[0];
}

template <class T, class Load>
class BlockPerRowSolver : public tut::jor::Solver<T> {
  public:
    BlockPerRowSolver(const tut::jor::DeviceSystem<T>& sys, const tut::jor::SolveOptions& opt, Load load)
        : sys_(sys), opt_(opt), load_(load), x_work_(static_cast<size_t>(sys.n)), sums_(static_cast<size_t>(sys.n)), stats_(1) {}

    tut::jor::SolveResult solve(T* x) override {
        // Per sweep: this lesson's sums, update_x, sweep_stats, one copy back (tut/jor_device.cuh).
        return tut::jor::solve_sweep_by_sweep(
            sys_.n, opt_, x, x_work_.get(), stats_.get(),
            [&](const T* x_old) {
                offdiag_sums_block_per_row<T><<<sys_.n, kThreads>>>(load_, x_old, sums_.get(), sys_.n);
                TUT_LAUNCH("offdiag_sums_block_per_row");
            },
            [&](const T* x_old, T* x_new) { tut::jor::launch_update_x(sys_, sums_.get(), x_old, x_new, opt_.alpha); });
    }

    double matrix_bytes() const override { return double(sys_.n) * double(sys_.n) * sizeof(T); }

    bool gemv_once() override {
        offdiag_sums_block_per_row<T><<<sys_.n, kThreads>>>(load_, x_work_.get(), sums_.get(), sys_.n);
        TUT_LAUNCH("offdiag_sums_block_per_row");
        return true;
    }

  private:
    const tut::jor::DeviceSystem<T>& sys_;
    tut::jor::SolveOptions opt_;
    Load load_;
    tut::DeviceBuffer<T> x_work_, sums_;
    tut::DeviceBuffer<tut::jor::DeviceSweepStats> stats_;
};

// A texture object over A, destroyed with the solver.
class TextureSolver : public BlockPerRowSolver<float, TextureLoad> {
  public:
    TextureSolver(const tut::jor::DeviceSystem<float>& sys, const tut::jor::SolveOptions& opt, cudaTextureObject_t tex)
        : BlockPerRowSolver<float, TextureLoad>(sys, opt, TextureLoad{tex}), texture_(tex) {}
    ~TextureSolver() override { cudaDestroyTextureObject(texture_); }

  private:
    cudaTextureObject_t texture_;
};

template <class T>
std::unique_ptr<tut::jor::Solver<T>> make_restrict(const tut::jor::DeviceSystem<T>& sys,
                                                   const tut::jor::SolveOptions& opt) {
    tut::jor::require_options(opt);
    return std::make_unique<BlockPerRowSolver<T, RestrictLoad<T>>>(sys, opt, RestrictLoad<T>{sys.A.get()});
}

std::unique_ptr<tut::jor::Solver<float>> make_texture(const tut::jor::DeviceSystem<float>& sys,
                                                      const tut::jor::SolveOptions& opt) {
    tut::jor::require_options(opt);
    int device = 0, max_width = 0;
    TUT_CUDA(cudaGetDevice(&device));
    TUT_CUDA(cudaDeviceGetAttribute(&max_width, cudaDevAttrMaxTexture1DLinearWidth, device));
    const long long elements = (long long)sys.n * sys.n;
    if (elements > max_width)
        throw tut::Unsupported("N = " + std::to_string(sys.n) + ": a linear texture holds at most " +
                               std::to_string(max_width) + " elements on this GPU, A has " + std::to_string(elements));
    cudaResourceDesc resource{};
    resource.resType = cudaResourceTypeLinear;
    resource.res.linear.devPtr = const_cast<float*>(sys.A.get());
    resource.res.linear.desc = cudaCreateChannelDesc<float>();
    resource.res.linear.sizeInBytes = size_t(elements) * sizeof(float);
    cudaTextureDesc description{};
    description.readMode = cudaReadModeElementType;
    cudaTextureObject_t tex = 0;
    TUT_CUDA(cudaCreateTextureObject(&tex, &resource, &description, nullptr));
    return std::make_unique<TextureSolver>(sys, opt, tex);
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
tut::jor::Variants variants() {
    tut::jor::Variants v;
    // "min rule" is "restrict" stopped by the report's rule: main() and the checks pass it.
    v.floats = {{"restrict", make_restrict<float>},
                {"texture", make_texture},  // the report used a texture for float A only
                {"min rule", make_restrict<float>}};
    v.doubles = {{"restrict", make_restrict<double>}, {"min rule", make_restrict<double>}};
    return v;
}
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"jor", "01_block_per_row",
                                 "the 2015 port: a block of 128 threads per row, three kernels and a copy per sweep"};
    const tut::jor::Variants variants = lesson::variants();
    tut::jor::Options options(lesson);  // --sizes, --matrices, --type, --tol, --alpha, --max-iter, --share, ...
    options.parse(argc, argv, variants);
    return tut::guarded_main(lesson.lesson, [&] {
        tut::Bench bench(lesson, options.run);
        tut::jor::Report report(bench, options, tut::jor::measure_read_bandwidth_gbs());  // the floor's bandwidth
        // Per size, variant and matrix: check a solve, time the solves by the host clock (the
        // launches and copies of a solve are part of its cost), check the last of them.
        auto measure = [&](auto&& problem, const auto& list) {
            for (long long n : options.sizes)
                for (const auto& v : list) {
                    if (!bench.runs(v)) continue;
                    // "min rule" stops as the report did: no error bound, only finite values are required
                    const tut::jor::StopRule stop =
                        v.name == "min rule" ? tut::jor::StopRule::min : tut::jor::StopRule::norm;
                    for (int m = 0; m < options.matrices; ++m) {
                        problem.set_up(v, n, m, stop);  // matrix m of size n, generated on the GPU; v's solver
                        const tut::Verdict verdict = bench.check(v.name, [&] { return problem.check(); });
                        const tut::Timing timing = bench.time_host(v.name, [&] { problem.solve(); }, problem.timing());
                        const tut::Verdict last = bench.check(v.name, [&] { return problem.check_last(); });
                        problem.add(timing, verdict, last);  // matrix 0: also the copy of A, the GEMV alone
                    }
                }
            for (const tut::Result& r : problem.results()) report.table.add_row(bench.record(r));
        };
        if (options.runs<float>()) measure(tut::jor::Problem<float>(options, report), variants.floats);
        if (options.runs<double>()) measure(tut::jor::Problem<double>(options, report), variants.doubles);
        report.print();
        return bench.exit_code();
    });
}
