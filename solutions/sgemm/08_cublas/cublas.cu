// SGEMM lesson 08: cuBLAS, in strict FP32 and with TF32 tensor cores, and what TF32 costs in accuracy.
// Starts from: the library every earlier lesson was measured against. Adds: the call itself,
// on row-major data, in two math modes; after the table, an accuracy study of both.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include solutions/sgemm/08_cublas/cublas.cu -lcublas -o cublas
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
    TUT_CUBLAS(cublasSetMathMode(handle.handle(), CUBLAS_TF32_TENSOR_OP_MATH));
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

namespace lesson {
std::vector<tut::sgemm::Variant> sgemm_variants() {
    const tut::sgemm::Variant fp32 = tut::sgemm::library_variant("fp32", run_fp32);
    tut::sgemm::Variant tf32 = tut::sgemm::library_variant("tf32", run_tf32);
    // TF32 keeps 10 of FP32's 23 mantissa bits: each input carries a relative rounding
    // error up to 2^-11 (tut::sgemm::tolerance() takes it from here).
    tf32.input_roundoff = std::ldexp(1.0, -11);
    tf32.min_compute_capability = 80;  // TF32 tensor cores arrived with Ampere (sm_80)
    tf32.needs = "TF32 tensor cores";
    return {fp32, tf32};
}
}  // namespace lesson

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
    const int cc = tut::compute_capability();
    for (const tut::sgemm::Variant& v : lesson::sgemm_variants()) {
        if (!tut::sgemm::runs_on(v, cc)) {
            table.add_row({v.name, "-", "-", "-", "skipped"});
            continue;
        }
        dC.poison();
        v.run(n, p.dA.get(), p.dB.get(), dC.get());
        TUT_CUDA(cudaDeviceSynchronize());
        const std::vector<float> c = dC.download();
        double worst = 0;
        for (size_t e = 0; e < c.size(); ++e) worst = std::fmax(worst, std::fabs(c[e] - C_ref[e]) / scale[e]);
        const double allowed = tut::sgemm::tolerance(n, v, false);
        const tut::Comparison cmp = tut::compare(c.data(), C_ref.data(), c.size(), allowed, scale.data());
        all_ok = all_ok && cmp.ok();
        table.add_row({v.name, tut::fmt("%.2e", cmp.rel_l2_error), tut::fmt("%.2e", worst),
                       tut::fmt("%.2e", allowed), cmp.ok() ? "ok" : "FAILED"});
    }
    table.print();
    return all_ok ? 0 : 1;
}

// After the table of a checked run: the accuracy study at N = 1024 (it needs the CPU reference).
int error_study_if_checked(const tut::RunOptions& run, int) { return run.check() ? print_error_study(1024) : 0; }
}  // namespace

int main(int argc, char** argv) {
    const tut::LessonInfo info{"sgemm", "08_cublas", "cuBLAS: FP32 (pedantic) and TF32 tensor cores"};
    tut::sgemm::MainOptions options;
    options.after = error_study_if_checked;
    return tut::sgemm::lesson_main(argc, argv, info, lesson::sgemm_variants(), options);
}
