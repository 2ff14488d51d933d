// How many kernel launches can be queued behind a running kernel before the next launch
// blocks the host? (The story saw the 1025th launch fail: a queue of 1024. Older reports
// said 32 or 64.) Why it matters for CG: a host loop that only enqueues (lessons 3-6) runs
// ahead of the GPU until this queue is full, then advances at the GPU's pace.
//
//   build/checks/cg/launch_queue [--max-launches N] [--json FILE] [--share FILE]
//
// Method: a one-thread kernel spins on a flag in mapped host memory; the host then
// launches empty kernels behind it and counts. A watchdog thread sees the count stop
// moving (the host is blocked inside a launch), records it and releases the spinner,
// which unblocks the launch. The spinner also gives up on its own after 10 s, so
// nothing here can hang. Also reports the host cost of one (non-blocking) launch.
//
// --share FILE starts the CG tour's shared results file afresh (the tour runs this first).
#include "tut/check.hpp"
#include "tut/cli.hpp"
#include "tut/device_facts.hpp"
#include "tut/gpu.hpp"
#include "tut/lesson.hpp"
#include "tut/report.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

namespace {

__device__ long long global_ns() {
    long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Spins until the host writes a non-zero *release, or timeout_ns passes.
__global__ void spinner(const volatile int* release, long long timeout_ns) {
    const long long start = global_ns();
    while (*release == 0 && global_ns() - start < timeout_ns) __nanosleep(2000);
}

__global__ void empty_kernel() {}

}  // namespace

int main(int argc, char** argv) {
    tut::Cli cli("00_launch_queue", "Counts the kernel launches that queue behind a running kernel before one blocks.");
    int max_launches = 100000;
    std::string json, share;
    cli.add_int("max-launches", &max_launches, "stop counting here if no launch has blocked", 1, 10000000);
    cli.add_string("json", &json, "append one JSON record to this file");
    cli.add_string("share", &share, "start the CG tour's shared results file afresh");
    cli.parse_or_exit(argc, argv);
    if (!share.empty()) {
        if (std::FILE* f = std::fopen(share.c_str(), "w")) std::fclose(f);
    }
    tut::require_gpu("00_launch_queue");

    return tut::guarded_main("00_launch_queue", [&] {
        const tut::DeviceFacts dev = tut::device_facts();
        tut::print_device_banner(dev);
        int* release = nullptr;
        int* release_on_device = nullptr;
        TUT_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&release), sizeof(int), cudaHostAllocMapped));
        TUT_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&release_on_device), release, 0));
        *reinterpret_cast<volatile int*>(release) = 0;
        empty_kernel<<<1, 1>>>();  // load the module before counting
        TUT_LAUNCH("empty_kernel");
        TUT_CUDA(cudaDeviceSynchronize());

        std::atomic<int> launched{0};
        std::atomic<bool> finished{false};
        std::atomic<int> blocked_at{-1};
        // Watchdog: if the count has not moved for 100 ms, the host is stuck in a launch.
        std::thread watchdog([&] {
            int last = -1;
            auto last_change = std::chrono::steady_clock::now();
            while (!finished.load()) {
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
                const int now = launched.load();
                if (now != last) {
                    last = now;
                    last_change = std::chrono::steady_clock::now();
                } else if (std::chrono::steady_clock::now() - last_change > std::chrono::milliseconds(100)) {
                    blocked_at.store(now);
                    break;
                }
            }
            *reinterpret_cast<volatile int*>(release) = 1;  // let the spinner finish
        });

        spinner<<<1, 1>>>(release_on_device, 10'000'000'000ll);
        TUT_LAUNCH("spinner");
        const auto t0 = std::chrono::steady_clock::now();
        double fast_us = 0.0;
        int fast_count = 0;
        for (int i = 0; i < max_launches && blocked_at.load() < 0; ++i) {
            const auto a = std::chrono::steady_clock::now();
            empty_kernel<<<1, 1>>>();
            TUT_LAUNCH("empty_kernel");
            const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count();
            if (blocked_at.load() < 0 && us < 1000.0) {
                fast_us += us;
                ++fast_count;
            }
            launched.store(i + 1);
        }
        finished.store(true);
        watchdog.join();
        TUT_CUDA(cudaDeviceSynchronize());
        const double total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        TUT_CUDA(cudaFreeHost(release));

        const int depth = blocked_at.load();
        const double launch_us = fast_count ? fast_us / fast_count : NAN;
        if (depth >= 0)
            std::printf("Launch %d blocked the host: %d empty launches queued behind the running kernel.\n", depth + 1,
                        depth);
        else
            std::printf("No launch blocked within %d launches (the queue is deeper, or launches do not block).\n",
                        max_launches);
        std::printf("Host cost of one non-blocking launch: %.2f us (mean of %d); run took %.0f ms.\n", launch_us,
                    fast_count, total_ms);
        std::printf("Historic: the story's GTX 1080 failed the 1025th launch (queue of 1024).\n");

        tut::Record rec;
        rec.track = "cg";
        rec.lesson = "00_launch_queue";
        rec.variant = "empty kernels behind a spinning kernel";
        rec.size = "default stream";
        rec.value = depth >= 0 ? double(depth) : NAN;
        rec.unit = "launches queued";
        rec.checked = depth >= 0;
        rec.extra.add("host_us_per_launch", launch_us).add("blocked", depth >= 0).add("max_launches", max_launches);
        tut::append_json_line(json, rec.json());
        return 0;
    });
}
