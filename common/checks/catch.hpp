/// @file catch.hpp
/// @brief Includes Catch2 2.x or 3.x, whichever CMake found (TUT_CATCH_MAJOR).
#pragma once

#if TUT_CATCH_MAJOR >= 3
#include <catch2/catch_approx.hpp>
#include <catch2/catch_session.hpp>
#include <catch2/catch_test_macros.hpp>
#else
#include <catch2/catch.hpp>
#endif

#if TUT_CATCH_MAJOR >= 3
using Catch::Approx;
#endif
