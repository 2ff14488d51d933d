// jor/05_graph_loop: the loop on the GPU: a WHILE graph, or k sweeps per look.
// Starts from: lesson 04's fused sweep. Adds: the stopping decision on the GPU. Lesson 04
// launches one kernel per sweep and then waits for a 16-byte copy: at small N a sweep is a
// few microseconds of work and the round trip to the host is most of the time. Here the
// stopping decision is a tiny kernel (decide) that reads the sweep's slot, counts the
// iteration and, in a CUDA graph with a conditional WHILE node, ends the loop itself: one
// graph launch and one copy per solve. The other way, without conditional nodes: queue k
// sweeps at a time and look at the state after each k; a sweep that finds the solve done
// returns at once, so the extra sweeps cost a launch each and change nothing.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include solutions/jor/05_graph_loop/graph_loop.cu -o graph_loop
// Run:  ./graph_loop               (--help for options; --check-every K for the other variant)
//
// Kernels and variants:
//   counted_sweep   lesson 04's sweep, its iteration number and buffers read from LoopState
//   decide          after each sweep: converged, or at the limit? ends the WHILE loop
//                   (the exercise, with build_graph)
//   GraphSolver     builds [ WHILE { counted_sweep, decide } ] once per x; one launch per solve
//                   (the exercise: build_graph)
//   variants "one look per sweep" (lesson 04's loop, the baseline, in the harness: per sweep
//            counted_sweep, a 16-byte copy back and the host's decision), "while graph"
//            (CUDA 12.4+ driver), "check every k" (--check-every, default 4)
// Shared: sweep_rows (tut/jor_rows.cuh), record_sweep, SweepSlot and the end of the solve
// (tut/jor_record.cuh), the generator (tut/jor_device.cuh).
// The harness below the divider: the baseline, Options, Report and Problem (tut/jor_gpu.hpp).
#include "tut/jor_device.cuh"
#include "tut/jor_gpu.hpp"
#include "tut/jor_record.cuh"
#include "tut/jor_rows.cuh"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int kThreads = 256;  // 8 warps; a sweep takes the rows a warp at a time
static_assert(kThreads % 32 == 0, "a block is whole warps, one row at a time each");
constexpr int kCheckEvery = 4;  // the "check every k" variant's k unless --check-every says otherwise

// Where the solve stands, on the device: sweeps done, and whether it has finished.
struct LoopState {
    int iteration;
    int done;
    int converged;
};

// Lesson 04's sweep; sweep number `iteration` reads x0 and writes x1 when even, the
// other way round when odd. Returns at once when the solve is done.
template <class T>
__global__ void __launch_bounds__(kThreads, tut::jor::sweep_blocks_per_sm(kThreads))
    counted_sweep(const T* __restrict__ A, const T* __restrict__ diagonal, const T* __restrict__ b, T* x0, T* x1, int n,
                  T alpha, tut::jor::SweepSlot* slots, const LoopState* state) {
    if (state->done) return;
    const int it = state->iteration;
    const T* x_old = it % 2 ? x1 : x0;
    T* x_new = it % 2 ? x0 : x1;
    double dx = 0.0, x_abs = 0.0;
    tut::jor::sweep_rows<T>(A, diagonal, b, x_old, x_new, n, alpha, dx, x_abs);
    tut::jor::record_sweep(dx, x_abs, slots + it);
}

// One thread, after each sweep: counts it, and stops the loop on convergence or at the
// iteration limit (kWhile: by setting the WHILE node's condition to 0).
template <bool kWhile>
__global__ void decide(LoopState* state, const tut::jor::SweepSlot* slots, double tolerance, int max_iterations,
                       cudaGraphConditionalHandle loop) {
    if (!state->done) {
        const int it = state->iteration;
        const bool stop = tut::jor::slot_says_stop(slots[it], tolerance);
        state->iteration = it + 1;
        state->converged = stop;
        state->done = stop || it + 1 >= max_iterations;
    }
    if constexpr (kWhile) {
        if (state->done) cudaGraphSetConditional(loop, 0u);
    } else {
        (void)loop;
    }
}

template <class T>
class GraphSolver : public tut::jor::Solver<T> {
  public:
    // check_every = 0: the WHILE graph; k > 0: k sweeps per look at the state.
    GraphSolver(const tut::jor::DeviceSystem<T>& sys, const tut::jor::SolveOptions& opt, int check_every)
        : sys_(sys), opt_(opt), check_every_(check_every), x_work_(static_cast<size_t>(sys.n)),
          slots_(static_cast<size_t>(opt.max_iterations)), state_(1) {
        // A blocking stream: it orders itself after the default stream's work (the caller's
        // poison of x, the generator) and before what follows there.
        TUT_CUDA(cudaStreamCreate(&stream_));
        TUT_CUDA(cudaMallocHost(&host_state_, sizeof(LoopState)));
    }
    ~GraphSolver() override {
        if (exec_) cudaGraphExecDestroy(exec_);
        cudaFreeHost(host_state_);
        cudaStreamDestroy(stream_);
    }

    tut::jor::SolveResult solve(T* x) override {
        const int n = sys_.n;
        TUT_CUDA(cudaMemsetAsync(x, 0, size_t(n) * sizeof(T), stream_));
        TUT_CUDA(cudaMemsetAsync(slots_.get(), 0, slots_.bytes(), stream_));
        TUT_CUDA(cudaMemsetAsync(state_.get(), 0, sizeof(LoopState), stream_));
        if (check_every_ == 0) {
            if (graph_x_ != x) build_graph(x);
            TUT_CUDA(cudaGraphLaunch(exec_, stream_));  // the whole solve
            read_state();
        } else {
            // decide() ends the solve by max_iterations; the bound on the looks is a safety net.
            for (int queued = 0; queued <= opt_.max_iterations; queued += check_every_) {
                for (int i = 0; i < check_every_; ++i) sweep_and_decide<false>(x, 0);
                read_state();
                if (host_state_->done) break;
            }
        }
        tut::jor::SolveResult result = tut::jor::finish_alternating_solve(
            host_state_->iteration, opt_.max_iterations, opt_.tolerance, slots_.get(), x, x_work_.get(), n);
        // Converged as decide() recorded it (the same test of the same slot, when decide is right).
        result.converged = result.iterations > 0 && host_state_->converged != 0;
        return result;
    }

    double matrix_bytes() const override { return double(sys_.n) * double(sys_.n) * sizeof(T); }

  private:
    template <bool kWhile>
    void sweep_and_decide(T* x, cudaGraphConditionalHandle loop) {
        const int blocks = (sys_.n + kThreads / 32 - 1) / (kThreads / 32);
        counted_sweep<T><<<blocks, kThreads, 0, stream_>>>(sys_.A.get(), sys_.diagonal.get(), sys_.b.get(), x,
                                                           x_work_.get(), sys_.n, T(opt_.alpha), slots_.get(),
                                                           state_.get());
        TUT_LAUNCH("counted_sweep");
        decide<kWhile><<<1, 1, 0, stream_>>>(state_.get(), slots_.get(), opt_.tolerance, opt_.max_iterations, loop);
        TUT_LAUNCH("decide");
    }

    void read_state() {
        TUT_CUDA(cudaMemcpyAsync(host_state_, state_.get(), sizeof(LoopState), cudaMemcpyDeviceToHost, stream_));
        TUT_CUDA(cudaStreamSynchronize(stream_));
    }

    // graph = [ WHILE(loop) { counted_sweep, decide } ], built once per x (set-up, untimed).
    void build_graph(T* x) {
        if (exec_) TUT_CUDA(cudaGraphExecDestroy(exec_));
        exec_ = nullptr;
        cudaGraph_t graph = nullptr;
        TUT_CUDA(cudaGraphCreate(&graph, 0));
        cudaGraphConditionalHandle loop = 0;
        // The condition starts at 1 (run the body) at every launch of the graph.
        TUT_CUDA(cudaGraphConditionalHandleCreate(&loop, graph, 1, cudaGraphCondAssignDefault));
        cudaGraphNodeParams params{};
        params.type = cudaGraphNodeTypeConditional;
        params.conditional.handle = loop;
        params.conditional.type = cudaGraphCondTypeWhile;
        params.conditional.size = 1;
        cudaGraphNode_t while_node;
#if CUDART_VERSION >= 13000
        TUT_CUDA(cudaGraphAddNode(&while_node, graph, nullptr, nullptr, 0, &params));
#else
        TUT_CUDA(cudaGraphAddNode(&while_node, graph, nullptr, 0, &params));  // CUDA 12.4-12.9
#endif
        cudaGraph_t body = params.conditional.phGraph_out[0];  // owned by the node
        TUT_CUDA(cudaStreamBeginCaptureToGraph(stream_, body, nullptr, nullptr, 0, cudaStreamCaptureModeRelaxed));
        sweep_and_decide<true>(x, loop);
        cudaGraph_t captured = nullptr;
        TUT_CUDA(cudaStreamEndCapture(stream_, &captured));
        TUT_CUDA(cudaGraphInstantiate(&exec_, graph, 0));
        TUT_CUDA(cudaGraphDestroy(graph));
        graph_x_ = x;
    }

    const tut::jor::DeviceSystem<T>& sys_;
    tut::jor::SolveOptions opt_;
    int check_every_;
    tut::DeviceBuffer<T> x_work_;
    tut::DeviceBuffer<tut::jor::SweepSlot> slots_;
    tut::DeviceBuffer<LoopState> state_;
    cudaStream_t stream_ = nullptr;
    LoopState* host_state_ = nullptr;
    cudaGraphExec_t exec_ = nullptr;
    T* graph_x_ = nullptr;
};

// check_every = 0: the WHILE graph (refused without conditional nodes); k > 0: k sweeps per look.
template <class T>
std::unique_ptr<tut::jor::Solver<T>> make_graph_solver(const tut::jor::DeviceSystem<T>& sys,
                                                       const tut::jor::SolveOptions& opt, int check_every) {
    tut::jor::require_options(opt);
    if (check_every == 0 && !tut::driver_version_at_least(12040))  // conditional nodes: CUDA 12.4
        throw tut::Unsupported("the WHILE graph needs conditional graph nodes: a CUDA 12.4 or newer driver");
    return std::make_unique<GraphSolver<T>>(sys, opt, check_every);
}

// A variant's run: the WHILE graph (check_every = 0) or k = check_every sweeps per look.
template <class T>
std::function<tut::jor::Run<T>> graph_solver(int check_every) {
    return [check_every](const tut::jor::DeviceSystem<T>& sys, const tut::jor::SolveOptions& opt) {
        return make_graph_solver<T>(sys, opt, check_every);
    };
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace {

// The baseline, "one look per sweep": lesson 04's loop, timed in the same run. Per sweep one
// launch of counted_sweep, one 16-byte copy of its slot back, and the host's decision. The
// host counts the sweeps, so no decide runs: sweep it reads states[it] = {it, not done}, a
// table filled once per solver. The end of the solve is the graph's (finish_alternating_solve).
template <class T>
class OneLookSolver : public tut::jor::Solver<T> {
  public:
    OneLookSolver(const tut::jor::DeviceSystem<T>& sys, const tut::jor::SolveOptions& opt)
        : sys_(sys), opt_(opt), x_work_(static_cast<size_t>(sys.n)),
          slots_(static_cast<size_t>(opt.max_iterations)), states_(sweep_states(opt.max_iterations)) {}

    tut::jor::SolveResult solve(T* x) override {
        const int n = sys_.n, blocks = (n + kThreads / 32 - 1) / (kThreads / 32);
        TUT_CUDA(cudaMemset(x, 0, size_t(n) * sizeof(T)));
        TUT_CUDA(cudaMemset(slots_.get(), 0, slots_.bytes()));  // every sweep's maxima start at 0
        int sweeps = 0;
        bool stop = false;
        while (!stop && sweeps < opt_.max_iterations) {
            counted_sweep<T><<<blocks, kThreads>>>(sys_.A.get(), sys_.diagonal.get(), sys_.b.get(), x, x_work_.get(),
                                                   n, T(opt_.alpha), slots_.get(), states_.get() + sweeps);
            TUT_LAUNCH("counted_sweep");
            tut::jor::SweepSlot slot;
            TUT_CUDA(cudaMemcpy(&slot, slots_.get() + sweeps, sizeof slot, cudaMemcpyDeviceToHost));  // waits
            stop = tut::jor::slot_says_stop(slot, opt_.tolerance);  // the host decides
            ++sweeps;
        }
        return tut::jor::finish_alternating_solve(sweeps, opt_.max_iterations, opt_.tolerance, slots_.get(), x,
                                                  x_work_.get(), n);
    }

    double matrix_bytes() const override { return double(sys_.n) * double(sys_.n) * sizeof(T); }

  private:
    static std::vector<LoopState> sweep_states(int count) {
        std::vector<LoopState> states(static_cast<size_t>(count));
        for (int it = 0; it < count; ++it) states[it] = LoopState{it, 0, 0};
        return states;
    }

    const tut::jor::DeviceSystem<T>& sys_;
    tut::jor::SolveOptions opt_;
    tut::DeviceBuffer<T> x_work_;
    tut::DeviceBuffer<tut::jor::SweepSlot> slots_;
    tut::DeviceBuffer<LoopState> states_;
};

template <class T>
std::unique_ptr<tut::jor::Solver<T>> make_one_look(const tut::jor::DeviceSystem<T>& sys,
                                                   const tut::jor::SolveOptions& opt) {
    tut::jor::require_options(opt);
    return std::make_unique<OneLookSolver<T>>(sys, opt);
}

}  // namespace

namespace lesson {
// The baseline first: the table shows the previous lesson's approach, then the lesson's.
// "check every k" looks at the state after every k sweeps it queued.
tut::jor::Variants variants(int check_every) {
    tut::jor::Variants v;
    v.floats = {{"one look per sweep", make_one_look<float>},
                {"while graph", graph_solver<float>(0)},
                {"check every k", graph_solver<float>(check_every)}};
    v.doubles = {{"one look per sweep", make_one_look<double>},
                 {"while graph", graph_solver<double>(0)},
                 {"check every k", graph_solver<double>(check_every)}};
    return v;
}
tut::jor::Variants variants() { return variants(kCheckEvery); }
}  // namespace lesson

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"jor", "05_graph_loop",
                                 "the loop on the GPU: a WHILE graph, or k sweeps per look"};
    int check_every = kCheckEvery;
    tut::jor::Options options(lesson);  // --sizes, --matrices, --type, --tol, --alpha, --max-iter, --share, ...
    options.cli.add_int("check-every", &check_every, "sweeps queued between two looks (variant 'check every k')", 1,
                        1000);
    options.parse(argc, argv, lesson::variants());
    const tut::jor::Variants variants = lesson::variants(check_every);
    return tut::guarded_main(lesson.lesson, [&] {
        tut::Bench bench(lesson, options.run);
        tut::jor::Report report(bench, options, tut::jor::measure_read_bandwidth_gbs());  // the floor's bandwidth
        // Per size, variant and matrix: check a solve, time the solves by the host clock (the
        // launches and copies of a solve are part of its cost), check the last of them.
        auto measure = [&](auto&& problem, const auto& list) {
            for (long long n : options.sizes)
                for (const auto& v : list) {
                    if (!bench.runs(v)) continue;
                    for (int m = 0; m < options.matrices; ++m) {
                        problem.set_up(v, n, m);  // matrix m of size n, generated on the GPU; v's solver
                        const tut::Verdict verdict = bench.check(v.name, [&] { return problem.check(); });
                        const tut::Timing timing = bench.time_host(v.name, [&] { problem.solve(); }, problem.timing());
                        const tut::Verdict last = bench.check(v.name, [&] { return problem.check_last(); });
                        problem.add(timing, verdict, last);  // matrix 0: also the copy of A, the GEMV alone
                    }
                }
            for (const tut::Result& r : problem.results()) report.table.add_row(bench.record(r));
        };
        if (options.runs<float>()) measure(tut::jor::Problem<float>(options, report), variants.floats);
        if (options.runs<double>()) measure(tut::jor::Problem<double>(options, report), variants.doubles);
        report.print();
        return bench.exit_code();
    });
}
