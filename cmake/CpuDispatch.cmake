# Kernels compiled once per instruction-set level and chosen at run time (issue 25; the levels
# and their choice: core/include/attnlab/base/cpu_level.h).
#
#   ATTNLAB_CPU_DISPATCH=ON (default on x86-64 with GNU ld and objcopy)
#       attnlab_cpu_variants(<target> <source> <libraries...>) compiles <source> three times,
#       with -DATTNLAB_CPU_LEVEL=default (the build's flags), =avx2 (-mavx2 -mfma) and =avx512
#       (-mavx512f -mavx512dq -mavx512bw -mavx512vl), links each into one relocatable object
#       (ld -r --force-group-allocation: the COMDAT groups of the inline functions are
#       dissolved) and makes every symbol of it local but its entry points, the functions
#       named attnlab_*_<level> (objcopy -G). The same inline Eigen or std function compiled
#       with two sets of flags is otherwise ONE symbol to the linker, and a baseline caller
#       could end up in the AVX-512 copy. tools/check_cpu_dispatch.sh checks the result.
#   OFF (-DATTNLAB_NATIVE=ON, the fuzz build, another architecture or linker): the default
#       level alone (with -march=native in a native build), an ordinary source of <target>.
set(attnlab_dispatch_default ON)
if(NOT CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$" OR NOT CMAKE_LINKER OR
   NOT CMAKE_OBJCOPY OR ATTNLAB_FUZZ OR ATTNLAB_NATIVE)
  set(attnlab_dispatch_default OFF)
endif()
option(ATTNLAB_CPU_DISPATCH "Compile the hot kernels per instruction-set level, chosen at run time"
       ${attnlab_dispatch_default})

if(ATTNLAB_CPU_DISPATCH)
  add_compile_definitions(ATTNLAB_CPU_DISPATCH)  # cpu_level.cpp: the variants are there
endif()

set(ATTNLAB_CPU_LEVEL_FLAGS_default "")
set(ATTNLAB_CPU_LEVEL_FLAGS_avx2 -mavx2 -mfma)
set(ATTNLAB_CPU_LEVEL_FLAGS_avx512 -mavx2 -mfma -mavx512f -mavx512dq -mavx512bw -mavx512vl)

function(attnlab_cpu_variants target source)
  if(NOT ATTNLAB_CPU_DISPATCH)
    target_sources(${target} PRIVATE ${source})
    set_source_files_properties(${source} TARGET_DIRECTORY ${target} PROPERTIES
                                COMPILE_DEFINITIONS ATTNLAB_CPU_LEVEL=default)
    return()
  endif()
  get_filename_component(stem ${source} NAME_WE)
  foreach(level default avx2 avx512)
    set(objects ${target}_${stem}_${level})
    add_library(${objects} OBJECT ${source})
    target_compile_definitions(${objects} PRIVATE ATTNLAB_CPU_LEVEL=${level})
    # -fno-gnu-unique: g++ would make the function-local statics of inline functions (Eigen's
    # cache sizes) STB_GNU_UNIQUE, which objcopy cannot make local; weak, they become local.
    target_compile_options(${objects} PRIVATE ${ATTNLAB_CPU_LEVEL_FLAGS_${level}}
                                              $<$<CXX_COMPILER_ID:GNU>:-fno-gnu-unique>)
    target_link_libraries(${objects} PRIVATE ${ARGN})
    set(partial "${CMAKE_CURRENT_BINARY_DIR}/${objects}.partial.o")
    set(local "${CMAKE_CURRENT_BINARY_DIR}/${objects}.o")
    add_custom_command(
      OUTPUT "${local}"
      COMMAND "${CMAKE_LINKER}" -r --force-group-allocation -o "${partial}"
              "$<TARGET_OBJECTS:${objects}>"
      COMMAND "${CMAKE_OBJCOPY}" --wildcard "--keep-global-symbol=attnlab_*_${level}"
              "${partial}" "${local}"
      DEPENDS ${objects} "$<TARGET_OBJECTS:${objects}>"
      COMMENT "Localizing the ${level} kernels of ${source}"
      COMMAND_EXPAND_LISTS VERBATIM)
    target_sources(${target} PRIVATE "${local}")
  endforeach()
endfunction()
