/// @file reduction_checks.hpp
/// @brief Checks shared by the reduction lessons: a sum at a size (and start offset),
/// the largest size the lessons accept, refusals, run-to-run determinism.
///
/// Every check compares the GPU's sum with a compensated CPU sum of the same elements;
/// the tolerance is tut::reduction::allowed_error() for the variant's depth (see its
/// comment: |error| <= gamma_depth * sum|x_i|, Higham), and int sums must be exact.
/// The float inputs are all positive, so that bound is a small fraction of the sum
/// itself (random_input()); a bound that is not below a tenth of |sum| fails the check
/// as "CANNOT JUDGE" (judge(), kLoosestBound): a check that could not fail says so.
/// The output is poisoned and the workspace filled with NaN bytes before every run,
/// so a result that was never written, or a partial sum read before it was written,
/// fails. The empty sum gets a null input pointer: it must not be read.
#pragma once

#include "catch.hpp"
#include "lesson_hint.hpp"
#include "tut/reduction.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>

namespace reduction_checks {

using tut::reduction::Reference;
using tut::reduction::Variant;

/// Empty, one, a warp +-1, a large size that is no multiple of anything, the headline 2^26.
inline const std::vector<size_t> kSizes{0, 1, 31, 32, 33, 1000003, size_t(1) << 26};
inline constexpr size_t kLargest = size_t(1) << 26;
inline constexpr size_t kSlack = 8;  ///< extra elements past kLargest, so offset starts still have data

/// One random array per type, shared by every size (a size-n problem is its first n
/// elements, or n elements from an offset), on the host and on the device.
template <class T>
struct Dataset {
    std::vector<T> host;
    tut::DeviceBuffer<T> device;
    std::map<std::pair<size_t, size_t>, Reference> references;  // (offset, n) -> reference

    Dataset() : host(tut::reduction::random_input<T>(kLargest + kSlack, 4242)), device(host) {}
    const Reference& reference(size_t offset, size_t n) {
        auto it = references.find({offset, n});
        if (it == references.end())
            it = references.emplace(std::make_pair(offset, n), tut::reduction::reference_sum(host.data() + offset, n)).first;
        return it->second;
    }
};

template <class T>
Dataset<T>& dataset() {
    static Dataset<T> data;
    return data;
}

/// Runs `v` on n elements starting `offset` elements into the dataset and returns the result.
template <class T>
T run_once(const Variant<T>& v, const T* in, size_t n, const Reference& ref) {
    tut::DeviceBuffer<T> out(1);
    const size_t ws_bytes = v.workspace_bytes ? v.workspace_bytes(n) : 0;
    tut::DeviceBuffer<unsigned char> workspace(ws_bytes);
    workspace.poison();
    tut::reduction::poison_output(out.get(), ref);
    REQUIRE_NOTHROW(v.run(in, n, out.get(), workspace.get()));
    REQUIRE_NOTHROW(TUT_CUDA(cudaDeviceSynchronize()));
    T got{};
    TUT_CUDA(cudaMemcpy(&got, out.get(), sizeof(T), cudaMemcpyDeviceToHost));
    return got;
}

/// Requires `v` to sum n elements (from `offset`) within the error bound (exactly for int).
template <class T>
void check_sum(const Variant<T>& v, size_t n, size_t offset = 0) {
    Dataset<T>& data = dataset<T>();
    REQUIRE(offset + n <= data.host.size());
    const Reference& ref = data.reference(offset, n);
    const T* in = n == 0 ? nullptr : data.device.get() + offset;
    INFO("variant '" << v.name << "', n = " << n << (offset ? ", start offset " : "")
                     << (offset ? std::to_string(offset) + " elements" : std::string()));
    INFO(tut_checks::exercise_hint());
    const T got = run_once(v, in, n, ref);
    const tut::reduction::Verdict verdict = tut::reduction::judge(got, ref, v.depth ? v.depth(n) : n);
    INFO(verdict.text);
    REQUIRE(verdict.ok);
}

/// Every variant of type T in the lesson, at every size (and start offset).
template <class T>
void check_all_sums(const std::vector<size_t>& sizes = kSizes, const std::vector<size_t>& offsets = {0}) {
    const std::vector<Variant<T>> variants = lesson::reduction_variants().of<T>();
    REQUIRE(!variants.empty());
    for (const Variant<T>& v : variants)
        for (size_t offset : offsets)
            for (size_t n : sizes) check_sum(v, n, offset);
}

/// Period of the largest check's input: odd, so an index that is off by a power of two
/// (a 32-bit product that wrapped, a stride counted twice) reads a different value.
inline constexpr size_t kPeriod = kLargest + 7;

/// The largest n every lesson accepts, kMaxN = 2^30 elements (8 GiB of doubles), summed
/// once, by the lesson's first variant of type T. The input does not come from the host:
/// the device array repeats the dataset's first kPeriod elements (device-to-device
/// copies), and the reference is put together from the references of one period and of
/// the rest. Skipped, with a warning, on a GPU without the memory.
template <class T>
void check_largest() {
    const std::vector<Variant<T>> variants = lesson::reduction_variants().of<T>();
    REQUIRE(!variants.empty());
    const Variant<T>& v = variants.front();
    const size_t n = tut::reduction::kMaxN;
    const size_t bytes = n * sizeof(T);
    if (const std::string why = tut::device_memory_shortfall(bytes + bytes / 64 + (size_t(256) << 20)); !why.empty()) {
        WARN("variant '" << v.name << "' not checked at n = 2^30: " << why);
        return;
    }
    Dataset<T>& data = dataset<T>();
    tut::DeviceBuffer<T> in(n);
    for (size_t start = 0; start < n; start += kPeriod) {
        const size_t count = std::min(kPeriod, n - start);
        TUT_CUDA(cudaMemcpy(in.get() + start, data.device.get(), count * sizeof(T), cudaMemcpyDeviceToDevice));
    }
    const size_t periods = n / kPeriod, rest = n % kPeriod;
    const Reference& one = data.reference(0, kPeriod);
    const Reference& last = data.reference(0, rest);
    Reference ref = one;
    ref.n = n;
    for (int c = 0; c < ref.components; ++c) {
        ref.sum[c] = double(periods) * one.sum[c] + last.sum[c];
        ref.sum_abs[c] = double(periods) * one.sum_abs[c] + last.sum_abs[c];
    }
    ref.exact_sum = static_cast<long long>(periods) * one.exact_sum + last.exact_sum;
    INFO("variant '" << v.name << "', n = 2^30 (the largest n the lessons accept; the input repeats the first "
                     << kPeriod << " elements of the dataset)");
    INFO(tut_checks::exercise_hint());
    const T got = run_once(v, static_cast<const T*>(in.get()), n, ref);
    const tut::reduction::Verdict verdict = tut::reduction::judge(got, ref, v.depth ? v.depth(n) : n);
    INFO(verdict.text);
    REQUIRE(verdict.ok);
}

/// Every variant of every type refuses n > 2^30 with tut::Unsupported, before touching memory.
inline void check_all_refuse_too_large() {
    const tut::reduction::Variants all = lesson::reduction_variants();
    auto refuse = [](const auto& list) {
        for (const auto& v : list) {
            INFO("variant '" << v.name << "' must refuse n = 2^30 + 1 with tut::Unsupported");
            REQUIRE_THROWS_AS(v.run(nullptr, tut::reduction::kMaxN + 1, nullptr, nullptr), tut::Unsupported);
            if (v.workspace_bytes) REQUIRE_THROWS_AS(v.workspace_bytes(tut::reduction::kMaxN + 1), tut::Unsupported);
        }
    };
    refuse(all.f64);
    refuse(all.f32);
    refuse(all.i32);
    refuse(all.c64);
}

/// Requires `runs` runs of every variant of type T on n elements to give the same, correct bits.
template <class T>
void check_run_to_run_identical(size_t n, int runs) {
    Dataset<T>& data = dataset<T>();
    const Reference& ref = data.reference(0, n);
    const std::vector<Variant<T>> variants = lesson::reduction_variants().of<T>();
    for (const Variant<T>& v : variants) {
        INFO("variant '" << v.name << "', n = " << n << ": every run must give the same bits");
        INFO(tut_checks::exercise_hint());
        const T first = run_once(v, data.device.get(), n, ref);
        const tut::reduction::Verdict verdict = tut::reduction::judge(first, ref, v.depth ? v.depth(n) : n);
        INFO(verdict.text);
        REQUIRE(verdict.ok);
        for (int r = 1; r < runs; ++r) {
            const T again = run_once(v, data.device.get(), n, ref);
            REQUIRE(std::memcmp(&first, &again, sizeof(T)) == 0);
        }
    }
}

}  // namespace reduction_checks
