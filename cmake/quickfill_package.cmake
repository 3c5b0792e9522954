# The product and its package.
#   qf_product  what scripts/setup.sh builds: quickfill (with the CUDA module
#               when CUDA is built), the man page and the VS Code .vsix.
#   man page    build/man/quickfill.1.gz, written from `quickfill --help` by
#               man_page.cmake after each link of quickfill.
#   .vsix       build/quickfill-vscode-<version>.vsix: editors/vscode packaged by
#               its pinned vsce (npm ci in editors/vscode, scripts/setup.sh);
#               left out, saying so, when those modules are not installed.
#   cpack       build/quickfill_<version>_amd64.deb (Debian 12): /usr/bin/quickfill,
#               the bundled model where the server looks for it
#               (/usr/share/quickfill/models/), the demo samples, the editor setups
#               in /usr/share/quickfill/editors/, the man page, an optional systemd
#               user unit for the daemon (packaging/quickfill.service, not enabled),
#               the CUDA module in /usr/lib/quickfill/ when built.
# The package test (tests/packaging/) unpacks it into a scratch root and runs
# `quickfill demo` from there.
include(GNUInstallDirs)
# `cpack` (and the install target) pack what is built, without first building
# everything: after scripts/setup.sh that is the product (qf_product).
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

set(QF_MAN_PAGE ${CMAKE_BINARY_DIR}/man/quickfill.1.gz)
add_custom_command(OUTPUT ${QF_MAN_PAGE}
  COMMAND ${CMAKE_COMMAND} -DQUICKFILL=$<TARGET_FILE:quickfill> -DVERSION=${PROJECT_VERSION}
          -DOUT=${CMAKE_BINARY_DIR}/man/quickfill.1 -P ${PROJECT_SOURCE_DIR}/cmake/man_page.cmake
  COMMAND gzip -9nf ${CMAKE_BINARY_DIR}/man/quickfill.1
  DEPENDS quickfill ${PROJECT_SOURCE_DIR}/cmake/man_page.cmake
  COMMENT "Man page quickfill(1) from quickfill --help" VERBATIM)
add_custom_target(quickfill_man ALL DEPENDS ${QF_MAN_PAGE})

add_custom_target(qf_product)
add_dependencies(qf_product quickfill quickfill_man)
if(TARGET quickfill_cuda)
  add_dependencies(qf_product quickfill_cuda)
endif()

set(QF_VSCODE ${PROJECT_SOURCE_DIR}/editors/vscode)
file(READ ${QF_VSCODE}/package.json qf_vscode_package)
string(JSON QF_VSCODE_VERSION GET "${qf_vscode_package}" version)
set(QF_VSIX ${CMAKE_BINARY_DIR}/quickfill-vscode-${QF_VSCODE_VERSION}.vsix)
find_program(QF_NODE node)
if(QF_NODE AND EXISTS ${QF_VSCODE}/node_modules/@vscode/vsce/vsce)
  file(GLOB_RECURSE qf_vscode_sources CONFIGURE_DEPENDS ${QF_VSCODE}/src/*.ts)
  add_custom_command(OUTPUT ${QF_VSIX}
    COMMAND ${QF_NODE} node_modules/@vscode/vsce/vsce package --skip-license --out ${QF_VSIX}
    WORKING_DIRECTORY ${QF_VSCODE}
    DEPENDS ${qf_vscode_sources} ${QF_VSCODE}/package.json ${QF_VSCODE}/package-lock.json
            ${QF_VSCODE}/tsconfig.json
    COMMENT "VS Code extension ${QF_VSIX}" VERBATIM)
  add_custom_target(quickfill_vsix ALL DEPENDS ${QF_VSIX})
  add_dependencies(qf_product quickfill_vsix)
  install(FILES ${QF_VSIX} DESTINATION ${CMAKE_INSTALL_DATADIR}/quickfill/editors/vscode)
else()
  message(STATUS "quickfill: no .vsix (node or editors/vscode/node_modules missing: scripts/setup.sh installs them)")
endif()

install(FILES ${QF_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/editors/nvim/ DESTINATION ${CMAKE_INSTALL_DATADIR}/quickfill/editors/nvim)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/editors/emacs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/quickfill/editors/emacs)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/quickfill.service DESTINATION lib/systemd/user)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/docs/editors.md
              ${PROJECT_SOURCE_DIR}/docs/daemon.md ${PROJECT_SOURCE_DIR}/docs/configuration.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME quickfill)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "quickfill developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "LSP server for AI code completion with its own inference engine")
set(CPACK_PACKAGE_DESCRIPTION "quickfill keeps a quantized GGUF code model resident and answers
LSP completion and inline-completion requests within a per-keystroke budget.
It ships a small bundled model, setups for VS Code, Neovim and Emacs, and an
optional systemd user unit for its per-user daemon.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# Debian 12's packages of the shared libraries quickfill links (ldd); the CUDA
# module's libraries (cudart, cuBLAS) are not Debian packages: without them the
# module does not load and the model runs on the CPU.
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libboost-json1.81.0, libboost-container1.81.0, libspdlog1.10, libfmt9, libssl3, libstdc++6, libgcc-s1, libc6")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "systemd")
set(CPACK_STRIP_FILES ON)
include(CPack)
