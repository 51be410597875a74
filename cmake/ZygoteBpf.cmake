# BPF programs: each compiled by clang for the bpf target into an object, from which bpftool
# writes a libbpf skeleton header (NAME.skel.h) that embeds the object; the C code that loads it
# includes that header. The programs declare the few kernel types they read themselves, with
# preserve_access_index (CO-RE): libbpf relocates every field access against the running kernel's
# BTF (/sys/kernel/btf/vmlinux) at load time, so the build needs no kernel headers or BTF of its
# own and one build runs on every kernel that has BTF. Where the kernel has none, loading fails and
# the code that loads it takes its fallback (each says which).
find_program(ZYGOTE_BPF_CLANG NAMES clang clang-14 REQUIRED)
find_program(ZYGOTE_BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin REQUIRED)
pkg_check_modules(LIBBPF REQUIRED IMPORTED_TARGET libbpf>=1.0)

# zy_bpf_skeleton(TARGET NAME SOURCE): builds SOURCE (a .bpf.c) into NAME.skel.h, which TARGET
# can then include ("NAME.skel.h"), and links TARGET with libbpf.
function(zy_bpf_skeleton target name source)
  get_filename_component(src ${source} ABSOLUTE)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/bpf)
  set(obj ${dir}/${name}.bpf.o)
  set(skel ${dir}/${name}.skel.h)
  get_target_property(libbpf_inc PkgConfig::LIBBPF INTERFACE_INCLUDE_DIRECTORIES)
  # <linux/*.h> from the host's kernel headers, their <asm/*.h> from its multiarch folder
  set(inc_flags)
  if(CMAKE_LIBRARY_ARCHITECTURE)
    list(APPEND inc_flags -idirafter /usr/include/${CMAKE_LIBRARY_ARCHITECTURE})
  endif()
  foreach(d ${libbpf_inc})
    list(APPEND inc_flags -I${d})
  endforeach()
  add_custom_command(
    OUTPUT ${obj}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${ZYGOTE_BPF_CLANG} -g -O2 -target bpf -D__TARGET_ARCH_${ZYGOTE_BPF_ARCH} -Wall -Werror
            ${inc_flags} -I${CMAKE_CURRENT_SOURCE_DIR} -c ${src} -o ${obj}
    DEPENDS ${src}
    IMPLICIT_DEPENDS C ${src}
    COMMENT "BPF ${name}"
    VERBATIM)
  add_custom_command(
    OUTPUT ${skel}
    COMMAND ${ZYGOTE_BPFTOOL} gen skeleton ${obj} name ${name} > ${skel}
    DEPENDS ${obj}
    COMMENT "BPF skeleton ${name}.skel.h"
    VERBATIM)
  add_custom_target(${target}_bpf_${name} DEPENDS ${skel})
  add_dependencies(${target} ${target}_bpf_${name})
  target_include_directories(${target} PRIVATE ${dir})
  target_link_libraries(${target} PRIVATE PkgConfig::LIBBPF)
endfunction()

if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(ZYGOTE_BPF_ARCH x86)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  set(ZYGOTE_BPF_ARCH arm64)
else()
  set(ZYGOTE_BPF_ARCH ${CMAKE_SYSTEM_PROCESSOR})
endif()
