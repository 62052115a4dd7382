#!/usr/bin/env bash
# Installs what is missing, builds sim, and runs the falling-cloud case:
#   sim --layout=soa --steps 1000 config/box.toml
# Extra arguments go to sim (e.g. --backend cpu, --output out/box).
set -euo pipefail
cd "$(dirname "$0")/.."
# Only what sim needs, and only the sim target: the tests, GPU tests,
# fuzzers and ParaView belong to scripts/test.sh.
scripts/install-deps.sh --run
scripts/build.sh -- sim
# --overwrite: running the demo again replaces its previous output.
exec build/sim --layout=soa --steps 1000 --overwrite "$@" config/box.toml
