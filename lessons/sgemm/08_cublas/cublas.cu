// SGEMM lesson 8: cuBLAS, in strict FP32 and with TF32 tensor cores, and what TF32 costs in accuracy.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/sgemm/08_cublas/cublas.cu -lcublas -o cublas
// Run:  ./cublas --n 4096        (--help for options; --profile for one clean launch under ncu)
//
// C = A * B, N x N, row-major: element (i, j) lives at M[i * N + j].
#include "tut/sgemm.hpp"


namespace {

// One cuBLAS handle per math mode, created on first use and kept for the program's life
// (creating a handle costs far more than a GEMM).
//  - CUBLAS_PEDANTIC_MATH: plain FP32 FMAs, no tensor cores, no reduced-precision tricks.
//  - CUBLAS_TF32_TENSOR_OP_MATH: FP32 matrices in and out, but the tensor cores multiply
//    the inputs rounded to TF32 (8-bit exponent, 10-bit mantissa), accumulating in FP32.
//    (cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32 asks for the same per call.)
cublasHandle_t handle_for(cublasMath_t mode) {
    static tut::sgemm::Cublas fp32, tf32;  // each starts in CUBLAS_PEDANTIC_MATH
    if (mode == CUBLAS_PEDANTIC_MATH) return fp32.handle();
    static const bool tf32_set = [] {
        TUT_CUBLAS(cublasSetMathMode(tf32.handle(), CUBLAS_TF32_TENSOR_OP_MATH));
        return true;
    }();
    (void)tf32_set;
    return tf32.handle();
}

// cuBLAS is column-major (Fortran order): it reads an n x n array X as the matrix whose
// element (r, c) is X[c * n + r], i.e. our row-major matrix transposed. So we ask it for
//   C^T = B^T A^T   (which is (A B)^T),
// a product of the two matrices as cuBLAS sees them; the result it writes, C^T
// column-major, is C row-major. Nothing is transposed in memory,
// and every leading dimension is n.
void sgemm_row_major(cublasHandle_t handle, int n, const float* A, const float* B, float* C) {
    const float one = 1.0f, zero = 0.0f;
    // TODO(exercise): this call passes A's array first, then B's, as if cuBLAS were
    //   row-major. Read the comment above: which array must come first for row-major
    //   C = A B, and what are the leading dimensions? (The checks fail until it is right.)
    TUT_CUBLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero, C, n));
}

void run_fp32(int n, const float* A, const float* B, float* C) {
    tut::sgemm::require_size(n);
    sgemm_row_major(handle_for(CUBLAS_PEDANTIC_MATH), n, A, B, C);
}

void run_tf32(int n, const float* A, const float* B, float* C) {
    tut::sgemm::require_size(n);
    sgemm_row_major(handle_for(CUBLAS_TF32_TENSOR_OP_MATH), n, A, B, C);
}

}  // namespace

namespace lesson {
std::vector<tut::sgemm::Variant> sgemm_variants() {
    return {{"cublasSgemm FP32 (pedantic)", run_fp32, nullptr, 0.0},
            // TF32 keeps 10 of FP32's 23 mantissa bits: each input carries a relative
            // rounding error up to 2^-11 (tut::sgemm::tolerance() takes it from here).
            {"cublasSgemm TF32 tensor ops", run_tf32, nullptr, std::ldexp(1.0, -11)}};
}
}  // namespace lesson

#ifndef TUT_NO_MAIN
namespace {
// The price of TF32: relative L2 error of each variant against a CPU reference in double
// at size n, and the worst element error relative to its scale sum_k |a_ik b_kj|.
int print_error_study(int n) {
    tut::sgemm::Problem p(n, 7);
    std::vector<double> C_ref, scale;
    tut::sgemm::reference_cpu(n, p.A, p.B, C_ref, scale);
    tut::DeviceBuffer<float> dC(size_t(n) * n);
    std::printf("\nAccuracy against a CPU reference in double, N = %d (inputs uniform in [-1, 1)):\n", n);
    tut::Table table({"variant", "rel. L2 error", "max |err| / sum|a b|", "allowed", "check"});
    bool all_ok = true;
    for (const tut::sgemm::Variant& v : lesson::sgemm_variants()) {
        dC.poison();
        v.run(n, p.dA.get(), p.dB.get(), dC.get());
        TUT_CUDA(cudaDeviceSynchronize());
        const std::vector<float> c = dC.download();
        double worst = 0;
        for (size_t e = 0; e < c.size(); ++e) worst = std::fmax(worst, std::fabs(c[e] - C_ref[e]) / scale[e]);
        const double allowed = tut::sgemm::tolerance(n, v, false);
        const tut::Comparison cmp = tut::compare(c.data(), C_ref.data(), c.size(), allowed, scale.data());
        all_ok &= cmp.ok();
        table.add_row({v.name, tut::fmt("%.2e", cmp.rel_l2_error), tut::fmt("%.2e", worst),
                       tut::fmt("%.2e", allowed), cmp.ok() ? "ok" : "FAILED"});
    }
    table.print();
    return all_ok ? 0 : 1;
}
}  // namespace

int main(int argc, char** argv) {
    const tut::LessonInfo info{"sgemm", "08_cublas", "cuBLAS: FP32 (pedantic) and TF32 tensor cores"};
    // The accuracy study needs a CPU reference, so it is part of a checked run only.
    return tut::sgemm::lesson_main(argc, argv, info, lesson::sgemm_variants(), 4096, {},
                                   [](const tut::RunOptions& run, int) { return run.check() ? print_error_study(1024) : 0; });
}
#endif
