# The multigpu track, in order. See cmake/Multigpu.cmake for tut_multigpu_lesson(): each
# lesson runs one process per GPU under mpirun (its checks on 2 GPUs, its tour on 1, 2 and
# 4), except lesson 1, one process that uses the GPUs itself. A lesson whose dependency
# (MPI, NCCL, NVSHMEM) is missing is left out, with one configure line saying so.
# The CG lessons' tour runs the weak-scaling problem, 128^3 and 256^3: strong scaling is
# judged on the larger one (256^3 adds about 10 s of host time per process that generates
# its 450 M nonzeros, so each program needs up to a minute).
include(${CMAKE_SOURCE_DIR}/cmake/Multigpu.cmake)

tut_multigpu_lesson(01_peers peers.cu SINGLE GPUS 2
                    SMOKE_ARGS --bytes 1048579 --repeats 2 --warmup 1
                    BAD_ARGS "--gpus 0" "--bytes 0" "--bytes abc" "--variant nosuch"
                    TOUR_ARGS --sweep)

tut_multigpu_lesson(02_allreduce allreduce.cu NEEDS mpi nccl GPUS 2
                    SMOKE_ARGS --max-bytes 1048576 --repeats 2 --warmup 1
                    BAD_ARGS "--max-bytes 0" "--max-bytes 8" "--variant nosuch"
                    TOUR_ARGS --max-bytes 1073741824)

tut_multigpu_lesson(03_jor jor.cu NEEDS mpi nccl GPUS 2
                    SMOKE_ARGS --small --repeats 2
                    BAD_ARGS "--sizes 0" "--sizes 1,,2" "--type half" "--warps-per-row 3" "--variant nosuch"
                    TOUR_ARGS --sizes 16384,32768)

tut_multigpu_lesson(04_cg cg.cu NEEDS mpi nccl GPUS 2
                    SMOKE_ARGS --small --repeats 1
                    BAD_ARGS "--problem 512^3" "--problem weak,,128^3" "--max-iterations 0" "--variant nosuch"
                    TOUR_ARGS --problem weak,128^3,256^3)

tut_multigpu_lesson(05_overlap overlap.cu NEEDS mpi nccl GPUS 2
                    SMOKE_ARGS --small --repeats 1
                    BAD_ARGS "--problem 512^3" "--problem weak,512^3" "--max-iterations 0" "--variant nosuch"
                    TOUR_ARGS --problem weak,128^3,256^3)

tut_multigpu_lesson(06_nvshmem nvshmem_cg.cu NEEDS mpi nvshmem GPUS 2 RDC
                    SMOKE_ARGS --small --repeats 1
                    BAD_ARGS "--problem 512^3" "--max-iterations 0" "--variant nosuch"
                    TOUR_ARGS --problem weak,128^3,256^3)
