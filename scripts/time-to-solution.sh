#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Time to solution: the stepping wall time a run needs to reach a simulated
# time, for this build (NEW, runs to the end time with --end-time) against a
# build of an earlier commit (OLD, the explicit viscous step: timed over a
# fixed stretch of steps and scaled to the end time by its simulated time,
# which is exact for a step set by the viscous limit and close otherwise).
# Snapshots off (run.snapshot_every = 0; the final one is written after the
# timing and reported apart in the summary).
#
#   scripts/time-to-solution.sh OLD NEW OUTDIR [BACKEND [OLD_CONFIGS]]
#
# OLD_CONFIGS: where OLD's box.toml and channel.toml are (the shipped ones
# of its commit, which know no run.end_time; default
# bench/h200/time-to-solution/before).
# OLD "-": NEW only. BACKEND: cuda (default) or cpu (the CPU cases only). Writes one summary
# per run into OUTDIR and OUTDIR/results.csv:
#   case,binary,steps,sim_time,wall_s,to_end_s
# to_end_s: NEW's wall time to the end; OLD's wall time scaled to it.
# CASES="name ...": only those cases (default: all).
set -euo pipefail
old=$1 new=$2 out=$3 backend=${4:-cuda} old_configs=${5:-bench/h200/time-to-solution/before}
mkdir -p "$out"
csv=$out/results.csv
echo "case,binary,steps,sim_time,wall_s,to_end_s" > "$csv"

# run NAME BINARY END OLD_STEPS CONFIG [--set ...]
run() {
  local name=$1 bin=$2 end=$3 old_steps=$4 cfg=$5
  shift 5
  [[ -n ${CASES:-} && " $CASES " != *" $name "* ]] && return 0
  local which log args
  which=$([[ $bin == "$new" ]] && echo new || echo old)
  log=$out/$name.$which.txt
  args=(--set run.snapshot_every=0 --set "run.output=\"$out/run-$name-$which\"" --set "run.backend=\"$backend\"" "$@")
  if [[ $which == new ]]; then
    "$bin" --end-time "$end" --steps 100000000 "${args[@]}" "$cfg" > "$log" 2>&1
  else
    "$bin" --steps "$old_steps" "${args[@]}" "$cfg" > "$log" 2>&1
  fi
  rm -rf "$out/run-$name-$which"
  # "N steps, simulated time T s (...), wall W s, R steps/s"
  local line steps t wall
  line=$(grep -E '^[0-9]+ steps, simulated time' "$log" | head -1)
  steps=$(sed -E 's/^([0-9]+) steps.*/\1/' <<< "$line")
  t=$(sed -E 's/.*simulated time ([0-9.e+-]+) s.*/\1/' <<< "$line")
  wall=$(sed -E 's/.*wall ([0-9.e+-]+) s,.*/\1/' <<< "$line")
  local to_end
  to_end=$(python3 -c "print($wall * $end / $t)")
  echo "$name,$which,$steps,$t,$wall,$to_end" >> "$csv"
  echo "$name $which: $steps steps to t = $t s in $wall s; to t = $end s: $to_end s"
}

no_particles=(--set 'particles.regions=[]')
cavity=config/cavity.toml
bins=("$old" "$new")
[[ $old == - ]] && bins=("$new")
if [[ $backend == cuda ]]; then
  for bin in "${bins[@]}"; do
    run cavity_re100_1024 "$bin" 1.0 2000 $cavity "${no_particles[@]}" --set domain.nx=1024 --set domain.ny=1024
    run cavity_re100_4096 "$bin" 0.1 1000 $cavity "${no_particles[@]}" --set domain.nx=4096 --set domain.ny=4096
    run cavity_re1000_4096 "$bin" 0.1 1000 $cavity "${no_particles[@]}" --set domain.nx=4096 --set domain.ny=4096 \
      --set fluid.viscosity=0.001
    dir=config
    [[ $bin == "$old" ]] && dir=$old_configs
    run box "$bin" 1.356 1000 $dir/box.toml
    run channel "$bin" 156.0 2000 $dir/channel.toml
  done
else
  for bin in "${bins[@]}"; do
    run cpu_cavity_re100_512 "$bin" 1.0 300 $cavity "${no_particles[@]}" --set domain.nx=512 --set domain.ny=512
  done
fi
cat "$csv"
