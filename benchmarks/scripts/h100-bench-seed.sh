#!/usr/bin/env bash
# Run on the GPU host after `. .gpu-host/on-host.sh`: the cross-backend tinybench app on the seed
# workload (the course reports' sizes), split by op so that each part fits inside one 10-minute
# device call.
set -u
timeout 300 node apps/bench/dist/cli.js --workload seed --op stencil3d,scan,gridSearch --no-progress --json "$OUT/bench-a.json" --md "$OUT/bench-a.md" > "$OUT/bench-a.log" 2>&1; echo "bench a rc=$?"
timeout 230 node apps/bench/dist/cli.js --workload seed --op conv2d --no-progress --json "$OUT/bench-b.json" --md "$OUT/bench-b.md" > "$OUT/bench-b.log" 2>&1; echo "bench b rc=$?"
tail -40 "$OUT/bench-a.log"; tail -20 "$OUT/bench-b.log"
