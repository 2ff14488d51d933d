// Checks for multigpu/02_allreduce, on 2 GPUs (one process each): the ring's int sums
// exact and float sums within the rounding bound, from 1 element to 1 GiB (sizes that are
// no multiple of the chunks, fewer elements than chunks), with guard zones around every
// output; calls back to back without the host waiting (the barriers must order them);
// the ring faster than the gather; the ring's bus bandwidth as a share of ncclAllReduce's
// at 256 MiB, timed beside it on every rank and judged against this GPU's threshold for
// this GPU count (mg_perf.hpp); the gather and NCCL variants the same way. The given
// pipelined ring ("ring, pipelined") the same way as the ring, and back to back into one
// output among the other variants (its signals must order it by themselves).
#include "mg_checks.hpp"
#include "mg_perf.hpp"
#include "tut/multigpu_ipc.hpp"
#include "tut/multigpu_nccl.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

TUT_MG_CHECKS_NEED_GPUS(2);

namespace lesson {
std::vector<tut::mg::AllreduceWay> allreduce_variants();
}

namespace {

using mg_checks::world;

constexpr size_t kGuard = 1024;  // elements of guard zone around every output (a multiple of 4: alignment kept)

uint64_t mix(uint64_t seed, int r, size_t i) {
    uint64_t z = seed + 0x9E3779B97F4A7C15ull * (uint64_t(r) * 0x100000001ull + i + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
int int_value(uint64_t seed, int r, size_t i) { return int(mix(seed, r, i) % 2001) - 1000; }
float float_value(uint64_t seed, int r, size_t i) { return float(int64_t(mix(seed, r, i) >> 40) - (1 << 23)) / float(1 << 23); }

const tut::mg::AllreduceWay& variant(const std::string& name) {
    static const std::vector<tut::mg::AllreduceWay> all = lesson::allreduce_variants();
    for (const auto& v : all)
        if (v.name == name) return v;
    FAIL("the lesson has no variant named '" << name << "'");
    return all.front();
}

/// The job's communicator and stream, made once.
struct Job {
    tut::mg::Nccl nccl{world()};
    tut::mg::PeerFlags flags{world()};
    cudaStream_t stream = nullptr;
    Job() { TUT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)); }
};
/// Made once and never destroyed: its communicators must not outlive MPI at exit.
Job& job() {
    // A failure to make it (on one rank, say) ends the job: the others wait in its collective.
    static Job* j = [] {
        Job* made = nullptr;
        mg_checks::run_or_abort([&] { made = new Job; });
        return made;
    }();
    return *j;
}

/// A call of the all-reduce on `count` elements, from `in` to `out`, with this job's
/// world, flags, NCCL communicator and stream.
template <class T>
tut::mg::AllreduceCall<T> call_of(tut::mg::PeerBuffer<T>& in, tut::mg::PeerBuffer<T>& out, size_t count) {
    tut::mg::AllreduceCall<T> c;
    c.world = &world();
    c.in = &in;
    c.out = &out;
    c.count = count;
    c.flags = &job().flags;
    c.nccl_comm = job().nccl.comm;
    c.stream = job().stream;
    return c;
}

template <class T>
T value(uint64_t seed, int r, size_t i) {
    if constexpr (std::is_same_v<T, int>) {
        return int_value(seed, r, i);
    } else {
        return float_value(seed, r, i);
    }
}

template <class T>
void (*runner(const tut::mg::AllreduceWay& v))(const tut::mg::AllreduceCall<T>&) {
    if constexpr (std::is_same_v<T, int>) {
        return v.run_int;
    } else {
        return v.run_float;
    }
}

/// "" when out (downloaded) is the sum of every rank's input of `seed`, exact for int,
/// within (n - 1) 2^-24 sum|x| for float; else the first wrong element.
template <class T>
std::string compare(const std::vector<T>& got, uint64_t seed) {
    const int n = world().size;
    for (size_t i = 0; i < got.size(); ++i) {
        double sum = 0, mag = 0;
        for (int r = 0; r < n; ++r) {
            const double v = value<T>(seed, r, i);
            sum += v;
            mag += std::fabs(v);
        }
        const double bound = std::is_same_v<T, int> ? 0.0 : (n - 1) * std::ldexp(1.0, -24) * mag;
        if (!(std::fabs(double(got[i]) - sum) <= bound)) {
            const bool poison = std::is_same_v<T, int> ? got[i] == T(-1) : std::isnan(double(got[i]));
            return "element " + std::to_string(i) + " of " + std::to_string(got.size()) + " is " +
                   std::to_string(got[i]) + ", expected " + std::to_string(sum) +
                   (poison ? " (never written: still the poison)" : "");
        }
    }
    return "";
}

/// Runs variant `name` on `count` elements of T once (inputs of `seed`, output poisoned
/// and fenced by guard zones) and returns this rank's verdict ("" when right).
template <class T>
std::string run_and_compare(const std::string& name, size_t count, uint64_t seed) {
    auto run = runner<T>(variant(name));
    if (!run) return "no " + name + " variant for this type";
    Job& j = job();  // every rank (collective at the first call)
    mg_checks::step("multigpu/02: " + name + ", " + std::to_string(count) + " elements of " +
                    (std::is_same_v<T, int> ? "int" : "float"));
    tut::mg::PeerBuffer<T> in(world(), count), out(world(), count, kGuard);
    std::vector<T> host(count);
    for (size_t i = 0; i < count; ++i) host[i] = value<T>(seed, world().rank, i);
    if (count) TUT_CUDA(cudaMemcpy(in.local(), host.data(), count * sizeof(T), cudaMemcpyHostToDevice));
    TUT_CUDA(cudaMemset(out.with_guards(), 0xFF, out.total() * sizeof(T)));
    mg_checks::fill_guards(out.with_guards(), count, kGuard);
    TUT_CUDA(cudaDeviceSynchronize());
    const tut::mg::AllreduceCall<T> c = call_of<T>(in, out, count);
    std::string bad;
    // A CUDA error here (a fault in the variant's kernels shows at the synchronisation) may
    // come on one rank only: it ends the job with its message rather than leave the other
    // ranks waiting in the verdict's collective.
    mg_checks::run_or_abort([&] {
        run(c);
        tut::mg::progress_detail("waiting for the all-reduce on the GPU (its barriers wait for the other GPUs)");
        TUT_CUDA(cudaStreamSynchronize(j.stream));
        tut::mg::progress_detail("comparing");
        bad = mg_checks::check_guards(out.with_guards(), count, kGuard);
        if (bad.empty()) {
            std::vector<T> got(count);
            if (count) TUT_CUDA(cudaMemcpy(got.data(), out.local(), count * sizeof(T), cudaMemcpyDeviceToHost));
            bad = compare(got, seed);
        }
    });
    return bad.empty() ? "" : name + ", " + std::to_string(count) + " elements: " + bad;
}

const std::vector<size_t> kSizes{1, 2, 3, 5, 7, 8, 1000, 4099, (size_t(1) << 20) + 3};

template <class T>
void check_variant(const std::string& name, const std::vector<size_t>& sizes) {
    for (size_t count : sizes) {
        const std::string bad = run_and_compare<T>(name, count, 17 + count);
        MG_REQUIRE(bad.empty(), bad);
    }
}

/// Time of one call of variant `name` on `count` floats: the largest over the ranks of
/// the median of 5 (after 2 untimed).
double seconds(const std::string& name, size_t count) {
    job();  // every rank (collective at the first call)
    mg_checks::step("multigpu/02: timing " + name + " at " + std::to_string(count) + " floats");
    tut::mg::PeerBuffer<float> in(world(), count), out(world(), count);
    TUT_CUDA(cudaMemset(in.local(), 0, count * sizeof(float)));
    const tut::mg::AllreduceCall<float> c = call_of<float>(in, out, count);
    double ms = 0;
    mg_checks::run_or_abort([&] {
        ms = tut::mg::time_across_ranks(world(), [&] { variant(name).run_float(c); }, 2, 5, 1, job().stream);
    });
    return ms * 1e-3;
}

}  // namespace

TEST_CASE("multigpu/02: the ring's int sums are exact, 1 element to 2^20 + 3", "[exercise]") {
    check_variant<int>("ring", kSizes);
}

TEST_CASE("multigpu/02: the ring's int sums are exact at 2^26 elements (256 MiB)", "[exercise]") {
    check_variant<int>("ring", {size_t(1) << 26});
}

TEST_CASE("multigpu/02: the ring's float sums are within the rounding bound, up to 1 GiB", "[exercise]") {
    check_variant<float>("ring", {1, 3, 1000, (size_t(1) << 20) + 3, size_t(1) << 28});
}

TEST_CASE("multigpu/02: ring calls back to back, each on new inputs, each give their own sum", "[exercise]") {
    // No host wait between the calls: each rank rewrites its input and calls again at
    // once, so only the GPU-side barriers keep a rank from reading its neighbour's input
    // or output of the wrong call.
    const size_t count = (size_t(1) << 22) + 5;
    const int calls = 6;
    job();  // every rank (collective at the first call)
    mg_checks::step("multigpu/02: 6 ring calls back to back");
    tut::mg::PeerBuffer<int> in(world(), count);
    std::vector<std::unique_ptr<tut::mg::PeerBuffer<int>>> outs;
    std::vector<std::vector<int>> inputs(calls, std::vector<int>(count));
    int* pinned = nullptr;
    TUT_CUDA(cudaMallocHost(&pinned, calls * count * sizeof(int)));
    for (int k = 0; k < calls; ++k) {
        outs.push_back(std::make_unique<tut::mg::PeerBuffer<int>>(world(), count));
        TUT_CUDA(cudaMemset(outs.back()->local(), 0xFF, count * sizeof(int)));
        for (size_t i = 0; i < count; ++i) pinned[k * count + i] = int_value(100 + k, world().rank, i);
    }
    TUT_CUDA(cudaDeviceSynchronize());
    tut::mg::barrier(world());
    mg_checks::run_or_abort([&] {
        for (int k = 0; k < calls; ++k) {
            TUT_CUDA(cudaMemcpyAsync(in.local(), pinned + k * count, count * sizeof(int), cudaMemcpyHostToDevice, job().stream));
            const tut::mg::AllreduceCall<int> c = call_of<int>(in, *outs[k], count);
            variant("ring").run_int(c);
        }
        tut::mg::progress_detail("waiting for 6 ring calls on the GPU (their barriers wait for the other GPUs)");
        TUT_CUDA(cudaStreamSynchronize(job().stream));
    });
    cudaFreeHost(pinned);
    std::string bad;
    mg_checks::run_or_abort([&] {
        for (int k = 0; k < calls && bad.empty(); ++k) {
            std::vector<int> got(count);
            TUT_CUDA(cudaMemcpy(got.data(), outs[k]->local(), count * sizeof(int), cudaMemcpyDeviceToHost));
            bad = compare(got, 100 + k);
            if (!bad.empty()) bad = "call " + std::to_string(k + 1) + " of " + std::to_string(calls) + ": " + bad;
        }
    });
    MG_REQUIRE(bad.empty(), bad);
}

TEST_CASE("multigpu/02: the ring is faster than gathering to one GPU, at 64 MiB", "[exercise][performance]") {
    // Gather: GPU 0's link carries everything, twice. Ring: every link carries 2(n-1)/n of
    // the data at once. On 2 GPUs the ring takes half the gather's time; 0.8 is asked.
    const size_t count = size_t(16) << 20;
    const std::string bad = run_and_compare<float>("ring", 1000, 3);  // a wrong ring is not timed
    MG_REQUIRE(bad.empty(), bad);
    const double ring = seconds("ring", count), gather = seconds("gather", count);
    const std::string slow = ring <= 0.8 * gather ? "" : tut::fmt("ring %.3f ms, gather %.3f ms: the ring should take "
                                                                "at most 0.8 of the gather's time", ring * 1e3, gather * 1e3);
    MG_REQUIRE(slow.empty(), slow);
}

const char* const kSpeedCase = "multigpu/02: the ring's bus bandwidth against ncclAllReduce's, at 256 MiB";

TEST_CASE(kSpeedCase, "[performance]") {
    // Both move the same bytes on the same GPUs, so the ratio of the bus bandwidths is
    // NCCL's time over the ring's. The gather (the previous approach, a variant of the
    // lesson) is timed beside them in calibration runs.
    const size_t count = size_t(64) << 20;  // 256 MiB of floats
    const std::string bad = run_and_compare<float>("ring", 1000, 3);  // a wrong ring is not timed
    MG_REQUIRE(bad.empty(), bad);
    job();  // every rank (collective at the first call)
    mg_checks::step("multigpu/02: the ring beside ncclAllReduce at 256 MiB");
    tut::mg::PeerBuffer<float> in(world(), count), out(world(), count);
    TUT_CUDA(cudaMemset(in.local(), 0, count * sizeof(float)));
    TUT_CUDA(cudaDeviceSynchronize());
    const tut::mg::AllreduceCall<float> c = call_of<float>(in, out, count);
    mg_perf::RatioCase rc;
    rc.name = kSpeedCase;
    rc.measure = "% of ncclAllReduce's bus bandwidth";
    rc.size = world().size == 2 ? "256 MiB, 2 GPUs" : "256 MiB, " + mg_perf::gpus_text();
    rc.work_name = "'ring'";
    rc.yardstick_name = "ncclAllReduce";
    rc.previous_name = "'gather'";
    rc.hint = "Does every GPU read only from the one before it, each step moving 1/n of the vector over every link "
              "at once (reduce-scatter, then all-gather), with no GPU that receives everything?";
    rc.plan.warmup = 2;
    rc.plan.repeats = 5;
    rc.plan.rounds = 3;
    const auto ring = [&] { variant("ring").run_float(c); };
    const auto nccl = [&] { variant("nccl").run_float(c); };
    const std::function<void()> gather = [&] { variant("gather").run_float(c); };
    mg_perf::time_and_judge(rc, ring, nccl, job().stream, gather);
}

TEST_CASE("multigpu/02: gather and nccl give exact int sums and float sums within the bound", "[baseline]") {
    for (const char* name : {"gather", "nccl"}) {
        check_variant<int>(name, kSizes);
        check_variant<float>(name, {1, 1000, (size_t(1) << 20) + 3});
    }
}

TEST_CASE("multigpu/02: the pipelined ring's int sums are exact, 1 element to 2^26 (256 MiB)", "[baseline]") {
    std::vector<size_t> sizes = kSizes;
    sizes.push_back(size_t(1) << 26);
    check_variant<int>("ring, pipelined", sizes);
}

TEST_CASE("multigpu/02: the pipelined ring's float sums are within the rounding bound, up to 1 GiB", "[baseline]") {
    check_variant<float>("ring, pipelined", {1, 3, 1000, (size_t(1) << 20) + 3, size_t(1) << 28});
}

TEST_CASE("multigpu/02: pipelined ring calls back to back into one output, among the other variants", "[baseline]") {
    // One output for every call; after each call each rank copies its output away on its
    // own stream, then rewrites its input, with no host wait. The pipelined ring stores into
    // the next GPU's output, so it must not start before that GPU's copy of the previous
    // call has read it: two pipelined calls in a row have no barrier between them, so only
    // its own signals order it.
    const size_t count = (size_t(1) << 22) + 5;
    const std::vector<std::string> names{"ring, pipelined", "ring, pipelined", "gather", "ring, pipelined", "nccl",
                                         "ring, pipelined"};
    const int calls = static_cast<int>(names.size());
    job();  // every rank (collective at the first call)
    mg_checks::step("multigpu/02: 6 calls back to back into one output, 4 of them the pipelined ring");
    tut::mg::PeerBuffer<int> in(world(), count), out(world(), count);
    int* saved = nullptr;
    int* pinned = nullptr;
    TUT_CUDA(cudaMalloc(&saved, calls * count * sizeof(int)));
    TUT_CUDA(cudaMallocHost(&pinned, calls * count * sizeof(int)));
    TUT_CUDA(cudaMemset(saved, 0xFF, calls * count * sizeof(int)));
    for (int k = 0; k < calls; ++k)
        for (size_t i = 0; i < count; ++i) pinned[k * count + i] = int_value(200 + k, world().rank, i);
    TUT_CUDA(cudaDeviceSynchronize());
    tut::mg::barrier(world());
    mg_checks::run_or_abort([&] {
        for (int k = 0; k < calls; ++k) {
            TUT_CUDA(cudaMemcpyAsync(in.local(), pinned + k * count, count * sizeof(int), cudaMemcpyHostToDevice, job().stream));
            const tut::mg::AllreduceCall<int> c = call_of<int>(in, out, count);
            variant(names[k]).run_int(c);
            TUT_CUDA(cudaMemcpyAsync(saved + k * count, out.local(), count * sizeof(int), cudaMemcpyDeviceToDevice, job().stream));
        }
        tut::mg::progress_detail("waiting for 6 calls on the GPU (they wait for the other GPUs)");
        TUT_CUDA(cudaStreamSynchronize(job().stream));
    });
    std::string bad;
    mg_checks::run_or_abort([&] {
        for (int k = 0; k < calls && bad.empty(); ++k) {
            std::vector<int> got(count);
            TUT_CUDA(cudaMemcpy(got.data(), saved + k * count, count * sizeof(int), cudaMemcpyDeviceToHost));
            bad = compare(got, 200 + k);
            if (!bad.empty()) bad = "call " + std::to_string(k + 1) + " (" + names[k] + ") of " + std::to_string(calls) + ": " + bad;
        }
    });
    cudaFreeHost(pinned);
    cudaFree(saved);
    MG_REQUIRE(bad.empty(), bad);
}

TEST_CASE("multigpu/02: no elements: nothing written, every variant returns", "[baseline]") {
    for (const char* name : {"gather", "nccl", "ring", "ring, pipelined"}) {
        const std::string bad = run_and_compare<int>(name, 0, 1);
        MG_REQUIRE(bad.empty(), bad);
    }
}
