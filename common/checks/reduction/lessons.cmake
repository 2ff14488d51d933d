# The reduction track, in order. See cmake/Tutorial.cmake for tut_lesson().
# Default run: the sum of 2^26 doubles beside cub::DeviceReduce::Sum. The tour runs every
# type (--type all): the double records are the track's progression, the float, int and
# complex records are measured beside them (the READMEs' tables show all four).
# The smoke run covers every type at an odd size; lesson 8's also runs its --sweep.
# Sanitizer runs (--profile: each variant launched once, no library run): every type at
# 1 element, at 33 (one warp and one more) and at 100003 (no multiple of any block, and
# several passes in lessons 1-6); lessons 7-9 also past one full-GPU grid (3000017).
# racecheck wherever a kernel uses shared memory, synccheck where the last warp
# synchronizes with __syncwarp (lessons 5-7).
set(reduction_bad "--n abc" "--n 0" "--n -4" "--n 1073741825" "--n 1e3" "--n" "--type quad" "--variant nosuch"
                  "--reruns -1")
set(reduction_smoke --n 1000003 --type all --repeats 2 --warmup 1 --reruns 2)
set(reduction_tour --type all)
set(reduction_sanitize "--profile --type all --n 1" "--profile --type all --n 33" "--profile --type all --n 100003")
set(reduction_sanitize_grid ${reduction_sanitize} "--profile --type all --n 3000017")
tut_lesson(reduction 01_interleaved_divergent interleaved_divergent.cu SMOKE_ARGS ${reduction_smoke}
           BAD_ARGS ${reduction_bad} TOUR_ARGS ${reduction_tour}
           SANITIZE_RUNS ${reduction_sanitize} SANITIZE_TOOLS memcheck racecheck)
tut_lesson(reduction 02_interleaved_strided interleaved_strided.cu SMOKE_ARGS ${reduction_smoke}
           BAD_ARGS ${reduction_bad} TOUR_ARGS ${reduction_tour}
           SANITIZE_RUNS ${reduction_sanitize} SANITIZE_TOOLS memcheck racecheck)
tut_lesson(reduction 03_sequential sequential.cu SMOKE_ARGS ${reduction_smoke}
           BAD_ARGS ${reduction_bad} TOUR_ARGS ${reduction_tour}
           SANITIZE_RUNS ${reduction_sanitize} SANITIZE_TOOLS memcheck racecheck)
tut_lesson(reduction 04_first_add_on_load first_add_on_load.cu SMOKE_ARGS ${reduction_smoke}
           BAD_ARGS ${reduction_bad} TOUR_ARGS ${reduction_tour}
           SANITIZE_RUNS ${reduction_sanitize} SANITIZE_TOOLS memcheck racecheck)
tut_lesson(reduction 05_unroll_last_warp unroll_last_warp.cu SMOKE_ARGS ${reduction_smoke}
           BAD_ARGS ${reduction_bad} TOUR_ARGS ${reduction_tour}
           SANITIZE_RUNS ${reduction_sanitize} SANITIZE_TOOLS memcheck racecheck synccheck)
tut_lesson(reduction 06_complete_unroll complete_unroll.cu SMOKE_ARGS ${reduction_smoke}
           BAD_ARGS ${reduction_bad} TOUR_ARGS ${reduction_tour}
           SANITIZE_RUNS ${reduction_sanitize} SANITIZE_TOOLS memcheck racecheck synccheck)
tut_lesson(reduction 07_grid_stride grid_stride.cu SMOKE_ARGS ${reduction_smoke}
           BAD_ARGS ${reduction_bad} TOUR_ARGS ${reduction_tour}
           SANITIZE_RUNS ${reduction_sanitize_grid} SANITIZE_TOOLS memcheck racecheck synccheck)
tut_lesson(reduction 08_warp_shuffle_atomic warp_shuffle_atomic.cu SMOKE_ARGS ${reduction_smoke} --sweep
           BAD_ARGS ${reduction_bad} "--sweep=1" TOUR_ARGS ${reduction_tour}
           SANITIZE_RUNS ${reduction_sanitize_grid} "--profile --n 100003 --sweep" SANITIZE_TOOLS memcheck racecheck)
tut_lesson(reduction 09_vectorized vectorized.cu SMOKE_ARGS ${reduction_smoke}
           BAD_ARGS ${reduction_bad} TOUR_ARGS ${reduction_tour}
           SANITIZE_RUNS ${reduction_sanitize_grid} SANITIZE_TOOLS memcheck racecheck)
tut_lesson(reduction 10_cub cub.cu SMOKE_ARGS ${reduction_smoke}
           BAD_ARGS ${reduction_bad} TOUR_ARGS ${reduction_tour}
           SANITIZE_RUNS ${reduction_sanitize} SANITIZE_TOOLS memcheck)
