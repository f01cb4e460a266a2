# Runs at install time (cmake --install, make install, cpack), included by the install(CODE) of
# cmake/Install.cmake: CMAKE_INSTALL_PREFIX is then the prefix being installed to, so the files
# that name installed paths get that prefix's:
#   - the systemd units (ExecStart=PREFIX/bin/gpuclk, Documentation= the installed docs);
#   - the Slurm prolog/epilog (their common part's GPUCLK=PREFIX/bin/gpuclk), the settings
#     example (/etc/gpuclk/slurm.conf.example) and the slurm.conf lines (Prolog=PREFIX/libexec/...);
#   - the example settings in /etc/gpuclk, installed only where no file of that name exists:
#     an install never overwrites what an admin put there (the packages mark them conffiles);
#   - zsh's completion, in the folder zsh searches for that prefix.
# The source files (deploy/) keep /usr/local: the tests run them from the source tree.
# In: GPUCLK_SOURCE_DIR, GPUCLK_BINARY_DIR, GPUCLK_BINDIR, GPUCLK_LIBEXECDIR, GPUCLK_DATADIR,
# GPUCLK_PKGDATADIR, GPUCLK_DOCDIR (relative to the prefix, or absolute), GPUCLK_CONFDIR and
# GPUCLK_SYSTEMD_UNITDIR (empty: the defaults below), GPUCLK_SYSTEMD_PACKAGE_UNITDIR,
# GPUCLK_ZSH_COMPLETION.

set(prefix "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "(.)/+$" "\\1" prefix "${prefix}")

function(gpuclk_full out dir)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
  else()
    set(${out} "${prefix}/${dir}" PARENT_SCOPE)
  endif()
endfunction()
gpuclk_full(bindir "${GPUCLK_BINDIR}")
gpuclk_full(libexecdir "${GPUCLK_LIBEXECDIR}")
gpuclk_full(datadir "${GPUCLK_DATADIR}")
gpuclk_full(pkgdatadir "${GPUCLK_PKGDATADIR}")
gpuclk_full(docdir "${GPUCLK_DOCDIR}")

# /etc/gpuclk is where gpuclk reads its policy (serve) and the units and Slurm scripts their
# settings: the system prefixes use it. Any other prefix (a user's ~/.local) gets PREFIX/etc.
if(GPUCLK_CONFDIR)
  set(confdir "${GPUCLK_CONFDIR}")
elseif(prefix MATCHES "^/usr(/local)?$")
  set(confdir /etc/gpuclk)
else()
  set(confdir "${prefix}/etc/gpuclk")
endif()
if(GPUCLK_SYSTEMD_UNITDIR)
  set(unitdir "${GPUCLK_SYSTEMD_UNITDIR}")
elseif(prefix STREQUAL "/usr")
  set(unitdir "${GPUCLK_SYSTEMD_PACKAGE_UNITDIR}")
else()
  set(unitdir "${prefix}/lib/systemd/system")  # /usr/local/lib/systemd/system: systemd reads it
endif()
# Debian's zsh searches /usr/share/zsh/vendor-completions for packages' completions; every zsh
# searches PREFIX/share/zsh/site-functions for the rest (/usr/local's included).
if(prefix STREQUAL "/usr" AND EXISTS /etc/debian_version)
  set(zshdir "${datadir}/zsh/vendor-completions")
else()
  set(zshdir "${datadir}/zsh/site-functions")
endif()

# One staging folder per destination: two installs of the tree at once (a test's and a user's)
# do not write each other's files.
string(MD5 destination "$ENV{DESTDIR}|${prefix}")
set(staging "${GPUCLK_BINARY_DIR}/install-configured/${destination}")
file(REMOVE_RECURSE "${staging}")
file(MAKE_DIRECTORY "${staging}")

# A deploy/ file with the source tree's /usr/local paths replaced by this install's.
function(gpuclk_configure_file source name)
  file(READ "${GPUCLK_SOURCE_DIR}/${source}" text)
  string(REPLACE "/usr/local/bin/gpuclk" "${bindir}/gpuclk" text "${text}")
  string(REPLACE "/usr/local/libexec/gpuclk" "${libexecdir}" text "${text}")
  string(REPLACE "file:///usr/local/share/doc/gpuclk" "file://${docdir}" text "${text}")
  string(REPLACE "/etc/gpuclk" "${confdir}" text "${text}")
  file(WRITE "${staging}/${name}" "${text}")
endfunction()

gpuclk_configure_file(deploy/systemd/gpuclk-serve.service gpuclk-serve.service)
gpuclk_configure_file(deploy/systemd/gpuclk-apply.service gpuclk-apply.service)
file(INSTALL DESTINATION "${unitdir}" TYPE FILE
     FILES "${staging}/gpuclk-serve.service" "${staging}/gpuclk-apply.service"
     PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)

gpuclk_configure_file(deploy/slurm/gpuclk-slurm-common.sh gpuclk-slurm-common.sh)
file(INSTALL DESTINATION "${libexecdir}" TYPE FILE
     FILES "${GPUCLK_SOURCE_DIR}/deploy/slurm/gpuclk-prolog.sh"
           "${GPUCLK_SOURCE_DIR}/deploy/slurm/gpuclk-epilog.sh"
           "${GPUCLK_SOURCE_DIR}/deploy/slurm/gpuclk-task-prolog.sh"
     PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                 WORLD_READ WORLD_EXECUTE)
# Sourced, not run.
file(INSTALL DESTINATION "${libexecdir}" TYPE FILE FILES "${staging}/gpuclk-slurm-common.sh"
     PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
gpuclk_configure_file(deploy/slurm/slurm.conf.snippet slurm.conf.snippet)
file(INSTALL DESTINATION "${pkgdatadir}/slurm" TYPE FILE FILES "${staging}/slurm.conf.snippet"
     PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)

# The examples in /etc/gpuclk: named *.example, so none is in force until the admin copies it
# (a policy.toml would let users change clocks; a profile.toml would be applied at boot by
# gpuclk-apply.service once enabled). An existing file is left as it is.
gpuclk_configure_file(deploy/slurm/gpuclk-slurm.conf slurm.conf.example)
file(COPY "${GPUCLK_SOURCE_DIR}/deploy/profiles/example.toml" DESTINATION "${staging}")
file(RENAME "${staging}/example.toml" "${staging}/profile.toml.example")
file(COPY "${GPUCLK_SOURCE_DIR}/deploy/policy/example.toml" DESTINATION "${staging}")
file(RENAME "${staging}/example.toml" "${staging}/policy.toml.example")
foreach(name profile.toml.example policy.toml.example slurm.conf.example)
  if(EXISTS "$ENV{DESTDIR}${confdir}/${name}")
    message(STATUS "Kept: $ENV{DESTDIR}${confdir}/${name} (there already; not overwritten)")
  else()
    file(INSTALL DESTINATION "${confdir}" TYPE FILE FILES "${staging}/${name}"
         PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
  endif()
endforeach()

file(INSTALL DESTINATION "${zshdir}" TYPE FILE FILES "${GPUCLK_ZSH_COMPLETION}"
     PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)

file(REMOVE_RECURSE "${staging}")
