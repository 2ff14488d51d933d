// A minimal program for a compute-sanitizer report on a CUDA graph with a conditional WHILE
// node, as CG lesson 07 builds one. Under `compute-sanitizer --tool memcheck`, lesson 07
// without a synchronization before its capture was reported reading memory "before it is
// allocated" on small matrices, after which the context was poisoned and every later call
// failed with cudaErrorIllegalAddress; without the sanitizer the same runs were correct.
// NVIDIA Warp's bug report 1406 (https://github.com/NVIDIA/warp/issues/1406) describes the
// same symptom for a WHILE graph that reads arrays allocated just before the capture, and a
// synchronization between the allocations and the capture as what makes it disappear.
//
// This program does what lesson 07 does, in miniature: it allocates two arrays, queues
// writes into them (a poison memset and a fill kernel on the default stream), and at once
// captures, on a stream of its own, a body of two kernels into a WHILE node: one kernel
// adds a[i] to b[i], the other counts the body runs and ends the loop after K of them.
// Then it launches the graph once and checks every element (b[i] = K i) and the count.
//
// Build (CUDA 12.4 or newer, toolkit and driver; from the repository root):
//   nvcc -O2 -std=c++17 -arch=native docs/experiments/sanitizer_while_graph.cu -o sanitizer_while_graph
// Run:
//   ./sanitizer_while_graph                                             # right results: exit 0
//   compute-sanitizer --tool memcheck ./sanitizer_while_graph           # the report, if the limitation is there
//   compute-sanitizer --tool memcheck ./sanitizer_while_graph --sync    # synchronized before the capture
//   compute-sanitizer --tool memcheck ./sanitizer_while_graph --plain   # the same body without a WHILE node
// Options:
//   --sync          cudaDeviceSynchronize() between the allocations and the capture
//   --plain         capture the body into the graph itself, no conditional node (it runs once)
//   --n N           elements (default 100, like the 100-row spd100.mtx)
//   --iterations K  body runs of the WHILE loop (default 5)
// Exit code: 0 when the results are right; 1 on a CUDA error or a wrong result; 2 for bad
// arguments.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// Prints the failed call and exits 1.
void check(cudaError_t status, const char* what) {
    if (status == cudaSuccess) return;
    std::fprintf(stderr, "sanitizer_while_graph: %s failed: %s (%s)\n", what, cudaGetErrorName(status),
                 cudaGetErrorString(status));
    std::exit(1);
}
#define CHECK(call) check((call), #call)

__global__ void fill(float* a, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = float(i);
}

// The body's work: reads and writes the arrays allocated just before the capture.
__global__ void accumulate(const float* a, float* b, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] += a[i];
}

// The body's decision: one thread counts the runs and ends the loop after `iterations`.
__global__ void decide(int* runs, int iterations, cudaGraphConditionalHandle loop) {
    if (++*runs >= iterations) cudaGraphSetConditional(loop, 0u);
}

// The same count, for the graph without a conditional node.
__global__ void count(int* runs) { ++*runs; }

bool parse_int(const char* text, int lo, int hi, int* out) {
    char* end = nullptr;
    const long v = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || v < lo || v > hi) return false;
    *out = int(v);
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    bool sync = false, plain = false;
    int n = 100, iterations = 5;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--sync") {
            sync = true;
        } else if (arg == "--plain") {
            plain = true;
        } else if (arg == "--n" && i + 1 < argc && parse_int(argv[i + 1], 1, 1 << 26, &n)) {
            ++i;
        } else if (arg == "--iterations" && i + 1 < argc && parse_int(argv[i + 1], 1, 1000000, &iterations)) {
            ++i;
        } else {
            std::fprintf(stderr,
                         "sanitizer_while_graph: bad argument '%s'\n"
                         "usage: sanitizer_while_graph [--sync] [--plain] [--n N] [--iterations K]\n",
                         argv[i]);
            return 2;
        }
    }
    int driver = 0;
    CHECK(cudaDriverGetVersion(&driver));
    if (driver < 12040) {
        std::fprintf(stderr, "sanitizer_while_graph: conditional graph nodes need a CUDA 12.4 driver; this one is %d\n",
                     driver);
        return 1;
    }

    // A stream of our own (the legacy default stream cannot be captured); blocking, like
    // lesson 07's, so that it orders with the default stream.
    cudaStream_t stream = nullptr;
    CHECK(cudaStreamCreate(&stream));

    // The allocations, and writes into them still queued on the default stream when the
    // capture begins (unless --sync).
    float *a = nullptr, *b = nullptr;
    int* runs = nullptr;
    CHECK(cudaMalloc(&a, sizeof(float) * n));
    CHECK(cudaMalloc(&b, sizeof(float) * n));
    CHECK(cudaMalloc(&runs, sizeof(int)));
    CHECK(cudaMemset(b, 0, sizeof(float) * n));
    CHECK(cudaMemset(runs, 0, sizeof(int)));
    const int threads = 256, blocks = (n + threads - 1) / threads;
    fill<<<blocks, threads>>>(a, n);
    CHECK(cudaGetLastError());
    if (sync) CHECK(cudaDeviceSynchronize());

    // graph = [ WHILE(loop) { accumulate -> decide } ], or with --plain [ accumulate -> count ].
    cudaGraph_t graph = nullptr;
    CHECK(cudaGraphCreate(&graph, 0));
    cudaGraph_t body = graph;
    cudaGraphConditionalHandle loop = 0;
    if (!plain) {
        CHECK(cudaGraphConditionalHandleCreate(&loop, graph, 1, cudaGraphCondAssignDefault));
        cudaGraphNodeParams params{};
        params.type = cudaGraphNodeTypeConditional;
        params.conditional.handle = loop;
        params.conditional.type = cudaGraphCondTypeWhile;
        params.conditional.size = 1;
        cudaGraphNode_t node = nullptr;
#if CUDART_VERSION >= 13000
        CHECK(cudaGraphAddNode(&node, graph, nullptr, nullptr, 0, &params));
#else
        CHECK(cudaGraphAddNode(&node, graph, nullptr, 0, &params));
#endif
        body = params.conditional.phGraph_out[0];
    }
    CHECK(cudaStreamBeginCaptureToGraph(stream, body, nullptr, nullptr, 0, cudaStreamCaptureModeRelaxed));
    accumulate<<<blocks, threads, 0, stream>>>(a, b, n);
    CHECK(cudaGetLastError());
    if (plain) {
        count<<<1, 1, 0, stream>>>(runs);
    } else {
        decide<<<1, 1, 0, stream>>>(runs, iterations, loop);
    }
    CHECK(cudaGetLastError());
    cudaGraph_t captured = nullptr;
    CHECK(cudaStreamEndCapture(stream, &captured));
    cudaGraphExec_t exec = nullptr;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));

    CHECK(cudaGraphLaunch(exec, stream));
    std::vector<float> host(static_cast<size_t>(n));
    int host_runs = 0;
    CHECK(cudaMemcpyAsync(host.data(), b, sizeof(float) * n, cudaMemcpyDeviceToHost, stream));
    CHECK(cudaMemcpyAsync(&host_runs, runs, sizeof(int), cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));

    const int expected_runs = plain ? 1 : iterations;
    int wrong = 0;
    for (int i = 0; i < n; ++i)
        if (host[i] != float(i) * float(expected_runs)) ++wrong;
    std::printf("sanitizer_while_graph: %s, %s, n = %d: %d body runs (expected %d), %d wrong elements\n",
                plain ? "plain graph" : "WHILE node", sync ? "synchronized before the capture" : "no synchronization",
                n, host_runs, expected_runs, wrong);

    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(runs));
    CHECK(cudaStreamDestroy(stream));
    return wrong == 0 && host_runs == expected_runs ? 0 : 1;
}
