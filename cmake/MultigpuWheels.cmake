# Where NVIDIA's Python wheels keep a library's C headers and shared objects, for
# FindNCCL.cmake and FindNVSHMEM.cmake.
#
# The wheels nvidia-nccl-cuXX and nvidia-nvshmem-cuXX install nvidia/nccl/{include,lib}
# and nvidia/nvshmem/{include,lib} into a Python's site-packages. Machines with PyTorch
# have them there already; scripts/install-deps installs each with
# `pip install --target DIR/<package>`, DIR = $TUT_PYTHON_DEPS, else
# $XDG_CACHE_HOME/cuda-tutorial/python, else ~/.cache/cuda-tutorial/python.
#
#   tut_wheel_dirs(<out> <package>)   e.g. tut_wheel_dirs(dirs nccl): every existing
#                                     <site>/nvidia/<package> folder, in search order

# The folder scripts/install-deps installs wheels into (the same rule as the script).
function(tut_python_deps_dir out)
  if(DEFINED ENV{TUT_PYTHON_DEPS} AND NOT "$ENV{TUT_PYTHON_DEPS}" STREQUAL "")
    set(dir "$ENV{TUT_PYTHON_DEPS}")
  elseif(DEFINED ENV{XDG_CACHE_HOME} AND NOT "$ENV{XDG_CACHE_HOME}" STREQUAL "")
    set(dir "$ENV{XDG_CACHE_HOME}/cuda-tutorial/python")
  elseif(DEFINED ENV{HOME})
    set(dir "$ENV{HOME}/.cache/cuda-tutorial/python")
  else()
    set(dir "")
  endif()
  set(${out} "${dir}" PARENT_SCOPE)
endfunction()

function(tut_wheel_dirs out package)
  set(found "")
  tut_python_deps_dir(deps)
  # install-deps puts each wheel in a folder of its own: <deps>/<package>/nvidia/<package>.
  foreach(dir "${deps}/${package}/nvidia/${package}" "${deps}/nvidia/${package}")
    if(deps AND IS_DIRECTORY "${dir}")
      list(APPEND found "${dir}")
    endif()
  endforeach()
  # Every Python we can ask: the one CMake found, and the first python3 on PATH (on a
  # machine with PyTorch in a virtual environment, often another one).
  set(pythons "")
  if(Python3_EXECUTABLE)
    list(APPEND pythons "${Python3_EXECUTABLE}")
  endif()
  find_program(tut_path_python3 NAMES python3 NO_CACHE)
  if(tut_path_python3)
    list(APPEND pythons "${tut_path_python3}")
  endif()
  list(REMOVE_DUPLICATES pythons)
  foreach(py IN LISTS pythons)
    execute_process(
      COMMAND "${py}" -c "import importlib.util as u; s = u.find_spec('nvidia.${package}'); print(list(s.submodule_search_locations)[0] if s and s.submodule_search_locations else '')"
      OUTPUT_VARIABLE dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc TIMEOUT 30)
    if(rc EQUAL 0 AND dir AND IS_DIRECTORY "${dir}")
      list(APPEND found "${dir}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES found)
  set(${out} "${found}" PARENT_SCOPE)
endfunction()
