/// @file bandwidth_checks.hpp
/// @brief Checks shared by the bandwidth lessons: exact copies and gathers, with guard zones.
///
/// Copies and gathers only move floats, so results must be bitwise equal to the source
/// (no tolerance). Every output sits between two guard zones of kGuard floats, poisoned
/// with it (all bits set: NaN); afterwards the zones must still be poison, which catches
/// an off-by-one in a tail, a misaligned float4 or a block that overhangs, and the check
/// names the offset of the first changed float from the output's start (negative:
/// before it), as tut_checks::GuardedBuffer does.
///
/// Sources hold pattern_value(i) at element i, written on the device. Up to
/// kHostCompareLimit elements the result is copied back and compared on the host (the
/// clearest messages); beyond that a checking kernel compares it on the device and only
/// the count of wrong elements and the first of them come back (device_checks.hpp).
///
/// The functions below take the variants to check. Each lesson's check file declares
/// lesson::variants() and names the variants it requires (required()): a variant removed
/// or renamed in the exercise fails, and variants the checks do not name are not run.
#pragma once

#include "catch.hpp"
#include "device_checks.hpp"
#include "lesson_hint.hpp"
#include "tut/bandwidth.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace bandwidth_checks {

using namespace tut::bandwidth;

/// Poisoned floats on each side of every checked output: 256 bytes, so the output keeps
/// the alignment cudaMalloc gives its buffer (the float4 paths depend on it).
inline constexpr size_t kGuard = 64;

/// Sources and targets up to this many floats (64 MB) are compared on the host.
inline constexpr size_t kHostCompareLimit = size_t(1) << 24;

/// The lesson's variants of these names, in this order. A name the lesson lacks fails the
/// check, naming it; the lesson's other variants are left out.
template <class V>
std::vector<V> required(const std::vector<V>& all, const std::vector<std::string>& names) {
    std::vector<V> picked;
    for (const std::string& name : names) {
        auto it = std::find_if(all.begin(), all.end(), [&](const V& v) { return v.name == name; });
        if (it == all.end())
            FAIL("the lesson has no variant named '" << name << "' (lesson::variants(), below the harness line "
                                                     << "of " << TUT_LESSON_SOURCE << "): the checks need it");
        picked.push_back(*it);
    }
    return picked;
}

inline bool is_poison(float x) {
    uint32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    return bits == 0xFFFFFFFFu;
}

/// The first float of `region` outside the output [begin, begin + count) that is not
/// poison, or -1.
inline long long first_write_outside(const std::vector<float>& region, size_t begin, size_t count) {
    for (size_t i = 0; i < region.size(); ++i) {
        if (i == begin) i = begin + count;
        if (i < region.size() && !is_poison(region[i])) return static_cast<long long>(i);
    }
    return -1;
}

/// Where the changed float at `index` of a region lies, from the output [begin, begin + count).
inline std::string write_outside(size_t index, size_t begin, size_t count) {
    if (index < begin) return "a write before the start of the output: offset -" + std::to_string(begin - index);
    return "a write past the end of the output: offset " + std::to_string(index - begin) + " (the output has " +
           std::to_string(count) + " elements)";
}

/// pattern_value(first), pattern_value(first + 1), ... : the host's copy of a source.
inline std::vector<float> pattern_vector(size_t count, uint64_t first = 0) {
    std::vector<float> v(count);
    for (size_t i = 0; i < count; ++i) v[i] = pattern_value(first + i);
    return v;
}

/// Fills the first `count` floats of `p` (device) with poison.
inline void poison(float* p, size_t count) {
    if (count) TUT_CUDA(cudaMemset(p, 0xFF, count * sizeof(float)));
}

/// A device target buffer of at least `count` floats, reused across checks (the
/// largest is 4 GiB; it is reallocated only to grow).
inline float* target_buffer(size_t count) {
    static std::unique_ptr<tut::DeviceBuffer<float>> buffer;
    if (!buffer || buffer->size() < count) {
        buffer.reset();  // free the old one first
        buffer = std::make_unique<tut::DeviceBuffer<float>>(count);
    }
    return buffer->get();
}

/// True when the largest checks' buffers (`bytes` more device memory) fit this GPU.
/// Otherwise it says so (a warning in the report) and the caller skips that size.
inline bool largest_size_fits(size_t bytes, const std::string& what) {
    const std::string why = tut::device_memory_shortfall(bytes);
    if (why.empty()) return true;
    WARN("not checked on this GPU: " << what << " " << why);
    return false;
}

/// What a device comparison found, in words: the first wrong float of the region, inside
/// the output [begin, begin + count) described by `inside`, outside it by its offset.
template <class Inside>
std::string describe(const DeviceVerdict& verdict, size_t begin, size_t count, Inside&& inside) {
    if (verdict.first < 0) return "none";
    const size_t i = static_cast<size_t>(verdict.first);
    if (i < begin || i >= begin + count) return write_outside(i, begin, count);
    return inside(i - begin, verdict.found);
}

// ----------------------------------------------------------------------------------
// Copies (lesson 02)
// ----------------------------------------------------------------------------------

/// A patterned device source (element i holds pattern_value(i)), its first elements on
/// the host, and a device target with room for both guard zones, reused across checks
/// (the largest is 4 GiB each).
struct CopyFixture {
    size_t capacity;  ///< floats of the source
    std::vector<float> host;  ///< the source's first min(capacity, kHostCompareLimit) floats
    tut::DeviceBuffer<float> src, dst;
    explicit CopyFixture(size_t c)
        : capacity(c), host(pattern_vector(std::min(c, kHostCompareLimit))), src(c), dst(c + 2 * kGuard) {
        fill_pattern(src.get(), c, 0);
    }
};

inline CopyFixture& copy_fixture(size_t capacity) {
    static std::unique_ptr<CopyFixture> fixture;
    if (!fixture || fixture->capacity < capacity) {
        fixture.reset();  // free the old buffers first
        fixture = std::make_unique<CopyFixture>(std::max(capacity, kHostCompareLimit));
    }
    return *fixture;
}

/// Runs `v` on n floats from src + src_offset to the output, dst_offset floats after the
/// front guard zone, and requires an exact copy with both guard zones untouched.
inline void check_copy(const CopyVariant& v, size_t n, size_t src_offset, size_t dst_offset) {
    CopyFixture& f = copy_fixture(std::max(src_offset, dst_offset) + n);
    const size_t begin = kGuard + dst_offset;  // the output's first float in the checked region
    const size_t region = begin + n + kGuard;
    poison(f.dst.get(), region);
    INFO("variant '" << v.name << "', n = " << n << " floats, src offset " << src_offset << ", dst offset "
                     << dst_offset << " floats");
    INFO(tut_checks::exercise_hint());
    std::string path;
    REQUIRE_NOTHROW(path = v.run(n, f.src.get() + src_offset, f.dst.get() + begin));
    INFO("path taken: '" << path << "'");
    REQUIRE_NOTHROW(TUT_CUDA(cudaDeviceSynchronize()));
    if (src_offset + n <= f.host.size() && region <= kHostCompareLimit) {
        std::vector<float> got(region);
        REQUIRE_NOTHROW(TUT_CUDA(cudaMemcpy(got.data(), f.dst.get(), region * sizeof(float), cudaMemcpyDeviceToHost)));
        const long long bad = first_difference(got.data() + begin, f.host.data() + src_offset, n);
        INFO("first wrong element: " << bad << (bad >= 0 && is_poison(got[begin + static_cast<size_t>(bad)])
                                                    ? " (never written: still poison)"
                                                    : ""));
        REQUIRE(bad < 0);
        const long long outside = first_write_outside(got, begin, n);
        INFO((outside < 0 ? "" : write_outside(static_cast<size_t>(outside), begin, n)));
        REQUIRE(outside < 0);
        return;
    }
    DeviceVerdict verdict;
    REQUIRE_NOTHROW(verdict = verify_copy(f.dst.get(), region, begin, n, src_offset));
    const std::string where = describe(verdict, begin, n, [&](size_t e, float found) {
        return "element " + std::to_string(e) + " is " + std::to_string(found) +
               (is_poison(found) ? " (never written: still poison)" : "") + ", expected " +
               std::to_string(pattern_value(src_offset + e));
    });
    INFO("compared on the device: " << verdict.wrong << " wrong floats; the first: " << where);
    REQUIRE(verdict.wrong == 0);
}

/// Sizes around every width that matters: warps, blocks of 256, float4 (4), tails.
inline const std::vector<size_t> kCopySizes{0,    1,    2,    3,    4,    5,     7,           8,
                                            31,   32,   33,   255,  256,  257,   1000,        1023,
                                            1025, 4099, 65541, size_t(1) << 20, (size_t(1) << 20) + 1,
                                            3 * (size_t(1) << 20) + 7};

/// (src, dst) offsets in floats: aligned, equally misaligned, and misaligned differently.
inline const std::vector<std::pair<size_t, size_t>> kCopyOffsets{{0, 0}, {1, 1}, {2, 2}, {3, 3},
                                                                 {1, 0}, {0, 3}, {2, 1}};

/// Device memory the copies of 2^30 floats need: the source and the guarded target.
inline constexpr size_t kLargestCopyBytes = 2 * (kMaxCopyElements + 2 * kGuard + 4) * sizeof(float);

// ----------------------------------------------------------------------------------
// Gathers (lessons 03-06)
// ----------------------------------------------------------------------------------

/// A patterned source matrix on the device, element (r, c) = pattern_value(c * rows + r),
/// at a float offset in its buffer; on the host too when it is small enough to compare there.
struct Matrix {
    int rows = 0, cols = 0;
    size_t offset = 0;
    std::vector<float> host;  ///< empty beyond kHostCompareLimit elements
    tut::DeviceBuffer<float> device;
    Matrix(int r, int c, size_t off) : rows(r), cols(c), offset(off), device(off + size_t(r) * size_t(c)) {
        const size_t elements = size_t(r) * size_t(c);
        if (elements <= kHostCompareLimit) host = pattern_vector(elements);
        fill_pattern(device.get() + off, elements, 0);
    }
    const float* src() const { return device.get() + offset; }
};

/// The matrix of this shape (one at a time is kept: the largest is 4 GiB).
inline Matrix& matrix(int rows, int cols, size_t offset = 0) {
    static std::unique_ptr<Matrix> cached;
    if (!cached || cached->rows != rows || cached->cols != cols || cached->offset != offset) {
        cached.reset();
        cached = std::make_unique<Matrix>(rows, cols, offset);
    }
    return *cached;
}

/// Runs `v` on src(:, indices), the output dst_offset floats after the front guard zone,
/// and requires the exact result, both guard zones untouched. Returns the path `v` took.
inline std::string check_gather(const GatherVariant& v, int rows, int cols, const std::vector<int>& indices,
                                const std::string& what, size_t src_offset = 0, size_t dst_offset = 0) {
    Matrix& m = matrix(rows, cols, src_offset);
    tut::DeviceBuffer<int> idx(indices);
    const size_t target = size_t(rows) * indices.size();
    const size_t begin = kGuard + dst_offset;  // the output's first float in the checked region
    const size_t region = begin + target + kGuard;
    float* base = target_buffer(region);
    poison(base, region);
    const GatherInput in = make_gather_input(rows, cols, m.src(), indices, idx.get());
    INFO("variant '" << v.name << "': " << what << "; src " << rows << " x " << cols << ", " << indices.size()
                     << " indices, src offset " << src_offset << ", dst offset " << dst_offset);
    INFO(tut_checks::exercise_hint());
    std::string path;
    REQUIRE_NOTHROW(path = v.run(in, base + begin));
    INFO("path taken: '" << path << "'");
    REQUIRE_NOTHROW(TUT_CUDA(cudaDeviceSynchronize()));
    // Describes the wrong output element at flat index `bad` (which holds `got`).
    auto wrong = [&](size_t bad, float got) {
        const size_t k = bad / size_t(rows);
        return "row " + std::to_string(bad % size_t(rows)) + " of extracted column " + std::to_string(k) +
               " (source column " + std::to_string(indices[k]) + ")" +
               (is_poison(got) ? ", never written (still poison)" : "");
    };
    if (!m.host.empty() && region <= kHostCompareLimit) {
        std::vector<float> got(region);
        REQUIRE_NOTHROW(TUT_CUDA(cudaMemcpy(got.data(), base, region * sizeof(float), cudaMemcpyDeviceToHost)));
        const long long bad = first_gather_mismatch(rows, m.host.data(), indices, got.data() + begin);
        INFO("first wrong element: "
             << (bad < 0 ? std::string("none") : wrong(size_t(bad), got[begin + size_t(bad)])));
        REQUIRE(bad < 0);
        const long long outside = first_write_outside(got, begin, target);
        INFO((outside < 0 ? "" : write_outside(static_cast<size_t>(outside), begin, target)));
        REQUIRE(outside < 0);
        return path;
    }
    DeviceVerdict verdict;
    const long long count = static_cast<long long>(indices.size());
    REQUIRE_NOTHROW(verdict = verify_gather(base, region, begin, rows, idx.get(), count));
    INFO("compared on the device: " << verdict.wrong << " wrong floats; the first: "
                                    << describe(verdict, begin, target, wrong));
    REQUIRE(verdict.wrong == 0);
    return path;
}

inline std::vector<int> sequential(int count, int first = 0) {
    std::vector<int> v(size_t(std::max(count, 0)));
    for (int k = 0; k < count; ++k) v[size_t(k)] = first + k;
    return v;
}

inline std::vector<int> reversed(int count, int cols) {
    std::vector<int> v = sequential(count, cols - count);
    std::reverse(v.begin(), v.end());
    return v;
}

/// The index sets every small shape is checked with: none, one (first and last
/// column), in order, reversed, repeated, random with repeats, a random sample.
inline std::vector<std::pair<std::string, std::vector<int>>> index_sets(int cols, uint64_t seed) {
    std::vector<std::pair<std::string, std::vector<int>>> sets{
        {"no indices", {}},
        {"one index: the first column", {0}},
        {"one index: the last column", {cols - 1}},
        {"all columns in order", sequential(cols)},
        {"all columns reversed", reversed(cols, cols)},
        {"repeated and out of order", {cols - 1, 0, cols - 1, cols / 2, 0, cols - 1}},
        {"random with repeats, 3 x cols", make_indices(3 * cols, cols, IndexOrder::Random, seed)},
        {"random sample of half the columns", make_indices(std::max(1, cols / 2), cols, IndexOrder::Random, seed + 1)}};
    return sets;
}

/// Shapes: a single row, warp-sized and odd row counts, multiples of 4 and not.
inline const std::vector<std::pair<int, int>> kSmallShapes{{1, 1},  {1, 7},   {2, 5},     {3, 10},   {4, 9},
                                                           {5, 6},  {31, 40}, {32, 33},   {33, 17},  {1000, 50},
                                                           {1001, 37}, {4097, 12}, {999, 3}};

/// Every variant given, every small shape, every index set.
inline void check_small_gathers(const std::vector<GatherVariant>& variants) {
    for (const auto& v : variants)
        for (auto [rows, cols] : kSmallShapes)
            for (const auto& [what, indices] : index_sets(cols, uint64_t(rows) * 31 + uint64_t(cols)))
                check_gather(v, rows, cols, indices, what);
}

/// The classic size, many indices (more than __constant__ holds, more than gridDim.y
/// allows), and enough elements that every thread of a full grid loops several times.
inline void check_many_indices(const std::vector<GatherVariant>& variants) {
    for (const auto& v : variants) {
        check_gather(v, 1000, 20000, sequential(10000), "the classic question: 1000 x 20000, columns 0..9999");
        check_gather(v, 1000, 20000, make_indices(10000, 20000, IndexOrder::Random, 5), "classic size, random sample");
        check_gather(v, 31, 20011, make_indices(20000, 20011, IndexOrder::Random, 6), "31 rows, 20000 random indices");
        check_gather(v, 1, 100000, make_indices(70000, 100000, IndexOrder::Random, 7), "1 row, 70000 indices");
        check_gather(v, 3, 100, make_indices(70001, 100, IndexOrder::Random, 8), "3 rows, 70001 indices with repeats");
        check_gather(v, 1024, 4000, make_indices(5000, 4000, IndexOrder::Random, 9),
                     "1024 rows, 5000 indices with repeats");
    }
}

/// Huge columns and the largest size the lessons claim (2^30 floats in and out), every
/// variant given, compared on the device.
inline void check_largest(const std::vector<GatherVariant>& variants) {
    const int huge_rows = (1 << 22) + 1;
    const int max_rows = 1 << 29;
    for (const auto& v : variants) check_gather(v, huge_rows, 3, {2, 0, 2, 1}, "huge odd row count");
    if (!largest_size_fits((2 * (size_t(1) << 30) + 2 * kGuard) * sizeof(float),
                           "the gathers of 2^30 floats (4 GiB in, 4 GiB out)"))
        return;
    for (const auto& v : variants)
        check_gather(v, max_rows, 2, {1, 0}, "2^29 rows x 2 columns: 2^30 floats in and out");
    // 4093 x 262144 < 2^30 elements, every column once in random order: odd rows, count > 65535.
    for (const auto& v : variants)
        check_gather(v, 4093, 262144, make_indices(262144, 262144, IndexOrder::Random, 11),
                     "4093 x 262144, all columns in random order");
}

/// Requires `v` to refuse the input with tut::Unsupported whose message contains
/// `expected`, without writing the target or leaving a CUDA error behind.
inline void check_refuses(const GatherVariant& v, int rows, int cols, const std::vector<int>& indices,
                          const std::string& expected) {
    tut::DeviceBuffer<float> src(64), dst(64);  // deliberately tiny: a launch would read or write out of bounds
    tut::DeviceBuffer<int> idx(indices.empty() ? std::vector<int>{0} : indices);
    dst.poison();
    const GatherInput in = make_gather_input(rows, cols, src.get(), indices, idx.get());
    INFO("variant '" << v.name << "' must refuse src " << rows << " x " << cols << " with " << indices.size()
                     << " indices (" << expected << ") with tut::Unsupported before launching");
    std::string message;
    try {
        v.run(in, dst.get());
    } catch (const tut::Unsupported& e) {
        message = e.what();
    }
    INFO("message: '" << message << "'");
    REQUIRE(message.find(expected) != std::string::npos);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    REQUIRE(cudaGetLastError() == cudaSuccess);
    REQUIRE(first_write_outside(dst.download(), 0, 0) < 0);
}

inline void check_all_refusals(const std::vector<GatherVariant>& variants) {
    for (const auto& v : variants) {
        check_refuses(v, 0, 5, {0}, "empty");
        check_refuses(v, 4, 0, {}, "empty");
        check_refuses(v, 0, 0, {}, "empty");
        check_refuses(v, 4, 5, {0, 1, -1}, "out of range");
        check_refuses(v, 4, 5, {5}, "out of range");
        check_refuses(v, 4, 5, {2, 3, 4, 0x7fffffff}, "out of range");
        check_refuses(v, 1 << 16, 1 << 15, {0}, "2^30");            // source of 2^31 elements
        check_refuses(v, 1 << 15, 2, std::vector<int>(1 << 16, 1), "2^30");  // target of 2^31 elements
    }
}

// ----------------------------------------------------------------------------------
// The checking machinery itself (lessons 02-06)
// ----------------------------------------------------------------------------------

/// The device fill matches the host's pattern, and the device comparisons find a correct
/// result correct and planted errors where they are (wrong values, never-written
/// elements, writes into the guard zones).
inline void check_device_comparison() {
    const size_t n = (size_t(1) << 20) + 3;
    tut::DeviceBuffer<float> src(n), out(n + 2 * kGuard);
    fill_pattern(src.get(), n, 7);
    REQUIRE(src.download() == pattern_vector(n, 7));
    auto set = [&](size_t i, float value) {
        TUT_CUDA(cudaMemcpy(out.get() + i, &value, sizeof value, cudaMemcpyHostToDevice));
    };
    // A copy of src + 0 (pattern from 7) into out + kGuard.
    out.poison();
    DeviceVerdict v = verify_copy(out.get(), out.size(), kGuard, n, 7);
    CHECK(v.wrong == n);  // nothing written: every element still poison
    CHECK(v.first == static_cast<long long>(kGuard));
    CHECK(is_poison(v.found));
    TUT_CUDA(cudaMemcpy(out.get() + kGuard, src.get(), n * sizeof(float), cudaMemcpyDeviceToDevice));
    v = verify_copy(out.get(), out.size(), kGuard, n, 7);
    CHECK(v.wrong == 0);
    CHECK(v.first == -1);
    CHECK(verify_copy(out.get(), out.size(), kGuard, n, 8).wrong == n);  // shifted by one: all wrong
    set(kGuard + 777777, 0.5f);
    v = verify_copy(out.get(), out.size(), kGuard, n, 7);
    CHECK(v.wrong == 1);
    CHECK(v.first == static_cast<long long>(kGuard + 777777));
    CHECK(v.found == 0.5f);
    set(kGuard + n + kGuard - 1, 1.0f);  // the last guard float
    set(3, 2.0f);                        // a guard float before the target
    v = verify_copy(out.get(), out.size(), kGuard, n, 7);
    CHECK(v.wrong == 3);
    CHECK(v.first == 3);
    CHECK(describe(v, kGuard, n, [](size_t, float) { return std::string(); }) ==
          "a write before the start of the output: offset -" + std::to_string(kGuard - 3));

    // A gather of columns {4, 0, 4, 2} of a 1001 x 5 patterned matrix, made with cudaMemcpy.
    const int rows = 1001;
    const std::vector<int> indices{4, 0, 4, 2};
    tut::DeviceBuffer<float> matrix(size_t(rows) * 5);
    fill_pattern(matrix.get(), matrix.size(), 0);
    tut::DeviceBuffer<int> idx(indices);
    out.poison();
    for (size_t k = 0; k < indices.size(); ++k)
        TUT_CUDA(cudaMemcpy(out.get() + kGuard + k * rows, matrix.get() + size_t(indices[k]) * rows,
                            rows * sizeof(float), cudaMemcpyDeviceToDevice));
    const size_t target = rows * indices.size();
    v = verify_gather(out.get(), out.size(), kGuard, rows, idx.get(), 4);
    CHECK(v.wrong == 0);
    set(kGuard + 2 * rows + 5, pattern_value(0 * rows + 5));  // column 0's row 5 where column 4's belongs
    v = verify_gather(out.get(), out.size(), kGuard, rows, idx.get(), 4);
    CHECK(v.wrong == 1);
    CHECK(v.first == static_cast<long long>(kGuard + 2 * rows + 5));
    set(kGuard + target, 3.0f);  // the first float after the target
    v = verify_gather(out.get(), out.size(), kGuard, rows, idx.get(), 4);
    CHECK(v.wrong == 2);
    CHECK(verify_gather(out.get(), out.size(), kGuard, rows, idx.get(), 3).wrong == 1 + rows + 1);
    CHECK(write_outside(kGuard + target, kGuard, target) ==
          "a write past the end of the output: offset " + std::to_string(target) + " (the output has " +
              std::to_string(target) + " elements)");
}

}  // namespace bandwidth_checks
