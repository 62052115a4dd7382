#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The HDF5 filters a snapshot could be stored with, on one snapshot of a run:
# each filter's size against the uncompressed file, its time through HDF5's
# own pipeline on one core (h5repack, which is how HDF5 alone would write it;
# sim's writer runs deflate on every core, io/hdf5_chunks.cpp), h5diff that
# it is lossless, and ParaView (pvpython, when installed) reading the filtered
# series through sim.xdmf with the same pressure range as the plain one.
#
#   scripts/compress-filters.sh RUNDIR OUTFILE
#
# RUNDIR: a run's output directory; its last snapshot is used. Filters:
# shuffle + deflate 1 and 4 (output.compress), szip (libaec) with nearest-
# neighbour and entropy coding, 32 values a block, and shuffle + szip.
set -euo pipefail
run=$(realpath "$1") outfile=$2
snap=$(ls "$run"/snap_*.h5 | tail -1)
work=$(mktemp -d "${TMPDIR:-/tmp}/filters.XXXXXX")
trap 'rm -rf "$work"' EXIT
plain=$(stat -c %s "$snap")
{
  echo "snapshot: $snap, $plain bytes ($(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'))"
  printf '%-22s %14s %8s %10s %12s %s\n' filter bytes ratio seconds "MB/s in" lossless
  for spec in "GZIP=1 SHUF" "GZIP=4 SHUF" "SZIP=32,NN" "SZIP=32,EC" "SZIP=32,NN SHUF"; do
    args=() name=""
    for f in $spec; do args+=(-f "$f"); name="$name+$f"; done
    name=${name#+}
    out=$work/$(echo "$name" | tr -c 'A-Za-z0-9\n' _).h5
    sync
    start=$(date +%s.%N)
    h5repack "${args[@]}" "$snap" "$out"
    sync "$out"
    end=$(date +%s.%N)
    bytes=$(stat -c %s "$out")
    same=no
    h5diff -q "$snap" "$out" >/dev/null 2>&1 && same=yes
    awk -v n="$name" -v b="$bytes" -v p="$plain" -v s="$start" -v e="$end" -v same="$same" 'BEGIN {
      printf "%-22s %14d %8.3f %10.2f %12.0f %s\n", n, b, b / p, e - s, p / 1e6 / (e - s), same }'
  done
  if command -v pvpython >/dev/null 2>&1; then
    # ParaView on the szip'd series: the plain directory and a copy whose
    # snapshot is the szip one under the same name.
    mkdir -p "$work/pv"
    cp "$run/sim.xdmf" "$work/pv/"
    for s in "$run"/snap_*.h5; do ln -s "$s" "$work/pv/$(basename "$s")"; done
    rm "$work/pv/$(basename "$snap")"
    cp "$work/SZIP_32_NN.h5" "$work/pv/$(basename "$snap")"
    cat > "$work/pv.py" <<'EOF'
import sys
from paraview import servermanager
from paraview.simple import XDMFReader, UpdatePipeline
ranges = []
for d in sys.argv[1:]:
    r = XDMFReader(FileNames=[d + "/sim.xdmf"])
    t = r.TimestepValues
    UpdatePipeline(time=t[-1] if t else 0, proxy=r)
    mb = servermanager.Fetch(r)
    b = mb.GetBlock(0)
    ranges.append(b.GetCellData().GetArray("pressure").GetRange())
print("ParaView, pressure range of the last snapshot: plain %s, szip %s: %s" %
      (ranges[0], ranges[1], "the same" if ranges[0] == ranges[1] else "DIFFERENT"))
EOF
    pvpython "$work/pv.py" "$run" "$work/pv" 2>&1 | grep -v '^$' | tail -2
  else
    echo "ParaView: pvpython not installed, not checked"
  fi
} | tee "$outfile"
