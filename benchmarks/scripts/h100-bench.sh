# Sourced by the H100 session scripts: bench NAME SECONDS ARGS... runs the seed bench with ARGS into
# $OUT/bench-NAME.{json,md,out,log} under a timeout, then prints its exit code and the log's tail.
bench() {
  local n=$1 secs=$2; shift 2
  timeout "$secs" node apps/bench/dist/cli.js --workload seed --no-progress "$@" \
    --json "$OUT/bench-$n.json" --md "$OUT/bench-$n.md" > "$OUT/bench-$n.out" 2> "$OUT/bench-$n.log"
  echo "bench $n rc=$?"; grep -v '^Warning\|^    at \|^$' "$OUT/bench-$n.log" | tail -c 3000
}

# The seed report's parts, as every session runs them: conv2d and convLayer (with onnxruntime on 1 and
# 16 threads), the other ops, and the router's rows alone.
bench_conv() { bench conv 490 --op conv2d,convLayer --backend cpu,piscina,webgpu,onnxruntime,kernelkit --variant wasm-simd,auto,gemm,1t,16t,routed; }
bench_rest() { bench rest 560 --op stencil3d,scan,gridSearch --backend cpu,piscina,webgpu,kernelkit --variant wasm-simd,two-pass,pruned,streamed,decoupled-subgroups,decoupled,routed; }
bench_router() { bench router 560 --op conv2d,convLayer,stencil3d,scan,gridSearch --backend kernelkit --no-floor; }

# Issue 16's router rows: the router against the backends it races on the seed workload (the cpu
# backend is 3x or more behind on every seed row), each at its best variants.
ROUTER_RACE_BACKENDS=piscina,webgpu,kernelkit
ROUTER_RACE_VARIANTS=wasm-simd,auto,gemm,streamed,decoupled,decoupled-subgroups,pruned,routed
# race NAME OPS VARIANTS: those backends on OPS at VARIANTS, one process each, without the floor or side-by-side rows.
race() { bench "$1" 570 --op "$2" --backend "$ROUTER_RACE_BACKENDS" --variant "$3" --no-floor --no-side-by-side; }

# A session script's frame: host_begin collects into a temporary $OUT and records the GPU and CPU; host_end NAME
# packs it all into the real $OUT as NAME.tar.gz (the host returns at most 8 files).
host_begin() {
  HOST_FINAL_OUT=${HOST_FINAL_OUT:-$OUT} # the real $OUT, also for the later parts of one run
  OUT=$(mktemp -d)
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
  lscpu > "$OUT/lscpu.txt" 2>&1
}
host_end() {
  tar -czf "$HOST_FINAL_OUT/$1.tar.gz" -C "$OUT" .
  echo "done $SECONDS s"
}

# probe SCENARIO...: one process of webgpu-process-state.mjs (stencil3d 64^3 x 100 on WebGPU after
# SCENARIO), its JSON lines appended to $OUT/process-state.txt.
probe() { KK_SAMPLES=80 timeout 90 node benchmarks/scripts/webgpu-process-state.mjs "$@" stencil-64-s100 2>/dev/null | grep '^{' >> "$OUT/process-state.txt"; }
