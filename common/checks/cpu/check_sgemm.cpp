// CPU checks of the SGEMM track's plumbing (common/include/tut/sgemm.hpp): how lessons
// describe their variants, which GPUs a variant runs on, the command line, the CPU
// reference and the tolerance. No GPU needed: nothing here launches anything.
#include "catch.hpp"
#include "tut/sgemm.hpp"

#include <cmath>
#include <string>
#include <vector>

namespace sg = tut::sgemm;

namespace {
// Stand-ins for a lesson's kernel and run function: only their addresses are used.
void fake_kernel(int, const float*, const float*, float*) {}
void fake_run(int, const float*, const float*, float*) {}

struct Args {
    std::vector<const char*> argv{"prog"};
    Args(std::initializer_list<const char*> words) { argv.insert(argv.end(), words.begin(), words.end()); }
    int argc() const { return static_cast<int>(argv.size()); }
};
}  // namespace

TEST_CASE("sgemm: a variant is a name, its run function, and optionally its kernel and needs", "[sgemm]") {
    const sg::Variant k{"tile=16", fake_run, tut::kernel_of(fake_kernel, 256, 49664)};
    CHECK(k.name == "tile=16");
    CHECK(k.run);
    CHECK(k.kernel.handle == reinterpret_cast<const void*>(&fake_kernel));
    CHECK(k.kernel.block_threads == 256);
    CHECK(k.kernel.dynamic_shared_bytes == 49664);
    CHECK(k.needs.compute_capability == 0);  // any GPU

    const sg::Variant lib{"fp32", fake_run};
    CHECK(lib.kernel.handle == nullptr);  // a library call: no registers or shared memory to report
    CHECK(lib.kernel.block_threads == 0);  // and no occupancy column
    CHECK(tut::names_of(std::vector<sg::Variant>{k, lib}) == std::vector<std::string>{"tile=16", "fp32"});
}

TEST_CASE("sgemm: a variant that needs a newer GPU is skipped, and says why", "[sgemm]") {
    const sg::Variant tf32{"tf32", fake_run, {}, tut::Needs{80, "TF32 tensor cores"}};
    CHECK(tut::unmet_need(tf32, 80).empty());
    CHECK(tut::unmet_need(tf32, 120).empty());
    const std::string why = tut::unmet_need(tf32, 75);
    CHECK(why.find("TF32 tensor cores") != std::string::npos);
    CHECK(why.find("needs compute capability 8.0") != std::string::npos);  // the words the grader reads
    CHECK(why.find("7.5") != std::string::npos);

    const sg::Variant any{"naive", fake_run, tut::kernel_of(fake_kernel)};
    CHECK(tut::unmet_need(any, 75).empty());
    CHECK(tut::unmet_need(any, 0).empty());  // no GPU at all: nothing to skip for the variant's sake
}

TEST_CASE("sgemm: a variant that needs more shared memory per block than the GPU offers is skipped, and says why",
          "[sgemm]") {
    sg::Variant big{"4 stages", fake_run, tut::kernel_of(fake_kernel, 256, 200 * 1024)};
    CHECK(tut::unmet_need(big, 90, 227 * 1024).empty());
    CHECK(tut::unmet_need(big, 90, 200 * 1024).empty());
    CHECK(tut::unmet_need(big, 80).empty());  // the limit not known: not checked
    const std::string why = tut::unmet_need(big, 80, 163 * 1024);
    CHECK(why.find("200 KB") != std::string::npos);
    CHECK(why.find("163 KB") != std::string::npos);
    big.needs = tut::Needs{90, "wgmma"};
    CHECK(tut::unmet_need(big, 80, 163 * 1024).find("wgmma") != std::string::npos);  // the older GPU comes first
}

TEST_CASE("sgemm: the checks skip a lesson unless the GPU runs every variant they name, and say why", "[sgemm]") {
    // Lesson 16's variants: both need sm_80, 4 stages 192 KB of shared memory per block.
    std::vector<sg::Variant> variants;
    for (int stages : {2, 4})
        variants.push_back({"mma.sync " + std::to_string(stages) + " stages", fake_run,
                            tut::kernel_of(fake_kernel, 256, size_t(stages) * 48 * 1024),
                            tut::Needs{80, "TF32 tensor cores"}});
    CHECK(sg::unmet_needs(variants, 90, 227 * 1024).empty());  // H100, H200: everything runs
    CHECK(sg::unmet_needs(std::vector<sg::Variant>{}, 75, 64 * 1024).empty());

    const std::string a100 = sg::unmet_needs(variants, 80, 163 * 1024);  // 4 stages do not fit
    CHECK(a100 == "variant 'mma.sync 4 stages' needs 192 KB of shared memory per block; this GPU offers 163 KB");

    const std::string t4 = sg::unmet_needs(variants, 75, 64 * 1024);  // neither runs: one line each
    CHECK(t4 ==
          "variant 'mma.sync 2 stages' needs compute capability 8.0 or newer (TF32 tensor cores); this GPU is 7.5\n"
          "variant 'mma.sync 4 stages' needs compute capability 8.0 or newer (TF32 tensor cores); this GPU is 7.5");

    // Lesson 08: FP32 runs anywhere, TF32 does not, so the lesson is skipped on a 7.5 GPU.
    const std::vector<sg::Variant> lesson08{{"fp32", fake_run},
                                            {"tf32", fake_run, {}, tut::Needs{80, "TF32 tensor cores"}}};
    CHECK(sg::unmet_needs(lesson08, 80, 163 * 1024).empty());
    const std::string old_gpu = sg::unmet_needs(lesson08, 75, 64 * 1024);
    CHECK(old_gpu.find("'fp32'") == std::string::npos);
    // The words the grader (scripts/grade.py) reads as the reason for the skip.
    CHECK(old_gpu.find("'tf32' needs compute capability 8.0") != std::string::npos);
}

TEST_CASE("sgemm: the command line: --n, its default, and the sizes a lesson compiles in", "[sgemm]") {
    const tut::LessonInfo lesson{"sgemm", "00_test", "a test"};
    sg::Options options(lesson);
    CHECK(options.n == 4096);
    CHECK(options.only_n.empty());  // any N in 1..kMaxN
    const Args args{"--n", "1000"};
    REQUIRE(options.cli.parse(args.argc(), args.argv.data()));
    CHECK(options.n == 1000);
    const Args too_large{"--n", "8193"};
    CHECK_THROWS_AS(options.cli.parse(too_large.argc(), too_large.argv.data()), tut::UsageError);

    const sg::Options lesson03(lesson, 4096, {256, 512});  // the sizes compiled in, named in --help
    CHECK(lesson03.only_n == std::vector<int>{256, 512});
    CHECK(lesson03.cli.usage().find("matrix size N, one of 256 512") != std::string::npos);
    const sg::Options lesson02(lesson, 4096, {}, "Computes C = A*B from host memory.");  // what --help says
    CHECK(lesson02.cli.usage().find("from host memory") != std::string::npos);
}

TEST_CASE("sgemm: the size sweep covers tiles that fit and tiles that overhang, up to the largest N", "[sgemm]") {
    REQUIRE(!sg::kSweepSizes.empty());
    CHECK(sg::kSweepSizes.front() == 1024);
    CHECK(sg::kSweepSizes.back() == sg::kMaxN);
    bool has_unaligned = false;  // a size whose rows are not 16-byte aligned, to sweep the edge path too
    for (int n : sg::kSweepSizes) has_unaligned = has_unaligned || n % 4 != 0;
    CHECK(has_unaligned);
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
    const double fp32 = sg::input_roundoff(sg::Arithmetic::fp32), tf32 = sg::input_roundoff(sg::Arithmetic::tf32);
    CHECK(fp32 == 0);
    CHECK(tf32 == std::ldexp(1.0, -11));  // 10 explicit mantissa bits
    CHECK(sg::tolerance(1024, fp32, false) == Approx(2 * sg::tolerance(256, fp32, false)));
    CHECK(sg::tolerance(1024, fp32, true) == Approx(2 * sg::tolerance(1024, fp32, false)));
    CHECK(sg::tolerance(1024, tf32, false) - sg::tolerance(1024, fp32, false) == Approx(std::ldexp(1.0, -10)));
}

TEST_CASE("sgemm: 2 N^3 flops per product", "[sgemm]") {
    CHECK(sg::gflops(1000, 1.0) == Approx(2000.0));  // 2e9 flops in 1 ms = 2000 GFLOP/s
    CHECK(sg::gflops(4096, 2.0) == Approx(2.0 * 4096.0 * 4096.0 * 4096.0 / 2e-3 / 1e9));
}
