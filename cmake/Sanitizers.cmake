# Sanitizer and fuzzing builds (CI's second step, .ci/sanitize; bench/fuzz.sh).
#
#   -DCLUSTERSIM_SANITIZE=ON  every target built with AddressSanitizer and UndefinedBehaviorSanitizer;
#                             any UB report aborts (-fno-sanitize-recover), so a finding fails the test.
#   -DCLUSTERSIM_FUZZ=ON      also the libFuzzer targets of tests/fuzz (needs clang; implies
#                             CLUSTERSIM_SANITIZE). The libraries get coverage instrumentation
#                             (-fsanitize=fuzzer-no-link), which the unit tests tolerate: the ASan
#                             runtime supplies the coverage callbacks they need.
# Both are off by default: the release build and ./setup.sh are unchanged.
option(CLUSTERSIM_SANITIZE "Build with AddressSanitizer + UndefinedBehaviorSanitizer" OFF)
option(CLUSTERSIM_FUZZ "Build the libFuzzer targets in tests/fuzz (clang only; implies CLUSTERSIM_SANITIZE)" OFF)

if(CLUSTERSIM_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "CLUSTERSIM_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++, "
                        "not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  set(CLUSTERSIM_SANITIZE ON CACHE BOOL "" FORCE)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

if(CLUSTERSIM_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined)
endif()
