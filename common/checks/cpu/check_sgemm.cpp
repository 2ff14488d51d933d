// CPU checks of the SGEMM track's plumbing (common/include/tut/sgemm.hpp): how lessons
// describe their variants, which GPUs a variant runs on, the CPU reference and the
// tolerance. No GPU needed: nothing here launches anything.
#include "catch.hpp"
#include "tut/sgemm.hpp"

#include <cmath>
#include <string>
#include <vector>

namespace sg = tut::sgemm;

namespace {
// Stand-ins for a lesson's kernel and launcher: only their addresses are used.
void fake_kernel(int, const float*, const float*, float*) {}
void fake_launcher(int, const float*, const float*, float*) {}
}  // namespace

TEST_CASE("sgemm: kernel_variant and library_variant fill the fields a lesson leaves out", "[sgemm]") {
    const sg::Variant k = sg::kernel_variant("tile=16", fake_launcher, fake_kernel);
    CHECK(k.name == "tile=16");
    CHECK(k.run == &fake_launcher);
    CHECK(k.kernel == reinterpret_cast<const void*>(&fake_kernel));
    CHECK(k.input_roundoff == 0);
    CHECK(k.min_compute_capability == 0);
    CHECK(k.block_threads == 0);  // no launch shape: no occupancy column
    CHECK(k.dynamic_shared_bytes == 0);

    const sg::Variant shaped = sg::launch_shape(k, 256, 49664);
    CHECK(shaped.name == "tile=16");
    CHECK(shaped.block_threads == 256);
    CHECK(shaped.dynamic_shared_bytes == 49664);

    const sg::Variant lib = sg::library_variant("fp32", fake_launcher);
    CHECK(lib.name == "fp32");
    CHECK(lib.run == &fake_launcher);
    CHECK(lib.kernel == nullptr);  // no registers or shared memory to report
    CHECK(lib.input_roundoff == 0);
}

TEST_CASE("sgemm: a variant that needs a newer GPU is skipped, and says why", "[sgemm]") {
    sg::Variant tf32 = sg::library_variant("tf32", fake_launcher);
    tf32.min_compute_capability = 80;
    tf32.needs = "TF32 tensor cores";
    CHECK(sg::runs_on(tf32, 80));
    CHECK(sg::runs_on(tf32, 120));
    CHECK_FALSE(sg::runs_on(tf32, 75));
    CHECK(sg::why_skipped(tf32, 90).empty());
    const std::string why = sg::why_skipped(tf32, 75);
    CHECK(why.find("TF32 tensor cores") != std::string::npos);
    CHECK(why.find("8.0") != std::string::npos);
    CHECK(why.find("7.5") != std::string::npos);

    const sg::Variant any = sg::kernel_variant("naive", fake_launcher, fake_kernel);
    CHECK(sg::runs_on(any, 75));
    CHECK(sg::runs_on(any, 0));  // no GPU at all: nothing to skip for the variant's sake
}

TEST_CASE("sgemm: a variant that needs more shared memory per block than the GPU offers is skipped, and says why",
          "[sgemm]") {
    sg::Variant big = sg::launch_shape(sg::kernel_variant("4 stages", fake_launcher, fake_kernel), 256, 200 * 1024);
    CHECK(sg::runs_on(big, 90, 227 * 1024));
    CHECK(sg::runs_on(big, 90, 200 * 1024));
    CHECK_FALSE(sg::runs_on(big, 80, 163 * 1024));
    CHECK(sg::runs_on(big, 80));  // the limit not known: not checked
    CHECK(sg::why_skipped(big, 90, 227 * 1024).empty());
    const std::string why = sg::why_skipped(big, 80, 163 * 1024);
    CHECK(why.find("200 KB") != std::string::npos);
    CHECK(why.find("163 KB") != std::string::npos);
    big.min_compute_capability = 90;
    big.needs = "wgmma";
    CHECK(sg::why_skipped(big, 80, 163 * 1024).find("wgmma") != std::string::npos);  // the older GPU comes first
}

TEST_CASE("sgemm: the checks skip a lesson unless the GPU runs every variant, and say why", "[sgemm]") {
    // Lesson 15's variants: both need sm_80, 4 stages 192 KB of shared memory per block.
    std::vector<sg::Variant> variants;
    for (int stages : {2, 4}) {
        sg::Variant v = sg::launch_shape(sg::kernel_variant("mma.sync " + std::to_string(stages) + " stages",
                                                            fake_launcher, fake_kernel),
                                         256, size_t(stages) * 48 * 1024);
        v.min_compute_capability = 80;
        v.needs = "TF32 tensor cores";
        variants.push_back(v);
    }
    CHECK(sg::unmet_needs(variants, 90, 227 * 1024).empty());  // H100, H200: everything runs
    CHECK(sg::unmet_needs({}, 75, 64 * 1024).empty());

    const std::string a100 = sg::unmet_needs(variants, 80, 163 * 1024);  // 4 stages do not fit
    CHECK(a100 == "variant 'mma.sync 4 stages' needs 192 KB of shared memory per block; this GPU offers 163 KB");

    const std::string t4 = sg::unmet_needs(variants, 75, 64 * 1024);  // neither runs: one line each
    CHECK(t4 ==
          "variant 'mma.sync 2 stages' needs compute capability 8.0 or newer (TF32 tensor cores); this GPU is 7.5\n"
          "variant 'mma.sync 4 stages' needs compute capability 8.0 or newer (TF32 tensor cores); this GPU is 7.5");

    // Lesson 08: FP32 runs anywhere, TF32 does not, so the lesson is skipped on a 7.5 GPU.
    sg::Variant tf32 = sg::library_variant("tf32", fake_launcher);
    tf32.min_compute_capability = 80;
    tf32.needs = "TF32 tensor cores";
    const std::vector<sg::Variant> lesson08{sg::library_variant("fp32", fake_launcher), tf32};
    CHECK(sg::unmet_needs(lesson08, 80, 163 * 1024).empty());
    const std::string old_gpu = sg::unmet_needs(lesson08, 75, 64 * 1024);
    CHECK(old_gpu.find("'fp32'") == std::string::npos);
    // The words the grader (scripts/grade.py) reads as the reason for the skip.
    CHECK(old_gpu.find("'tf32' needs compute capability 8.0") != std::string::npos);
}

TEST_CASE("sgemm: the driver's options default to the track's conventions", "[sgemm]") {
    const sg::MainOptions options;
    CHECK(options.default_n == 4096);
    CHECK(options.supported_n.empty());
    CHECK_FALSE(options.after);
    CHECK(options.sweep_variant.empty());  // no --sweep unless a lesson names its variant
    CHECK_FALSE(options.tf32_library);      // the yardstick is cuBLAS FP32 unless a lesson says TF32
    CHECK(options.only_compute_capability == 0);  // any GPU
    REQUIRE(!options.sweep_sizes.empty());
    CHECK(options.sweep_sizes.front() == 1024);
    CHECK(options.sweep_sizes.back() == sg::kMaxN);
    bool has_unaligned = false;  // a size whose rows are not 16-byte aligned, to sweep the edge path too
    for (int n : options.sweep_sizes) has_unaligned = has_unaligned || n % 4 != 0;
    CHECK(has_unaligned);
    CHECK(sg::host_variant("managed", nullptr).name == "managed");
}

TEST_CASE("sgemm: the CPU reference is exact on a small integer product", "[sgemm]") {
    // A = [1 2 3; 4 5 6; 7 8 9], B = [1 0 -1; 2 1 0; 0 3 1]: row-major, as every lesson.
    const std::vector<float> A{1, 2, 3, 4, 5, 6, 7, 8, 9}, B{1, 0, -1, 2, 1, 0, 0, 3, 1};
    std::vector<double> C, scale;
    sg::reference_cpu(3, A, B, C, scale);
    CHECK(C == std::vector<double>{5, 11, 2, 14, 23, 2, 23, 35, 2});
    CHECK(scale == std::vector<double>{5, 11, 4, 14, 23, 10, 23, 35, 16});  // sum_k |a_ik b_kj|
}

TEST_CASE("sgemm: the tolerance grows with sqrt(N) and with the inputs' rounding", "[sgemm]") {
    const sg::Variant fp32 = sg::library_variant("fp32", fake_launcher);
    sg::Variant tf32 = sg::library_variant("tf32", fake_launcher);
    tf32.input_roundoff = std::ldexp(1.0, -11);
    CHECK(sg::tolerance(1024, fp32, false) == Approx(2 * sg::tolerance(256, fp32, false)));
    CHECK(sg::tolerance(1024, fp32, true) == Approx(2 * sg::tolerance(1024, fp32, false)));
    CHECK(sg::tolerance(1024, tf32, false) - sg::tolerance(1024, fp32, false) == Approx(std::ldexp(1.0, -10)));
}

TEST_CASE("sgemm: 2 N^3 flops per product", "[sgemm]") {
    CHECK(sg::gflops(1000, 1.0) == Approx(2000.0));  // 2e9 flops in 1 ms = 2000 GFLOP/s
    CHECK(sg::gflops(4096, 2.0) == Approx(2.0 * 4096.0 * 4096.0 * 4096.0 / 2e-3 / 1e9));
}
