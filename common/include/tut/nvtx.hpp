/// @file nvtx.hpp
/// @brief NVTX ranges so profilers can filter one lesson's launches.
///
///     { tut::NvtxRange r("sgemm/05_shared_tiling/tile=16"); launch(); }
///
/// A name with slashes is pushed as nested ranges (here "sgemm", inside it
/// "05_shared_tiling", inside that "tile=16"), because that is what a slash means to
/// Nsight Compute's filter: `ncu --nvtx --nvtx-include "sgemm/05_shared_tiling/tile=16/"`
/// profiles exactly the launches of that variant, and
/// `--nvtx-include "sgemm/05_shared_tiling/"` those of the whole lesson. Nsight Systems
/// shows the nesting on its timeline.
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
        size_t start = 0;
        while (true) {
            const size_t slash = name.find('/', start);
            nvtxRangePushA(name.substr(start, slash - start).c_str());
            ++depth_;
            if (slash == std::string::npos) break;
            start = slash + 1;
        }
#else
        (void)name;
#endif
    }
    ~NvtxRange() {
#ifndef TUT_NO_NVTX
        for (int i = 0; i < depth_; ++i) nvtxRangePop();
#endif
    }
    NvtxRange(const NvtxRange&) = delete;
    NvtxRange& operator=(const NvtxRange&) = delete;

  private:
    int depth_ = 0;
};

}  // namespace tut
