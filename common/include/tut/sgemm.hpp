/// @file sgemm.hpp
/// @brief The SGEMM track's shared plumbing: the variant interface, references,
/// tolerance, and the driver every SGEMM lesson's main() calls.
///
/// Conventions for the whole track:
/// - C = A * B with A, B, C square N x N single-precision matrices, **row-major**:
///   element (i, j) is at `M[i * N + j]` (the course slides' `IX(i,j)`).
///   Row i of C is computed from row i of A and column j of B.
/// - A lesson lists its kernels as tut::sgemm::Variant, made by kernel_variant() (one
///   kernel of the lesson and the host function that launches it) or library_variant()
///   (a library call). The host function `run(n, A, B, C)` takes device pointers and
///   must throw tut::Unsupported, before launching anything, for an n it cannot compute.
/// - Lesson 02, which is about getting the data there and back, lists whole
///   host-to-host pipelines instead: tut::sgemm::HostVariant, run by host_lesson_main().
/// - All lessons support 1 <= N <= kMaxN unless their README says otherwise.
#pragma once

#include "buffer.hpp"
#include "check.hpp"
#include "compare.hpp"
#include "lesson.hpp"
#include "nvtx.hpp"
#include "random.hpp"
#include "report.hpp"
#include "timer.hpp"

#include "check_cublas.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <stdexcept>
#include <vector>

namespace tut::sgemm {

/// Largest N any SGEMM lesson claims: 3 matrices of 256 MiB, and n*n far from the
/// 32-bit index limit (46340^2). The checks run every lesson at this size.
inline constexpr int kMaxN = 8192;

/// Computes C = A * B for n x n row-major device matrices. Throws tut::Unsupported for an unsupported n.
using Launcher = void (*)(int n, const float* A, const float* B, float* C);

/// One way of computing C = A * B that a lesson times and checks. Make one with
/// kernel_variant() or library_variant(), then set the optional fields by name.
struct Variant {
    std::string name;              ///< e.g. "tile=16"; unique within the lesson
    Launcher run = nullptr;        ///< computes C = A * B on the device
    const void* kernel = nullptr;  ///< the kernel, for the registers / shared memory report (optional)
    /// Unit roundoff of the inputs as the hardware sees them: 0 for FP32,
    /// 2^-11 for TF32 tensor cores (10 explicit mantissa bits).
    double input_roundoff = 0;
    /// Oldest GPU the variant runs on, as major * 10 + minor (80 for sm_80); 0: any.
    /// On an older GPU the driver and the checks skip it and say why.
    int min_compute_capability = 0;
    const char* needs = "";  ///< what the older GPUs lack, for that message (e.g. "TF32 tensor cores")
    /// Threads per block and dynamic shared memory of `kernel`'s launch, for the occupancy
    /// column (0 threads: occupancy not reported). Set them with launch_shape().
    int block_threads = 0;
    size_t dynamic_shared_bytes = 0;
};

/// `v` with its launch shape recorded, so the lesson's table can show the occupancy.
inline Variant launch_shape(Variant v, int block_threads, size_t dynamic_shared_bytes = 0) {
    v.block_threads = block_threads;
    v.dynamic_shared_bytes = dynamic_shared_bytes;
    return v;
}

/// A variant that runs one kernel of the lesson: `run` launches it, `kernel` is the
/// kernel itself (its registers and shared memory appear in the lesson's table).
template <class Kernel>
Variant kernel_variant(const std::string& name, Launcher run, Kernel* kernel) {
    Variant v;
    v.name = name;
    v.run = run;
    v.kernel = reinterpret_cast<const void*>(kernel);  // the runtime identifies a kernel by its host stub's address
    return v;
}

/// A variant that calls a library: there is no kernel of ours to report.
inline Variant library_variant(const std::string& name, Launcher run) {
    Variant v;
    v.name = name;
    v.run = run;
    return v;
}

/// The most dynamic shared memory one block may ask for on the current GPU (the opt-in
/// limit); 0 when there is no GPU to ask.
inline size_t max_dynamic_shared_per_block() {
    int bytes = 0;
    return read_device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, bytes) ? static_cast<size_t>(bytes) : 0;
}

/// True when `v` can run on a GPU of this compute capability (major * 10 + minor) whose
/// blocks may have `shared_per_block` bytes of dynamic shared memory (0: not known, not
/// checked; a variant's own need is its launch shape's dynamic_shared_bytes).
inline bool runs_on(const Variant& v, int compute_capability, size_t shared_per_block = 0) {
    return compute_capability >= v.min_compute_capability &&
           (shared_per_block == 0 || v.dynamic_shared_bytes <= shared_per_block);
}

/// What `v` needs that such a GPU lacks (empty when it runs there), e.g. "needs compute
/// capability 8.0 or newer (TF32 tensor cores); this GPU is 7.5". The words "needs compute
/// capability X.Y" are the ones the grader (scripts/grade.py) reads as the reason for a skip.
inline std::string unmet_need(const Variant& v, int compute_capability, size_t shared_per_block = 0) {
    if (runs_on(v, compute_capability, shared_per_block)) return {};
    if (compute_capability < v.min_compute_capability) {
        const int need = v.min_compute_capability;
        return "needs compute capability " + std::to_string(need / 10) + "." + std::to_string(need % 10) +
               " or newer (" + v.needs + "); this GPU is " + std::to_string(compute_capability / 10) + "." +
               std::to_string(compute_capability % 10);
    }
    return "needs " + std::to_string(v.dynamic_shared_bytes / 1024) +
           " KB of shared memory per block; this GPU offers " + std::to_string(shared_per_block / 1024) + " KB";
}

/// Why `v` does not run on such a GPU (empty when it does).
inline std::string why_skipped(const Variant& v, int compute_capability, size_t shared_per_block = 0) {
    const std::string need = unmet_need(v, compute_capability, shared_per_block);
    return need.empty() ? need : "skipped: " + need;
}

/// One line "variant 'name' needs ..." for each of `variants` that such a GPU cannot run;
/// empty when it runs them all. The checks skip a lesson whose list is not empty.
inline std::string unmet_needs(const std::vector<Variant>& variants, int compute_capability,
                               size_t shared_per_block = 0) {
    std::string out;
    for (const Variant& v : variants)
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

/// Allowed error per element, as a multiple of (|A| |B|)_ij = sum_k |a_ik b_kj|.
///
/// FP32 accumulation of a length-n dot product: the probabilistic bound of Higham and
/// Mary (SIAM J. Sci. Comput. 41(5), 2019) gives |error| <= lambda sqrt(n) u (|A||B|)_ij
/// with high probability, u = 2^-24; we take lambda = 4. Against an FP32 reference
/// (cuBLAS) both sides carry such an error, hence the factor 2. TF32 inputs add a
/// deterministic 2 u_in per product (each factor rounded once).
inline double tolerance(int n, const Variant& v, bool reference_is_fp32) {
    const double u = std::ldexp(1.0, -24);
    return 2.0 * v.input_roundoff + 4.0 * std::sqrt(double(n)) * u * (reference_is_fp32 ? 2.0 : 1.0);
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

/// Reference data for one size: random A and B, and what a correct C must be near.
struct Problem {
    int n = 0;
    std::vector<float> A, B;
    DeviceBuffer<float> dA, dB;
    /// Reference C and the error scale |A||B|, element by element (host, double).
    std::vector<double> C_ref, scale;
    bool reference_is_fp32 = false;  ///< true when C_ref came from cuBLAS rather than the CPU in double

    Problem(int n_, uint64_t seed) : n(n_) {
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

    /// Compares a device result with the reference.
    Comparison check(const Variant& v, const DeviceBuffer<float>& dC) const {
        std::vector<float> c = dC.download();
        return compare(c.data(), C_ref.data(), c.size(), tolerance(n, v, reference_is_fp32), scale.data());
    }
};

/// Lets `kernel` launch with `bytes` of dynamic shared memory: above 48 KB a kernel must ask
/// (cudaFuncAttributeMaxDynamicSharedMemorySize). Asks once per kernel, and again only for
/// more, so a launcher may call it before every launch. Lessons launch from one thread.
inline void allow_dynamic_shared_memory(const void* kernel, size_t bytes) {
    static std::map<const void*, size_t> granted;
    size_t& already = granted[kernel];
    if (bytes <= already) return;
    TUT_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
    already = bytes;
}

template <class Kernel>
void allow_dynamic_shared_memory(Kernel* kernel, size_t bytes) {
    allow_dynamic_shared_memory(reinterpret_cast<const void*>(kernel), bytes);
}

/// What a variant's kernel uses of an SM; -1 where unknown (a library call, or no launch shape).
struct KernelResources {
    int registers = -1;          ///< per thread
    long long shared_bytes = -1;  ///< per block, static plus dynamic
    double occupancy = -1;       ///< resident warps per SM / the SM's maximum, from the occupancy calculator
};

inline KernelResources kernel_resources(const Variant& v) {
    KernelResources r;
    if (!v.kernel) return r;
    cudaFuncAttributes attr{};
    TUT_CUDA(cudaFuncGetAttributes(&attr, v.kernel));
    r.registers = attr.numRegs;
    r.shared_bytes = static_cast<long long>(attr.sharedSizeBytes + v.dynamic_shared_bytes);
    if (v.block_threads > 0) {
        allow_dynamic_shared_memory(v.kernel, v.dynamic_shared_bytes);  // the calculator needs it too
        int blocks = 0, device = 0, max_threads = 0;
        TUT_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, v.kernel, v.block_threads,
                                                               v.dynamic_shared_bytes));
        TUT_CUDA(cudaGetDevice(&device));
        TUT_CUDA(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor, device));
        r.occupancy = double(blocks) * v.block_threads / max_threads;
    }
    return r;
}

/// What a lesson's main() may change in the driver; each field has a default.
struct MainOptions {
    int default_n = 4096;  ///< --n when none is given
    /// When not empty, the only sizes the lesson computes (lesson 03 compiles N in); any
    /// other --n is a usage error (exit 2) before the GPU is touched.
    std::vector<int> supported_n;
    /// When set, runs once the table is printed (lesson 08's accuracy study, lesson 02's
    /// copy bandwidth); its return value becomes the exit code when every check passed.
    std::function<int(const RunOptions& run, int n)> after;
    /// When set, the lesson takes --sweep: after the table, this variant and cuBLAS are timed
    /// and checked at each of sweep_sizes (tiles that fit and tiles that overhang, N % 4 != 0
    /// too), one record per size, outside the track's progression.
    std::string sweep_variant;
    std::vector<int> sweep_sizes{1024, 2048, 3000, 4096, 4097, 5000, 6144, 8192};
    /// The yardstick of the "% library" column: false, cuBLAS in FP32 (pedantic: CUDA cores);
    /// true, cuBLAS with TF32 tensor cores (the tensor-core lessons), and "% peak" is then
    /// the TF32 tensor-core peak. The checks' reference stays FP32 either way.
    bool tf32_library = false;
    /// When not 0, the only GPU the lesson runs on (major * 10 + minor): code built for an
    /// "a" target such as sm_90a (wgmma, TMA) runs on that architecture alone. Elsewhere the
    /// lesson checks its arguments, says what it needs and exits with the skip code.
    int only_compute_capability = 0;
    const char* only_because = "";  ///< what that GPU has, for the message (e.g. "wgmma and TMA")
};

/// What a lesson's times are measured against: cuBLAS in FP32 (pedantic) or with TF32
/// tensor cores (MainOptions::tf32_library), and the matching peak from clocks.
struct Yardstick {
    Cublas library;
    std::string name, peak_name;
    double peak_gflops;
    Yardstick(bool tf32, const DeviceFacts& dev)
        : library(tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_PEDANTIC_MATH),
          name(tf32 ? "cublasSgemm TF32 (tensor cores)" : "cublasSgemm FP32 (pedantic)"),
          peak_name(tf32 ? "TF32 tensor-core peak from clocks" : "FP32 peak from clocks"),
          peak_gflops(tf32 ? dev.tf32_peak_gflops : dev.fp32_peak_gflops) {}
};

/// Runs `v` once on `p` (C poisoned first) and compares it with the reference: the verdict
/// for the table, "ok (error)" or "FAILED"; a failure is described on stderr and clears `all_ok`.
inline std::string check_run(const LessonInfo& info, const Variant& v, const Problem& p, DeviceBuffer<float>& dC,
                             bool& all_ok) {
    dC.poison();
    v.run(p.n, p.dA.get(), p.dB.get(), dC.get());
    TUT_CUDA(cudaDeviceSynchronize());
    const Comparison c = p.check(v, dC);
    if (c.ok()) return fmt("ok (%.1e)", c.rel_l2_error);
    all_ok = false;
    std::fprintf(stderr, "%s [%s] N=%d: %s\n", info.lesson, v.name.c_str(), p.n, c.describe().c_str());
    return "FAILED";
}

/// The record of one timed variant at size n, beside the yardstick's rate in the same run.
inline Record timed_record(const LessonInfo& info, const Variant& v, int n, double ms, const Yardstick& yardstick,
                           double library_gflops, bool checked) {
    Record r;
    r.track = info.track;
    r.lesson = info.lesson;
    r.variant = v.name;
    r.size = std::to_string(n);
    r.value = gflops(n, ms);
    r.unit = "GFLOP/s";
    r.time_ms = ms;
    r.library = yardstick.name;
    r.library_value = library_gflops;
    r.peak = yardstick.peak_name;
    r.peak_value = yardstick.peak_gflops;
    r.checked = checked;
    return r;
}

/// The --sweep table: `v` against the yardstick, both timed in this run, at each size.
inline bool size_sweep(const LessonInfo& info, const RunOptions& run, const Variant& v, const std::vector<int>& sizes,
                       Yardstick& yardstick, Cublas& reference) {
    std::printf("\n%s/%s: size sweep of '%s' against %s (median of %d runs)\n", info.track, info.lesson,
                v.name.c_str(), yardstick.name.c_str(), run.repeats);
    Table table({"N", "time ms", "GFLOP/s", "library GFLOP/s", "% library", "% peak", "check"});
    const TimingOptions timing{run.warmup, run.repeats, false};
    bool all_ok = true;
    for (int n : sizes) {
        if (auto why = device_memory_shortfall(6 * size_t(n) * n * sizeof(float)); !why.empty()) {
            std::printf("N = %d skipped: %s\n", n, why.c_str());
            continue;
        }
        Problem p(n, static_cast<uint64_t>(run.seed) + n);
        DeviceBuffer<float> dC(size_t(n) * n);
        const double library_ms =
            time_gpu([&] { yardstick.library.sgemm(n, p.dA.get(), p.dB.get(), dC.get()); }, timing).median_ms;
        std::string verdict = "skipped";
        if (run.check()) {
            p.prepare_reference(reference);
            verdict = check_run(info, v, p, dC, all_ok);
        }
        const Timing t = time_gpu([&] { v.run(n, p.dA.get(), p.dB.get(), dC.get()); }, timing);
        Record r = timed_record(info, v, n, t.median_ms, yardstick, gflops(n, library_ms),
                                run.check() && verdict != "FAILED");
        r.extra.add("progression", false).add("sweep", true).add("check", verdict);
        table.add_row({std::to_string(n), fmt("%.3f", t.median_ms), fmt("%.0f", r.value),
                       fmt("%.0f", r.library_value), percent(r.ratio_to_library()), percent(r.ratio_to_peak()),
                       verdict});
        append_record(info.lesson, run.json, r);
    }
    table.print();
    return all_ok;
}

/// The main() of every SGEMM lesson: parse options, run the cuBLAS baseline and each
/// variant, check it, time it, print the table and append JSON records. A variant that
/// needs a newer GPU is listed as skipped, with the reason; when no selected variant ran,
/// the program exits with kSkipExitCode (a run that measured nothing has not succeeded).
inline int lesson_main(int argc, char** argv, const LessonInfo& info, const std::vector<Variant>& variants,
                       const MainOptions& options = {}) {
    const std::vector<int>& supported_n = options.supported_n;
    Cli cli(info.lesson, std::string(info.title) + "\nComputes C = A*B for N x N row-major float matrices.");
    int n = options.default_n;
    std::string sizes_text;
    for (int s : supported_n) sizes_text += " " + std::to_string(s);
    cli.add_int("n", &n, supported_n.empty() ? "matrix size N" : "matrix size N, one of" + sizes_text, 1, kMaxN);
    RunOptions run;
    add_run_options(cli, run);
    bool sweep = false;
    if (!options.sweep_variant.empty())
        cli.add_flag("sweep", &sweep, "after the table, time '" + options.sweep_variant +
                                          "' against cuBLAS at N = 1024 .. 8192 (multiples of the tile and not)");
    cli.parse_or_exit(argc, argv);
    finish_run_options(run);
    if (!supported_n.empty() && std::find(supported_n.begin(), supported_n.end(), n) == supported_n.end()) {
        std::fprintf(stderr, "%s: error: --n %d is not supported; this lesson is compiled for N =%s only\n\n%s",
                     info.lesson, n, sizes_text.c_str(), cli.usage().c_str());
        return kUsageExitCode;
    }
    if (!variant_is_known(info.lesson, run.variant, variants)) return kUsageExitCode;
    require_gpu(info.lesson);
    if (const int only = options.only_compute_capability; only != 0 && compute_capability() != only) {
        const int cc = compute_capability();
        std::fprintf(stderr, "%s: skipped: needs a compute capability %d.%d GPU (%s); this GPU is %d.%d\n",
                     info.lesson, only / 10, only % 10, options.only_because, cc / 10, cc % 10);
        return kSkipExitCode;
    }

    return guarded_main(info.lesson, [&] {
        const DeviceFacts dev = device_facts();
        print_device_banner(dev);
        const int cc = dev.cc_major * 10 + dev.cc_minor;
        const size_t shared = dev.shared_per_block_optin;  // what a variant may ask for (runs_on)
        const size_t count = size_t(n) * n;
        if (auto why = device_memory_shortfall(6 * count * sizeof(float)); !why.empty())
            throw Unsupported("N = " + std::to_string(n) + " " + why);

        Problem p(n, static_cast<uint64_t>(run.seed));
        DeviceBuffer<float> dC(count);
        Cublas cublas;  // FP32: the reference of the checks
        Yardstick yardstick(options.tf32_library, dev);
        const TimingOptions timing{run.warmup, run.repeats, false};

        double library_gflops = NAN;
        if (!run.profile) {
            NvtxRange range(std::string(info.track) + "/" + info.lesson + "/cublas");
            Timing t = time_gpu([&] { yardstick.library.sgemm(n, p.dA.get(), p.dB.get(), dC.get()); }, timing);
            library_gflops = gflops(n, t.median_ms);
        }
        if (run.check()) p.prepare_reference(cublas);

        std::printf("\n%s/%s: %s  (N = %d, median of %d runs)\n", info.track, info.lesson, info.title, n, run.repeats);
        Table table({"variant", "regs", "smem B", "occ", "time ms", "GFLOP/s", "% cuBLAS", "% peak", "speedup",
                     "check"});
        bool all_ok = true;
        int ran = 0;
        double previous_ms = NAN;
        for (const Variant& v : variants) {
            if (!run.variant.empty() && v.name != run.variant) continue;
            if (!runs_on(v, cc, shared)) {
                const std::string why = why_skipped(v, cc, shared);
                table.add_row({v.name, "-", "-", "-", "-", "-", "-", "-", "-", "skipped"});
                std::printf("%s [%s]: %s\n", info.lesson, v.name.c_str(), why.c_str());
                continue;
            }
            ++ran;
            const std::string range_name = std::string(info.track) + "/" + info.lesson + "/" + v.name;
            const std::string verdict = run.check() ? check_run(info, v, p, dC, all_ok) : "skipped";
            Timing t;
            {
                NvtxRange range(range_name);
                t = time_gpu([&] { v.run(n, p.dA.get(), p.dB.get(), dC.get()); }, timing);
            }
            const KernelResources res = kernel_resources(v);
            Record r = timed_record(info, v, n, t.median_ms, yardstick, library_gflops,
                                    run.check() && verdict != "FAILED");
            r.extra.add("registers", res.registers).add("shared_bytes", static_cast<double>(res.shared_bytes));
            if (res.occupancy >= 0) r.extra.add("occupancy", res.occupancy);
            r.extra.add("check", verdict);
            // TF32 runs on the tensor cores: a different arithmetic, not a step of the FP32
            // progression the tour's speedups follow (and beyond the FP32 peak).
            if (v.input_roundoff > 0) r.extra.add("progression", false);
            if (v.input_roundoff > 0 && options.tf32_library) r.extra.add("arithmetic", "TF32 tensor cores");
            table.add_row({v.name, res.registers >= 0 ? std::to_string(res.registers) : "-",
                           res.shared_bytes >= 0 ? std::to_string(res.shared_bytes) : "-",
                           res.occupancy >= 0 ? percent(res.occupancy) : "-", fmt("%.3f", t.median_ms),
                           fmt("%.0f", r.value), percent(r.ratio_to_library()), percent(r.ratio_to_peak()),
                           std::isfinite(previous_ms) ? fmt("%.2fx", previous_ms / t.median_ms) : "-", verdict});
            previous_ms = t.median_ms;
            append_record(info.lesson, run.json, r);
        }
        if (std::isfinite(library_gflops))
            table.add_row({options.tf32_library ? "cuBLAS TF32 (yardstick)" : "cuBLAS (reference)", "-", "-", "-",
                           fmt("%.3f", gflops(n, 1.0) / library_gflops * 1.0), fmt("%.0f", library_gflops), "100.0%",
                           percent(library_gflops / yardstick.peak_gflops), "-", "-"});
        table.print();
        if (ran == 0) {
            std::fflush(stdout);  // the reasons above, before this line on stderr
            std::fprintf(stderr,
                         "%s: skipped: no selected variant runs on this GPU (the reasons are above). Exit code %d "
                         "means skipped.\n",
                         info.lesson, kSkipExitCode);
            return kSkipExitCode;
        }
        if (sweep && !run.profile) {
            const Variant* v = nullptr;
            for (const Variant& candidate : variants)
                if (candidate.name == options.sweep_variant) v = &candidate;
            if (!v) throw std::logic_error("sweep variant '" + options.sweep_variant + "' is not in the lesson");
            if (runs_on(*v, cc, shared))
                all_ok = size_sweep(info, run, *v, options.sweep_sizes, yardstick, cublas) && all_ok;
            else
                std::printf("%s: size sweep skipped: %s\n", info.lesson, why_skipped(*v, cc, shared).c_str());
        }
        if (!all_ok) return 1;
        return options.after ? options.after(run, n) : 0;
    });
}

// ---------------------------------------------------------------------------------------
// Host-to-host pipelines (lesson 02): the lesson owns allocation and transfers, and the
// measure is the wall clock of the whole job, not the kernel alone.

/// Wall-clock milliseconds of each stage of one host-to-host SGEMM pipeline.
struct PipelineTimes {
    double allocate = 0;  ///< host and device buffers
    double fill = 0;      ///< the host writes A and B into the pipeline's input buffers
    double to_gpu = 0;    ///< copies (or prefetches) of the inputs to the GPU
    double kernel = 0;    ///< the SGEMM kernel, page faults included for managed memory
    double to_host = 0;   ///< the copy (or prefetch) of C back to the host
    double read = 0;      ///< the host reads C out of the pipeline's output buffer
    double release = 0;   ///< freeing everything
    double total() const { return allocate + fill + to_gpu + kernel + to_host + read + release; }
};

/// Times consecutive pipeline stages with the host clock. lap() waits for all GPU work
/// (cudaDeviceSynchronize) and returns the milliseconds since the previous lap() (or since
/// the clock was made), so asynchronous work counts in the stage that enqueued it. A
/// pipeline calls it whether or not it is timed, so it behaves the same either way.
class StageClock {
  public:
    StageClock() : last_(Clock::now()) {}
    double lap() {
        TUT_CUDA(cudaDeviceSynchronize());
        const Clock::time_point now = Clock::now();
        const double ms = std::chrono::duration<double, std::milli>(now - last_).count();
        last_ = now;
        return ms;
    }

  private:
    using Clock = std::chrono::steady_clock;
    Clock::time_point last_;
};

/// Computes C = A * B for n x n row-major matrices in ordinary (pageable) HOST memory,
/// doing the whole job: allocate, fill, move, compute, move back, read, free. `times`
/// (may be null) receives each stage's wall time. Throws tut::Unsupported, before
/// allocating anything, for an n it cannot compute or that would not fit on the GPU.
using HostLauncher = void (*)(int n, const float* A, const float* B, float* C, PipelineTimes* times);

struct HostVariant {
    std::string name;  ///< e.g. "explicit pinned"; unique within the lesson
    HostLauncher run = nullptr;
};

/// A pipeline of lesson 02: `run` does the whole host-to-host job.
inline HostVariant host_variant(const std::string& name, HostLauncher run) {
    HostVariant v;
    v.name = name;
    v.run = run;
    return v;
}

/// The main() of a host-pipeline lesson: like lesson_main(), but each variant is timed
/// with the host clock around its whole pipeline (median of --repeats; the stage columns
/// are those of the median run), and checked on the host against the same references.
/// The cuBLAS kernel alone is the library figure: what the arithmetic costs at best.
/// `options.after` (lesson 02: the copy bandwidth) runs after the table in every run.
inline int host_lesson_main(int argc, char** argv, const LessonInfo& info, const std::vector<HostVariant>& variants,
                            const MainOptions& options = {}) {
    Cli cli(info.lesson, std::string(info.title) +
                             "\nComputes C = A*B for N x N row-major float matrices held in host memory, "
                             "timing the whole job by the wall clock.");
    int n = options.default_n;
    cli.add_int("n", &n, "matrix size N", 1, kMaxN);
    RunOptions run;
    run.warmup = 1;   // a pipeline takes tenths of a second: one untimed run loads the module and warms the driver
    run.repeats = 5;
    add_run_options(cli, run);
    cli.parse_or_exit(argc, argv);
    finish_run_options(run);
    if (!variant_is_known(info.lesson, run.variant, variants)) return kUsageExitCode;
    require_gpu(info.lesson);

    return guarded_main(info.lesson, [&] {
        const DeviceFacts dev = device_facts();
        print_device_banner(dev);
        const size_t count = size_t(n) * n;
        // The reference's inputs and temporaries on the device, plus one pipeline's three matrices.
        if (auto why = device_memory_shortfall(6 * count * sizeof(float)); !why.empty())
            throw Unsupported("N = " + std::to_string(n) + " " + why);

        Problem p(n, static_cast<uint64_t>(run.seed));
        Cublas cublas;
        double library_ms = NAN;
        if (!run.profile) {
            DeviceBuffer<float> dC(count);
            NvtxRange range(std::string(info.track) + "/" + info.lesson + "/cublas");
            library_ms = time_gpu([&] { cublas.sgemm(n, p.dA.get(), p.dB.get(), dC.get()); },
                                  TimingOptions{3, 10, false})
                             .median_ms;
        }
        if (run.check()) p.prepare_reference(cublas);
        const double tol = tolerance(n, Variant{}, p.reference_is_fp32);

        std::printf("\n%s/%s: %s  (N = %d, wall clock, median of %d runs)\n", info.track, info.lesson, info.title, n,
                    run.repeats);
        Table table({"pipeline", "alloc", "fill", "to GPU", "kernel", "to host", "read", "free", "wall ms",
                     "GFLOP/s", "vs first", "check"});
        std::vector<float> hC(count);
        bool all_ok = true;
        double first_ms = NAN;
        for (const HostVariant& v : variants) {
            if (!run.variant.empty() && v.name != run.variant) continue;
            std::string verdict = "skipped";
            PipelineTimes median;
            try {
                if (run.check()) {
                    std::fill(hC.begin(), hC.end(), std::numeric_limits<float>::quiet_NaN());
                    v.run(n, p.A.data(), p.B.data(), hC.data(), nullptr);
                    Comparison c = compare(hC.data(), p.C_ref.data(), count, tol, p.scale.data());
                    verdict = c.ok() ? fmt("ok (%.1e)", c.rel_l2_error) : "FAILED";
                    if (!c.ok()) {
                        all_ok = false;
                        std::fprintf(stderr, "%s [%s] N=%d: %s\n", info.lesson, v.name.c_str(), n, c.describe().c_str());
                    }
                }
                for (int i = 0; i < run.warmup; ++i) v.run(n, p.A.data(), p.B.data(), hC.data(), nullptr);
                std::vector<PipelineTimes> samples(std::max(1, run.repeats));
                {
                    NvtxRange range(std::string(info.track) + "/" + info.lesson + "/" + v.name);
                    for (PipelineTimes& t : samples) v.run(n, p.A.data(), p.B.data(), hC.data(), &t);
                }
                std::sort(samples.begin(), samples.end(),
                          [](const PipelineTimes& a, const PipelineTimes& b) { return a.total() < b.total(); });
                median = samples[samples.size() / 2];
            } catch (const Unsupported& e) {
                // e.g. a GPU or OS that cannot prefetch managed memory: say so, go on with the others
                table.add_row({v.name, "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "unsupported"});
                std::fprintf(stderr, "%s [%s]: unsupported: %s\n", info.lesson, v.name.c_str(), e.what());
                continue;
            }
            const double wall_ms = median.total();
            if (!std::isfinite(first_ms)) first_ms = wall_ms;
            Record r;
            r.track = info.track;
            r.lesson = info.lesson;
            r.variant = v.name;
            r.size = std::to_string(n);
            r.value = gflops(n, wall_ms);
            r.unit = "GFLOP/s";
            r.time_ms = wall_ms;
            r.library = "cublasSgemm FP32 (pedantic), kernel only";
            r.library_value = gflops(n, library_ms);
            r.peak = "FP32 peak from clocks";
            r.peak_value = dev.fp32_peak_gflops;
            r.checked = run.check() && verdict != "FAILED";
            r.extra.add("progression", false);  // the whole pipeline's wall time, not a kernel's
            r.extra.add("timing", "host wall clock of the whole pipeline (allocate, fill, copy in, kernel, copy out, "
                                  "read, free)")
                .add("allocate_ms", median.allocate)
                .add("fill_ms", median.fill)
                .add("to_gpu_ms", median.to_gpu)
                .add("kernel_ms", median.kernel)
                .add("to_host_ms", median.to_host)
                .add("read_ms", median.read)
                .add("free_ms", median.release)
                .add("check", verdict);
            auto ms = [](double x) { return fmt("%.2f", x); };
            table.add_row({v.name, ms(median.allocate), ms(median.fill), ms(median.to_gpu), ms(median.kernel),
                           ms(median.to_host), ms(median.read), ms(median.release), ms(wall_ms), fmt("%.0f", r.value),
                           fmt("%.2fx", first_ms / wall_ms), verdict});
            append_record(info.lesson, run.json, r);
        }
        if (std::isfinite(library_ms))
            table.add_row({"cuBLAS kernel alone", "-", "-", "-", fmt("%.2f", library_ms), "-", "-", "-", "-",
                           fmt("%.0f", gflops(n, library_ms)), "-", "-"});
        table.print();
        std::printf("Stages in ms, each ended by cudaDeviceSynchronize; 'vs first' = first pipeline's wall time / "
                    "this one's.\n");
        const int after_code = options.after ? options.after(run, n) : 0;
        return all_ok ? after_code : 1;
    });
}

}  // namespace tut::sgemm

namespace lesson {
/// Defined by each SGEMM lesson (lessons/sgemm/*/ and solutions/sgemm/*/); the checks call it.
std::vector<tut::sgemm::Variant> sgemm_variants();
/// Defined by the SGEMM lessons whose variants take host matrices (lesson 02).
std::vector<tut::sgemm::HostVariant> sgemm_host_variants();
}  // namespace lesson
