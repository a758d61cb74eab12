# Helpers for the standalone compiler library (QCT_COMPILER_STANDALONE).

# qct_static_mlir_archives(OUT ROOT...): the static archives of the MLIR
# libraries ROOT... and everything they link, plus LLVMSupport/LLVMDemangle.
#
# Debian's LLVM is built with LLVM_LINK_LLVM_DYLIB, so every exported MLIR
# target lists "LLVM" (libLLVM.so) instead of LLVM components, and LLVMSupport
# lists libz3.so and the shared zstd; linking the imported targets would bring
# the dylibs back. So walk the MLIR graph ourselves and keep archive paths
# only. MLIR itself needs no LLVM component beyond Support and Demangle (no
# MLIR library we use has LLVM_LINK_COMPONENTS); --no-undefined on the link
# catches it if that ever changes.
function(qct_static_mlir_archives out)
  set(seen "")
  set(queue ${ARGN})
  while(queue)
    list(POP_FRONT queue lib)
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" lib "${lib}")
    if(NOT lib MATCHES "^MLIR" OR lib IN_LIST seen OR NOT TARGET ${lib})
      continue()
    endif()
    get_target_property(type ${lib} TYPE)
    if(NOT type STREQUAL "STATIC_LIBRARY")
      continue()
    endif()
    list(APPEND seen ${lib})
    get_target_property(deps ${lib} INTERFACE_LINK_LIBRARIES)
    if(deps)
      list(APPEND queue ${deps})
    endif()
  endwhile()
  list(APPEND seen LLVMSupport LLVMDemangle)
  set(files "")
  foreach(lib IN LISTS seen)
    list(APPEND files "$<TARGET_FILE:${lib}>")
  endforeach()
  list(LENGTH seen n)
  message(STATUS "qct: standalone compiler links ${n} static LLVM/MLIR archives")
  set(${out} ${files} PARENT_SCOPE)
endfunction()
