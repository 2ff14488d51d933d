// CPU checks of the reduction track's reference, error bound and multi-pass helpers
// (common/include/tut/reduction.hpp). No GPU needed: nothing here launches anything.
#include "catch.hpp"
#include "tut/reduction.hpp"

#include <cmath>
#include <vector>

namespace red = tut::reduction;

namespace {
// CPU models of the GPU's summation orders, in a chosen precision.
template <class Acc>
Acc loop_sum(const std::vector<double>& x) {
    Acc s = 0;
    for (double v : x) s += static_cast<Acc>(v);
    return s;
}
template <class Acc>
Acc pairwise_sum(const double* x, size_t n) {  // a balanced tree: depth ceil(log2 n)
    if (n == 0) return 0;
    if (n == 1) return static_cast<Acc>(x[0]);
    const size_t half = size_t(1) << (red::ceil_log2(n) - 1);
    return pairwise_sum<Acc>(x, half) + pairwise_sum<Acc>(x + half, n - half);
}
size_t blocks_of_256(size_t count) { return red::ceil_div(count, 256); }
size_t blocks_of_512(size_t count) { return red::ceil_div(count, 512); }
}  // namespace

TEST_CASE("reduction: the compensated sum recovers what a plain sum loses", "[reduction]") {
    red::CompensatedSum s;
    for (double v : {1e16, 1.0, -1e16, 1.0}) s.add(v);
    CHECK(s.value() == 2.0);  // a plain double loop gives 0 or 1 here

    // 1 + many tiny values: each tiny value alone is lost against 1, their total is not.
    red::CompensatedSum t;
    t.add(1.0);
    for (int i = 0; i < 1000000; ++i) t.add(1e-17);
    CHECK(t.value() == Approx(1.0 + 1e-11).epsilon(1e-15));
}

TEST_CASE("reduction: the reference agrees with a long-double sum on random data", "[reduction]") {
    const auto x = red::random_input<double>(1 << 20, 7);
    const red::Reference r = red::reference_sum(x);
    long double exact = 0, abs_sum = 0;
    for (double v : x) {
        exact += v;
        abs_sum += std::fabs(v);
    }
    CHECK(r.n == x.size());
    CHECK(std::fabs(r.sum[0] - static_cast<double>(exact)) <= 1e-12 * static_cast<double>(abs_sum));
    CHECK(r.sum_abs[0] == Approx(static_cast<double>(abs_sum)).epsilon(1e-12));
    CHECK(r.sum_abs[0] > 0.4 * x.size());  // uniform in [-1, 1): mean |x| = 1/2
}

TEST_CASE("reduction: inputs are deterministic and in range", "[reduction]") {
    const auto a = red::random_input<int>(100000, 3), b = red::random_input<int>(100000, 3);
    CHECK(a == b);
    int lo = 0, hi = 0;
    for (int v : a) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    CHECK(lo == -1000);
    CHECK(hi == 1000);
    const auto c = red::random_input<cuDoubleComplex>(1000, 3);
    bool parts_differ = false;
    for (auto& v : c) {
        CHECK(std::fabs(v.x) <= 1.0);
        CHECK(std::fabs(v.y) <= 1.0);
        parts_differ = parts_differ || v.x != v.y;
    }
    CHECK(parts_differ);
}

TEST_CASE("reduction: gamma and the error bound", "[reduction]") {
    const double u = std::ldexp(1.0, -53);
    CHECK(red::gamma(0, u) == 0.0);
    CHECK(red::gamma(10, u) == Approx(10 * u / (1 - 10 * u)));
    CHECK(std::isinf(red::gamma(size_t(1) << 25, std::ldexp(1.0, -24))));  // k u >= 1: no bound
    // The bound grows with depth and with sum|x|, not with |sum|.
    CHECK(red::allowed_error(26, u, 0.0, 1e6, 1 << 26) < red::allowed_error(1 << 20, u, 0.0, 1e6, 1 << 26));
    CHECK(red::allowed_error(26, u, 0.0, 2e6, 1 << 26) == Approx(2 * red::allowed_error(26, u, 0.0, 1e6, 1 << 26)));
}

TEST_CASE("reduction: float loops and trees stay inside their bounds", "[reduction]") {
    // What the GPU does, modelled in float: a loop (depth n - 1) and a tree (depth
    // ceil(log2 n)). Both must be within allowed_error() of the reference, and the tree's
    // bound is far tighter than the loop's.
    for (size_t n : {size_t(1), size_t(33), size_t(1000), size_t(100003), size_t(1) << 20}) {
        std::vector<double> x;
        for (float v : red::random_input<float>(n, n)) x.push_back(v);  // float inputs, held exactly in double
        const red::Reference r = red::reference_sum(x);
        const double u = red::unit_roundoff<float>();
        CAPTURE(n);
        const double loop_err = std::fabs(double(loop_sum<float>(x)) - r.sum[0]);
        const double tree_err = std::fabs(double(pairwise_sum<float>(x.data(), n)) - r.sum[0]);
        CHECK(loop_err <= red::allowed_error(n - 1, u, r.sum[0], r.sum_abs[0], n));
        CHECK(tree_err <= red::allowed_error(red::ceil_log2(n), u, r.sum[0], r.sum_abs[0], n));
    }
}

TEST_CASE("reduction: judge accepts a correct sum and rejects a missing element", "[reduction]") {
    const size_t n = 1 << 20;
    const auto x = red::random_input<double>(n, 11);
    const red::Reference r = red::reference_sum(x);
    const size_t depth = red::ceil_log2(n);
    const double tree = pairwise_sum<double>(x.data(), n);
    CHECK(red::judge(tree, r, depth).ok);
    CHECK(red::judge(tree, r, depth).relative < 1e-14);
    CHECK_FALSE(red::judge(tree - x[12345], r, depth).ok);  // one element dropped
    CHECK_FALSE(red::judge(std::nan(""), r, depth).ok);     // the poisoned output
    CHECK_FALSE(red::judge(INFINITY, r, depth).ok);

    // The empty sum is 0, with a zero allowance.
    const red::Reference empty = red::reference_sum(std::vector<double>{});
    CHECK(red::judge(0.0, empty, 0).ok);
    CHECK_FALSE(red::judge(1e-300, empty, 0).ok);
}

TEST_CASE("reduction: int sums are exact, modulo 2^32", "[reduction]") {
    const auto x = red::random_input<int>(100003, 5);
    const red::Reference r = red::reference_sum(x);
    long long exact = 0;
    for (int v : x) exact += v;
    CHECK(r.exact);
    CHECK(r.exact_sum == exact);
    CHECK(red::judge(static_cast<int>(exact), r, 1).ok);
    CHECK_FALSE(red::judge(static_cast<int>(exact) + 1, r, 1).ok);
    CHECK_FALSE(red::judge(-1, r, 1).ok);  // the int poison
    CHECK(red::wrap_to_int32((1ll << 32) + 5) == 5);
    CHECK(red::wrap_to_int32((1ll << 31)) == -2147483647 - 1);
}

TEST_CASE("reduction: complex sums are judged part by part", "[reduction]") {
    const auto x = red::random_input<cuDoubleComplex>(4096, 9);
    const red::Reference r = red::reference_sum(x);
    REQUIRE(r.components == 2);
    cuDoubleComplex s = make_cuDoubleComplex(0, 0);
    for (auto& v : x) s += v;
    CHECK(red::judge(s, r, x.size()).ok);
    cuDoubleComplex wrong_imag = s;
    wrong_imag.y += 0.5;
    CHECK_FALSE(red::judge(wrong_imag, r, x.size()).ok);
    cuDoubleComplex nan_real = s;
    nan_real.x = std::nan("");
    CHECK_FALSE(red::judge(nan_real, r, x.size()).ok);
}

TEST_CASE("reduction: multi-pass workspace and depth", "[reduction]") {
    CHECK(red::ceil_log2(1) == 0);
    CHECK(red::ceil_log2(2) == 1);
    CHECK(red::ceil_log2(257) == 9);
    // 256-element blocks: 1 element -> 1 pass; 2^26 -> 2^18 -> 2^10 -> 4 -> 1: 4 passes.
    CHECK(red::tree_depth(1, blocks_of_256, 256) == 8);
    CHECK(red::tree_depth(256, blocks_of_256, 256) == 8);
    CHECK(red::tree_depth(257, blocks_of_256, 256) == 16);
    CHECK(red::tree_depth(size_t(1) << 26, blocks_of_256, 256) == 32);
    CHECK(red::tree_depth(size_t(1) << 26, blocks_of_512, 512) == 27);
    CHECK(red::tree_depth(0, blocks_of_256, 256) == 0);
    // Scratch: none for one pass; two ping-pong arrays otherwise, the first 256-byte aligned.
    CHECK(red::multi_pass_workspace_bytes<double>(0, blocks_of_256) == 0);
    CHECK(red::multi_pass_workspace_bytes<double>(256, blocks_of_256) == 0);
    CHECK(red::multi_pass_workspace_bytes<double>(257, blocks_of_256) == 256);  // 2 partials, then the output
    CHECK(red::multi_pass_workspace_bytes<double>(1000003, blocks_of_256) == 31488 + 16 * 8);
    CHECK_THROWS_AS(red::multi_pass_workspace_bytes<double>(red::kMaxN + 1, blocks_of_256), tut::Unsupported);
    // A grid-stride pass: 2^26 elements over 1024 blocks x 256 threads = 256 each, + 8 tree levels.
    auto fixed_grid = [](size_t count) -> size_t { return count > 1 ? std::min<size_t>(1024, (count + 2047) / 2048) : 1; };
    CHECK(red::grid_stride_depth(size_t(1) << 26, fixed_grid, 256) == (256 + 8) + (4 + 8));
}

TEST_CASE("reduction: a multi-pass variant's scratch, and the variants of one type", "[reduction]") {
    // multi_pass_variant() fills in run() and workspace_bytes(); the scratch is that of
    // multi_pass_workspace_bytes() for the same blocks_for. Nothing is launched here.
    auto no_launch = [](const double*, size_t, double*, size_t) {};
    const red::Variant<double> v = red::multi_pass_variant<double>(blocks_of_256, no_launch);
    REQUIRE(v.run);
    REQUIRE(v.workspace_bytes);
    CHECK_FALSE(v.depth);  // the lesson sets the name, the depth and the kernel
    CHECK(v.kernel == nullptr);
    for (size_t n : {size_t(0), size_t(1), size_t(257), size_t(1000003), size_t(1) << 26})
        CHECK(v.workspace_bytes(n) == red::multi_pass_workspace_bytes<double>(n, blocks_of_256));
    CHECK_THROWS_AS(v.workspace_bytes(red::kMaxN + 1), tut::Unsupported);
    CHECK_THROWS_AS(v.run(nullptr, red::kMaxN + 1, nullptr, nullptr), tut::Unsupported);

    red::Variants all;
    red::Variant<float> f;
    f.name = "float";
    all.f32 = {f};
    CHECK(all.of<float>().size() == 1);
    CHECK(all.of<float>().front().name == "float");
    CHECK(all.of<double>().empty());
    CHECK(all.of<cuDoubleComplex>().empty());
}

TEST_CASE("reduction: type names and roundoff", "[reduction]") {
    CHECK(std::string(red::type_name<double>()) == "double");
    CHECK(std::string(red::type_name<cuDoubleComplex>()) == "complex");
    CHECK(red::unit_roundoff<float>() == std::ldexp(1.0, -24));
    CHECK(red::unit_roundoff<int>() == 0.0);
    CHECK(red::bytes_read<double>(1 << 26) == 536870912.0);
    CHECK(red::gbs<double>(1000, 1.0) == Approx(8e-3));
}
