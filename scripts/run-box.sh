#!/usr/bin/env bash
# Installs what is missing, builds, and runs the falling-cloud case:
#   sim --layout=soa --steps 1000 config/box.toml
# Extra arguments go to sim (e.g. --backend cpu, --output out/box).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
# --overwrite: running the demo again replaces its previous output.
exec build/sim --layout=soa --steps 1000 --overwrite "$@" config/box.toml
