// wrong: reduction/10_cub: the second Sum() call passes nullptr as its storage, as the size query does: it only reports the size again
// caught by: reduction/10_cub: double sums match
// kind: other
// nothing is summed: the poisoned output comes back as it was
// reduction/10_cub: cub::DeviceReduce::Sum, the library a user should call.
// Starts from: lesson 9, and the yardstick of every lesson. Adds: CUB's two-call convention for its
// temporary storage, and its run-to-run determinism.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/reduction/10_cub/cub.cu -o cub
// Run:  ./cub      (2^26 doubles; --type all adds float, int, complex; --help for options)
//
// Library calls and variants:
//   workspace_bytes<T>(n)   how much temporary storage CUB needs for n elements
//   run_sum<T>(...)         the reduction itself, in that storage
//   "cub::DeviceReduce::Sum double", "... float", "... int", "... complex"
//
// CUB ships with the CUDA toolkit (header-only, part of CCCL): nothing to link.
#include "tut/reduction.hpp"

#include <cub/device/device_reduce.cuh>

namespace {

// CUB's device-wide algorithms take their scratch memory from the caller, and are called
// twice: once to say how much they need, once to run (on the given stream; here the
// default one). Allocate once and reuse: cudaMalloc synchronizes the device and costs far
// more than the sum of a few MB. The track's variants work the same way: a run takes its
// scratch from the workspace it is given, which allocates only when asked for more than
// it holds, so the timed runs reuse what the first run asked for.
template <class T>
size_t workspace_bytes(size_t n) {
    tut::reduction::require_count(n);
    size_t temp_bytes = 0;
    TUT_CUDA(cub::DeviceReduce::Sum(nullptr, temp_bytes, static_cast<const T*>(nullptr), static_cast<T*>(nullptr), n));
    return temp_bytes;
}

// Sum() with cuda::std::plus<> and the initial value T{} (zero; for cuDoubleComplex the
// operator+ of tut/reduction.hpp). CUB returns launch errors as a cudaError_t.
// Determinism: CUB documents that DeviceReduce "provides run-to-run determinism for
// pseudo-associative reduction (e.g. addition of floating point types) on the same
// GPU device": a fixed tree with no atomics, so the same input gives the same bits on
// every run (not necessarily across GPU generations, whose tile sizes differ).
template <class T>
void run_sum(const T* in, size_t n, T* out, tut::reduction::Workspace& workspace) {
    size_t temp_bytes = workspace_bytes<T>(n);  // (also refuses n > 2^30)
    void* storage = workspace.get(temp_bytes);
    TUT_CUDA(cub::DeviceReduce::Sum(nullptr, temp_bytes, in, out, n));
    (void)storage;
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
tut::reduction::Variants variants() {
    tut::reduction::Variants all;
    all.f64 = {{"cub::DeviceReduce::Sum double", run_sum<double>}};
    all.f32 = {{"cub::DeviceReduce::Sum float", run_sum<float>}};
    all.i32 = {{"cub::DeviceReduce::Sum int", run_sum<int>}};
    all.c64 = {{"cub::DeviceReduce::Sum complex", run_sum<cuDoubleComplex>}};
    return all;
}
}  // namespace lesson

namespace {

// The longest chain of additions, which sets this table's error bound: CUB's design, as
// the yardstick's check bounds it (tut::reduction::cub_depth()).
template <class T>
size_t depth(const tut::reduction::Variant<T>&, size_t n) {
    return tut::reduction::cub_depth(n);
}
}  // namespace

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"reduction", "10_cub",
                                 "cub::DeviceReduce::Sum: temporary storage, determinism"};
    const tut::reduction::Variants variants = lesson::variants();
    tut::reduction::Options options(lesson);  // --n (2^26), --type (double), --reruns (10), and every lesson's options
    options.parse(argc, argv, variants);
    return tut::guarded_main(lesson.lesson, [&] {
        tut::Bench bench(lesson, options.run);
        // One table per type that --type selects: its input, reference and CUB (the Problem), then its variants.
        tut::reduction::for_each_type(bench, options, variants, [&](auto& problem, const auto& of_type) {
            tut::Table table = problem.table();
            for (const auto& v : of_type) {
                if (!bench.runs(v)) continue;
                const size_t d = depth(v, options.n);
                const tut::Verdict verdict = bench.check(v.name, [&] { return problem.check(v.run, d); });
                const tut::Timing timing = bench.time(v.name, [&] { problem.run(v.run); }, problem.timing());
                const tut::reduction::Reruns reruns = problem.rerun(v.run);  // --reruns runs, compared bit for bit
                table.add_row(bench.record(problem.result(v, timing, verdict, d, reruns)));
            }
            table.add_row(problem.library_row());
            table.print();
        });
        return bench.exit_code();
    });
}
