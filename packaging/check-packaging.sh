#!/usr/bin/env bash
# What can be checked of the packages without dpkg-buildpackage, bitbake
# or a Buildroot tree (.ci/run runs it):
#  - the shell scripts parse (bash -n / sh -n);
#  - meta-lever's crate list matches Cargo.lock;
#  - the recipes lint without errors (oelint-adv, where installed);
#  - Buildroot's Config.in parses (kconfiglib, where installed);
#  - the Yocto recipe's and Buildroot's install commands, run with their
#    variables filled in, install exactly packaging/files.txt, as the
#    Debian package does (packaging/deb/test-deb.sh checks that one).
# LEVER is a host lever for the completions (default target/debug/lever).
set -euo pipefail
cd "$(dirname "$0")/.."
lever=${LEVER:-target/debug/lever}
lib=${LIBLEVER:-target/debug/liblever.so}

echo "== shell syntax"
for f in scripts/*.sh packaging/*.sh packaging/deb/*.sh meta-lever/*.sh .ci/run; do
    bash -n "$f"
done
for f in packaging/deb/debian/postinst packaging/deb/debian/prerm packaging/deb/debian/postrm; do
    sh -n "$f"
done

echo "== meta-lever crates"
meta-lever/update-crates.sh --check

echo "== oelint-adv"
if python3 -c 'import oelint_adv' 2>/dev/null; then
    # Errors only: the warnings left are the placeholder homepage and
    # the license text not being in the repository.
    out=$(python3 -m oelint_adv --quiet --hide info --hide warning \
        meta-lever/recipes-*/*/*.bb 2>&1 | grep -v 'lever-crates.inc' || true)
    [ -z "$out" ] || { echo "$out"; exit 1; }
else
    echo "skipped: oelint-adv is not installed (pip install oelint-adv)"
fi

echo "== Buildroot Config.in"
if python3 -c 'import kconfiglib' 2>/dev/null; then
    python3 - <<'PY'
import kconfiglib, os, tempfile
# The symbols Buildroot defines elsewhere, so Config.in parses on its own.
top = tempfile.NamedTemporaryFile("w", suffix=".in", delete=False)
top.write('''
config BR2_PACKAGE_HOST_RUSTC_TARGET_ARCH_SUPPORTS
	def_bool y
config BR2_TOOLCHAIN_HAS_THREADS
	def_bool y
config BR2_USE_MMU
	def_bool y
config BR2_PACKAGE_HOST_RUSTC
	bool
source "buildroot/package/lever/Config.in"
''')
top.close()
kconf = kconfiglib.Kconfig(top.name, warn_to_stderr=False)
os.unlink(top.name)
sym = kconf.syms["BR2_PACKAGE_LEVER"]
assert sym.type == kconfiglib.BOOL, sym
assert not kconf.warnings, kconf.warnings
print("Config.in parses: BR2_PACKAGE_LEVER", kconfiglib.TYPE_TO_STR[sym.type])
PY
else
    echo "skipped: kconfiglib is not installed (pip install kconfiglib)"
fi

# The install command of a recipe, as a shell line with the variables a
# build would give it filled in.
install_line() { # FILE START-PATTERN
    awk -v start="$2" '$0 ~ start { on = 1 } on { print; if ($0 !~ /\\$/) exit }' "$1"
}
check_install() { # NAME LINE PYTHONDIR
    local dest
    dest=$(mktemp -d)
    echo "== $1 installs packaging/files.txt"
    (eval "$2") >/dev/null
    packaging/check-files.sh "$dest" "$3"
    rm -rf "$dest"
}
[ -x "$lever" ] && [ -f "$lib" ] || cargo build -q -p lever -p lever-capi
line=$(install_line meta-lever/recipes-support/lever/lever_git.bb '^ *[$][{]S[}]/packaging/install.sh' |
    sed -e 's|\${S}|.|g' -e 's|\${D}|$dest|g' \
        -e "s|\${B}/target/\${CARGO_TARGET_SUBDIR}/lever|$lever|" \
        -e "s|\${B}/target/\${CARGO_TARGET_SUBDIR}/liblever.so|$lib|" \
        -e "s|\${STAGING_BINDIR_NATIVE}/lever|$lever|" \
        -e "s|\${@d.getVar('PYTHON_SITEPACKAGES_DIR').lstrip('/')}|usr/lib/python3.13/site-packages|")
check_install "meta-lever (lever_git.bb do_install)" "$line" usr/lib/python3.13/site-packages
line=$(install_line buildroot/package/lever/lever.mk '^\t[$][(]@D[)]/packaging/install.sh' |
    sed -e 's|^\t||' -e 's|\$(@D)|.|g' -e 's|\$(TARGET_DIR)|$dest|g' \
        -e "s|\$(LEVER_BUILT)/lever|$lever|" -e "s|\$(LEVER_BUILT)/liblever.so|$lib|" \
        -e "s|\$(HOST_DIR)/bin/lever|$lever|" -e 's|\$(PYTHON3_VERSION_MAJOR)|3.12|')
check_install "Buildroot (LEVER_INSTALL_TARGET_CMDS)" "$line" usr/lib/python3.12/site-packages
