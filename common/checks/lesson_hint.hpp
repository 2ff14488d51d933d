/// @file lesson_hint.hpp
/// @brief What a failed check tells the student: which file, and where to look.
#pragma once

#include <string>

#ifndef TUT_LESSON_SOURCE
#define TUT_LESSON_SOURCE "the lesson's .cu file"
#endif

namespace tut_checks {
/// Appended to every failed exercise check.
inline std::string exercise_hint() {
    return std::string("If this is your exercise: look for 'TODO(exercise)' in ") + TUT_LESSON_SOURCE +
           " and compare with the lesson's README.";
}
}  // namespace tut_checks
