#!/usr/bin/env bash
# Project copy of ../shared/gpu-host/pack.sh: also leaves out @tensorflow (a dev dependency of
# apps/fashion-mnist, only needed for training) but for the Node bundles and wasm files of the
# bench's tfjs-wasm peer, keeps only onnxruntime-node's linux-x64 CPU binding (the bench's
# onnxruntime peer), so the pack stays under the 60 MiB limit, and packs the workspaces' own
# node_modules, which the shared script misses.
# Packs the built project for a bare Linux x86-64 GPU host that has an NVIDIA driver
# but no Node.js: a node binary, the runtime node_modules, every built dist/ folder,
# and the Vulkan/EGL loader libraries. Run it from the project's root after the build.
# Output: .gpu-host/ (git-ignored through .git/info/exclude), kept under 60 MiB.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/gpu-host
out=.gpu-host
mkdir -p "$out"
exclude=$(git rev-parse --git-path info/exclude) # a worktree has a .git file, not a folder
mkdir -p "$(dirname "$exclude")"
grep -qxF "/$out/" "$exclude" 2>/dev/null || echo "/$out/" >> "$exclude"

# 1. Node.js itself, compressed (the host has none).
# -9e: a minute once per Node version, and 3 MiB less than -3 in a pack that must fit the carry limit.
if [ "$(cat "$out/node.version" 2>/dev/null)" != "$(node --version)-9e" ]; then
  xz -T0 -9e -c "$(command -v node)" > "$out/node.xz"
  echo "$(node --version)-9e" > "$out/node.version"
fi

# 2. The Vulkan and EGL loaders (the host has the NVIDIA driver but not the loaders).
if [ ! -s "$out/debs/libvulkan1.deb" ]; then
  mkdir -p "$out/debs" /tmp/gpu-host-apt/partial
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/gpu-host-apt'
  apt-get $o update >/dev/null
  (cd "$out/debs" && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 >/dev/null 2>&1)
  (cd "$out/debs" && for f in *.deb; do mv "$f" "${f%%_*}.deb"; done)
fi

# 3. Runtime dependencies and built output. Build tools, test tools and other
#    platforms' native binaries stay behind.
[ -d node_modules ] || { echo "pack.sh: no node_modules here; install and build first" >&2; exit 1; }
# Workspaces' own node_modules hold the dependencies npm could not hoist (e.g. the bench's
# tinybench 6 and vega, beside vitest's tinybench 2 at the root).
mapfile -t nested < <(find apps packages -mindepth 2 -maxdepth 2 -type d -name node_modules)
mapfile -t dists < <(find . -path ./node_modules -prune -o -type d -name dist -not -path '*/node_modules/*' -print)
[ ${#dists[@]} -gt 0 ] || { echo "pack.sh: no dist/ folder found; build first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# GPU_HOST_PACK_LEAN=1: without the bench's peers (onnxruntime, tfjs-wasm) and gpu.js, for calls
# that run neither, so the pack and a large checkout fit the host's carry limit together;
# GPU_HOST_PACK_LEAN=onnxruntime: the same but keeping the onnxruntime peer;
# GPU_HOST_PACK_LEAN=cpu-peers: the onnxruntime peer kept, no GPU runtime (Dawn's binary left out too),
# for CPU-only calls (Piscina against onnxruntime) when the checkout is large.
lean=()
case "${GPU_HOST_PACK_LEAN:-0}" in
  1) lean=(--exclude='node_modules/onnxruntime-node' --exclude='node_modules/gl' --exclude='node_modules/gpu.js') ;;
  onnxruntime) lean=(--exclude='node_modules/gl' --exclude='node_modules/gpu.js') ;;
  cpu-peers) lean=(--exclude='node_modules/gl' --exclude='node_modules/gpu.js' --exclude='node_modules/webgpu/dist') ;;
esac
tar -cf "$tmp/runtime.tar" "${lean[@]}" \
  --exclude='node_modules/typescript' --exclude='node_modules/@typescript' \
  --exclude='node_modules/@typescript/*' --exclude='node_modules/turbo*' --exclude='node_modules/@turbo' \
  --exclude='node_modules/esbuild' --exclude='node_modules/@esbuild' \
  --exclude='node_modules/rollup' --exclude='node_modules/@rollup' --exclude='node_modules/rolldown' --exclude='node_modules/@rolldown' \
  --exclude='node_modules/vite' --exclude='node_modules/vitest' --exclude='node_modules/@vitest' \
  --exclude='node_modules/@tensorflow' --exclude='node_modules/.cache' --exclude='node_modules/.vite' \
  --exclude='node_modules/binaryen' --exclude='node_modules/assemblyscript' --exclude='node_modules/lightningcss*' \
  --exclude='node_modules/eslint' --exclude='node_modules/@eslint' --exclude='node_modules/typescript-eslint' --exclude='node_modules/@typescript-eslint' \
  --exclude='node_modules/typedoc' --exclude='node_modules/@shikijs' --exclude='node_modules/lunr' \
  --exclude='node_modules/@types' --exclude='node_modules/node-gyp' --exclude='*.js.map' \
  --exclude='*/dist/darwin-*' --exclude='*/dist/win32-*' --exclude='*/dist/linux-arm64' \
  --exclude='*/dist/darwin-*.dawn.node' --exclude='*/dist/win32-*.dawn.node' \
  --exclude='node_modules/gl/angle' --exclude='node_modules/gl/build/Release/obj.target' \
  --exclude='node_modules/onnxruntime-node/bin/napi-v*/darwin' --exclude='node_modules/onnxruntime-node/bin/napi-v*/win32' \
  --exclude='node_modules/onnxruntime-node/bin/napi-v*/linux/arm64' \
  --exclude='node_modules/gl/deps/windows' --exclude='node_modules/gl/build/Release/*.a' \
  --exclude='*/node_modules/vega*/build-es5' --exclude='node_modules/gpu.js/dist/gpu-browser*' \
  node_modules "${nested[@]}" "${dists[@]}"
# The bench's tfjs-wasm peer needs only the two packages' Node bundles and the single-threaded wasm builds;
# appended, since the @tensorflow exclude above would drop them from the first pass too.
tf=node_modules/@tensorflow
if [ "${GPU_HOST_PACK_LEAN:-0}" != 0 ]; then
  echo "pack.sh: lean pack ($GPU_HOST_PACK_LEAN): no tfjs-wasm or gpu.js on the host" >&2
elif [ -f "$tf/tfjs-backend-wasm/package.json" ] && [ -f "$tf/tfjs-core/package.json" ]; then
  tar -rf "$tmp/runtime.tar" "$tf/tfjs-core/package.json" "$tf/tfjs-core/dist/tf-core.node.js" \
    "$tf/tfjs-backend-wasm/package.json" "$tf/tfjs-backend-wasm/dist/tf-backend-wasm.node.js" \
    "$tf/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm" "$tf/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm"
else
  echo "pack.sh: @tensorflow/tfjs-core or tfjs-backend-wasm not installed: the bench's tfjs-wasm peer will be skipped on the host" >&2
fi
[ "${GPU_HOST_PACK_LEAN:-0}" = 1 ] || [ -d node_modules/onnxruntime-node/bin ] || echo "pack.sh: onnxruntime-node not installed: the bench's onnxruntime peer will be skipped on the host" >&2
xz -T0 -c "$tmp/runtime.tar" > "$out/runtime.tar.xz"
cp "$here/on-host.sh" "$out/on-host.sh"

size=$(du -sm "$out" | cut -f1)
echo "pack.sh: $out holds ${size} MiB: $(ls "$out" | tr '\n' ' ')"
if [ "$size" -gt 60 ]; then
  echo "pack.sh: over 60 MiB; biggest packages in node_modules:" >&2
  du -sm node_modules/* node_modules/@*/* 2>/dev/null | sort -n | tail -8 >&2
  exit 1
fi
