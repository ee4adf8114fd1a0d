# Installing dkv like a tool (docs/ci.md, "Installing dkv"):
#   cmake --install build [--prefix DIR]      the dkv command, its docs, examples and hook
#   cpack --config build/CPackConfig.cmake    a Debian package of dkv alone
# The package holds what `cmake --install` installs, under /usr, and depends on the
# shared libraries the binary links (found by dpkg-shlibdeps: Z3, the ANTLR runtime,
# fmt, the C++ runtime); nothing of the build or the tests. spin and gcc, which only
# `--engine spin` runs, are suggested.
include(GNUInstallDirs)

install(TARGETS dkv RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        FILES_MATCHING PATTERN "*.md")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples
        FILES_MATCHING PATTERN "*.dk" PATTERN "*.py" PATTERN "*.dkv")
# The pre-commit hook (docs/ci.md, "A pre-commit hook").
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/pre-commit-hook.sh
        DESTINATION ${CMAKE_INSTALL_DATADIR}/dkv)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME dkv)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "static race and deadlock verifier for distributed accelerator kernels")
set(CPACK_PACKAGE_DESCRIPTION
    "dkv reads kernels in its kernel language (*.dk) or Pallas TPU kernels in Python, builds \
one concurrency model for a mesh of devices and proves it free of data races, deadlocks, \
semaphores left non-zero and DMAs outside the kernel, or shows a schedule that breaks it.")
set(CPACK_PACKAGE_CONTACT "dkv maintainers <dkv-maintainers@users.noreply.github.com>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "spin, gcc")
include(CPack)
