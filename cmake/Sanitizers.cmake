# Sanitizer and fuzzing builds (tools/sanitize.sh; both off in the normal build).
#
#   ATTNLAB_SANITIZE=address,undefined  every target compiled and linked with -fsanitize=...,
#                                       frame pointers kept; UBSan reports stay recoverable so
#                                       that tools/ubsan.supp can suppress a reported finding,
#                                       and UBSAN_OPTIONS=halt_on_error=1 makes the rest fatal
#   ATTNLAB_FUZZ=ON                     the libFuzzer targets of tests/fuzz (clang only); the
#                                       core gets -fsanitize=fuzzer-no-link (coverage feedback)
set(ATTNLAB_SANITIZE "" CACHE STRING "Sanitizers for every target, e.g. address,undefined")
option(ATTNLAB_FUZZ "Build the libFuzzer targets in tests/fuzz (needs clang)" OFF)

if(ATTNLAB_SANITIZE)
  add_compile_options(-fsanitize=${ATTNLAB_SANITIZE} -fno-omit-frame-pointer)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # At -O1 g++ warns about Eigen's AVX-512 intrinsics (_mm512_undefined_ps) by the hundred.
    add_compile_options(-Wno-uninitialized)
  endif()
  add_link_options(-fsanitize=${ATTNLAB_SANITIZE})
endif()

if(ATTNLAB_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "ATTNLAB_FUZZ needs clang (libFuzzer): configure with "
                        "-DCMAKE_CXX_COMPILER=clang++-14 (Debian: clang-14, libclang-rt-14-dev)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

# The warning flags are chosen for g++; clang (the fuzz build) does not know some of them.
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  add_compile_options(-Wno-unknown-warning-option)
endif()
