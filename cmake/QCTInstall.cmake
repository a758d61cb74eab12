# What `cmake --install` puts under a prefix, and the package config that lets
# a C++ host application find_package(qct CONFIG) and link qct::runtime:
#   lib/          libqct_runtime.so, libqct_reference.so, libqct_compiler.so
#                 (the self-contained one where QCT_COMPILER_STANDALONE is on:
#                 the runtime dlopens the one beside itself), cmake/qct/
#   include/qct/  qct.h, qct.hpp, kernel_args.h, device/*.cuh, Reference/qct_ref.h
#   bin/          qct-compile
#   share/qct/    tuning/*.json (the tuned schedules), generated/ (the kernels),
#                 build-info.json (the version, whether the compiler is there)
# The wheel (pyproject.toml) installs the same tree under the Python package,
# as qct/lib, qct/include, qct/bin and qct/share/qct (docs/runtime.md).
include(CMakePackageConfigHelpers)

set(QCT_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/qct" CACHE STRING
    "Where the qct package config goes, relative to the install prefix")

install(TARGETS qct_runtime qct_reference EXPORT qctTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES runtime/include/qct/qct.h runtime/include/qct/qct.hpp
              runtime/include/qct/kernel_args.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/qct)
# The device library, as NVRTC sees it (the runtime embeds the same files);
# installed for reading and for tools that hash it (qct.bench.codes).
install(DIRECTORY runtime/include/qct/device/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/qct/device FILES_MATCHING PATTERN "*.cuh")
install(FILES compiler/include/qct/Reference/qct_ref.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/qct/Reference)

if(QCT_WITH_COMPILER)
  # One libqct_compiler.so: the self-contained one where it is built (it needs
  # no libMLIR/libLLVM at run time), else the one that links them.
  if(QCT_COMPILER_STANDALONE)
    install(TARGETS qct_compiler_standalone LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  else()
    install(TARGETS qct_compiler LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  endif()
  install(TARGETS qct-compile RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(FILES compiler/include/qct/CAPI/qct_compiler.h
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/qct/CAPI)
  # Installed, these link LLVM/MLIR's shared libraries from where the build
  # found them (Debian: /usr/lib/llvm-22/lib, not on the loader path).
  set_target_properties(qct_compiler qct-compile PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
endif()

# The torch launch fast path (python/CMakeLists.txt) is found beside the
# runtime library (qct._fastlaunch): in the wheel only, it is a Python module.
if(SKBUILD AND TARGET qct_launch_ext)
  install(TARGETS qct_launch_ext LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()

install(DIRECTORY specs/tuning/ DESTINATION ${CMAKE_INSTALL_DATADIR}/qct/tuning
        FILES_MATCHING PATTERN "*.json")
install(DIRECTORY generated/ DESTINATION ${CMAKE_INSTALL_DATADIR}/qct/generated
        FILES_MATCHING PATTERN "*.cu" PATTERN "*.json")

# What the installed tree was built with, for qct.layout: a wheel built without
# the compiler says so, where one that lost qct-compile is called broken.
set(qct_info_compiler false)
set(qct_info_standalone false)
if(QCT_WITH_COMPILER)
  set(qct_info_compiler true)
  if(QCT_COMPILER_STANDALONE)
    set(qct_info_standalone true)
  endif()
endif()
file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/build-info.json CONTENT [[{
  "version": "@PROJECT_VERSION@",
  "compiler": @qct_info_compiler@,
  "compiler_standalone": @qct_info_standalone@
}
]] @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/build-info.json DESTINATION ${CMAKE_INSTALL_DATADIR}/qct)

install(EXPORT qctTargets NAMESPACE qct:: DESTINATION ${QCT_INSTALL_CMAKEDIR})
configure_package_config_file(cmake/qctConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/qctConfig.cmake
  INSTALL_DESTINATION ${QCT_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_DATADIR)
# 0.x: a minor release may change the C ABI (QCT_RUNTIME_ABI_VERSION), so only
# the same MAJOR.MINOR is compatible.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/qctConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/qctConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/qctConfigVersion.cmake
        DESTINATION ${QCT_INSTALL_CMAKEDIR})
