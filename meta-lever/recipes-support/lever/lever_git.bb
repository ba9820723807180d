SUMMARY = "Lever: performance toolkit for embedded Linux"
DESCRIPTION = "One lever binary: a resource-manager daemon (aggregates \
clients' requests for CPU frequency floors, uclamp, GPU ceilings and \
restores the originals) and measurement tools, plus liblever.so (a drop-in \
libqti-perfd-client.so), libUrmClient.so.1 (a drop-in for Qualcomm URM's \
client library) and the Python client."
HOMEPAGE = "https://example.invalid/lever"
LICENSE = "Apache-2.0"
LIC_FILES_CHKSUM = "file://${COMMON_LICENSE_DIR}/Apache-2.0;md5=89aea4e17d99a7cacdbeed46a0096b10"

PV = "0.1.0+git"
SRC_URI = "git://example.invalid/lever.git;protocol=https;branch=main"
# Pin a commit for a release image; AUTOREV follows main.
# nooelint: oelint.vars.autorev
SRCREV = "${AUTOREV}"
S = "${UNPACKDIR}/git"

inherit cargo cargo-update-recipe-crates systemd useradd python3-dir

# Every crate of Cargo.lock (regenerate: meta-lever/update-crates.sh).
require ${BPN}-crates.inc

# The workspace root's Cargo.toml; only the binary and the C libraries
# (liblever.so; libUrmClient.so, the drop-in for URM's client library).
CARGO_BUILD_FLAGS:append = " -p lever -p lever-capi -p lever-urm-capi"
# The board's features (crates/cli/Cargo.toml; docs/install.md
# "Features"), without the lab host's extras; each extra is a PACKAGECONFIG
# option, off by default (local.conf: PACKAGECONFIG:append:pn-lever =
# " dbus"): dbus (lever daemon --dbus), postgres (a PostgreSQL results
# store), parquet (results export --parquet), html (report render --html),
# flamegraph (lever flamegraph).
PACKAGECONFIG ??= ""
PACKAGECONFIG[dbus] = ""
PACKAGECONFIG[postgres] = ""
PACKAGECONFIG[parquet] = ""
PACKAGECONFIG[html] = ""
PACKAGECONFIG[flamegraph] = ""
LEVER_FEATURES = "${@','.join(['lever/board'] + ['lever/' + f for f in d.getVar('PACKAGECONFIG').split()])}"
CARGO_BUILD_FLAGS:append = " --no-default-features --features ${LEVER_FEATURES}"
# The git fetcher leaves .git in ${S}: `lever --version` names the commit.

# The completions and man pages are written by a lever that runs on the
# build machine: this recipe built natively.
DEPENDS:append:class-target = " lever-native"
BBCLASSEXTEND = "native"

do_install:class-native() {
    install -d ${D}${bindir}
    install -m 0755 ${B}/target/${CARGO_TARGET_SUBDIR}/lever ${D}${bindir}/lever
}

do_install:class-target() {
    # The same file list as the Debian and Buildroot packages
    # (packaging/files.txt); the Python client goes to this distro's
    # site-packages.
    ${S}/packaging/install.sh ${D} \
        ${B}/target/${CARGO_TARGET_SUBDIR}/lever \
        ${B}/target/${CARGO_TARGET_SUBDIR}/liblever.so \
        ${STAGING_BINDIR_NATIVE}/lever \
        ${@d.getVar('PYTHON_SITEPACKAGES_DIR').lstrip('/')}
    # install.sh uses /usr/lib/systemd/system; without usrmerge this
    # distro's unit directory is /lib/systemd/system.
    if [ "${systemd_system_unitdir}" != "/usr/lib/systemd/system" ]; then
        install -d ${D}${systemd_system_unitdir}
        mv ${D}/usr/lib/systemd/system/lever.service ${D}${systemd_system_unitdir}/
        rmdir --ignore-fail-on-non-empty ${D}/usr/lib/systemd/system ${D}/usr/lib/systemd
    fi
}

SYSTEMD_SERVICE:${PN} = "lever.service"
SYSTEMD_AUTO_ENABLE = "enable"

# The group whose members are system clients (also in sysusers.d).
USERADD_PACKAGES = "${PN}"
GROUPADD_PARAM:${PN} = "--system lever"

SUMMARY:${PN}-python = "Python client of the Lever daemon"
PACKAGES =+ "${PN}-python"
# nooelint: oelint.var.filesoverride
FILES:${PN}-python = "${PYTHON_SITEPACKAGES_DIR}/lever_client"

# liblever.so is unversioned and loaded by that name (the seed's programs
# dlopen /usr/lib/libqti-perfd-client.so): it belongs in the main package.
FILES_SOLIBSDEV = ""
FILES:${PN} += "${libdir}/liblever.so \
    ${libdir}/libqti-perfd-client.so \
    ${libdir}/libUrmClient.so.1 \
    ${nonarch_libdir}/sysusers.d \
    ${nonarch_libdir}/tmpfiles.d \
    ${datadir}/bash-completion \
    ${datadir}/zsh \
    ${datadir}/fish \
"
FILES:${PN}-dev += "${includedir}/lever.h ${libdir}/pkgconfig/lever.pc \
    ${includedir}/Urm ${libdir}/libUrmClient.so ${libdir}/pkgconfig/UrmClient.pc"
# nooelint: oelint.vars.insaneskip
INSANE_SKIP:${PN} += "dev-so"
RDEPENDS:${PN}-python = "python3-core"
