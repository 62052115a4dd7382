#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The weak-scaling case of the rank benchmarks (scripts/gpu-ranks-bench.sh,
# scripts/rank-memory.sh), as a config on stdout:
#   scripts/weak-case.sh NX NY K COUNT OUTPUT
# NX x NY cells over 1 x K metres (square cells when NY = K NX), walls, a
# fluid at rest under gravity, multigrid to 1e-6, and COUNT two-way
# particles spread over the whole height (each slab holds its share);
# snapshots only at the end, into OUTPUT.
set -euo pipefail
nx=${1:?NX} ny=${2:?NY} k=${3:?K} count=${4:?COUNT} out=${5:?OUTPUT}
cat <<TOML
[domain]
nx = $nx
ny = $ny
lx = 1.0
ly = $k.0
lz = $(awk -v nx="$nx" 'BEGIN { printf "%.12g", 1.0 / nx }')
[fluid]
density = 1000.0
viscosity = 1e-5
initial = "rest"
[gravity]
y = -9.81
[time]
cfl = 0.5
dt_max = 2e-3
[pressure]
solver = "multigrid"
tolerance = 1e-6
[boundary.left]
kind = "wall"
[boundary.right]
kind = "wall"
[boundary.bottom]
kind = "wall"
[boundary.top]
kind = "wall"
[particles]
density = 2500.0
two_way = true
[[particles.regions]]
x0 = 0.05
x1 = 0.95
y0 = $(awk -v k="$k" 'BEGIN { print 0.05 * k }')
y1 = $(awk -v k="$k" 'BEGIN { print 0.95 * k }')
count = $count
diameter_min = 50e-6
diameter_max = 100e-6
[run]
steps = 100
seed = 1
snapshot_every = 0
output = "$out"
TOML
