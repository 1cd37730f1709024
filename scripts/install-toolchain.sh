#!/usr/bin/env bash
# Installs what rocmk needs on a Debian/Ubuntu machine when it is missing:
# Go (checked, not installed), Debian's ROCm toolchain (hipcc pulls in
# clang-15, lld, llvm-15, clang-tools-15, rocm-device-libs, libamdhip64),
# and the cache servers the remote-cache tests run on 127.0.0.1 (nginx with
# WebDAV from nginx-extras, redis-server: the tests start their own
# instances; the packages' system services are left as apt sets them up).
# Safe to run again: it installs nothing that is already there.
set -euo pipefail

say() { printf 'install-toolchain: %s\n' "$*" >&2; }

if ! command -v go >/dev/null 2>&1; then
  if [ -x /usr/local/go/bin/go ]; then
    export PATH="/usr/local/go/bin:$PATH"
  else
    say "Go is not installed. Install Go 1.26 or newer (https://go.dev/dl/) and run this again."
    exit 4
  fi
fi

need=()
# A user ROCm install (/opt/rocm or ROCM_PATH) is used as it is.
rocm="${ROCM_PATH:-/opt/rocm}"
if [ -x "$rocm/llvm/bin/clang++" ] && [ -e "$rocm/include/hip/hip_runtime.h" ]; then
  say "using the ROCm installation in $rocm"
else
  command -v hipcc >/dev/null 2>&1 || need+=(hipcc)
  [ -d /usr/lib/x86_64-linux-gnu/amdgcn/bitcode ] || need+=(rocm-device-libs)
  [ -e /usr/lib/llvm-15/bin/clang-offload-bundler ] || need+=(clang-tools-15)
  [ -e /usr/include/hip/hip_runtime.h ] || need+=(libamdhip64-dev)
fi
# Cache servers for the remote-cache integration tests.
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx-extras)
command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || need+=(redis-server)
if [ ${#need[@]} -eq 0 ]; then
  say "already installed: ROCm toolchain (hipcc $(dpkg-query -W -f='${Version}' hipcc 2>/dev/null || echo present)), nginx, redis-server"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  say "no apt-get here: install ROCm yourself (https://rocm.docs.amd.com) and set ROCM_PATH, then run this again."
  exit 4
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo="sudo"
  else
    say "need root to run: apt-get install ${need[*]} (no sudo found); run that as root, then this again."
    exit 4
  fi
fi
say "installing: ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq "${need[@]}" >/dev/null
say "done: ${need[*]}"
