#!/bin/sh
# sim_validate.sh BUILD_DIR [N] [REPS]: validates cholesky_mpi_sim against
# real tile_cholesky_mpi runs on this machine (docs/distributed.md §9). For
# np = 2, 3, 4 it runs the demo with every rank's profile written, then
# replays that run's DAG with that run's per-rank node costs and prints
#
#   sim_validate np=P n=N predicted_s=X measured_s=Y ratio=X/Y  (same run's costs)
#   sim_validate np=P ... (the np=2 run's pooled costs, P ranks sharing this host's cores)
#
# measured_s: the mean time of the run's weft factorizations (the calls
# the profiles average over; the demo's GFLOP/s use the median). Then, per rank, what its profile says a call spent: in nodes
# (busy_ms: what the replay charges) and idle (idle_ms):
#
#   sim_validate_rank np=P rank=R call_ms=C busy_ms=B idle_ms=I
#
# The load average before each run is printed (shared machine).
set -eu
build=$1
n=${2:-2048}
reps=${3:-5}
demo=$build/tools/demos/tile_cholesky_mpi
sim=$build/tools/demos/cholesky_mpi_sim
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cores=$(nproc)
for np in 2 3 4; do
  echo "sim_validate_load np=$np loadavg=$(cut -d' ' -f1-3 /proc/loadavg)"
  out=$(mpirun --allow-run-as-root --oversubscribe -np $np "$demo" --n "$n" --reps "$reps" \
        --profile-json "$dir/np${np}_r%d.json")
  echo "$out" | grep '^cholesky_mpi n='
  measured=$(echo "$out" | sed -n 's/^cholesky_mpi impl=weft .* mean_s=\([0-9.]*\).*/\1/p')
  profs=""
  r=0
  while [ $r -lt $np ]; do profs="$profs --profile $dir/np${np}_r$r.json"; r=$((r + 1)); done
  # shellcheck disable=SC2086
  "$sim" $profs --n "$n" --ranks $np --latency-us 1 --gbps 5 --measured-s "$measured" |
    grep '^sim_validate' | sed 's/$/ costs=own_run/'
  r=0
  while [ $r -lt $np ]; do
    f=$dir/np${np}_r$r.json
    awk -v np=$np -v r=$r -F'[^0-9]+' '
      /^ "calls":/ { c = $2 } /^ "call_time_ns":/ { t = $2 }
      /^ "worker_idle_ns":/ { i = $2 } /^ "worker_busy_ns":/ { b = $2 }
      END { printf "sim_validate_rank np=%d rank=%d call_ms=%.1f busy_ms=%.1f idle_ms=%.1f\n",
            np, r, t / c * 1e-6, b / c * 1e-6, i / c * 1e-6 }' "$f"
    r=$((r + 1))
  done
  if [ $np -gt 2 ]; then
    "$sim" --profile "$dir/np2_r0.json" --profile "$dir/np2_r1.json" --n "$n" --ranks $np --latency-us 1 --gbps 5 \
      --cores "$cores" --ranks-per-host $np --measured-s "$measured" |
      grep '^sim_validate' | sed "s/\$/ costs=np2_run cores=$cores/"
  fi
done
