#!/usr/bin/env bash
# Installs what rocmk needs on a Debian/Ubuntu machine when it is missing:
# Go (checked, not installed), Debian's ROCm toolchain (hipcc pulls in
# clang-15, lld, llvm-15, clang-tools-15, rocm-device-libs, libamdhip64),
# the toolchain of the GPU targets ROCm 5.2.3 lacks (gfx942, gfx1100-gfx1102,
# gfx1150/gfx1151, gfx1200/gfx1201: Debian's clang-19, lld-19, llvm-19 and
# ROCm 6.0's device libraries, see below), and the cache servers the
# remote-cache tests run on 127.0.0.1 (nginx with WebDAV from nginx-extras,
# redis-server: the tests start their own instances; the packages' system
# services are left as apt sets them up), and Slurm with munge for the
# executor tests (slurm-wlm, munge; scripts/slurm-local.sh).
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
# --- GPU targets ROCm 5.2.3 lacks: gfx942, gfx1100-gfx1102, gfx1150/gfx1151, gfx1200/gfx1201 ---
# rocmk builds them with Debian's clang-19 + lld-19 (bookworm packages) and
# ROCm 6.0's device libraries: Debian trixie's rocm-device-libs-17 (LLVM 17
# bitcode, no dependencies), downloaded from the Debian archive by sha256
# and unpacked with dpkg -x into a directory rocmk owns
# ($ROCMK_DEVICE_LIBS_DIR, default /usr/local/lib/rocmk/device-libs), never
# installed as a package. rocmk keeps clang-15 for every target 5.2.3 has
# (a newer clang is used only for the targets the installation lacks).
# llvm-19 gives llvm-objdump-19, which disassembles gfx12 code objects.
# docs/targets-and-doctor.md says why this set.
devlibs_root="${ROCMK_DEVICE_LIBS_DIR:-/usr/local/lib/rocmk/device-libs}"
devlibs_pkg=rocm-device-libs-17_6.0+git20231212.5a852ed-2
devlibs_url="http://deb.debian.org/debian/pool/main/r/rocm-device-libs/${devlibs_pkg}_amd64.deb"
devlibs_sha256=fa10f0f5be5269c715492e4e3d3816f956a4d8b9098443d54052d351cfda9213
devlibs_dir="$devlibs_root/$devlibs_pkg"
fetch_devlibs=""
newer="" # what the "already installed" line says of them
# A user ROCm install (/opt/rocm or ROCM_PATH) is used as it is.
rocm="${ROCM_PATH:-/opt/rocm}"
if [ -x "$rocm/llvm/bin/clang++" ] && [ -e "$rocm/include/hip/hip_runtime.h" ]; then
  say "using the ROCm installation in $rocm"
else
  command -v hipcc >/dev/null 2>&1 || need+=(hipcc)
  [ -d /usr/lib/x86_64-linux-gnu/amdgcn/bitcode ] || need+=(rocm-device-libs)
  [ -e /usr/lib/llvm-15/bin/clang-offload-bundler ] || need+=(clang-tools-15)
  [ -e /usr/include/hip/hip_runtime.h ] || need+=(libamdhip64-dev)
  [ -x /usr/lib/llvm-19/bin/clang++ ] || need+=(clang-19)
  [ -x /usr/lib/llvm-19/bin/ld.lld ] || need+=(lld-19)
  [ -x /usr/lib/llvm-19/bin/llvm-objdump ] || need+=(llvm-19)
  [ -e "$devlibs_dir/amdgcn/bitcode/oclc_isa_version_1100.bc" ] || fetch_devlibs=1
  newer=", clang-19 + lld-19 with $devlibs_dir"
fi
# Cache servers for the remote-cache integration tests.
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx-extras)
command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || need+=(redis-server)
# A one-host Slurm for the --executor slurm tests (scripts/slurm-local.sh
# starts its own munged, slurmctld and slurmd; the system services stay off).
[ -x /usr/sbin/slurmctld ] && [ -x /usr/sbin/slurmd ] && command -v srun >/dev/null 2>&1 || need+=(slurm-wlm)
[ -x /usr/sbin/munged ] || need+=(munge)

# Fetches the pinned .deb and unpacks its bitcode to $devlibs_dir, whole or
# not at all (built beside it, then renamed).
fetch_device_libs() {
  $sudo mkdir -p "$devlibs_root"
  devlibs_tmp=$($sudo mktemp -d "$devlibs_root/.tmp.XXXXXX")
  trap '$sudo rm -rf "$devlibs_tmp"' EXIT
  if ! $sudo /usr/lib/apt/apt-helper -o APT::Sandbox::User=root download-file "$devlibs_url" "$devlibs_tmp/pkg.deb" "SHA256:$devlibs_sha256" >/dev/null; then
    say "could not download $devlibs_url (sha256 $devlibs_sha256): gfx942, gfx11 and gfx12 need it; the rest is installed"
    exit 4
  fi
  echo "$devlibs_sha256  $devlibs_tmp/pkg.deb" | sha256sum -c --quiet -
  $sudo dpkg -x "$devlibs_tmp/pkg.deb" "$devlibs_tmp/root"
  $sudo mkdir -p "$devlibs_tmp/dir/amdgcn"
  $sudo mv "$devlibs_tmp/root/usr/lib/llvm-17/lib/clang/17/amdgcn/bitcode" "$devlibs_tmp/dir/amdgcn/bitcode"
  $sudo cp "$devlibs_tmp/root/usr/share/doc/rocm-device-libs-17/copyright" "$devlibs_tmp/dir/copyright"
  printf 'package %s\nurl %s\nsha256 %s\n' "$devlibs_pkg" "$devlibs_url" "$devlibs_sha256" | $sudo tee "$devlibs_tmp/dir/SOURCE" >/dev/null
  $sudo rm -rf "$devlibs_dir"
  $sudo mv -T "$devlibs_tmp/dir" "$devlibs_dir"
  say "device libraries for the new targets: $devlibs_dir/amdgcn/bitcode (ROCm 6.0, $devlibs_pkg)"
}

if [ ${#need[@]} -eq 0 ] && [ -z "$fetch_devlibs" ]; then
  say "already installed: ROCm toolchain (hipcc $(dpkg-query -W -f='${Version}' hipcc 2>/dev/null || echo present))$newer, nginx, redis-server, slurm-wlm, munge"
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
if [ ${#need[@]} -gt 0 ]; then
  say "installing: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq "${need[@]}" >/dev/null
  say "done: ${need[*]}"
fi
[ -z "$fetch_devlibs" ] || fetch_device_libs
