cmake_minimum_required(VERSION 3.22)  # the project's policies for this script
# Writes OUT, the man page: TEMPLATE (packaging/attention-lab.1.in) with @VERSION@, @SYNOPSIS@
# and @OPTIONS@ filled from SECTIONS (what `attention-lab --generate-man-sections` printed: the
# SYNOPSIS section, then WINDOW OPTIONS and SUBCOMMANDS). Run as:
#   cmake -DTEMPLATE=... -DSECTIONS=... -DVERSION=... -DOUT=... -P ManPage.cmake
file(READ "${TEMPLATE}" page)
file(READ "${SECTIONS}" sections)
string(FIND "${sections}" ".SH WINDOW OPTIONS" split)
if(split LESS 0)
  message(FATAL_ERROR "${SECTIONS}: no .SH WINDOW OPTIONS section")
endif()
string(SUBSTRING "${sections}" 0 ${split} synopsis)
string(SUBSTRING "${sections}" ${split} -1 options)
string(REPLACE "@VERSION@" "${VERSION}" page "${page}")
string(REPLACE "@SYNOPSIS@\n" "${synopsis}" page "${page}")
string(REPLACE "@OPTIONS@\n" "${options}" page "${page}")
file(WRITE "${OUT}" "${page}")
