#!/usr/bin/env bash
# Formats every tracked .c and .h file of the source folders in place with clang-format 14 and
# the tree's .clang-format. Other clang-format versions lay some constructs out differently, so
# only 14 is used (Debian 12's `clang-format`, which scripts/deps.sh --test installs).
#
#   scripts/format.sh            format in place
#   scripts/format.sh --check    change nothing; list the files that are not formatted and exit 1
#                                (0 when all are, 77 when clang-format 14 is missing)
#
# CLANG_FORMAT=/path/to/clang-format overrides the binary (it must still be version 14).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

folders=(protocol common engine profile reference record container daemon runc client tests)

check=0
case ${1:-} in
--check) check=1 ;;
"") ;;
*) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

cf=${CLANG_FORMAT:-}
if [[ -z $cf ]]; then
        for c in clang-format-14 clang-format; do
                if command -v "$c" >/dev/null; then cf=$c; break; fi
        done
fi
if [[ -z $cf ]] || ! command -v "$cf" >/dev/null; then
        echo "format: clang-format 14 is missing (apt-get install clang-format, or scripts/deps.sh --test)" >&2
        exit 77
fi
version=$("$cf" --version | sed -nE 's/.*clang-format version ([0-9]+)\..*/\1/p')
if [[ $version != 14 ]]; then
        echo "format: $cf is version ${version:-unknown}, the tree is formatted by clang-format 14" >&2
        exit 77
fi

# The tracked files in a git checkout; in an export without .git, the files there are.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        mapfile -t files < <(git ls-files -- "${folders[@]/%//*.c}" "${folders[@]/%//*.h}")
else
        mapfile -t files < <(find "${folders[@]}" -type f \( -name '*.c' -o -name '*.h' \) 2>/dev/null | sort)
fi
if ((${#files[@]} == 0)); then
        echo "format: no .c or .h file found under ${folders[*]}" >&2
        exit 1
fi

if ((!check)); then
        exec "$cf" -i --style=file -- "${files[@]}"
fi

bad=()
for f in "${files[@]}"; do
        "$cf" --dry-run --Werror --style=file -- "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
        printf 'not formatted: %s\n' "${bad[@]}"
        echo "${#bad[@]} of ${#files[@]} files are not formatted: run scripts/format.sh"
        exit 1
fi
echo "${#files[@]} files formatted"
