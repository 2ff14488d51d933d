// wrong: sgemm/08_cublas: sets the TF32 math mode on the wrong handle (fp32_handle()): "fp32" computes in TF32, "tf32" in FP32
// caught by: sgemm/08_cublas: matches cuBLAS FP32 at N = 1000, 4099 and 8192
// kind: precision
// The first case runs "fp32" before the first "tf32" call; from then on "fp32" is in TF32, and
// the FP32 tolerance rejects it at N = 1000 (relative error 2.6e-4, 3.4 times the allowance of
// 4 sqrt(N) u |A||B| x 2, on 17% of the elements), as does "TF32 costs accuracy, FP32 does not"
// (FP32 error < 1e-6 at N = 512; "tf32" is no longer 10 times less accurate).
// sgemm/08_cublas: cuBLAS, in strict FP32 and with TF32 tensor cores, and what TF32 costs in accuracy.
// Starts from: the library every earlier lesson was measured against. Adds: the call itself,
// on row-major data, in two math modes; after the table, an accuracy study of both.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/sgemm/08_cublas/cublas.cu -lcublas -o cublas
// Run:  ./cublas --n 4096        (--help for options; --profile for one clean launch under ncu)
//
// Variants (no kernel of ours: cuBLAS picks its own):
//   "fp32"   cublasSgemm with CUBLAS_PEDANTIC_MATH: FP32 FMAs only, the track's yardstick
//   "tf32"   cublasSgemm with CUBLAS_TF32_TENSOR_OP_MATH: tensor cores on TF32-rounded inputs
//            (compute capability 8.0 or newer; skipped, with a message, on older GPUs)
//
// C = A * B, N x N, row-major: element (i, j) lives at M[i * N + j].
#include "tut/sgemm.hpp"

#include <cmath>

namespace {

// Row-major C = A * B with cuBLAS. cuBLAS is column-major (Fortran order, as BLAS): it
// reads an n x n array X as the matrix whose element (r, c) is X[c * n + r], i.e. our
// row-major matrix transposed, and it writes its result the same way.
void sgemm_row_major(cublasHandle_t handle, int n, const float* A, const float* B, float* C) {
    // What cuBLAS sees in our arrays is A^T and B^T, and what it writes is read back as the
    // transpose of its result. So we ask it for C^T = B^T A^T (which is (A B)^T): B's array
    // first, then A's. Nothing is transposed in memory, and every leading dimension is n.
    const float one = 1.0f, zero = 0.0f;
    TUT_CUBLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, B, n, A, n, &zero, C, n));
}

// One cuBLAS handle per math mode, created on first use and kept for the program's life
// (creating a handle costs far more than a GEMM).
//  - CUBLAS_PEDANTIC_MATH: plain FP32 FMAs, no tensor cores, no reduced-precision tricks.
//  - CUBLAS_TF32_TENSOR_OP_MATH: FP32 matrices in and out, but the tensor cores multiply
//    the inputs rounded to TF32 (8-bit exponent, 10-bit mantissa), accumulating in FP32.
//    (cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32 asks for the same per call.)
cublasHandle_t fp32_handle() {
    static tut::sgemm::Cublas handle(CUBLAS_PEDANTIC_MATH);
    return handle.handle();
}

cublasHandle_t tf32_handle() {
    static tut::sgemm::Cublas handle;  // strict FP32 (CUBLAS_PEDANTIC_MATH) when made
    TUT_CUBLAS(cublasSetMathMode(fp32_handle(), CUBLAS_TF32_TENSOR_OP_MATH));
    return handle.handle();
}

void run_fp32(int n, const float* A, const float* B, float* C) {
    tut::sgemm::require_size(n);
    sgemm_row_major(fp32_handle(), n, A, B, C);
}

void run_tf32(int n, const float* A, const float* B, float* C) {
    tut::sgemm::require_size(n);
    sgemm_row_major(tf32_handle(), n, A, B, C);
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::sgemm::Variant> variants() {
    return {{"fp32", run_fp32},
            {"tf32", run_tf32, {}, tut::Needs{80, "TF32 tensor cores"}}};  // they arrived with Ampere (sm_80)
}
}  // namespace lesson

namespace {

// The arithmetic each variant's inputs go through: "tf32" rounds them to TF32 (10 of FP32's 23
// mantissa bits, a relative error up to 2^-11 each), which widens its tolerance
// (tut::sgemm::tolerance()) and puts it outside the FP32 progression.
tut::sgemm::Arithmetic arithmetic_of(const tut::sgemm::Variant& v) {
    return v.name == "tf32" ? tut::sgemm::Arithmetic::tf32 : tut::sgemm::Arithmetic::fp32;
}

// The price of TF32, after the table of a checked run: relative L2 error of each variant
// against a CPU reference in double at size n, and the worst element error relative to its
// scale sum_k |a_ik b_kj|. A variant outside its tolerance fails the run.
void print_error_study(tut::Bench& bench, const std::vector<tut::sgemm::Variant>& variants, int n) {
    tut::sgemm::Operands p(n, 7);
    std::vector<double> C_ref, scale;
    tut::sgemm::reference_cpu(n, p.A, p.B, C_ref, scale);
    tut::DeviceBuffer<float> dC(size_t(n) * n);
    std::printf("\nAccuracy against a CPU reference in double, N = %d (inputs uniform in [-1, 1)):\n", n);
    tut::Table table({"variant", "rel. L2 error", "max |err| / sum|a b|", "allowed", "check"});
    const int cc = tut::compute_capability();
    for (const tut::sgemm::Variant& v : variants) {
        if (!tut::unmet_need(v, cc).empty()) {
            table.add_row({v.name, "-", "-", "-", "skipped"});
            continue;
        }
        dC.poison();
        v.run(n, p.dA.get(), p.dB.get(), dC.get());
        TUT_CUDA(cudaDeviceSynchronize());
        const std::vector<float> c = dC.download();
        double worst = 0;
        for (size_t e = 0; e < c.size(); ++e) worst = std::fmax(worst, std::fabs(c[e] - C_ref[e]) / scale[e]);
        const double allowed = tut::sgemm::tolerance(n, tut::sgemm::input_roundoff(arithmetic_of(v)), false);
        const tut::Comparison cmp = tut::compare(c.data(), C_ref.data(), c.size(), allowed, scale.data());
        if (!cmp.ok()) bench.fail(v.name, "accuracy study, N=" + std::to_string(n) + ": " + cmp.describe());
        table.add_row({v.name, tut::fmt("%.2e", cmp.rel_l2_error), tut::fmt("%.2e", worst),
                       tut::fmt("%.2e", allowed), cmp.ok() ? "ok" : "FAILED"});
    }
    table.print();
}

}  // namespace

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"sgemm", "08_cublas", "cuBLAS: FP32 (pedantic) and TF32 tensor cores"};
    const std::vector<tut::sgemm::Variant> variants = lesson::variants();
    tut::sgemm::Options options(lesson);  // --n (4096) and the options every lesson takes
    options.parse(argc, argv, tut::names_of(variants));
    return tut::guarded_main(lesson.lesson, [&] {
        tut::Bench bench(lesson, options.run);
        tut::sgemm::Problem problem(bench, options.n);  // A, B, the reference, cuBLAS FP32 (the yardstick) timed beside
        tut::Table table = problem.table();
        for (const tut::sgemm::Variant& v : variants) {
            if (!bench.runs(v)) continue;
            const tut::Verdict verdict = bench.check(v.name, [&] { return problem.check(v.run, arithmetic_of(v)); });
            const tut::Timing timing = bench.time(v.name, [&] { problem.run(v.run); });
            table.add_row(bench.record(problem.result(v, timing, verdict, arithmetic_of(v))));
        }
        table.add_row(problem.library_row());
        table.print();
        if (options.run.check()) print_error_study(bench, variants, 1024);  // it needs the CPU reference
        return bench.exit_code();
    });
}
