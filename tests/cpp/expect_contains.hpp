#pragma once
// A text report (the command's or a model's to_text) that must hold given fragments.
#include <initializer_list>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace clustersim::testing {

// `text` holds each of `fragments`; a missing one is reported with the whole text.
inline void expect_contains(const std::string& text, std::initializer_list<std::string_view> fragments) {
  for (const std::string_view f : fragments)
    EXPECT_NE(text.find(f), std::string::npos) << "no \"" << f << "\" in\n" << text;
}

}  // namespace clustersim::testing
