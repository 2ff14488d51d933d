# Finds Catch2 3 (Ubuntu 24.04, the GPU machine: 3.4) or Catch2 2 (Debian 12: 2.13)
# and sets TUT_CATCH_MAJOR. The checks include common/checks/catch.hpp, which picks
# the right headers, and link tut_catch_main_{cpu,gpu}, which provide main().
find_package(Catch2 3 QUIET)
if(Catch2_FOUND)
  set(TUT_CATCH_MAJOR 3)
else()
  find_package(Catch2 2 QUIET)
  if(Catch2_FOUND)
    set(TUT_CATCH_MAJOR 2)
  else()
    message(FATAL_ERROR "Catch2 (2.x or 3.x) not found. Install it (Debian/Ubuntu: apt-get install catch2), "
                        "or configure with -DTUT_BUILD_CHECKS=OFF to build the lessons only. "
                        "scripts/test installs it for you.")
  endif()
endif()
message(STATUS "Catch2 ${Catch2_VERSION} (major ${TUT_CATCH_MAJOR})")
