// CPU checks of the reduction track's reference, error bound and multi-pass helpers
// (common/include/tut/reduction.hpp), and of the depths the lessons' checks judge with
// (common/checks/reduction/depth_rules.hpp). No GPU needed: nothing here launches anything.
#include "catch.hpp"
#include "reduction/depth_rules.hpp"
#include "tut/reduction.hpp"

#include <algorithm>
#include <cmath>
#include <string>
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

// Lessons 1-3's order in float: passes of 256-element blocks, each a tree with sequential
// addressing (a[t] += a[t + s], s = 128 .. 1), until one value is left.
float block_tree_sum(const std::vector<float>& x) {
    std::vector<float> level = x;
    while (level.size() > 1) {
        std::vector<float> next(red::ceil_div(level.size(), 256));
        for (size_t b = 0; b < next.size(); ++b) {
            float a[256] = {};
            for (size_t t = 0; t < 256 && b * 256 + t < level.size(); ++t) a[t] = level[b * 256 + t];
            for (size_t s = 128; s > 0; s /= 2)
                for (size_t t = 0; t < s; ++t) a[t] += a[t + s];
            next[b] = a[0];
        }
        level.swap(next);
    }
    return level.empty() ? 0.0f : level[0];
}

// Lesson 8's order in float: `threads` threads each add their grid-stride share one after
// another, each warp adds its 32 sums with a shuffle tree, and the warps' sums meet in
// one accumulator in the reverse of their order (atomics arrive in any order).
float grid_stride_atomic_sum(const std::vector<float>& x, size_t threads) {
    std::vector<float> per_thread(threads, 0.0f);
    for (size_t i = 0; i < x.size(); ++i) per_thread[i % threads] += x[i];  // each thread in its own order
    float out = 0;
    for (size_t w = threads / 32; w-- > 0;) {
        float* lane = &per_thread[w * 32];
        for (size_t d = 16; d > 0; d /= 2)
            for (size_t l = 0; l < d; ++l) lane[l] += lane[l + d];
        out += lane[0];
    }
    return out;
}
// Its depth, as lesson 8's table computes it.
size_t grid_stride_atomic_depth(size_t n, size_t threads) { return red::ceil_div(n, threads) + 5 + threads / 32; }

// CUB's order in float, as cub_depth_for() models it: `blocks` blocks of 256 threads each
// take a contiguous, even share of the input; a thread adds its items one after another,
// the block adds its threads' sums with a tree; one more block adds the block sums so.
float cub_like_sum(const std::vector<float>& x, size_t blocks) {
    auto block_reduce = [](std::vector<float>& a) {  // a.size() == 256
        for (size_t s = 128; s > 0; s /= 2)
            for (size_t t = 0; t < s; ++t) a[t] += a[t + s];
        return a[0];
    };
    auto pass = [&](const std::vector<float>& in, size_t grid) {
        std::vector<float> sums(grid);
        const size_t share = red::ceil_div(in.size(), grid);
        for (size_t b = 0; b < grid; ++b) {
            std::vector<float> thread(256, 0.0f);
            const size_t begin = std::min(in.size(), b * share), end = std::min(in.size(), begin + share);
            for (size_t i = begin; i < end; ++i) thread[(i - begin) % 256] += in[i];
            sums[b] = block_reduce(thread);
        }
        return sums;
    };
    return pass(pass(x, blocks), 1)[0];
}

// A reference for n elements that repeat x (as the 2^30 check builds it on the GPU): the
// references of the whole periods and of the rest, put together.
template <class T>
red::Reference repeated_reference(const std::vector<T>& x, size_t n) {
    const size_t period = x.size();
    const red::Reference one = red::reference_sum(x), rest = red::reference_sum(x.data(), n % period);
    red::Reference r = one;
    r.n = n;
    for (int c = 0; c < r.components; ++c) {
        r.sum[c] = double(n / period) * one.sum[c] + rest.sum[c];
        r.sum_abs[c] = double(n / period) * one.sum_abs[c] + rest.sum_abs[c];
    }
    return r;
}

// The depths the lessons' checks judge with at n, on a small (16 SMs) and a large (132 SMs)
// GPU: every one must judge, and reject wrong sums.
std::vector<size_t> check_depths(size_t n) {
    std::vector<size_t> depths;
    for (size_t sms : {size_t(16), size_t(132)})
        for (reduction_checks::DepthRule rule :
             {reduction_checks::tree_passes_depth, reduction_checks::two_pass_depth,
              reduction_checks::atomic_per_block_depth, reduction_checks::atomic_per_warp_depth,
              reduction_checks::cub_library_depth})
            depths.push_back(rule(n, sms));
    return depths;
}
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
    // float: all positive, so its sums do not cancel (see random_input()); double keeps both signs.
    const auto f = red::random_input<float>(100000, 3);
    CHECK(*std::min_element(f.begin(), f.end()) >= 0.0f);
    CHECK(*std::max_element(f.begin(), f.end()) <= 1.0f);
    CHECK(red::reference_sum(f).sum[0] == Approx(50000).epsilon(0.01));
    const auto d = red::random_input<double>(100000, 3);
    CHECK(*std::min_element(d.begin(), d.end()) < -0.99);
    CHECK(*std::max_element(d.begin(), d.end()) > 0.99);
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

TEST_CASE("reduction: wrong float sums fail at every size the checks use, up to 2^30", "[reduction]") {
    // 0, -sum, sum/2, the sum of half the input and of 15/16 of it, judged with every
    // depth the lessons' checks use (on a 16-SM GPU among them). Up to 2^26 the
    // input is the checks' own; at 2^30 it repeats 2^20 + 7 of them, as on the GPU.
    const auto data = red::random_input<float>((size_t(1) << 26) + 8, 4242);
    const std::vector<float> period(data.begin(), data.begin() + (size_t(1) << 20) + 7);
    for (size_t n : {size_t(33), size_t(1000003), size_t(1) << 26, size_t(1) << 30}) {
        const bool whole = n <= data.size();
        auto reference = [&](size_t count) {
            return whole ? red::reference_sum(data.data(), count) : repeated_reference(period, count);
        };
        const red::Reference r = reference(n);
        const double half = reference(n / 2).sum[0];
        const double without_sixteenth = r.sum[0] - reference(n / 16).sum[0];
        for (size_t depth : check_depths(n)) {
            CAPTURE(n, depth);
            const red::Judgement right = red::judge(static_cast<float>(r.sum[0]), r, depth);
            CHECK(right.ok);
            CHECK_FALSE(right.too_loose);
            CHECK(right.allowed < 0.04 * r.sum[0]);  // far inside kLoosestBound
            for (double wrong : {0.0, -r.sum[0], r.sum[0] / 2, half, without_sixteenth})
                CHECK_FALSE(red::judge(static_cast<float>(wrong), r, depth).ok);
        }
    }
    // One element dropped shows where it is larger than the rounding can be: at small n
    // (at 2^26, u sum|x| > 1 already exceeds any element).
    const red::Reference r33 = red::reference_sum(data.data(), 33);
    for (size_t depth : check_depths(33))
        for (size_t i : {size_t(0), size_t(17), size_t(32)})
            CHECK_FALSE(red::judge(static_cast<float>(r33.sum[0] - data[i]), r33, depth).ok);
}

TEST_CASE("reduction: wrong double and complex sums fail, one dropped element too, up to 2^30", "[reduction]") {
    const auto period = red::random_input<double>((size_t(1) << 20) + 7, 4242);
    size_t largest = 0;  // the element to drop: one near 1 in magnitude, as most are
    for (size_t i = 0; i < period.size(); ++i)
        if (std::fabs(period[i]) > std::fabs(period[largest])) largest = i;
    for (size_t n : {size_t(33), size_t(1000003), size_t(1) << 26, size_t(1) << 30}) {
        const red::Reference r = repeated_reference(period, n), half = repeated_reference(period, n / 2);
        for (size_t depth : check_depths(n)) {
            CAPTURE(n, depth);
            CHECK(red::judge(r.sum[0], r, depth).ok);
            CHECK(red::judge(r.sum[0], r, depth).allowed < 1e-4 * std::fabs(r.sum[0]));
            for (double wrong : {0.0, -r.sum[0], r.sum[0] / 2, half.sum[0]}) CHECK_FALSE(red::judge(wrong, r, depth).ok);
            if (n > 33) CHECK_FALSE(red::judge(r.sum[0] - period[largest], r, depth).ok);
            else CHECK_FALSE(red::judge(r.sum[0] - period[20], r, depth).ok);
        }
    }
    // Complex: each part on its own; a wrong imaginary part alone fails.
    const auto c = red::random_input<cuDoubleComplex>(1000003, 4242);
    const red::Reference rc = red::reference_sum(c);
    for (size_t depth : check_depths(c.size())) {
        CHECK(red::judge(make_cuDoubleComplex(rc.sum[0], rc.sum[1]), rc, depth).ok);
        CHECK_FALSE(red::judge(make_cuDoubleComplex(rc.sum[0], 0.0), rc, depth).ok);
        CHECK_FALSE(red::judge(make_cuDoubleComplex(rc.sum[0], rc.sum[1] - c[5].y), rc, depth).ok);
    }
}

TEST_CASE("reduction: correct float sums pass, in every order the lessons use", "[reduction]") {
    // The checks' float input at their largest size, summed in float in the kernels'
    // orders, each judged with the depth its lesson's table computes and with the one its
    // checks use.
    const size_t n = size_t(1) << 26;
    std::vector<float> x = red::random_input<float>(n, 4242);
    const red::Reference r = red::reference_sum(x);
    auto passes = [&](float got, size_t depth) {
        const red::Judgement v = red::judge(got, r, depth);
        INFO(v.text);
        return v.ok;
    };
    std::vector<double> as_double(x.begin(), x.end());
    CHECK(passes(pairwise_sum<float>(as_double.data(), n), red::ceil_log2(n)));
    as_double = {};
    CHECK(passes(block_tree_sum(x), red::tree_depth(n, 256)));
    CHECK(passes(block_tree_sum(x), reduction_checks::tree_passes_depth(n, 132)));
    for (size_t sms : {size_t(132), size_t(16)}) {  // lesson 8's grid on an H100, and on a small GPU
        const size_t threads = sms * 2048;
        const float sum = grid_stride_atomic_sum(x, threads);
        CHECK(passes(sum, grid_stride_atomic_depth(n, threads)));
        CHECK(passes(sum, reduction_checks::atomic_per_warp_depth(n, sms)));
    }
    // CUB's grid, 5 x (blocks per SM) x SMs: 8 blocks per SM on 132 SMs, 1 on 16.
    CHECK(passes(cub_like_sum(x, 5 * 8 * 132), red::cub_depth_for(n, 132)));
    CHECK(passes(cub_like_sum(x, 5 * 16), red::cub_depth_for(n, 16)));

    // A plain loop passes where its depth n still gives a usable bound, ...
    const std::vector<float> head(x.begin(), x.begin() + 1000000);
    const red::Reference rh = red::reference_sum(head);
    float loop = 0;
    for (float v : head) loop += v;
    CHECK(red::judge(loop, rh, head.size()).ok);
    // ... and at 2^26 cannot be judged: a float loop really does stall there (once the
    // running sum reaches 2^25, adding a value below 1 rounds back to the same float).
    loop = 0;
    for (float v : x) loop += v;
    CHECK(std::fabs(loop - r.sum[0]) > 0.1 * r.sum[0]);
    const red::Judgement v = red::judge(loop, r, n);
    CHECK_FALSE(v.ok);
    CHECK(v.too_loose);
}

TEST_CASE("reduction: a bound that could not fail is reported, not passed", "[reduction]") {
    const size_t n = size_t(1) << 22;
    const size_t old_cub_depth = (size_t(1) << 21) + 64;  // n / 32 + 64 at n = 2^26: gamma = 0.14
    // Positive floats: depth n (an unset depth) is too loose past about 1.5 million elements.
    const auto x = red::random_input<float>(n, 4242);
    const red::Reference r = red::reference_sum(x);
    const red::Judgement loose = red::judge(static_cast<float>(r.sum[0]), r, n);
    CHECK_FALSE(loose.ok);
    CHECK(loose.too_loose);
    CHECK(loose.text.find("CANNOT JUDGE") != std::string::npos);
    CHECK(red::judge(static_cast<float>(r.sum[0]), r, old_cub_depth).too_loose);  // finite, still too loose
    // Random signs in float: the rigorous bound of a long chain dwarfs |sum|, so 0 would pass.
    std::vector<float> signed_x;
    for (double v : red::random_input<double>(n, 4242)) signed_x.push_back(static_cast<float>(v));
    const red::Reference rs = red::reference_sum(signed_x);
    CHECK(red::allowed_error(old_cub_depth, red::unit_roundoff<float>(), rs.sum[0], rs.sum_abs[0], n) >
          std::fabs(rs.sum[0]));
    CHECK_FALSE(red::judge(0.0f, rs, old_cub_depth).ok);
    CHECK(red::judge(0.0f, rs, old_cub_depth).too_loose);
    CHECK_FALSE(red::judge(static_cast<float>(rs.sum[0]), rs, old_cub_depth).ok);
    // An infinite bound (k u >= 1) is too loose too, and int sums never are.
    CHECK(red::judge(static_cast<float>(r.sum[0]), r, size_t(1) << 24).too_loose);
    const auto i = red::random_input<int>(1000, 1);
    const red::Reference ri = red::reference_sum(i);
    CHECK_FALSE(red::judge(static_cast<int>(ri.exact_sum), ri, 1000).too_loose);
    // The empty sum: the bound 0 equals |sum| = 0, a usable bound.
    const red::Reference empty = red::reference_sum(std::vector<float>{});
    CHECK(red::judge(0.0f, empty, 0).ok);
    CHECK_FALSE(red::judge(0.0f, empty, 0).too_loose);
}

TEST_CASE("reduction: CUB's depth bound", "[reduction]") {
    CHECK(red::cub_depth_for(0, 132) == 0);
    CHECK(red::cub_depth_for(1, 132) == 1 + 132 + 1024);
    CHECK(red::cub_depth_for(size_t(1) << 26, 132) == red::ceil_div(size_t(1) << 26, 128 * 132) + 132 + 1024);
    // CUB's own grid, 5 x (blocks per SM >= 1) x SMs blocks of >= 256 threads, gives each
    // thread a share 10 times smaller than the n / (128 SMs) assumed.
    for (size_t sms : {size_t(1), size_t(16), size_t(132), size_t(1000)}) {
        CAPTURE(sms);
        const size_t n = red::kMaxN;
        CHECK(red::cub_depth_for(n, sms) >= 10 * red::ceil_div(n, 5 * sms * 256));
    }
    // The loosest float bound the lessons meet, CUB at 2^30 on 16 SMs, is usable.
    CHECK(red::gamma(red::cub_depth_for(red::kMaxN, 16), red::unit_roundoff<float>()) < red::kLoosestBound / 2);
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
    CHECK(red::tree_depth(1, 256) == 8);
    CHECK(red::tree_depth(256, 256) == 8);
    CHECK(red::tree_depth(257, 256) == 16);
    CHECK(red::tree_depth(size_t(1) << 26, 256) == 32);
    CHECK(red::tree_depth(size_t(1) << 26, 512) == 27);
    CHECK(red::tree_depth(0, 256) == 0);
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

TEST_CASE("reduction: a multi-pass run refuses before it asks for scratch; the variants of one type", "[reduction]") {
    // Nothing is launched or allocated here: the refusal comes first, and an empty
    // workspace asked for nothing holds nothing.
    auto no_launch = [](const double*, size_t, double*, size_t) {};
    red::Workspace workspace;
    CHECK_THROWS_AS(red::reduce_in_passes<double>(nullptr, red::kMaxN + 1, nullptr, workspace, blocks_of_256, no_launch),
                    tut::Unsupported);
    CHECK(workspace.asked() == 0);
    CHECK(workspace.get(0) == nullptr);

    red::Variants all;
    all.f32 = {{"float", [](const float*, size_t, float*, red::Workspace&) {}}};
    CHECK(all.of<float>().size() == 1);
    CHECK(all.of<float>().front().name == "float");
    CHECK(all.of<float>().front().kernel.handle == nullptr);
    CHECK(all.of<double>().empty());
    CHECK(all.of<cuDoubleComplex>().empty());
}

TEST_CASE("reduction: the checks' depths cover every way the lessons may be written", "[reduction]") {
    namespace rc = reduction_checks;
    const std::vector<size_t> sizes{1, 2, 31, 33, 1000, 1000003, size_t(1) << 20, (size_t(1) << 26) + 1,
                                    size_t(1) << 26, red::kMaxN};
    for (size_t n : sizes) {
        CAPTURE(n);
        // Lessons 1-6: a tree per block of 2 to 8192 elements (1024 threads, up to 8 loads each).
        for (size_t per_block = 2; per_block <= 8192; per_block *= 2) {
            CAPTURE(per_block);
            CHECK(red::tree_depth(n, per_block) <= rc::tree_passes_depth(n, 132));
        }
        for (size_t sms : {size_t(1), size_t(16), size_t(132), size_t(1000)}) {
            // Lessons 7-9 on grids of one wave: blocks of 64 to 1024 threads, at least 128 and
            // at most 2048 threads and 32 blocks per SM.
            for (size_t threads = 64; threads <= 1024; threads *= 2)
                for (size_t per_sm = 1; per_sm <= 32 && per_sm * threads <= 2048; per_sm *= 2) {
                    if (per_sm * threads < 128) continue;
                    CAPTURE(sms, threads, per_sm);
                    const size_t resident = sms * per_sm;
                    // Lesson 7's passes: the grid cut to leave each thread at least 8 elements.
                    auto blocks_for = [&](size_t count) {
                        return std::min(resident, red::ceil_div(count, threads * 8));
                    };
                    // + 2 per pass: the pairs of the four-wide first step.
                    const size_t passes = red::multi_pass_depth(n, blocks_for, [&](size_t count, size_t blocks) {
                        return red::ceil_div(count, blocks * threads) + 2 + red::ceil_log2(threads);
                    });
                    CHECK(passes <= rc::two_pass_depth(n, sms));
                    // Lessons 8 and 9: one wave, or one thread per element for a small n.
                    const size_t blocks = std::min(resident, red::ceil_div(n, threads));
                    const size_t loop = red::ceil_div(n, blocks * threads) + 2 + 2 + 2;  // pairs, head and tail, lanes
                    CHECK(loop + 5 + blocks * threads / 32 <= rc::atomic_per_warp_depth(n, sms));
                    CHECK(loop + 10 + blocks <= rc::atomic_per_block_depth(n, sms));
                }
        }
    }
}

TEST_CASE("reduction: the checks' depths tell right from wrong", "[reduction]") {
    namespace rc = reduction_checks;
    const double u = red::unit_roundoff<float>();
    const size_t n = size_t(1) << 26;
    // The positive float input: the bound is gamma_depth of the sum. A tree lesson's bound
    // is below the share of one lost 512-element block; the atomic lessons' below one lost
    // block of a one-wave grid (8 blocks per SM) on an H100, and every bound far below
    // kLoosestBound on any GPU of 16 SMs or more.
    CHECK(red::gamma(rc::tree_passes_depth(n, 132), u) < 512.0 / n);
    for (rc::DepthRule rule : {rc::two_pass_depth, rc::atomic_per_block_depth, rc::atomic_per_warp_depth})
        CHECK(red::gamma(rule(n, 132), u) < 1.0 / (8 * 132));
    for (size_t sms : {size_t(16), size_t(132), size_t(1000)})
        for (rc::DepthRule rule : {rc::tree_passes_depth, rc::two_pass_depth, rc::atomic_per_block_depth,
                                   rc::atomic_per_warp_depth, rc::cub_library_depth}) {
            CAPTURE(sms);
            CHECK(red::gamma(rule(n, sms), u) < red::kLoosestBound / 20);
            CHECK(red::gamma(rule(red::kMaxN, sms), u) < red::kLoosestBound / 2);
        }
    CHECK(rc::tree_passes_depth(0, 132) == 0);
    CHECK(rc::atomic_per_warp_depth(0, 132) == 0);
}

TEST_CASE("reduction: type names and roundoff", "[reduction]") {
    CHECK(std::string(red::type_name<double>()) == "double");
    CHECK(std::string(red::type_name<cuDoubleComplex>()) == "complex");
    CHECK(red::unit_roundoff<float>() == std::ldexp(1.0, -24));
    CHECK(red::unit_roundoff<int>() == 0.0);
    CHECK(red::bytes_read<double>(1 << 26) == 536870912.0);
    CHECK(red::gbs<double>(1000, 1.0) == Approx(8e-3));
}
