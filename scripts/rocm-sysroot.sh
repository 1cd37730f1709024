#!/usr/bin/env bash
# rocmk's second ROCm lane: Debian unstable's ROCm (hipcc 7.x, HIP 6.4,
# clang 21, hipBLAS/hipBLASLt/hipCUB/rocThrust) in a sysroot, from Debian
# packages only.
#
#   scripts/rocm-sysroot.sh               create it, or bring it up to date (idempotent)
#   scripts/rocm-sysroot.sh run -- CMD... run CMD inside it, in the repository root
#   scripts/rocm-sysroot.sh path          print where it is
#
# ROCMK_SYSROOT sets the directory (default /var/lib/rocmk/sysroot). Creating
# it takes about 6 minutes and 7 GB (measured on 2 cores). `run` binds the repository (at the
# same path), Go (/usr/local/go and the module and build caches), /proc and
# /dev into it inside a private mount namespace: when CMD ends, nothing is
# left mounted. Needs root (debootstrap, chroot, mounts).
set -euo pipefail

root="${ROCMK_SYSROOT:-/var/lib/rocmk/sysroot}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
packages=(hipcc libamdhip64-dev libhipblas-dev libhipblaslt-dev libhipcub-dev librocthrust-dev
  librocprim-dev libhiprand-dev librocrand-dev libhipfft-dev libhipsparse-dev llvm-21 python3 procps
  libgl-dev freeglut3-dev) # OpenGL and GLUT headers, as on the host lane: the GL interop samples include them
# Unstable's Release file may be called expired by the time it is read.
apt_opts=(-o Acquire::Check-Valid-Until=false -o APT::Sandbox::User=root -y --no-install-recommends)

say() { printf 'rocm-sysroot: %s\n' "$*" >&2; }

# Not root: run again through sudo where there is one (make test does this).
if [ "$(id -u)" != 0 ] && [ "${1:-create}" != path ]; then
  if command -v sudo >/dev/null 2>&1; then
    exec sudo --preserve-env=ROCMK_SYSROOT,GOFLAGS,TERM "$0" "$@"
  fi
  say "needs root (debootstrap, chroot and mounts) and there is no sudo: run it as root"
  exit 4
fi

# in_ns runs "$@" in a private mount namespace with /proc and /dev mounted
# in the sysroot, so the mounts go away with the namespace.
in_ns() {
  unshare --mount --propagation private -- bash -c '
    set -e
    root=$1; shift
    mount -t proc proc "$root/proc"
    mount --rbind /dev "$root/dev"
    exec "$@"' bash "$root" "$@"
}

create() {
  if ! command -v debootstrap >/dev/null 2>&1; then
    say "installing debootstrap"
    apt-get install -y --no-install-recommends debootstrap >/dev/null
  fi
  if [ ! -x "$root/usr/bin/apt-get" ]; then
    say "debootstrap sid into $root (about 2 minutes)"
    rm -rf "$root.tmp"
    mkdir -p "$(dirname "$root")"
    debootstrap --variant=minbase sid "$root.tmp" http://deb.debian.org/debian >/dev/null
    rm -rf "$root"
    mv "$root.tmp" "$root" # whole or not at all
  fi
  missing=()
  for p in "${packages[@]}"; do
    chroot "$root" dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]}"
    in_ns chroot "$root" apt-get "${apt_opts[@]}" update >/dev/null || true
    in_ns chroot "$root" apt-get "${apt_opts[@]}" install "${missing[@]}" >/dev/null
    chroot "$root" apt-get clean # the downloaded .debs: about 1 GB
  fi
  hip=$(sed -n 's/^#define HIP_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' "$root/usr/include/hip/hip_version.h" 2>/dev/null | paste -sd.)
  say "ready: $root (HIP ${hip:-?}, $(chroot "$root" sh -c 'clang++-21 --version 2>/dev/null | head -1'))"
}

run() {
  if [ ! -x "$root/usr/bin/hipcc" ]; then
    say "no sysroot at $root: run scripts/rocm-sysroot.sh first"
    exit 4
  fi
  local go=/usr/local/go gocache gomodcache
  export PATH="$go/bin:$PATH"
  gocache=$(go env GOCACHE)
  gomodcache=$(go env GOMODCACHE)
  mkdir -p "$gocache" "$gomodcache"
  unshare --mount --propagation private -- bash -c '
    set -e
    root=$1 repo=$2 go=$3 gocache=$4 gomodcache=$5; shift 5
    mount -t proc proc "$root/proc"
    mount --rbind /dev "$root/dev"
    for d in "$repo" "$go" "$gocache" "$gomodcache"; do
      mkdir -p "$root$d"
      mount --bind "$d" "$root$d"
    done
    cd "$repo"
    exec chroot "$root" env -i HOME=/root TERM="${TERM:-dumb}" PATH="$go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
      GOCACHE="$gocache" GOMODCACHE="$gomodcache" GOFLAGS="${GOFLAGS:-}" GOTOOLCHAIN=local CGO_ENABLED=0 \
      bash -c "cd \"\$0\" && exec \"\$@\"" "$repo" "$@"' bash "$root" "$repo" "$go" "$gocache" "$gomodcache" "$@"
}

case "${1:-create}" in
  create) create ;;
  path) echo "$root" ;;
  run)
    shift
    [ "${1:-}" = "--" ] && shift
    [ $# -gt 0 ] || { say "usage: scripts/rocm-sysroot.sh run -- CMD..."; exit 2; }
    run "$@"
    ;;
  *)
    say "usage: scripts/rocm-sysroot.sh [create|path|run -- CMD...]"
    exit 2
    ;;
esac
