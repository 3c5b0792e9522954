# Writes the man page quickfill(1) from `quickfill --help` (run at build time by
# cmake/quickfill_package.cmake, so the page always says what the binary does):
#   cmake -DQUICKFILL=<binary> -DVERSION=<x.y.z> -DOUT=<quickfill.1> -P man_page.cmake
# The help text is kept as it is (a no-fill block); only roff's special
# characters are escaped.
execute_process(COMMAND "${QUICKFILL}" --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR help STREQUAL "")
  message(FATAL_ERROR "man_page: `${QUICKFILL} --help` failed (${rc})")
endif()
if(NOT help MATCHES "\n$")
  string(APPEND help "\n")
endif()
string(REPLACE "\\" "\\e" help "${help}")
# A line starting with . or ' would be a roff request.
string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")
string(TIMESTAMP year "%Y")
file(WRITE "${OUT}" ".TH QUICKFILL 1 \"${year}\" \"quickfill ${VERSION}\" \"User Commands\"
.SH NAME
quickfill \\- LSP server for AI code completion with its own inference engine
.SH SYNOPSIS
.nf
${help}.fi
.SH DESCRIPTION
Editors start \\fBquickfill\\fR (stdio is the default) as a language server. By default it is a
small bridge to a per-user daemon that keeps one model for all editor windows (started when
absent; \\fBsystemctl --user enable --now quickfill\\fR keeps one running with the session).
The bundled model is /usr/share/quickfill/models/quickfill-tiny-code.gguf; \\fBquickfill demo\\fR
types through a sample file against the real server.
.SH FILES
.TP
/usr/share/quickfill/models/
the bundled model
.TP
/usr/share/quickfill/editors/
the VS Code extension (.vsix), the Neovim plugin and the Emacs package
.TP
/usr/share/doc/quickfill/
README.md and the documentation of the editor setups and the daemon
")
