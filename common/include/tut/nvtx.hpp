/// @file nvtx.hpp
/// @brief NVTX ranges so profilers can filter one lesson's launches.
///
///     { tut::NvtxRange r("sgemm/05_shared_tiling/tile=16"); launch(); }
///
/// Nsight Systems shows the range on its timeline; Nsight Compute profiles only
/// launches inside it with `ncu --nvtx --nvtx-include "sgemm/05_shared_tiling/tile=16/"`.
/// NVTX 3 is header-only and ships with the CUDA toolkit; define TUT_NO_NVTX to
/// compile the ranges out.
#pragma once

#include <string>

#ifndef TUT_NO_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace tut {

class NvtxRange {
  public:
    explicit NvtxRange(const std::string& name) {
#ifndef TUT_NO_NVTX
        nvtxRangePushA(name.c_str());
#else
        (void)name;
#endif
    }
    ~NvtxRange() {
#ifndef TUT_NO_NVTX
        nvtxRangePop();
#endif
    }
    NvtxRange(const NvtxRange&) = delete;
    NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace tut
