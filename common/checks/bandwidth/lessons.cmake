# The bandwidth track, in order. See cmake/Tutorial.cmake for tut_lesson().
# Smoke runs are small and quick; the defaults (the tour) move gigabytes, many times L2.
# Sanitizer runs: small and odd sizes (not multiples of 4, 32 or 256), one repeat; no
# kernel of this track uses shared memory or barriers, so memcheck is the tool.
set(bw_common_bad "--variant nosuch" "--seed -1")
set(bw_gather_bad "--rows 0" "--rows abc" "--cols -3" "--count 0" "--count 1e3" "--order diagonal"
    "--rows 100000 --cols 100000" "--rows 65536 --count 32768" "--order sequential --cols 10 --count 11" "--rows")
set(bw_gather_smoke --rows 1000 --cols 2000 --count 1000 --repeats 2 --warmup 1)
set(bw_once "--repeats 1 --warmup 0")
# Gathers: odd rows (the float path of lesson 06), rows % 4 == 0 (its float4 path), a
# single row, and more indices than __constant__ holds (lesson 05) and than gridDim.y
# allows (lesson 06).
set(bw_gather_sanitize "--rows 1001 --cols 37 --count 53 ${bw_once}" "--rows 1000 --cols 300 --count 257 ${bw_once}"
    "--rows 1 --cols 70001 --count 70001 ${bw_once}" "--rows 3 --cols 5 --count 16385 ${bw_once}")

tut_lesson(bandwidth 01_transfers transfers.cu
           SMOKE_ARGS --sizes 1,4096,1048575 --repeats 2 --warmup 1
           BAD_ARGS ${bw_common_bad} "--sizes 0" "--sizes abc" "--sizes 1,,2" "--sizes 17179869185" "--sizes"
           SANITIZE_RUNS "--sizes 1,4097,65537 ${bw_once}"
           SANITIZE_TOOLS memcheck)
tut_lesson(bandwidth 02_copy_kernels copy_kernels.cu
           SMOKE_ARGS --n 1000003 --repeats 2 --warmup 1
           BAD_ARGS ${bw_common_bad} "--n 0" "--n -1" "--n x" "--n 1073741825" "--n"
           SANITIZE_RUNS "--n 1 ${bw_once}" "--n 7 ${bw_once}" "--n 1000003 ${bw_once}"
           SANITIZE_TOOLS memcheck)
tut_lesson(bandwidth 03_gather_divmod gather_divmod.cu SMOKE_ARGS ${bw_gather_smoke}
           BAD_ARGS ${bw_common_bad} ${bw_gather_bad}
           SANITIZE_RUNS ${bw_gather_sanitize}
           SANITIZE_TOOLS memcheck)
tut_lesson(bandwidth 04_gather_incremental gather_incremental.cu SMOKE_ARGS ${bw_gather_smoke}
           BAD_ARGS ${bw_common_bad} ${bw_gather_bad}
           SANITIZE_RUNS ${bw_gather_sanitize}
           SANITIZE_TOOLS memcheck)
tut_lesson(bandwidth 05_gather_constant gather_constant.cu SMOKE_ARGS ${bw_gather_smoke}
           BAD_ARGS ${bw_common_bad} ${bw_gather_bad}
           SANITIZE_RUNS ${bw_gather_sanitize}
           SANITIZE_TOOLS memcheck)
tut_lesson(bandwidth 06_gather_2d gather_2d.cu SMOKE_ARGS ${bw_gather_smoke}
           BAD_ARGS ${bw_common_bad} ${bw_gather_bad}
           SANITIZE_RUNS ${bw_gather_sanitize}
           SANITIZE_TOOLS memcheck)

# Copies and gathers of up to 2^30 floats are checked on the device (device_checks.cu):
# a checking kernel compares the output and sends back only a summary.
if(TUT_BUILD_CHECKS)
  add_library(tut_bandwidth_device_checks STATIC ${CMAKE_CURRENT_LIST_DIR}/device_checks.cu)
  target_link_libraries(tut_bandwidth_device_checks PUBLIC tut_common)
  foreach(tree lessons solutions)
    foreach(lesson 01_transfers 02_copy_kernels 03_gather_divmod 04_gather_incremental 05_gather_constant
                   06_gather_2d)
      if(TARGET check-${tree}-bandwidth-${lesson})  # a tree may ship some lessons only
        target_link_libraries(check-${tree}-bandwidth-${lesson} PRIVATE tut_bandwidth_device_checks)
      endif()
    endforeach()
  endforeach()
endif()
