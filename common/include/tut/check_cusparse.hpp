/// @file check_cusparse.hpp
/// @brief TUT_CUSPARSE(call): a checked cuSPARSE call (see check.hpp).
#pragma once

#include "check.hpp"

#include <cusparse.h>

namespace tut::detail {
inline void check_cusparse(cusparseStatus_t status, const char* call, const char* file, int line) {
    if (status != CUSPARSE_STATUS_SUCCESS) throw_call_error("cuSPARSE", cusparseGetErrorString(status), call, file, line);
}
}  // namespace tut::detail
/// Checks a cuSPARSE call: `TUT_CUSPARSE(cusparseCreate(&handle));`
#define TUT_CUSPARSE(call) ::tut::detail::check_cusparse((call), #call, __FILE__, __LINE__)
