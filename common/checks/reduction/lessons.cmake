# The reduction track, in order. See cmake/Tutorial.cmake for tut_lesson().
# Default run (the tour's): the sum of 2^26 doubles beside cub::DeviceReduce::Sum.
# The smoke run covers every type at an odd size; lesson 8's also runs its --sweep.
set(reduction_bad "--n abc" "--n 0" "--n -4" "--n 1073741825" "--n 1e3" "--n" "--type quad" "--variant nosuch"
                  "--reruns -1")
set(reduction_smoke --n 1000003 --type all --repeats 2 --warmup 1 --reruns 2)
tut_lesson(reduction 01_interleaved_divergent interleaved_divergent.cu SMOKE_ARGS ${reduction_smoke} BAD_ARGS ${reduction_bad})
tut_lesson(reduction 02_interleaved_strided interleaved_strided.cu SMOKE_ARGS ${reduction_smoke} BAD_ARGS ${reduction_bad})
tut_lesson(reduction 03_sequential sequential.cu SMOKE_ARGS ${reduction_smoke} BAD_ARGS ${reduction_bad})
tut_lesson(reduction 04_first_add_on_load first_add_on_load.cu SMOKE_ARGS ${reduction_smoke} BAD_ARGS ${reduction_bad})
tut_lesson(reduction 05_unroll_last_warp unroll_last_warp.cu SMOKE_ARGS ${reduction_smoke} BAD_ARGS ${reduction_bad})
tut_lesson(reduction 06_complete_unroll complete_unroll.cu SMOKE_ARGS ${reduction_smoke} BAD_ARGS ${reduction_bad})
tut_lesson(reduction 07_grid_stride grid_stride.cu SMOKE_ARGS ${reduction_smoke} BAD_ARGS ${reduction_bad})
tut_lesson(reduction 08_warp_shuffle_atomic warp_shuffle_atomic.cu SMOKE_ARGS ${reduction_smoke} --sweep
           BAD_ARGS ${reduction_bad} "--sweep=1")
tut_lesson(reduction 09_vectorized vectorized.cu SMOKE_ARGS ${reduction_smoke} BAD_ARGS ${reduction_bad})
tut_lesson(reduction 10_cub cub.cu SMOKE_ARGS ${reduction_smoke} BAD_ARGS ${reduction_bad})
