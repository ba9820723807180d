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

echo "== the recipes' options are lever's features"
# The lab host's extras of crates/cli/Cargo.toml (every feature but the
# default, the board's set and the host's whole set) are exactly the Yocto
# recipe's PACKAGECONFIG options and Buildroot's BR2_PACKAGE_LEVER_*
# options, and both build the board's set.
features=$(awk '/^\[features\]/ { on = 1; next } /^\[/ { on = 0 }
    on && /^[a-z-]+ *=/ { print $1 }' crates/cli/Cargo.toml | grep -vxE 'default|board|host' | sort)
yocto=$(sed -n 's/^PACKAGECONFIG\[\([a-z-]*\)\].*/\1/p' meta-lever/recipes-support/lever/lever_git.bb | sort)
buildroot=$(sed -n 's/^config BR2_PACKAGE_LEVER_\([A-Z_]*\)$/\1/p' buildroot/package/lever/Config.in |
    tr 'A-Z_' 'a-z-' | sort)
mk=$(sed -n 's/.*(BR2_PACKAGE_LEVER_\([A-Z_]*\)),lever\/\([a-z-]*\)).*/\1 \2/p' buildroot/package/lever/lever.mk |
    awk '{ n = tolower($1); gsub("_", "-", n); if (n != $2) print "mismatch: " $0; else print $2 }' | sort)
[ -n "$features" ] || { echo "no features found in crates/cli/Cargo.toml" >&2; exit 1; }
[ "$features" = "$yocto" ] || { printf 'lever features:\n%s\nPACKAGECONFIG:\n%s\n' "$features" "$yocto" >&2; exit 1; }
[ "$features" = "$buildroot" ] || { printf 'lever features:\n%s\nConfig.in:\n%s\n' "$features" "$buildroot" >&2; exit 1; }
[ "$features" = "$mk" ] || { printf 'lever features:\n%s\nlever.mk:\n%s\n' "$features" "$mk" >&2; exit 1; }
grep -q -- '--no-default-features --features ${LEVER_FEATURES}' meta-lever/recipes-support/lever/lever_git.bb &&
    grep -q "'lever/board'" meta-lever/recipes-support/lever/lever_git.bb &&
    grep -q '^LEVER_FEATURES = lever/board' buildroot/package/lever/lever.mk ||
    { echo "a recipe does not build the board's features" >&2; exit 1; }
echo "extras:" $features

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
[ -x "$lever" ] && [ -f "$lib" ] && [ -f "$(dirname "$lib")/libUrmClient.so" ] ||
    cargo build -q -p lever -p lever-capi -p lever-urm-capi
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
