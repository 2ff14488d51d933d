// compute-sanitizer memcheck and a conditional WHILE graph launched after a large cudaFree.
//
// A CUDA graph whose only node is a WHILE conditional node; its body is one kernel that
// adds a to b and, in thread 0, counts the body runs and ends the loop after --iters of
// them with cudaGraphSetConditional. Before the small buffers are allocated, the program
// optionally allocates, fills and frees one large buffer (--big-mb), as a program does
// when it measures copy bandwidth first.
//
// Build:  nvcc -O3 -std=c++17 -arch=native docs/experiments/sanitizer_while_graph.cu -o while_graph
// Run:    ./while_graph --big-mb 1024                 (prints "body ran 5 times", exit 0)
//         compute-sanitizer --tool memcheck ./while_graph --big-mb 1024
//         compute-sanitizer --tool memcheck ./while_graph --big-mb 1024 --keep
//         compute-sanitizer --tool memcheck ./while_graph
//
// Seen on an H100 (driver 580.159.04, CUDA 13.0, compute-sanitizer 2025.3.1): with a
// 1024 MB buffer freed before the capture, memcheck ends in cudaErrorIllegalAddress at
// the first API call after the graph launch and reports no kernel access; the same
// program runs correctly without the sanitizer and under racecheck, initcheck and
// synccheck; keeping the large buffer allocated (--keep), freeing only 64 MB, or no large
// buffer at all: memcheck is clean. memcheck does check the body's kernels: an
// out-of-bounds write placed in the body is reported as an invalid __global__ write.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK(call)                                                                                    \
    do {                                                                                               \
        cudaError_t status_ = (call);                                                                  \
        if (status_ != cudaSuccess) {                                                                  \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(status_)); \
            std::exit(1);                                                                              \
        }                                                                                              \
    } while (0)

// The loop body: b += a, then thread 0 decides whether the body runs again.
__global__ void body(const float* a, float* b, int n, int* runs, cudaGraphConditionalHandle loop, int iters) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) b[i] += a[i];
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        const int done = ++*runs;
        cudaGraphSetConditional(loop, done < iters ? 1u : 0u);
    }
}

int main(int argc, char** argv) {
    long long big_mb = 0;
    bool keep = false;
    int iters = 5;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--big-mb") && i + 1 < argc) big_mb = std::atoll(argv[++i]);
        else if (!std::strcmp(argv[i], "--keep")) keep = true;
        else if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) iters = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr, "usage: %s [--big-mb MB] [--keep] [--iters N]\n", argv[0]);
            return 2;
        }
    }
    if (big_mb < 0 || iters < 1) {
        std::fprintf(stderr, "%s: --big-mb must be >= 0 and --iters >= 1\n", argv[0]);
        return 2;
    }
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::fprintf(stderr, "SKIPPED: no usable CUDA GPU\n");
        return 77;
    }

    void* big = nullptr;
    if (big_mb > 0) {
        const size_t bytes = size_t(big_mb) << 20;
        CHECK(cudaMalloc(&big, bytes));
        CHECK(cudaMemset(big, 1, bytes));
        if (!keep) {
            CHECK(cudaFree(big));
            big = nullptr;
        }
    }

    const int n = 100;
    float *a = nullptr, *b = nullptr;
    int* runs = nullptr;
    CHECK(cudaMalloc(&a, n * sizeof(float)));
    CHECK(cudaMalloc(&b, n * sizeof(float)));
    CHECK(cudaMalloc(&runs, sizeof(int)));
    CHECK(cudaMemset(a, 0, n * sizeof(float)));
    CHECK(cudaMemset(b, 0, n * sizeof(float)));
    CHECK(cudaMemset(runs, 0, sizeof(int)));

    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));
    cudaGraph_t graph;
    CHECK(cudaGraphCreate(&graph, 0));
    cudaGraphConditionalHandle loop;
    CHECK(cudaGraphConditionalHandleCreate(&loop, graph, 1, cudaGraphCondAssignDefault));
    cudaGraphNodeParams params{};
    params.type = cudaGraphNodeTypeConditional;
    params.conditional.handle = loop;
    params.conditional.type = cudaGraphCondTypeWhile;
    params.conditional.size = 1;
    cudaGraphNode_t node;
    CHECK(cudaGraphAddNode(&node, graph, nullptr, nullptr, 0, &params));
    CHECK(cudaStreamBeginCaptureToGraph(stream, params.conditional.phGraph_out[0], nullptr, nullptr, 0,
                                        cudaStreamCaptureModeRelaxed));
    body<<<1, 128, 0, stream>>>(a, b, n, runs, loop, iters);
    cudaGraph_t captured;
    CHECK(cudaStreamEndCapture(stream, &captured));
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));

    CHECK(cudaGraphLaunch(exec, stream));
    int ran = 0;
    CHECK(cudaMemcpyAsync(&ran, runs, sizeof(int), cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    std::printf("body ran %d times (expected %d); large buffer: %lld MB, %s\n", ran, iters, big_mb,
                big_mb == 0 ? "none" : keep ? "kept" : "freed before the capture");

    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaStreamDestroy(stream));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(runs));
    if (big) CHECK(cudaFree(big));
    return ran == iters ? 0 : 1;
}
