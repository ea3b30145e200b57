# Sourced by the H100 session scripts: bench NAME SECONDS ARGS... runs the seed bench with ARGS into
# $OUT/bench-NAME.{json,md,out,log} under a timeout, then prints its exit code and the log's tail.
bench() {
  local n=$1 secs=$2; shift 2
  timeout "$secs" node apps/bench/dist/cli.js --workload seed --no-progress "$@" \
    --json "$OUT/bench-$n.json" --md "$OUT/bench-$n.md" > "$OUT/bench-$n.out" 2> "$OUT/bench-$n.log"
  echo "bench $n rc=$?"; grep -v '^Warning\|^    at \|^$' "$OUT/bench-$n.log" | tail -c 3000
}
