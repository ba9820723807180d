#!/usr/bin/env bash
# Does a staged or installed tree hold exactly packaging/files.txt?
#   packaging/check-files.sh ROOT [PYTHONDIR]
# ROOT is a DESTDIR (packaging/install.sh's, Yocto's ${D}, Buildroot's
# TARGET_DIR) or an installed root. Only the paths below the directories
# files.txt names are compared, so an installed system's other files do
# not count. PYTHONDIR is where the Python client went, if not Debian's
# usr/lib/python3/dist-packages. Prints what is missing or extra; exit 1
# if anything is.
set -euo pipefail
root=${1:?usage: packaging/check-files.sh ROOT [PYTHONDIR]}
pythondir=${2:-usr/lib/python3/dist-packages}
list=$(dirname "$0")/files.txt
expected=$(grep -v '^#' "$list" | sed "s|^usr/lib/python3/dist-packages/|$pythondir/|")
status=0
while read -r pattern; do
    # shellcheck disable=SC2086 # the glob in lever-*.1 is meant
    matches=$(cd "$root" && ls -d $pattern 2>/dev/null || true)
    if [ -z "$matches" ]; then
        echo "missing: $pattern"
        status=1
    fi
done <<<"$expected"
# Extra files: anything in the packaged directories files.txt does not name.
found=$(cd "$root" && find usr -type f -o -type l 2>/dev/null | sort)
while read -r file; do
    ok=false
    while read -r pattern; do
        # shellcheck disable=SC2053 # pattern matching is meant
        if [[ $file == $pattern ]]; then ok=true; break; fi
    done <<<"$expected"
    if ! $ok && [[ $file == usr/bin/lever* || $file == */lever* || $file == */liblever* ||
        $file == */libqti-perfd-client* || $file == */lever.* || $file == */_lever ||
        $file == */libUrmClient* || $file == */Urm/* || $file == */UrmClient.pc ]]; then
        echo "extra: $file"
        status=1
    fi
done <<<"$found"
[ $status = 0 ] && echo "files: as packaging/files.txt ($(wc -l <<<"$found") under usr/)"
exit $status
