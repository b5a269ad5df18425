# SPDX-License-Identifier: Apache-2.0
# The library users link: one libfxc, shared (fxc_shared -> libfxc.so.0) and static
# (fxc_static -> libfxc.a), each made of the object files of every internal library. The
# internal libraries (fxc_support ... fxc_driver) stay as they are for the tests and the CLI.
# Public API: include/fxc/ only. Everything else (LLVM, Boost, libsndfile, OpenSSL,
# fmt, libdl) is a private dependency. See docs/install.md.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Link order does not matter for object files; this is every library fxc_driver pulls in.
set(FXC_INTERNAL_LIBRARIES fxc_driver fxc_formats fxc_runtime fxc_codegen_cpu fxc_codegen_cuda fxc_codegen
    fxc_passes fxc_frontend fxc_ir fxc_design fxc_support)
set(FXC_PRIVATE_DEPENDENCIES fmt::fmt OpenSSL::Crypto ${FXC_LLVM_LIBRARIES} PkgConfig::SNDFILE
    ${CMAKE_DL_LIBS})

set(fxc_objects)
foreach(library ${FXC_INTERNAL_LIBRARIES})
  list(APPEND fxc_objects $<TARGET_OBJECTS:${library}>)
endforeach()

add_library(fxc_shared SHARED ${fxc_objects})
add_library(fxc_static STATIC ${fxc_objects})
set_target_properties(fxc_shared PROPERTIES OUTPUT_NAME fxc EXPORT_NAME fxc
                      VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR})
set_target_properties(fxc_static PROPERTIES OUTPUT_NAME fxc EXPORT_NAME fxc_static)
# Every symbol the objects need must come from a listed dependency.
target_link_options(fxc_shared PRIVATE LINKER:--no-undefined)
if(FXC_STATIC_LLVM)
  # LLVM's symbols stay inside libfxc.so: exported, they would clash with another LLVM in the
  # same process (Mesa's, numba's).
  target_link_options(fxc_shared PRIVATE LINKER:--exclude-libs,ALL)
endif()
foreach(target fxc_shared fxc_static)
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                             $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_link_libraries(${target} PRIVATE ${FXC_PRIVATE_DEPENDENCIES})
endforeach()
add_custom_target(fxc_library DEPENDS fxc_shared fxc_static)

# For add_subdirectory / FetchContent users, the same names an installed package gives.
add_library(fxc::fxc ALIAS fxc_shared)
add_library(fxc::fxc_static ALIAS fxc_static)

# --- install ---------------------------------------------------------------------------------
set(FXC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/fxc)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/fxc DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(TARGETS fxc_shared EXPORT fxcTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development)
install(TARGETS fxc_static EXPORT fxcStaticTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(TARGET fxc)
  install(TARGETS fxc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(EXPORT fxcTargets NAMESPACE fxc:: DESTINATION ${FXC_CMAKE_DIR})
install(EXPORT fxcStaticTargets NAMESPACE fxc:: DESTINATION ${FXC_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/fxcConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/fxcConfig.cmake INSTALL_DESTINATION ${FXC_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/fxcConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/fxcConfig.cmake ${PROJECT_BINARY_DIR}/fxcConfigVersion.cmake
        DESTINATION ${FXC_CMAKE_DIR})

# pkg-config: relocatable (prefix from the .pc file's own place), so `cmake --install --prefix`
# anywhere works. LLVM has no .pc file: libfxc.a users get its library by path.
set(FXC_PC_LIBS_PRIVATE "-L${LLVM_LIBRARY_DIR} -lLLVM")
foreach(library ${CMAKE_DL_LIBS})
  string(APPEND FXC_PC_LIBS_PRIVATE " -l${library}")
endforeach()
file(RELATIVE_PATH FXC_PC_PREFIX_FROM_PCFILEDIR
     /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" FXC_PC_PREFIX_FROM_PCFILEDIR "${FXC_PC_PREFIX_FROM_PCFILEDIR}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/fxc.pc.in ${PROJECT_BINARY_DIR}/fxc.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/fxc.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
