#!/usr/bin/env bash
# Checks that every tracked .c and .h file of the source folders is formatted as .clang-format
# says: lists those that are not and exits 1, exits 0 when all are, 77 (a skip, with the reason)
# when clang-format 14 is missing. The ctest entry lint-format runs it (-DZYGOTE_FORMAT_CHECK=ON).
exec "$(dirname "$0")/format.sh" --check "$@"
