#!/usr/bin/env bash
# Installs the dependencies, builds zygote and runs zygoted in the foreground with the bundled
# profiles on a local socket. Stop it with Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF >/dev/null
cmake --build build -j"$(nproc)"

sock=${ZYGOTE_SOCKET:-$PWD/build/zygoted.sock}
cat <<MSG
zygoted is starting on $sock with the profiles in $PWD/profiles.
In another terminal:
  ZYGOTE_SOCKET=$sock build/launchctl run -- /bin/echo hello from the sandbox
  ZYGOTE_SOCKET=$sock build/launchctl status
MSG
exec build/zygoted --socket "$sock" --profiles "$PWD/profiles"
