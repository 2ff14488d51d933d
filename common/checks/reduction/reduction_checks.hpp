/// @file reduction_checks.hpp
/// @brief Checks shared by the reduction lessons: sums at many sizes (and start offsets),
/// the largest size the lessons accept, refusals, run-to-run determinism.
///
/// A lesson's check file names every variant it requires (Required) and the depth rule
/// its sums are judged with (depth_rules.hpp); a variant that was removed or renamed
/// fails, naming what the lesson has. Every check compares the GPU's sum with a
/// compensated CPU sum of the same elements; the tolerance is
/// tut::reduction::allowed_error() for the rule's depth (|error| <= gamma_depth *
/// sum|x_i|, Higham), and int sums must be exact. The float inputs are all positive, so
/// that bound is a small fraction of the sum itself (random_input()); a bound that is not
/// below a tenth of |sum| fails the check as "CANNOT JUDGE" (judge(), kLoosestBound).
/// The one-element output sits between guard zones and is poisoned, and each run gets a
/// fresh workspace, poisoned, with guard zones: a result that was never written, a
/// partial sum read before it was written, an accumulator that was not reset, or a write
/// next to the output or past the scratch asked for, fails. The empty sum gets a null
/// input pointer: it must not be read. The speed case of lessons 2-9 is
/// judge_sum_against_device_copy().
#pragma once

#include "catch.hpp"
#include "depth_rules.hpp"
#include "guarded.hpp"
#include "lesson_hint.hpp"
#include "perf_gate.hpp"
#include "tut/reduction.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace reduction_checks {

using tut::reduction::Reference;
template <class T>
using Variant = tut::reduction::Variant<T>;

/// The variants a lesson's checks require, by name, per element type.
struct Required {
    std::vector<std::string> f64, f32, i32, c64;

    template <class T>
    const std::vector<std::string>& of() const {
        if constexpr (std::is_same_v<T, double>) return f64;
        else if constexpr (std::is_same_v<T, float>) return f32;
        else if constexpr (std::is_same_v<T, int>) return i32;
        else return c64;
    }
};

/// Empty, one, a warp +-1, a large size that is no multiple of anything, the headline 2^26.
inline const std::vector<size_t> kSizes{0, 1, 31, 32, 33, 1000003, size_t(1) << 26};
inline constexpr size_t kLargest = size_t(1) << 26;
inline constexpr size_t kSlack = 8;  ///< extra elements past kLargest, so offset starts still have data

/// Guard zones: elements on each side of the one-element output (a kernel that writes one
/// value per block, or per warp, where one belongs), and bytes on each side of the
/// workspace.
inline constexpr size_t kOutputGuard = 4096;
inline constexpr size_t kWorkspaceGuardBytes = 4096;

/// The variant of type T named `name` in lesson::variants().
template <class T>
Variant<T> variant_named(const std::string& name) {
    const tut::reduction::Variants all = lesson::variants();
    std::string names;
    for (const Variant<T>& v : all.of<T>()) {
        if (v.name == name) return v;
        names += (names.empty() ? "'" : ", '") + v.name + "'";
    }
    FAIL("the lesson has no " << tut::reduction::type_name<T>() << " variant named '" << name
                              << "', which these checks require (its " << tut::reduction::type_name<T>()
                              << " variants: " << (names.empty() ? std::string("none") : names) << ")");
    return {};
}

/// The SM count the rules are evaluated for.
inline size_t sms() { return static_cast<size_t>(std::max(1, tut::sm_count())); }

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

/// Runs `v` once on n elements at `in` (output and workspace poisoned, with guard zones)
/// and returns the result; fails on an exception, a CUDA error or a write outside the
/// output or the workspace asked for.
template <class T>
T run_once(const Variant<T>& v, const T* in, size_t n, const Reference& ref) {
    tut_checks::GuardedBuffer<T> out(1, kOutputGuard);
    tut::reduction::poison_output(out.get(), ref);  // only where 0xFF bytes would be the right int sum
    tut::reduction::Workspace workspace(0, kWorkspaceGuardBytes);
    REQUIRE_NOTHROW(v.run(in, n, out.get(), workspace));
    REQUIRE_NOTHROW(TUT_CUDA(cudaDeviceSynchronize()));
    const std::string output_damage = out.damage();
    INFO("the output is one element: " << output_damage);
    REQUIRE(output_damage.empty());
    const std::string workspace_damage = workspace.damage();
    INFO(workspace_damage);
    REQUIRE(workspace_damage.empty());
    return out.download()[0];
}

/// Requires `v` to sum n elements (from `offset`) within the rule's bound (exactly for int).
template <class T>
void check_sum(const Variant<T>& v, DepthRule depth, size_t n, size_t offset = 0) {
    Dataset<T>& data = dataset<T>();
    REQUIRE(offset + n <= data.host.size());
    const Reference& ref = data.reference(offset, n);
    const T* in = n == 0 ? nullptr : data.device.get() + offset;
    INFO("variant '" << v.name << "', n = " << n << (offset ? ", start offset " : "")
                     << (offset ? std::to_string(offset) + " elements" : std::string()));
    INFO(tut_checks::exercise_hint());
    const T got = run_once(v, in, n, ref);
    const tut::reduction::Judgement judgement = tut::reduction::judge(got, ref, depth(n, sms()));
    INFO(judgement.text);
    REQUIRE(judgement.ok);
}

/// The required variants of type T, at every size (and start offset).
template <class T>
void check_sums(const std::vector<std::string>& names, DepthRule depth, const std::vector<size_t>& sizes = kSizes,
                const std::vector<size_t>& offsets = {0}) {
    REQUIRE(!names.empty());
    for (const std::string& name : names) {
        const Variant<T> v = variant_named<T>(name);
        for (size_t offset : offsets)
            for (size_t n : sizes) check_sum(v, depth, n, offset);
    }
}

/// Period of the largest check's input: odd, so an index that is off by a power of two
/// (a 32-bit product that wrapped, a stride counted twice) reads a different value.
inline constexpr size_t kPeriod = kLargest + 7;

/// The largest n every lesson accepts, kMaxN = 2^30 elements (8 GiB of doubles), summed
/// once by the variant `name`. The input does not come from the host: the device array
/// repeats the dataset's first kPeriod elements (device-to-device copies), and the
/// reference is put together from the references of one period and of the rest. Skipped,
/// with a warning, on a GPU without the memory.
template <class T>
void check_largest(const std::string& name, DepthRule depth) {
    const Variant<T> v = variant_named<T>(name);
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
    const tut::reduction::Judgement judgement = tut::reduction::judge(got, ref, depth(n, sms()));
    INFO(judgement.text);
    REQUIRE(judgement.ok);
}

/// The required variants of type T refuse n > 2^30 with tut::Unsupported, before
/// touching memory or asking for scratch.
template <class T>
void check_refuse_too_large(const std::vector<std::string>& names) {
    for (const std::string& name : names) {
        const Variant<T> v = variant_named<T>(name);
        INFO("variant '" << v.name << "' must refuse n = 2^30 + 1 with tut::Unsupported");
        tut::reduction::Workspace workspace;
        REQUIRE_THROWS_AS(v.run(nullptr, tut::reduction::kMaxN + 1, nullptr, workspace), tut::Unsupported);
        REQUIRE(workspace.asked() == 0);
    }
}

/// Every required variant of every type refuses n > 2^30.
inline void check_all_refuse_too_large(const Required& required) {
    check_refuse_too_large<double>(required.f64);
    check_refuse_too_large<float>(required.f32);
    check_refuse_too_large<int>(required.i32);
    check_refuse_too_large<cuDoubleComplex>(required.c64);
}

/// Requires `runs` runs of each variant on n elements to give the same, correct bits.
template <class T>
void check_run_to_run_identical(const std::vector<std::string>& names, DepthRule depth, size_t n, int runs) {
    Dataset<T>& data = dataset<T>();
    const Reference& ref = data.reference(0, n);
    for (const std::string& name : names) {
        const Variant<T> v = variant_named<T>(name);
        INFO("variant '" << v.name << "', n = " << n << ": every run must give the same bits");
        INFO(tut_checks::exercise_hint());
        const T first = run_once(v, data.device.get(), n, ref);
        const tut::reduction::Judgement judgement = tut::reduction::judge(first, ref, depth(n, sms()));
        INFO(judgement.text);
        REQUIRE(judgement.ok);
        for (int r = 1; r < runs; ++r) {
            const T again = run_once(v, data.device.get(), n, ref);
            REQUIRE(std::memcmp(&first, &again, sizeof(T)) == 0);
        }
    }
}

/// The speed case of lessons 2-9: the float variant `variant` sums n floats beside a 1 GiB
/// cudaMemcpy device to device (the tour's measure of the copy bandwidth,
/// tut::measure_d2d_bandwidth_gbs()), the L2 flushed before each run of the sum only, as the
/// tour times each; the sum's bandwidth as a share of the copy's is judged against this
/// GPU's threshold (perf_gate::time_and_judge(); common/checks/thresholds/). The check file
/// fills c's name, measure, size, previous_from and hint; the rest is set here.
/// `previous_variant`, when named, is the previous lesson's approach as the lesson keeps it,
/// timed when calibrating.
inline void judge_sum_against_device_copy(perf_gate::RatioCase c, const std::string& variant, size_t n,
                                          const std::string& previous_variant = {}) {
    const Variant<float> v = variant_named<float>(variant);
    const Variant<float> previous = previous_variant.empty() ? Variant<float>{} : variant_named<float>(previous_variant);
    const size_t copied = size_t(1) << 30;  // bytes, as tut::measure_d2d_bandwidth_gbs() copies them
    tut::DeviceBuffer<float> in(n), out(1);
    tut::DeviceBuffer<unsigned char> from(copied), to(copied);
    TUT_CUDA(cudaMemset(in.get(), 0x3c, n * sizeof(float)));  // 0.0116 in every element
    TUT_CUDA(cudaMemset(from.get(), 1, copied));
    tut::reduction::Workspace workspace(n * sizeof(float) / 64 + 65536);  // as the lesson's harness
    c.work_name = "'" + variant + "'";
    c.yardstick_name = "cudaMemcpy";
    c.scale = double(n * sizeof(float)) / (2.0 * copied);  // GB/s of the sum over the copy's (read + write)
    c.plan.flush_l2 = true;  // the sum, as the tour times it; the copy, as the tour's measurement, without
    const auto work = [&] {
        workspace.begin_run();
        v.run(in.get(), n, out.get(), workspace);
    };
    const auto yardstick = [&] {
        TUT_CUDA(cudaMemcpyAsync(to.get(), from.get(), copied, cudaMemcpyDeviceToDevice));
    };
    std::function<void()> previous_work;  // empty: nothing to time beside the yardstick
    if (!previous_variant.empty())
        previous_work = [&] {
            workspace.begin_run();
            previous.run(in.get(), n, out.get(), workspace);
        };
    perf_gate::time_and_judge(c, work, yardstick, previous_work);
}

}  // namespace reduction_checks
