#!/usr/bin/env bash
# Side-by-side scheduler benchmark: weft-bench and the peer harnesses of
# shared/bench/peers, run configuration by configuration in ONE script run
# (interleaved, so machine drift hits all of them alike), pinned exactly like
# shared/bench/peers/run-matrix.sh (T=1: taskset -c 0; T=2: -c 0,1;
# OMP_NUM_THREADS=T). Prints every protocol line, a '# ext_cpus=' line after
# each (CPU time other processes used meanwhile; distrust > ~0.3), then a
# summary of the targets (ratios computed from the lines of this run).
#
# Env: PEERS   peers source dir (default: ../shared/bench/peers next to the repo,
#              or /work/shared/bench/peers)
#      PEERB   where the peers are built (default /tmp/peers)
#      BUILD   weft Release build dir (default <repo>/build-release)
#      SHAPES  (default: chain tree wavefront fanout random)
#      IMPLS   (default: weft seq tbb omp-gcc omp-clang, plus weft-base with BASELINE)
#      BASELINE another weft-bench binary (an older build, say), run beside
#              the current one and reported as impl=weft-base
#      TIMEOUT seconds per configuration (default 300)
#      SKIP    impl:shape:threads:work to skip (default omp-gcc:fanout:1:0,
#              libgomp is quadratic there)
#      QUIET_WAIT seconds to wait for others' CPU use < 10% before each line (0)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PEERS=${PEERS:-}
for d in "$ROOT/../shared/bench/peers" /work/shared/bench/peers; do
  [ -z "$PEERS" ] && [ -f "$d/driver.c" ] && PEERS=$(cd "$d" && pwd)
done
PEERB=${PEERB:-/tmp/peers}
BUILD=${BUILD:-$ROOT/build-release}
SHAPES=${SHAPES:-"chain tree wavefront fanout random"}
BASELINE=${BASELINE:-}
IMPLS=${IMPLS:-"weft${BASELINE:+ weft-base} seq tbb omp-gcc omp-clang"}
TIMEOUT=${TIMEOUT:-300}
SKIP=${SKIP-"omp-gcc:fanout:1:0"}
QUIET_WAIT=${QUIET_WAIT:-0}
HZ=$(getconf CLK_TCK)
NCPU=$(nproc --all)
TMPT=$(mktemp)
OUT=$(mktemp)
trap 'rm -f "$TMPT" "$OUT"' EXIT

[ -n "$PEERS" ] || { echo "compare.sh: peers not found (set PEERS)" >&2; exit 2; }
make -s -C "$PEERS" B="$PEERB" >&2 || exit 2
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWEFT_BUILD_TESTS=OFF >/dev/null || exit 2
cmake --build "$BUILD" --target weft-bench >&2 || exit 2
WEFT="$BUILD/tools/bench/weft-bench"

busy_jiffies() { awk '/^cpu /{b=$2+$3+$4+$7+$8+$9; t=b+$5+$6; print b, t}' /proc/stat; }

wait_quiet() {
  [ "$QUIET_WAIT" -gt 0 ] || return 0
  local start=$SECONDS b0 t0 b1 t1 pct
  while :; do
    read -r b0 t0 < <(busy_jiffies); sleep 1; read -r b1 t1 < <(busy_jiffies)
    pct=$(( 100 * (b1 - b0) / (t1 - t0 > 0 ? t1 - t0 : 1) ))
    [ "$pct" -lt 10 ] && return 0
    [ $((SECONDS - start)) -ge "$QUIET_WAIT" ] && return 0
    sleep 2
  done
}

bin_for() {
  case $1 in weft) echo "$WEFT" ;; weft-base) echo "$BASELINE" ;; *) echo "$PEERB/bench-$1" ;; esac
}
cpus_for() { [ "$1" = 1 ] && echo 0 || echo "0-$(( $1 - 1 ))"; }

run_one() {  # impl shape threads work
  local impl=$1 shape=$2 t=$3 w=$4 b0 t0 b1 t1 w0 w1 rc
  for s in $SKIP; do [ "$s" = "$impl:$shape:$t:$w" ] && { echo "# SKIP $s"; return; }; done
  [ "$impl" = seq ] && [ "$t" != 1 ] && return
  wait_quiet
  read -r b0 t0 < <(busy_jiffies); w0=$(date +%s.%N)
  OMP_NUM_THREADS=$t /usr/bin/time -f '%U %S' -o "$TMPT" timeout "$TIMEOUT" \
    taskset -c "$(cpus_for "$t")" "$(bin_for "$impl")" --shape "$shape" --threads "$t" --work "$w" \
    2>/dev/null | sed "s/^bench impl=weft /bench impl=$impl /" | tee -a "$OUT"
  rc=${PIPESTATUS[0]}
  read -r b1 t1 < <(busy_jiffies); w1=$(date +%s.%N)
  awk -v b="$((b1 - b0))" -v hz="$HZ" -v w0="$w0" -v w1="$w1" -v n="$NCPU" \
    'NR==1 && NF==2 { own=$1+$2; ext=(b/hz-own)/(w1-w0); if (ext<0) ext=0;
      printf "# ext_cpus=%.2f (of %d)\n", ext, n }' < <(tail -n 1 "$TMPT")
  [ "$rc" -eq 0 ] || echo "# FAIL/DNF impl=$impl shape=$shape threads=$t work=$w rc=$rc"
}

for shape in $SHAPES; do
  for t in 1 2; do for impl in $IMPLS; do run_one "$impl" "$shape" "$t" 0; done; done
done
for shape in wavefront random; do
  case " $SHAPES " in *" $shape "*) ;; *) continue ;; esac
  for t in 1 2; do for impl in $IMPLS; do run_one "$impl" "$shape" "$t" 1000; done; done
done

echo "# ---- targets (from the lines above) ----"
awk '
  { for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
    k = f["shape"] ":" f["threads"] ":" f["work"]; ns[f["impl"] ":" k] = f["ns_per_task"]
    bm[f["impl"] ":" k] = f["build_ms"]; keys[k] = 1; run[f["impl"] ":" k] = f["run_ms"] }
  END {
    for (k in keys) {
      split(k, p, ":"); if (p[3] != 0 || !(("weft:" k) in ns)) continue
      best = ""; for (i = split("tbb omp-gcc omp-clang", pe, " "); i > 0; i--)
        if ((pe[i] ":" k) in ns && (best == "" || ns[pe[i] ":" k] + 0 < ns[best ":" k] + 0)) best = pe[i]
      if (best != "") printf "# work=0 %s T=%s: weft %.2f ns vs best peer %s %.2f ns: ratio %.2f (target <= 0.70) %s\n",
        p[1], p[2], ns["weft:" k], best, ns[best ":" k], ns["weft:" k] / ns[best ":" k],
        (ns["weft:" k] / ns[best ":" k] <= 0.7 ? "MET" : "NOT MET")
      if (best != "" && p[1] == "random" && p[2] == 1)  # issue 15
        for (j = split("weft weft-base", wi, " "); j > 0; j--) if ((wi[j] ":" k) in ns)
          printf "# random T=1: %s %.2f ns vs best peer %s %.2f ns: ratio %.2f (target <= 0.60) %s\n",
            wi[j], ns[wi[j] ":" k], best, ns[best ":" k], ns[wi[j] ":" k] / ns[best ":" k],
            (ns[wi[j] ":" k] / ns[best ":" k] <= 0.6 ? "MET" : "NOT MET")
      if (("tbb:" k) in bm && bm["tbb:" k] > 0) printf "# build %s T=%s: weft %.1f ms vs tbb %.1f ms: ratio %.2f (target <= 0.50) %s\n",
        p[1], p[2], bm["weft:" k], bm["tbb:" k], bm["weft:" k] / bm["tbb:" k], (bm["weft:" k] / bm["tbb:" k] <= 0.5 ? "MET" : "NOT MET")
    }
    split("wavefront random", ws, " ")
    for (i = 1; i <= 2; i++) { a = "weft:" ws[i] ":1:1000"; b = "weft:" ws[i] ":2:1000"
      if ((a in run) && (b in run)) printf "# work=1000 %s: weft T=1 %.1f ms / T=2 %.1f ms = %.2fx (target >= 1.9) %s\n",
        ws[i], run[a], run[b], run[a] / run[b], (run[a] / run[b] >= 1.9 ? "MET" : "NOT MET") }
    if (("weft:chain:1:0" in ns) && ("seq:chain:1:0" in ns)) printf "# chain T=1: weft %.2f ns vs seq %.2f ns = %.2fx (target <= 5) %s\n",
      ns["weft:chain:1:0"], ns["seq:chain:1:0"], ns["weft:chain:1:0"] / ns["seq:chain:1:0"],
      (ns["weft:chain:1:0"] / ns["seq:chain:1:0"] <= 5 ? "MET" : "NOT MET")
  }' "$OUT" | sort
