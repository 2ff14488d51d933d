// wrong: cg/07_graph_while: the WHILE condition is cleared on convergence only, not when p.Ap <= 0 ends the solve
// caught by: cg/07_graph_while: stops on a matrix that is not positive definite and at the iteration limit
// kind: stopping-test
// On the indefinite matrices the body runs on (doing nothing) until the safety net at
// max_iterations: 1000 iterations reported where the check wants 2.
// cg/07_graph_while: the whole loop on the GPU, as a CUDA graph with a conditional WHILE node.
// Starts from: lesson 05's three fused kernels (beyond the story). Adds: a CUDA graph whose
// conditional WHILE node repeats one iteration of lesson 05 (its three kernels, captured
// once as the node's body) for as long as the body's last kernel says so. A solve is one
// graph launch and one wait: no launch by the host per kernel, and no iteration run past
// convergence, since the GPU decides. Conditional nodes need CUDA 12.4 or newer (toolkit
// and driver; the program checks the driver and reports itself skipped on an older one).
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/cg/07_graph_while/graph_while.cu -o graph_while
// Run:  ./graph_while --problem both     (--help for options)
//
// In this file:
//   update_p_and_decide        lesson 05's update_p, then one thread sets the WHILE node's
//                              condition: run the body again, or stop (the exercise, part 2)
//   GraphSolver::build_graph   graph = [ WHILE(loop) { spmv_pq_alpha -> update_x_r_z ->
//                              update_p_and_decide } ] (the exercise, part 1)
//   GraphSolver::solve         start, one graph launch, one copy back
//   variants "graph while" (the lesson) and "graph per iteration": the same three kernels
//   as a plain graph that the host launches once per iteration, reading the status every
//   --check-every launches as lesson 05 does (what the WHILE node saves; also the variant
//   compute-sanitizer can check, see the README)
// Lesson 05's kernels (start, spmv_pq_alpha, update_x_r_z) come from tut/cg_fused_update.hpp.
#include "tut/cg.hpp"
#include "tut/cg_fused_update.hpp"

namespace {

using namespace tut::cg::fused;  // lesson 05: Scalars, start, spmv_pq_alpha, update_x_r_z, ...
using tut::cg::SolveResult;

// p = z + beta p (lesson 05's update_p); then one thread tells the WHILE node whether to
// run the body again. The status was settled by update_x_r_z, which finished before this
// kernel started.
__global__ void update_p_and_decide(int n, const float* __restrict__ z, float* __restrict__ p, Scalars* s,
                                    cudaGraphConditionalHandle loop, int max_iterations) {
    const float beta = s->beta;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = z[i] + beta * p[i];
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        const int performed = ++s->performed;
        if (s->status == kConverged) cudaGraphSetConditional(loop, 0u);  // the solve is over
        if (performed >= max_iterations) cudaGraphSetConditional(loop, 0u);  // the safety net: never forever
    }
}

class GraphSolver final : public tut::cg::Solver {
  public:
    GraphSolver(const tut::cg::DeviceMatrix& A, const std::vector<float>& dinv, const tut::cg::SolveOptions& opt,
                bool loop_on_gpu)
        : n_(A.n()), loop_on_gpu_(loop_on_gpu), opt_(opt), grid_(fused_grid(A.n())), dinv_(dinv), r_(size_t(n_)), z_(size_t(n_)),
          p_(size_t(n_)), q_(size_t(n_)), A_(A.view()), scalars_(1) {
        // Capture needs a stream of our own (the legacy default stream cannot be captured).
        // A blocking one, so that work on the default stream still orders with it.
        TUT_CUDA(cudaStreamCreate(&stream_));
    }
    ~GraphSolver() override {
        if (exec_) cudaGraphExecDestroy(exec_);
        cudaStreamDestroy(stream_);
    }
    GraphSolver(const GraphSolver&) = delete;
    GraphSolver& operator=(const GraphSolver&) = delete;

    SolveResult solve(const float* b, float* x) override {
        if (x != graph_x_) build_graph(x);  // the graph holds x's address: rebuild for a new x
        Scalars* s = scalars_.get();
        TUT_CUDA(cudaMemsetAsync(s, 0, sizeof(Scalars), stream_));
        start<<<grid_.blocks, kThreads, 0, stream_>>>(n_, b, dinv_.get(), x, r_.get(), z_.get(), p_.get(), s,
                                                      float(opt_.tolerance * opt_.tolerance));
        TUT_LAUNCH("start");
        Scalars h{};
        if (loop_on_gpu_) {
            TUT_CUDA(cudaGraphLaunch(exec_, stream_));  // the whole loop
            TUT_CUDA(cudaMemcpyAsync(&h, s, sizeof(Scalars), cudaMemcpyDeviceToHost, stream_));
            TUT_CUDA(cudaStreamSynchronize(stream_));  // the only wait
            return fused_result(h, h.performed);
        }
        int performed = 0;  // "graph per iteration": the host loop of lesson 05, one launch per iteration
        while (performed < opt_.max_iterations) {
            const int chunk = std::min(opt_.check_every, opt_.max_iterations - performed);
            for (int i = 0; i < chunk; ++i) TUT_CUDA(cudaGraphLaunch(exec_, stream_));
            performed += chunk;
            TUT_CUDA(cudaMemcpyAsync(&h, s, sizeof(Scalars), cudaMemcpyDeviceToHost, stream_));
            TUT_CUDA(cudaStreamSynchronize(stream_));
            if (h.status != kRunning) break;
        }
        return fused_result(h, performed);
    }

    // The fused SpMV kernel alone. After a solve the status is no longer "running", so
    // it leaves the solver's scalars as they were (alpha 0, p.q reset).
    bool spmv_once() override {
        spmv_pq_alpha<<<grid_.spmv_blocks, kThreads>>>(A_, p_.get(), q_.get(), scalars_.get());
        TUT_LAUNCH("spmv_pq_alpha");
        return true;
    }

  private:
    // Builds graph = [ WHILE(loop) { one iteration } ] (or, for "graph per iteration", just
    // [ one iteration ]) and instantiates it. Runs once per x, before the first solve into
    // it: set-up, not part of a solve's time.
    void build_graph(float* x) {
        if (exec_) TUT_CUDA(cudaGraphExecDestroy(exec_));
        exec_ = nullptr;
        cudaGraph_t graph = nullptr;
        TUT_CUDA(cudaGraphCreate(&graph, 0));
        cudaGraphConditionalHandle loop = 0;  // the WHILE node's condition
        cudaGraph_t body = graph;              // where one iteration is recorded
        if (loop_on_gpu_) {
            // The condition belongs to the graph; cudaGraphCondAssignDefault sets it to 1 (run)
            // at every launch, so each solve starts afresh.
            TUT_CUDA(cudaGraphConditionalHandleCreate(&loop, graph, 1, cudaGraphCondAssignDefault));
            cudaGraphNodeParams params{};
            params.type = cudaGraphNodeTypeConditional;
            params.conditional.handle = loop;
            params.conditional.type = cudaGraphCondTypeWhile;
            params.conditional.size = 1;
            cudaGraphNode_t while_node;
#if CUDART_VERSION >= 13000
            TUT_CUDA(cudaGraphAddNode(&while_node, graph, nullptr, nullptr, 0, &params));  // (no edge data)
#else
            TUT_CUDA(cudaGraphAddNode(&while_node, graph, nullptr, 0, &params));  // CUDA 12.4-12.9
#endif
            body = params.conditional.phGraph_out[0];  // the node made its body graph; it owns it
        }
        // Record one iteration into `body`: its kernels become the body's nodes.
        TUT_CUDA(cudaStreamBeginCaptureToGraph(stream_, body, nullptr, nullptr, 0, cudaStreamCaptureModeRelaxed));
        iteration(x, loop);
        cudaGraph_t captured = nullptr;
        TUT_CUDA(cudaStreamEndCapture(stream_, &captured));
        TUT_CUDA(cudaGraphInstantiate(&exec_, graph, 0));
        TUT_CUDA(cudaGraphDestroy(graph));
        graph_x_ = x;
    }

    // Three kernels, enqueued on stream_ (here: recorded into the body graph).
    void iteration(float* x, cudaGraphConditionalHandle loop) {
        Scalars* s = scalars_.get();
        spmv_pq_alpha<<<grid_.spmv_blocks, kThreads, 0, stream_>>>(A_, p_.get(), q_.get(), s);
        TUT_LAUNCH("spmv_pq_alpha");
        update_x_r_z<<<grid_.blocks, kThreads, 0, stream_>>>(n_, p_.get(), q_.get(), dinv_.get(), x, r_.get(),
                                                             z_.get(), s);
        TUT_LAUNCH("update_x_r_z");
        if (loop_on_gpu_) {
            update_p_and_decide<<<grid_.blocks, kThreads, 0, stream_>>>(n_, z_.get(), p_.get(), s, loop,
                                                                        opt_.max_iterations);
            TUT_LAUNCH("update_p_and_decide");
        } else {
            update_p<<<grid_.blocks, kThreads, 0, stream_>>>(n_, z_.get(), p_.get(), s);
            TUT_LAUNCH("update_p");
        }
    }

    int n_;
    bool loop_on_gpu_;  // true: the WHILE node; false: the host launches the graph per iteration
    tut::cg::SolveOptions opt_;
    FusedGrid grid_;
    cudaStream_t stream_ = nullptr;
    cudaGraphExec_t exec_ = nullptr;
    float* graph_x_ = nullptr;  // the x the graph was built for
    tut::DeviceBuffer<float> dinv_, r_, z_, p_, q_;
    tut::cg::DeviceCsr A_;
    tut::DeviceBuffer<Scalars> scalars_;
};

std::unique_ptr<tut::cg::Solver> make_graph_while(const tut::cg::Csr& A, const tut::cg::DeviceMatrix& dA,
                                                  const tut::cg::SolveOptions& opt) {
    return std::make_unique<GraphSolver>(dA, tut::cg::inverse_diagonal(A), opt, true);
}

std::unique_ptr<tut::cg::Solver> make_graph_per_iteration(const tut::cg::Csr& A, const tut::cg::DeviceMatrix& dA,
                                                          const tut::cg::SolveOptions& opt) {
    return std::make_unique<GraphSolver>(dA, tut::cg::inverse_diagonal(A), opt, false);
}

}  // namespace

// ==== Harness: the lesson's variants and main(). Nothing below is part of the exercise. ====

namespace lesson {
std::vector<tut::cg::Variant> variants() {
    return {{"graph while", make_graph_while}, {"graph per iteration", make_graph_per_iteration}};
}
}  // namespace lesson

namespace {
// On a driver too old for conditional nodes (12.4): reports the program skipped, naming both versions.
void require_conditional_nodes(const char* program) {
    if (tut::driver_version_at_least(12040)) return;
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;  // reported as 0.0
    std::fprintf(stderr,
                 "SKIPPED: %s needs conditional graph nodes, which needs a CUDA driver of version 12.4 or newer; "
                 "this one is %d.%d. Exit code %d means skipped.\n",
                 program, driver / 1000, driver % 1000 / 10, tut::kSkipExitCode);
    std::exit(tut::kSkipExitCode);
}
}  // namespace

int main(int argc, char** argv) {
    const tut::LessonInfo lesson{"cg", "07_graph_while", "the loop as a CUDA graph with a conditional WHILE node"};
    const std::vector<tut::cg::Variant> variants = lesson::variants();
    tut::cg::Options options(lesson, tut::cg::Preconditioner::jacobi);  // --problem, --matrix, --tol, ...
    options.cli.add_int("check-every", &options.check_every, "look at the residual every k iterations", 1, 100000);
    options.parse(argc, argv, tut::names_of(variants));
    require_conditional_nodes(lesson.lesson);  // exits 77 before 12.4
    return tut::guarded_main(lesson.lesson, [&] {
        tut::Bench bench(lesson, options.run);
        const double d2d_gbs = tut::cg::measure_floor_bandwidth();
        tut::Table table = tut::cg::table();
        for (const std::string& name : tut::cg::problem_names(options)) {  // default; --problem both adds large
            tut::cg::Problem problem(bench, options, name, d2d_gbs);  // A, b = A x*, Eigen's time from --share
            for (const tut::cg::Variant& v : variants) {
                if (!bench.runs(v)) continue;
                const std::unique_ptr<tut::cg::Solver> solver = problem.solver(v);  // all set-up, untimed
                const tut::Verdict verdict = bench.check(v.name, [&] { return problem.check(*solver); });
                const tut::Timing timing = problem.time(v.name, *solver);  // wall clock: the host's part counts
                const tut::Verdict again = bench.check(v.name, [&] { return problem.check_last(); });  // no stale state
                const double spmv_gbs = problem.spmv_gbs(v.name, *solver);  // its SpMV alone
                table.add_row(bench.record(problem.result(v, timing, spmv_gbs, verdict, again)));
            }
        }
        tut::cg::print(table);
        return bench.exit_code();
    });
}
