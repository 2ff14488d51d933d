/// @file check.hpp
/// @brief Checked CUDA, cuBLAS and cuSPARSE calls and kernel launches.
///
/// Every runtime call in the project goes through one of these macros. A failure
/// throws tut::CudaError whose message names the call, the file and the line, e.g.
///
///     CUDA error 'out of memory' (cudaErrorMemoryAllocation) in cudaMalloc(&p, bytes) at naive.cu:42
///
/// Throwing (rather than exiting) lets the Catch2 checks report the failure as a
/// failed check and lets a lesson's main() print it and exit non-zero.
///
/// The cuBLAS and cuSPARSE versions, TUT_CUBLAS and TUT_CUSPARSE, are in
/// check_cublas.hpp and check_cusparse.hpp, so a lesson that uses neither library
/// needs neither header.
#pragma once

#include <cuda_runtime.h>

#include <sstream>
#include <stdexcept>
#include <string>

namespace tut {

/// Thrown by the TUT_CUDA / TUT_CUBLAS / TUT_CUSPARSE / TUT_LAUNCH macros.
struct CudaError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// Thrown when a lesson is asked for a size (or input) it does not support.
/// The message says what is supported. Lessons' main() turn it into a usage error.
struct Unsupported : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

namespace detail {
inline const char* basename_of(const char* path) {
    const char* base = path;
    for (const char* p = path; *p; ++p)
        if (*p == '/' || *p == '\\') base = p + 1;
    return base;
}

[[noreturn]] inline void throw_call_error(const char* library, const std::string& what, const char* call,
                                          const char* file, int line) {
    std::ostringstream os;
    os << library << " error " << what << " in " << call << " at " << basename_of(file) << ":" << line;
    throw CudaError(os.str());
}

inline void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
    if (status == cudaSuccess) return;
    std::string what = std::string("'") + cudaGetErrorString(status) + "' (" + cudaGetErrorName(status) + ")";
    throw_call_error("CUDA", what, call, file, line);
}
}  // namespace detail

}  // namespace tut

/// Checks a CUDA runtime call: `TUT_CUDA(cudaMalloc(&p, bytes));`
#define TUT_CUDA(call) ::tut::detail::check_cuda((call), #call, __FILE__, __LINE__)

/// Checks the most recent kernel launch (bad configuration, too many resources...).
/// Put it right after `kernel<<<grid, block>>>(...)`. Asynchronous faults inside the
/// kernel surface at the next synchronizing call, which is checked too.
#define TUT_LAUNCH(kernel_name) \
    ::tut::detail::check_cuda(cudaGetLastError(), "launch of " kernel_name, __FILE__, __LINE__)
