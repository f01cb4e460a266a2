# The Debian packages (`make deb`: cpack -G DEB on a built tree), from the install rules of
# cmake/Install.cmake, one package per install component:
#   gpuclk      the tools (gpuclk, gpuclk-serve), systemd units, Slurm prolog/epilog, example
#               settings in /etc/gpuclk (conffiles), dashboards, alert rules, man pages,
#               completions, docs. Depends: what dpkg-shlibdeps finds in the binaries; no NVIDIA
#               driver: NVML is loaded at run time, and without a driver gpuclk says so (exit 12).
#   gpuclk-sim  the simulated NVML (libnvml-sim.so) and its scenarios: `gpuclk --sim`, and nvtop
#               or pynvml on a machine without GPUs.
# Why CPack and not debhelper: the install rules already say where every file goes, and CPack
# packages exactly them from any built tree (no second build by dpkg-buildpackage, no debian/
# folder restating the layout); debhelper's one step we need, dpkg-shlibdeps, CPack runs too.
# The rest debhelper would generate is in cmake/debian/ (maintainer scripts, conffiles,
# copyright, changelog) and checked by lintian (docs/results/packaging.md).
set(GPUCLK_DEB_MAINTAINER "gpuclk maintainers <gpuclk@users.noreply.github.com>" CACHE STRING
    "Maintainer field of the Debian packages")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpuclk)
set(CPACK_PACKAGE_VENDOR gpuclk)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${GPUCLK_DEB_MAINTAINER}")
# No CPACK_PACKAGE_DESCRIPTION_SUMMARY: CPack would put it before each package's own synopsis.
# Packages install to /usr (Debian's prefix), whatever CMAKE_INSTALL_PREFIX the tree was
# configured with; DESTDIR staging (CPACK_SET_DESTDIR, which takes CPACK_INSTALL_PREFIX) lets the
# rules that install to /etc do so.
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_SET_DESTDIR ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS ${CMAKE_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS})
set(CPACK_COMPONENTS_ALL gpuclk gpuclk-sim)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING IGNORE)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE https://github.com/gpuclk/gpuclk)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)

set(CPACK_DEBIAN_GPUCLK_PACKAGE_NAME gpuclk)
set(CPACK_DEBIAN_GPUCLK_DESCRIPTION
    "clocks, power and performance of every NVIDIA GPU in the host
gpuclk shows every GPU's clocks, power, temperature and what holds them back
(clock event reasons) in one table; measures jobs (energy, clocks, verdict);
changes persistence mode, application clocks, clock locks and power limits on
all GPUs alike, journaled and restorable; diagnoses the node (doctor), runs an
energy governor, benchmarks, and a resident node service (gpuclk serve) with a
Prometheus exporter, systemd units, Slurm prolog/epilog and a Grafana
dashboard.
.
NVML is loaded at run time from the NVIDIA driver, which this package does not
depend on; gpuclk-sim provides a simulated node for machines without GPUs.")
# libcurl.so.4 is opened by `gpuclk fleet` when it runs (not linked, so no other command loads
# it): dpkg-shlibdeps cannot see it. gnuplot draws `gpuclk sweep --out`'s plots.
set(CPACK_DEBIAN_GPUCLK_PACKAGE_RECOMMENDS "libcurl4")
set(CPACK_DEBIAN_GPUCLK_PACKAGE_SUGGESTS "gpuclk-sim, gnuplot-nox")
configure_file(${PROJECT_SOURCE_DIR}/cmake/debian/conffiles ${PROJECT_BINARY_DIR}/debian/gpuclk/conffiles COPYONLY)
foreach(script postinst prerm postrm)
  file(COPY ${PROJECT_SOURCE_DIR}/cmake/debian/${script} DESTINATION ${PROJECT_BINARY_DIR}/debian/gpuclk
       FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ
                        WORLD_EXECUTE)
endforeach()
set(CPACK_DEBIAN_GPUCLK_PACKAGE_CONTROL_EXTRA
    ${PROJECT_BINARY_DIR}/debian/gpuclk/conffiles ${PROJECT_BINARY_DIR}/debian/gpuclk/postinst
    ${PROJECT_BINARY_DIR}/debian/gpuclk/prerm ${PROJECT_BINARY_DIR}/debian/gpuclk/postrm)

set(CPACK_DEBIAN_GPUCLK-SIM_PACKAGE_NAME gpuclk-sim)
set(CPACK_DEBIAN_GPUCLK-SIM_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_GPUCLK-SIM_DESCRIPTION
    "simulated NVIDIA GPUs for gpuclk and other NVML clients
A second implementation of NVML's C API over a GPU physics model calibrated on
a real H100 (power cap, DVFS, thermals, workloads), with scenarios from one to
eight GPUs, misconfigured nodes and faults. `gpuclk --sim` runs every gpuclk
command on it; nvtop and pynvml find it through
LD_LIBRARY_PATH=/usr/${GPUCLK_INSTALL_PRIVLIBDIR}/nvml-compat.")
set(CPACK_DEBIAN_GPUCLK-SIM_PACKAGE_ENHANCES gpuclk)

# Each package's copyright and changelog (Debian policy 12.5 and 12.7), in its doc folder.
configure_file(${PROJECT_SOURCE_DIR}/cmake/debian/changelog.in ${PROJECT_BINARY_DIR}/debian/changelog @ONLY)
add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/debian/changelog.gz
  COMMAND gzip -9nkf ${PROJECT_BINARY_DIR}/debian/changelog
  DEPENDS ${PROJECT_BINARY_DIR}/debian/changelog VERBATIM)
add_custom_target(gpuclk_deb_changelog ALL DEPENDS ${PROJECT_BINARY_DIR}/debian/changelog.gz)
install(FILES ${PROJECT_SOURCE_DIR}/cmake/debian/copyright ${PROJECT_BINARY_DIR}/debian/changelog.gz
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/gpuclk COMPONENT gpuclk)
install(FILES ${PROJECT_SOURCE_DIR}/cmake/debian/copyright ${PROJECT_BINARY_DIR}/debian/changelog.gz
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/gpuclk-sim COMPONENT gpuclk-sim)

include(CPack)
