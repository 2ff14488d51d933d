# The bandwidth track, in order. See cmake/Tutorial.cmake for tut_lesson().
# Smoke runs are small and quick; the defaults (the tour) move gigabytes, many times L2.
set(bw_common_bad "--variant nosuch" "--seed -1")
set(bw_gather_bad "--rows 0" "--rows abc" "--cols -3" "--count 0" "--count 1e3" "--order diagonal"
    "--rows 100000 --cols 100000" "--rows 65536 --count 32768" "--order sequential --cols 10 --count 11" "--rows")
set(bw_gather_smoke --rows 1000 --cols 2000 --count 1000 --repeats 2 --warmup 1)

tut_lesson(bandwidth 01_transfers transfers.cu
           SMOKE_ARGS --sizes 1,4096,1048575 --repeats 2 --warmup 1
           BAD_ARGS ${bw_common_bad} "--sizes 0" "--sizes abc" "--sizes 1,,2" "--sizes 17179869185" "--sizes")
tut_lesson(bandwidth 02_copy_kernels copy_kernels.cu
           SMOKE_ARGS --n 1000003 --repeats 2 --warmup 1
           BAD_ARGS ${bw_common_bad} "--n 0" "--n -1" "--n x" "--n 1073741825" "--n")
tut_lesson(bandwidth 03_gather_divmod gather_divmod.cu SMOKE_ARGS ${bw_gather_smoke}
           BAD_ARGS ${bw_common_bad} ${bw_gather_bad})
tut_lesson(bandwidth 04_gather_incremental gather_incremental.cu SMOKE_ARGS ${bw_gather_smoke}
           BAD_ARGS ${bw_common_bad} ${bw_gather_bad})
tut_lesson(bandwidth 05_gather_constant gather_constant.cu SMOKE_ARGS ${bw_gather_smoke}
           BAD_ARGS ${bw_common_bad} ${bw_gather_bad})
tut_lesson(bandwidth 06_gather_2d gather_2d.cu SMOKE_ARGS ${bw_gather_smoke}
           BAD_ARGS ${bw_common_bad} ${bw_gather_bad})
