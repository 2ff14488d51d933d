// CG lesson 7 (beyond the story): the whole loop on the GPU. One iteration of lesson 5
// (three kernels, the first our SpMV) is captured once as the body of a conditional WHILE
// node of a CUDA graph (CUDA 12.4+); the last kernel of the body decides, on the GPU,
// whether the body runs again. A solve is one graph launch and one wait.
//
// Build alone (from the repository root; -arch=native needs a GPU, else name one, e.g. sm_90):
//   nvcc -O3 -std=c++17 -arch=native -Icommon/include lessons/cg/07_graph_while/graph_while.cu -o graph_while
// Run:  ./graph_while --problem both     (--help for options)
//
// Starts from lesson 5 (diff against 05_fusion/fusion.cu): same kernels, same scalars.
// What changes: no host loop, so no launch overhead per kernel (a graph launches its
// nodes from the GPU's own work queue) and no overshoot (the loop ends at the iteration
// that converges, as no host is asked).
//   graph:  [ WHILE(handle) { spmv_pq_alpha -> update_x_r_z -> update_p } ]
//   update_p ends with cudaGraphSetConditional(handle, keep_going) from one thread.
#include "tut/cg.hpp"

namespace {

using tut::cg::Outcome;
using tut::cg::SolveResult;

constexpr int kBlock = 256;
constexpr int kBlocksPerSm = 8;
enum Status : int { kRunning = 0, kConverged = 1, kNotPositiveDefinite = 2 };

struct Scalars {
    float pq, rr, rz, rz_new;           // dot products being accumulated / their results
    float alpha, beta;
    float bb, threshold;
    float rr_last;
    int iteration, status, converged_at;
    int performed;                      // body runs (the graph's loop counter)
    unsigned blocks_done;               // for the last-block pattern; back to 0 after each use
};

__device__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

// Sums a and b over the block (two reductions for the price of one __syncthreads pair).
// The results are valid in thread 0.
__device__ void block_sum2(float& a, float& b) {
    __shared__ float2 warp_sums[32];
    a = warp_sum(a);
    b = warp_sum(b);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warp_sums[warp] = make_float2(a, b);
    __syncthreads();
    if (warp == 0) {
        const float2 w = lane < int(blockDim.x / 32) ? warp_sums[lane] : make_float2(0.0f, 0.0f);
        a = warp_sum(w.x);
        b = warp_sum(w.y);
    }
}

// Called by thread 0 of every block after its atomicAdds; true in exactly one block, the
// last to get here, which then sees every block's contribution. The __threadfence
// orders this block's atomicAdds before its count.
__device__ bool last_block(unsigned* blocks_done) {
    __threadfence();
    const unsigned ticket = atomicAdd(blocks_done, 1u);
    const bool last = ticket == gridDim.x - 1;
    if (last) *blocks_done = 0;  // everyone has counted: reset for the next use
    return last;
}

// Before the loop: x = 0, r = b, z = D^-1 r, p = z, r.z and r.r; the last block sets the
// threshold. *s must be zero.
__global__ void start(int n, const float* __restrict__ b, const float* __restrict__ dinv, float* __restrict__ x,
                      float* __restrict__ r, float* __restrict__ z, float* __restrict__ p, Scalars* s, float tol2) {
    float rz = 0.0f, rr = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const float ri = b[i], zi = dinv[i] * ri;
        x[i] = 0.0f;
        r[i] = ri;
        z[i] = zi;
        p[i] = zi;
        rz += ri * zi;
        rr += ri * ri;
    }
    block_sum2(rz, rr);
    if (threadIdx.x == 0) {
        atomicAdd(&s->rz, rz);
        atomicAdd(&s->rr, rr);
        if (last_block(&s->blocks_done)) {
            const float bb = __ldcg(&s->rr);
            s->bb = s->rr_last = bb;
            s->threshold = tol2 * bb;
            s->status = bb <= s->threshold ? kConverged : kRunning;
            s->converged_at = s->status == kConverged ? 0 : -1;
            s->rr = 0.0f;
        }
    }
}

// q = A p with our own CSR SpMV, p.q in the same pass, and the last block computes alpha
// (0 once the solve is over) and flags p.q <= 0. A sub-warp of kLanes lanes takes a row:
// lane l adds nonzeros l, l + kLanes, ..., loading kUnroll of them before using any, so
// that independent loads are in flight together. Whole warps loop together (the width-
// kLanes shuffles need all 32 lanes). The matrix is read through the read-only path
// (__ldg): it does not change during the kernel.
constexpr int kLanes = 8, kUnroll = 4;

__global__ void __launch_bounds__(kBlock, kBlocksPerSm)
    spmv_pq_alpha(tut::cg::DeviceCsr A, const float* __restrict__ p, float* __restrict__ q, Scalars* s) {
    const int tid = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
    const int lane = tid % kLanes, groups = threads / kLanes;
    float pq = 0.0f, unused = 0.0f;
    for (int row = tid / kLanes, first = (tid / 32) * (32 / kLanes); first < A.n; row += groups, first += groups) {
        int begin = 0, end = 0;
        if (row < A.n) {
            begin = __ldg(A.row_ptr + row);
            end = __ldg(A.row_ptr + row + 1);
        }
        float sum = 0.0f;
        for (int base = begin + lane; base < end; base += kLanes * kUnroll) {
            float value[kUnroll];
            int column[kUnroll];
#pragma unroll
            for (int j = 0; j < kUnroll; ++j) {
                const int k = base + j * kLanes;
                value[j] = k < end ? __ldg(A.values + k) : 0.0f;
                column[j] = k < end ? __ldg(A.col_idx + k) : 0;
            }
#pragma unroll
            for (int j = 0; j < kUnroll; ++j) sum += value[j] * p[column[j]];
        }
        for (int offset = kLanes / 2; offset > 0; offset >>= 1)
            sum += __shfl_xor_sync(0xffffffffu, sum, offset, kLanes);
        if (lane == 0 && row < A.n) {
            q[row] = sum;
            pq += p[row] * sum;
        }
    }
    block_sum2(pq, unused);
    if (threadIdx.x == 0) {
        atomicAdd(&s->pq, pq);
        if (last_block(&s->blocks_done)) {
            const float total = __ldcg(&s->pq);
            s->pq = 0.0f;
            s->alpha = 0.0f;
            if (s->status == kRunning) {
                s->iteration++;
                if (total > 0.0f)
                    s->alpha = s->rz / total;
                else
                    s->status = kNotPositiveDefinite;  // also NaN
            }
        }
    }
}

// x += alpha p; r -= alpha q; z = D^-1 r; r.z and r.r. The last block tests convergence
// and computes beta (0 once the solve is over).
__global__ void update_x_r_z(int n, const float* __restrict__ p, const float* __restrict__ q,
                             const float* __restrict__ dinv, float* __restrict__ x, float* __restrict__ r,
                             float* __restrict__ z, Scalars* s) {
    const float alpha = s->alpha;
    float rz = 0.0f, rr = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        x[i] += alpha * p[i];
        const float ri = r[i] - alpha * q[i];
        const float zi = dinv[i] * ri;
        r[i] = ri;
        z[i] = zi;
        rz += ri * zi;
        rr += ri * ri;
    }
    block_sum2(rz, rr);
    if (threadIdx.x == 0) {
        atomicAdd(&s->rz_new, rz);
        atomicAdd(&s->rr, rr);
        if (last_block(&s->blocks_done)) {
            const float rz_new = __ldcg(&s->rz_new), rr_total = __ldcg(&s->rr);
            s->rz_new = s->rr = 0.0f;
            s->beta = 0.0f;
            if (s->status == kRunning) {
                s->rr_last = rr_total;
                if (rr_total <= s->threshold) {
                    s->status = kConverged;
                    s->converged_at = s->iteration;
                } else {
                    s->beta = rz_new / s->rz;
                    s->rz = rz_new;
                }
            }
        }
    }
}

// p = z + beta p; then one thread tells the WHILE node whether to run the body again.
// The status was settled by update_x_r_z, which finished before this kernel started.
__global__ void update_p(int n, const float* __restrict__ z, float* __restrict__ p, Scalars* s,
                         cudaGraphConditionalHandle loop, int max_iterations) {
    const float beta = s->beta;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = z[i] + beta * p[i];
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        const int performed = ++s->performed;
        // TODO(exercise): end the loop as soon as the solve is over. The WHILE node runs
        // the body again while its condition is non-zero; set it from here with
        // cudaGraphSetConditional(loop, value): 0 once s->status is no longer kRunning.
        // The safety net below (keep it) stops the loop at max_iterations regardless.
        if (performed >= max_iterations) cudaGraphSetConditional(loop, 0u);
    }
}

class GraphSolver final : public tut::cg::Solver {
  public:
    GraphSolver(const tut::cg::DeviceMatrix& A, const std::vector<float>& dinv, const tut::cg::SolveOptions& opt)
        : n_(A.n()), opt_(opt), dinv_(dinv), r_(size_t(n_)), z_(size_t(n_)), p_(size_t(n_)), q_(size_t(n_)),
          A_(A.view()), scalars_(1) {
        int device = 0, sms = 0;
        TUT_CUDA(cudaGetDevice(&device));
        TUT_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        blocks_ = std::max(1, std::min((n_ + kBlock - 1) / kBlock, kBlocksPerSm * sms));
        // Capture needs a stream of our own (the legacy default stream cannot be captured).
        // A blocking one, so that work on the default stream still orders with it.
        TUT_CUDA(cudaStreamCreate(&stream_));
        spmv_blocks_ = std::max(1, std::min(int((int64_t(n_) * kLanes + kBlock - 1) / kBlock), kBlocksPerSm * sms));
    }
    ~GraphSolver() override {
        if (exec_) cudaGraphExecDestroy(exec_);
        cudaStreamDestroy(stream_);
    }

    SolveResult solve(const float* b, float* x) override {
        if (x != graph_x_) build_graph(x);  // the graph holds x's address: rebuild for a new x
        Scalars* s = scalars_.get();
        TUT_CUDA(cudaMemsetAsync(s, 0, sizeof(Scalars), stream_));
        start<<<blocks_, kBlock, 0, stream_>>>(n_, b, dinv_.get(), x, r_.get(), z_.get(), p_.get(), s,
                                               float(opt_.tolerance * opt_.tolerance));
        TUT_LAUNCH("start");
        TUT_CUDA(cudaGraphLaunch(exec_, stream_));  // the whole loop
        Scalars h{};
        TUT_CUDA(cudaMemcpyAsync(&h, s, sizeof(Scalars), cudaMemcpyDeviceToHost, stream_));
        TUT_CUDA(cudaStreamSynchronize(stream_));  // the only wait
        SolveResult res;
        res.iterations = h.performed;
        res.converged_at = h.converged_at;
        res.outcome = h.status == kConverged             ? Outcome::converged
                      : h.status == kNotPositiveDefinite ? Outcome::not_positive_definite
                                                         : Outcome::max_iterations;
        res.residual = h.bb > 0 ? std::sqrt(double(h.rr_last) / h.bb) : 0.0;
        return res;
    }

    // The fused SpMV kernel alone. After a solve the status is no longer "running", so
    // it leaves the solver's scalars as they were (alpha 0, p.q reset).
    void spmv_once() override {
        spmv_pq_alpha<<<spmv_blocks_, kBlock>>>(A_, p_.get(), q_.get(), scalars_.get());
        TUT_LAUNCH("spmv_pq_alpha");
    }

  private:
    // Builds graph = [ WHILE(loop) { one iteration } ] and instantiates it.
    void build_graph(float* x) {
        if (exec_) TUT_CUDA(cudaGraphExecDestroy(exec_));
        exec_ = nullptr;
        cudaGraph_t graph = nullptr;
        TUT_CUDA(cudaGraphCreate(&graph, 0));
        // The loop's condition; cudaGraphCondAssignDefault resets it to 1 at every launch.
        cudaGraphConditionalHandle loop;
        TUT_CUDA(cudaGraphConditionalHandleCreate(&loop, graph, 1, cudaGraphCondAssignDefault));
        cudaGraphNodeParams params{};
        params.type = cudaGraphNodeTypeConditional;
        params.conditional.handle = loop;
        params.conditional.type = cudaGraphCondTypeWhile;
        params.conditional.size = 1;
        cudaGraphNode_t while_node;
        TUT_CUDA(cudaGraphAddNode(&while_node, graph, nullptr, nullptr, 0, &params));
        cudaGraph_t body = params.conditional.phGraph_out[0];  // owned by the node
        // Record one iteration into the body: its kernels become nodes.
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
        spmv_pq_alpha<<<spmv_blocks_, kBlock, 0, stream_>>>(A_, p_.get(), q_.get(), s);
        TUT_LAUNCH("spmv_pq_alpha");
        update_x_r_z<<<blocks_, kBlock, 0, stream_>>>(n_, p_.get(), q_.get(), dinv_.get(), x, r_.get(), z_.get(), s);
        TUT_LAUNCH("update_x_r_z");
        update_p<<<blocks_, kBlock, 0, stream_>>>(n_, z_.get(), p_.get(), s, loop, opt_.max_iterations);
        TUT_LAUNCH("update_p");
    }

    int n_;
    int blocks_ = 1, spmv_blocks_ = 1;
    tut::cg::DeviceCsr A_;
    tut::cg::SolveOptions opt_;
    cudaStream_t stream_ = nullptr;
    cudaGraphExec_t exec_ = nullptr;
    float* graph_x_ = nullptr;  // the x the graph was built for
    tut::DeviceBuffer<float> dinv_, r_, z_, p_, q_;
    tut::DeviceBuffer<Scalars> scalars_;
};

std::unique_ptr<tut::cg::Solver> make_graph(const tut::cg::Csr& A, const tut::cg::DeviceMatrix& dA,
                                            const tut::cg::SolveOptions& opt) {
    const std::vector<float> dinv = tut::cg::inverse_diagonal(A);
    return std::make_unique<GraphSolver>(dA, dinv, opt);
}

}  // namespace

namespace lesson {
std::vector<tut::cg::Variant> cg_variants() {
    return {{"graph, conditional WHILE node", make_graph}};
}
}  // namespace lesson

#ifndef TUT_NO_MAIN
int main(int argc, char** argv) {
    const tut::LessonInfo info{"cg", "07_graph_while", "the loop as a CUDA graph with a conditional WHILE node"};
    return tut::cg::lesson_main(argc, argv, info, lesson::cg_variants());
}
#endif
