#!/usr/bin/env bash
# Run on the GPU host (H200) after `. .gpu-host/on-host.sh`: bash benchmarks/scripts/gpu-host-2026-11-29-s29h.sh
# The router alone on the grid seed rows, 5 processes, each calibrating from an empty cache, with
# each process's trials and predictions kept (roundRouterNotes), to see how often and why a process
# sends the grid to Piscina. Everything in $OUT/s29h.tar.gz. Pack with GPU_HOST_PACK_LEAN=1.
set -u
. "$(dirname "$0")/h100-bench.sh"
host_begin
bench grid-router 230 --op gridSearch --backend kernelkit --rounds 5 --no-floor
host_end s29h
