# tut_lesson(): how one lesson becomes targets, checks and tests.
#
#   tut_lesson(TRACK LESSON SOURCE
#              [LIBS <libs...>]          extra libraries (CUDA::cublas, CUDA::cusparse...)
#              [SMOKE_ARGS <args...>]    a quick run of the solution binary (GPU test)
#              [BAD_ARGS <"a b"...>]     argument strings that must give a usage error (CPU test)
#              [TOUR_ARGS <args...>]     arguments the tour passes (default: the lesson's defaults)
#              [SANITIZE_RUNS <"a b"...>] argument strings, one per compute-sanitizer run of the
#                                        solution (small and odd sizes); default: SMOKE_ARGS
#              [SANITIZE_TOOLS <tools...>] which compute-sanitizer tools those runs use: memcheck
#                                        (default), racecheck (kernels with shared memory),
#                                        synccheck (barriers, cooperative kernels), initcheck
#              [TIMEOUT <seconds>])      per check run (grader and CTest), default 300
#
# For each tree (the exercises in TUT_LESSONS_DIR, the solutions in TUT_SOLUTIONS_DIR)
# it builds, from <tree>/<track>/<lesson>/<source>:
#   <tree>-<track>-<lesson>          the lesson program (bin: build/<tree>/<track>/<lesson>/<stem>)
#   <tree>-<track>-<lesson>-obj      the same source without main() (TUT_NO_MAIN)
#   check-<tree>-<track>-<lesson>    common/checks/<track>/check_<lesson>.cpp linked with it
# CTest runs the solution checks (GPU; exit 77 = skipped without one), a smoke run of each
# solution (GPU) and the bad-input test (CPU). The exercise checks are run by the grader
# (scripts/grade.py), which reads build/tut_manifest.json.

set_property(GLOBAL PROPERTY TUT_MANIFEST "")

set(TUT_COMMON_BAD_ARGS "--bogus" "--repeats 0" "--repeats x" "stray")

function(tut_lesson track lesson source)
  cmake_parse_arguments(PARSE_ARGV 3 L "" "TIMEOUT" "LIBS;SMOKE_ARGS;BAD_ARGS;TOUR_ARGS;SANITIZE_RUNS;SANITIZE_TOOLS")
  if(NOT L_TIMEOUT)
    set(L_TIMEOUT 300)
  endif()
  if(NOT L_SANITIZE_TOOLS)
    set(L_SANITIZE_TOOLS memcheck)
  endif()
  # The sanitizer runs as JSON: [["--n", "17"], ...] (one list of arguments per run).
  set(sanitize_runs "")
  if(L_SANITIZE_RUNS)
    foreach(run IN LISTS L_SANITIZE_RUNS)
      separate_arguments(run_args UNIX_COMMAND "${run}")
      set(quoted "")
      foreach(a IN LISTS run_args)
        list(APPEND quoted "\"${a}\"")
      endforeach()
      list(JOIN quoted ", " quoted)
      list(APPEND sanitize_runs "[${quoted}]")
    endforeach()
  else()
    set(quoted "")
    foreach(a IN LISTS L_SMOKE_ARGS)
      list(APPEND quoted "\"${a}\"")
    endforeach()
    list(JOIN quoted ", " quoted)
    set(sanitize_runs "[${quoted}]")
  endif()
  list(JOIN sanitize_runs ", " sanitize_runs)
  set(sanitize_tools "")
  foreach(tool IN LISTS L_SANITIZE_TOOLS)
    if(NOT tool MATCHES "^(memcheck|racecheck|synccheck|initcheck)$")
      message(FATAL_ERROR "tut_lesson(${track} ${lesson}): unknown SANITIZE_TOOLS entry '${tool}'")
    endif()
    list(APPEND sanitize_tools "\"${tool}\"")
  endforeach()
  list(JOIN sanitize_tools ", " sanitize_tools)
  get_filename_component(stem ${source} NAME_WE)
  foreach(tree lessons solutions)
    if(tree STREQUAL "lessons")
      set(root ${TUT_LESSONS_DIR})
    else()
      set(root ${TUT_SOLUTIONS_DIR})
    endif()
    set(src ${root}/${track}/${lesson}/${source})
    set(t ${tree}-${track}-${lesson})
    add_executable(${t} ${src})
    target_link_libraries(${t} PRIVATE tut_common ${L_LIBS})
    set_target_properties(${t} PROPERTIES OUTPUT_NAME ${stem}
                          RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/${tree}/${track}/${lesson})

    set(check_json "")
    if(TUT_BUILD_CHECKS)
      add_library(${t}-obj OBJECT ${src})
      target_compile_definitions(${t}-obj PRIVATE TUT_NO_MAIN)
      target_link_libraries(${t}-obj PRIVATE tut_common ${L_LIBS})
      add_executable(check-${t} ${CMAKE_SOURCE_DIR}/common/checks/${track}/check_${lesson}.cpp)
      target_link_libraries(check-${t} PRIVATE ${t}-obj tut_checks_gpu ${L_LIBS})
      target_compile_definitions(check-${t} PRIVATE TUT_LESSON_SOURCE="${src}" TUT_LESSON_ID="${track}/${lesson}")
      set_target_properties(check-${t} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/checks/${tree})
      set(check_json ", \"check_target\": \"check-${t}\", \"check_exe\": \"$<TARGET_FILE:check-${t}>\"")
      if(tree STREQUAL "solutions")
        add_test(NAME ${tree}/${track}/${lesson}/check COMMAND check-${t})
        set_tests_properties(${tree}/${track}/${lesson}/check PROPERTIES
                             SKIP_RETURN_CODE 77 TIMEOUT ${L_TIMEOUT} RESOURCE_LOCK gpu LABELS "gpu;${track}")
        add_test(NAME ${tree}/${track}/${lesson}/run COMMAND ${t} ${L_SMOKE_ARGS})
        set_tests_properties(${tree}/${track}/${lesson}/run PROPERTIES
                             SKIP_RETURN_CODE 77 TIMEOUT ${L_TIMEOUT} RESOURCE_LOCK gpu LABELS "gpu;${track}")
        add_test(NAME ${tree}/${track}/${lesson}/bad-input
                 COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/scripts/expect_usage_error.py $<TARGET_FILE:${t}>
                         ${TUT_COMMON_BAD_ARGS} ${L_BAD_ARGS})
        set_tests_properties(${tree}/${track}/${lesson}/bad-input PROPERTIES LABELS "cpu;${track}")
      endif()
    endif()

    set(tour "")
    foreach(a IN LISTS L_TOUR_ARGS)
      list(APPEND tour "\"${a}\"")
    endforeach()
    list(JOIN tour ", " tour)
    set_property(GLOBAL APPEND PROPERTY TUT_MANIFEST
      "  {\"tree\": \"${tree}\", \"track\": \"${track}\", \"lesson\": \"${lesson}\", \"source\": \"${src}\", \"target\": \"${t}\", \"exe\": \"$<TARGET_FILE:${t}>\"${check_json}, \"timeout\": ${L_TIMEOUT}, \"tour_args\": [${tour}], \"sanitize_runs\": [${sanitize_runs}], \"sanitize_tools\": [${sanitize_tools}]}")
  endforeach()
endfunction()

# Writes build/tut_manifest.json: every lesson of both trees, in tour order.
function(tut_write_manifest)
  get_property(entries GLOBAL PROPERTY TUT_MANIFEST)
  list(JOIN entries ",\n" body)
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/tut_manifest.json CONTENT "[\n${body}\n]\n")
  set(major 0)
  if(TUT_BUILD_CHECKS)
    set(major ${TUT_CATCH_MAJOR})
  endif()
  file(WRITE ${CMAKE_BINARY_DIR}/tut_build_info.json
       "{\"catch_major\": ${major}, \"cuda_architectures\": \"${CMAKE_CUDA_ARCHITECTURES}\", \"tracks\": \"${TUT_TRACKS}\"}\n")
endfunction()
