/// @file sgemm.hpp
/// @brief The SGEMM track's problem: C = A * B, its inputs, reference, judgement and
/// yardstick, as each lesson's main() checks and times its variants against them.
///
/// Conventions for the whole track:
/// - C = A * B with A, B, C square N x N single-precision matrices, **row-major**:
///   element (i, j) is at `M[i * N + j]` (the course slides' `IX(i,j)`).
///   Row i of C is computed from row i of A and column j of B.
/// - A lesson lists its ways of computing C as tut::sgemm::Variant: a name, the host
///   function `run(n, A, B, C)` on device pointers (it must throw tut::Unsupported, before
///   launching anything, for an n it cannot compute), and optionally the kernel behind it
///   and what it needs of the GPU (bench.hpp). Its main() checks and times each against a
///   tut::sgemm::Problem, in the open (bench.hpp's file comment shows the loop).
/// - Lesson 02, which is about getting the data there and back, lists whole host-to-host
///   pipelines instead, and measures them with a problem of its own.
/// - All lessons support 1 <= N <= kMaxN unless their README says otherwise.
#pragma once

#include "bench.hpp"
#include "buffer.hpp"
#include "check.hpp"
#include "compare.hpp"
#include "random.hpp"
#include "report.hpp"
#include "timer.hpp"

#include "check_cublas.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tut::sgemm {

/// Largest N any SGEMM lesson claims: 3 matrices of 256 MiB, and n*n far from the
/// 32-bit index limit (46340^2). The checks run every lesson at this size.
inline constexpr int kMaxN = 8192;

/// Computes C = A * B for n x n row-major device matrices; throws tut::Unsupported,
/// before launching anything, for an n it cannot compute.
using Run = void(int n, const float* A, const float* B, float* C);

/// One way of computing C = A * B that a lesson checks and times (see tut::Variant):
///
///     tut::sgemm::Variant{"tile=16", run_tiled<16>, tut::kernel_of(sgemm_tiled<16>, 256)}
using Variant = tut::Variant<Run>;

/// The most dynamic shared memory one block may ask for on the current GPU (the opt-in
/// limit); 0 when there is no GPU to ask.
inline size_t max_dynamic_shared_per_block() {
    int bytes = 0;
    return read_device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, bytes) ? static_cast<size_t>(bytes) : 0;
}

/// One line "variant 'name' needs ..." for each of `variants` that such a GPU cannot run
/// (tut::unmet_need); empty when it runs them all. The checks skip a lesson whose list is
/// not empty.
template <class V>
std::string unmet_needs(const std::vector<V>& variants, int compute_capability, size_t shared_per_block = 0) {
    std::string out;
    for (const V& v : variants)
        if (const std::string need = unmet_need(v, compute_capability, shared_per_block); !need.empty())
            out += (out.empty() ? "" : "\n") + ("variant '" + v.name + "' " + need);
    return out;
}

/// Throws Unsupported unless 1 <= n <= kMaxN and n is a multiple of `multiple`.
inline void require_size(int n, int multiple = 1, const char* why = nullptr) {
    if (n < 1 || n > kMaxN)
        throw Unsupported("N = " + std::to_string(n) + " is outside 1.." + std::to_string(kMaxN));
    if (n % multiple != 0)
        throw Unsupported("N = " + std::to_string(n) + " is not a multiple of " + std::to_string(multiple) +
                          (why ? std::string(" (") + why + ")" : std::string()));
}

/// 2 N^3 flops: N^2 dot products of length N, one multiply and one add per term.
inline double gflops(int n, double ms) { return 2.0 * n * n * double(n) / (ms * 1e-3) / 1e9; }

/// The arithmetic a variant's inputs go through: FP32, or TF32 on the tensor cores.
enum class Arithmetic { fp32, tf32 };

/// The unit roundoff of the inputs as the hardware sees them: 0 for FP32 (exact), 2^-11 for
/// TF32 (10 explicit mantissa bits).
inline double input_roundoff(Arithmetic a) { return a == Arithmetic::tf32 ? std::ldexp(1.0, -11) : 0.0; }

/// Allowed error per element, as a multiple of (|A| |B|)_ij = sum_k |a_ik b_kj|.
///
/// FP32 accumulation of a length-n dot product: the probabilistic bound of Higham and
/// Mary (SIAM J. Sci. Comput. 41(5), 2019) gives |error| <= lambda sqrt(n) u (|A||B|)_ij
/// with high probability, u = 2^-24; we take lambda = 4. Against an FP32 reference
/// (cuBLAS) both sides carry such an error, hence the factor 2. Inputs of unit roundoff
/// `input_roundoff` (see input_roundoff(Arithmetic)) add a deterministic 2 u_in per
/// product (each factor rounded once).
inline double tolerance(int n, double input_roundoff, bool reference_is_fp32) {
    const double u = std::ldexp(1.0, -24);
    return 2.0 * input_roundoff + 4.0 * std::sqrt(double(n)) * u * (reference_is_fp32 ? 2.0 : 1.0);
}

/// Exact-ish reference on the CPU in double: C = A * B and scale = |A| |B|. O(n^3): small n only.
inline void reference_cpu(int n, const std::vector<float>& A, const std::vector<float>& B, std::vector<double>& C,
                          std::vector<double>& scale) {
    C.assign(size_t(n) * n, 0.0);
    scale.assign(size_t(n) * n, 0.0);
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < n; ++k) {
            const double a = A[size_t(i) * n + k];
            const float* brow = &B[size_t(k) * n];
            double* crow = &C[size_t(i) * n];
            double* srow = &scale[size_t(i) * n];
            for (int j = 0; j < n; ++j) {
                crow[j] += a * brow[j];
                srow[j] += std::fabs(a * brow[j]);
            }
        }
}

/// A cuBLAS handle, by default in strict FP32 (CUBLAS_PEDANTIC_MATH: no tensor cores), and
/// sgemm(), the track's reference cuBLAS call: row-major C = A B. Lesson 08 derives the
/// order of its operands.
class Cublas {
  public:
    explicit Cublas(cublasMath_t mode = CUBLAS_PEDANTIC_MATH) {
        TUT_CUBLAS(cublasCreate(&handle_));
        TUT_CUBLAS(cublasSetMathMode(handle_, mode));
    }
    ~Cublas() { cublasDestroy(handle_); }
    Cublas(const Cublas&) = delete;
    Cublas& operator=(const Cublas&) = delete;
    void sgemm(int n, const float* A, const float* B, float* C) {
        const float one = 1.0f, zero = 0.0f;
        TUT_CUBLAS(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, B, n, A, n, &zero, C, n));
    }
    cublasHandle_t handle() { return handle_; }

  private:
    cublasHandle_t handle_ = nullptr;
};

/// The operands of one size: random A and B (host and device), and what a correct C must be near.
struct Operands {
    int n = 0;
    std::vector<float> A, B;
    DeviceBuffer<float> dA, dB;
    /// Reference C and the error scale |A||B|, element by element (host, double).
    std::vector<double> C_ref, scale;
    bool reference_is_fp32 = false;  ///< true when C_ref came from cuBLAS rather than the CPU in double

    Operands(int n_, uint64_t seed) : n(n_) {
        const size_t count = size_t(n) * n;
        A = random_vector<float>(count, seed);
        B = random_vector<float>(count, seed + 1);
        dA = DeviceBuffer<float>(A);
        dB = DeviceBuffer<float>(B);
    }

    /// Sizes up to this get the CPU reference in double; larger ones cuBLAS FP32.
    static constexpr int kCpuReferenceMaxN = 512;

    /// Computes C_ref and scale (once).
    void prepare_reference(Cublas& cublas) {
        if (!C_ref.empty()) return;
        if (n <= kCpuReferenceMaxN) {
            reference_cpu(n, A, B, C_ref, scale);
            return;
        }
        const size_t count = size_t(n) * n;
        DeviceBuffer<float> dC(count);
        cublas.sgemm(n, dA.get(), dB.get(), dC.get());
        std::vector<float> c = dC.download();
        C_ref.assign(c.begin(), c.end());
        std::vector<float> absA(count), absB(count);
        for (size_t i = 0; i < count; ++i) {
            absA[i] = std::fabs(A[i]);
            absB[i] = std::fabs(B[i]);
        }
        DeviceBuffer<float> dAbsA(absA), dAbsB(absB);
        cublas.sgemm(n, dAbsA.get(), dAbsB.get(), dC.get());
        std::vector<float> s = dC.download();
        scale.assign(s.begin(), s.end());
        reference_is_fp32 = true;
    }

    /// Compares a host result with the reference, for inputs of unit roundoff `input_roundoff`.
    Comparison check(const float* C, double input_roundoff) const {
        return compare(C, C_ref.data(), C_ref.size(), tolerance(n, input_roundoff, reference_is_fp32), scale.data());
    }
};

/// Refuses, with Unsupported, an n outside 1..kMaxN or whose three matrices (and the
/// reference's temporaries) would not fit on the GPU; returns n.
inline int require_fits(int n) {
    require_size(n);
    if (auto why = device_memory_shortfall(6 * size_t(n) * n * sizeof(float)); !why.empty())
        throw Unsupported("N = " + std::to_string(n) + " " + why);
    return n;
}

// ==== Lesson harness: options, problem, results ====

/// An SGEMM lesson's command line; a lesson adds its own to `cli` (13's --sweep). `only_n`:
/// the only sizes a lesson computes (03 compiles N in).
struct Options {
    explicit Options(const LessonInfo& info, int default_n = 4096, std::vector<int> only_sizes = {},
                     const std::string& summary = "Computes C = A*B for N x N row-major float matrices.")
        : cli(info.lesson, std::string(info.title) + "\n" + summary), lesson(info), n(default_n),
          only_n(std::move(only_sizes)) {
        cli.add_int("n", &n, only_n.empty() ? "matrix size N" : "matrix size N, one of" + sizes(), 1, kMaxN);
    }
    Options(const Options&) = delete;  // `cli` points at this object's fields
    Options& operator=(const Options&) = delete;
    /// tut::parse_lesson_options, where an --n not in `only_n` is bad input (exit 2).
    void parse(int argc, char** argv, const std::vector<std::string>& variant_names) {
        parse_lesson_options(cli, run, argc, argv, lesson, variant_names, [&] {
            if (!only_n.empty() && std::find(only_n.begin(), only_n.end(), n) == only_n.end())
                throw UsageError("--n " + std::to_string(n) + " is not supported; this lesson is compiled for N =" +
                                 sizes() + " only");
        });
    }

    Cli cli;
    LessonInfo lesson;
    RunOptions run;
    int n;
    std::vector<int> only_n;

  private:
    std::string sizes() const {
        std::string out;
        for (int s : only_n) out += " " + std::to_string(s);
        return out;
    }
};

/// The yardstick of lessons whose variants' inputs go through `a`.
inline const char* library_name(Arithmetic a) {
    return a == Arithmetic::tf32 ? "cublasSgemm TF32 (tensor cores)" : "cublasSgemm FP32 (pedantic)";
}

/// One SGEMM problem as a lesson measures it: A, B, the reference C, C, and the yardstick
/// (cuBLAS FP32 pedantic, or TF32 tensor cores) timed on the same matrices in the same run.
class Problem {
  public:
    Problem(const Bench& bench, int n, Arithmetic yardstick = Arithmetic::fp32)
        : operands_(require_fits(n), static_cast<uint64_t>(bench.run().seed)), c_(size_t(n) * n),
          yardstick_(yardstick) {
        const bool tf32 = yardstick == Arithmetic::tf32;
        peak_gflops_ = tf32 ? bench.device().tf32_peak_gflops : bench.device().fp32_peak_gflops;
        if (!bench.run().profile) {
            Cublas library(tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_PEDANTIC_MATH);
            NvtxRange range(std::string(bench.lesson().track) + "/" + bench.lesson().lesson + "/cublas");
            library_ms_ = time_gpu([&] { library.sgemm(n, operands_.dA.get(), operands_.dB.get(), c_.get()); },
                                   bench.timing())
                              .median_ms;
        }
        if (bench.run().check()) {
            Cublas fp32;  // the reference above the CPU's sizes
            operands_.prepare_reference(fp32);
        }
        title_ = fmt("\n%s/%s: %s  (N = %d, median of %d runs)\n", bench.lesson().track, bench.lesson().lesson,
                     bench.lesson().title, n, bench.run().repeats);
    }
    /// One run on poisoned C, compared with the reference for inputs in `arithmetic`.
    template <class R>
    Verdict check(const R& run, Arithmetic arithmetic = Arithmetic::fp32) {
        c_.poison();
        this->run(run);
        TUT_CUDA(cudaDeviceSynchronize());
        const Comparison cmp = operands_.check(c_.download().data(), input_roundoff(arithmetic));
        if (cmp.ok()) return passed(fmt("ok (%.1e)", cmp.rel_l2_error));
        return failed("N=" + std::to_string(operands_.n) + ": " + cmp.describe());
    }
    /// Runs `run` once (what the bench times).
    template <class R>
    void run(const R& run) {
        run(operands_.n, operands_.dA.get(), operands_.dB.get(), c_.get());
    }
    /// Prints the problem's title and returns the lesson's table.
    Table table() const {
        std::fputs(title_.c_str(), stdout);
        return Table({"variant", "regs", "smem B", "occ", "time ms", "GFLOP/s", "% cuBLAS", "% peak", "speedup",
                      "check"});
    }
    /// The record of `variant` at this size: GFLOP/s beside the yardstick's and the peak.
    Record record(const std::string& variant, const Timing& t, const Verdict& verdict) const {
        Record r;
        r.variant = variant;
        r.size = std::to_string(operands_.n);
        r.value = gflops(operands_.n, t.median_ms);
        r.unit = "GFLOP/s";
        r.time_ms = t.median_ms;
        r.library = library_name(yardstick_);
        r.library_value = gflops(operands_.n, library_ms_);
        r.peak = yardstick_ == Arithmetic::tf32 ? "TF32 tensor-core peak from clocks" : "FP32 peak from clocks";
        r.peak_value = peak_gflops_;
        r.checked = verdict.passed();
        return r;
    }
    /// v's rate beside the yardstick's and the peak, its resources, its speedup over the last row.
    template <class V>
    Result result(const V& v, const Timing& t, const Verdict& verdict, Arithmetic arithmetic = Arithmetic::fp32) {
        Result out{record(v.name, t, verdict), {}};
        Record& r = out.record;
        const Resources res = resources_of(v.kernel);
        r.extra.add("registers", res.registers).add("shared_bytes", static_cast<double>(res.shared_bytes));
        if (res.occupancy >= 0) r.extra.add("occupancy", res.occupancy);
        r.extra.add("check", verdict.cell);
        // TF32 is another arithmetic, not a step of the FP32 progression the tour's speedups follow.
        if (arithmetic == Arithmetic::tf32) r.extra.add("progression", false);
        if (arithmetic == Arithmetic::tf32 && yardstick_ == Arithmetic::tf32) r.extra.add("arithmetic", "TF32 tensor cores");
        auto known = [](long long x) { return x >= 0 ? std::to_string(x) : std::string("-"); };
        out.row = {v.name, known(res.registers), known(res.shared_bytes),
                   res.occupancy >= 0 ? percent(res.occupancy) : "-", fmt("%.3f", r.time_ms), fmt("%.0f", r.value),
                   percent(r.ratio_to_library()), percent(r.ratio_to_peak()),
                   std::isfinite(previous_ms_) ? fmt("%.2fx", previous_ms_ / r.time_ms) : "-", verdict.cell};
        previous_ms_ = r.time_ms;
        return out;
    }
    /// The yardstick's row ("-" for its time and rates under --profile, which does not run it).
    std::vector<std::string> library_row() const {
        const double rate = gflops(operands_.n, library_ms_);
        auto timed = [&](std::string cell) { return std::isfinite(library_ms_) ? cell : std::string("-"); };
        return {yardstick_ == Arithmetic::tf32 ? "cuBLAS TF32 (yardstick)" : "cuBLAS (reference)", "-", "-", "-",
                timed(fmt("%.3f", library_ms_)), timed(fmt("%.0f", rate)), timed("100.0%"),
                timed(percent(rate / peak_gflops_)), "-", "-"};
    }

  private:
    Operands operands_;
    DeviceBuffer<float> c_;
    Arithmetic yardstick_;
    double peak_gflops_ = NAN, library_ms_ = NAN, previous_ms_ = NAN;
    std::string title_;
};

/// The sizes of --sweep: tiles that fit and tiles that overhang, N % 4 != 0 too.
inline const std::vector<int> kSweepSizes{1024, 2048, 3000, 4096, 4097, 5000, 6144, 8192};

/// --sweep: the variant `name` checked and timed beside the yardstick at each of `sizes`,
/// outside the track's progression (not under --profile, nor where the variant cannot run).
template <class V>
void size_sweep(Bench& bench, const std::vector<V>& variants, const std::string& name, Arithmetic arithmetic,
                const std::vector<int>& sizes = kSweepSizes) {
    if (bench.run().profile) return;
    const auto v = std::find_if(variants.begin(), variants.end(), [&](const V& x) { return x.name == name; });
    if (v == variants.end()) throw std::logic_error("sweep variant '" + name + "' is not in the lesson");
    const DeviceFacts& dev = bench.device();
    if (const std::string need = unmet_need(*v, dev.cc_major * 10 + dev.cc_minor, dev.shared_per_block_optin);
        !need.empty()) {
        std::printf("%s: size sweep skipped: %s\n", bench.lesson().lesson, need.c_str());
        return;
    }
    std::printf("\n%s/%s: size sweep of '%s' against %s (median of %d runs)\n", bench.lesson().track,
                bench.lesson().lesson, name.c_str(), library_name(arithmetic), bench.run().repeats);
    Table table({"N", "time ms", "GFLOP/s", "library GFLOP/s", "% library", "% peak", "check"});
    for (int n : sizes) {
        if (auto why = device_memory_shortfall(6 * size_t(n) * n * sizeof(float)); !why.empty()) {
            std::printf("N = %d skipped: %s\n", n, why.c_str());
            continue;
        }
        Problem problem(bench, n, arithmetic);
        const Verdict verdict = bench.check(name, [&] { return problem.check(v->run, arithmetic); });
        const Timing timing = bench.time(name, [&] { problem.run(v->run); });
        Result res{problem.record(name, timing, verdict), {}};
        const Record& r = res.record;
        res.record.extra.add("progression", false).add("sweep", true).add("check", verdict.cell);
        table.add_row({std::to_string(n), fmt("%.3f", r.time_ms), fmt("%.0f", r.value), fmt("%.0f", r.library_value),
                       percent(r.ratio_to_library()), percent(r.ratio_to_peak()), verdict.cell});
        bench.record(res);
    }
    table.print();
}

}  // namespace tut::sgemm
