# Sourced by the fake clang++ scripts of this machine, with ROOT (the fake
# machine's root), VERSION (clang's first --version line) and LLVM_BIN (the
# directory clang looks for its linker in) set. It answers --version; writes
# bitcode for -emit-llvm (rocmk's generated ISA libraries); and for a device
# compile (--offload-arch, --hip-device-lib-path, -o) fails as clang does
# when the device library or the linker is missing, else copies the canned
# code object of the target (objects/<gfx>.hsaco: probe.hip built by the
# real clang-15 and clang-19).
if [ "$1" = --version ]; then
  printf '%s\nTarget: x86_64-pc-linux-gnu\n' "$VERSION"
  exit 0
fi
out= arch= libs= ir=
prev=
for a in "$@"; do
  [ "$prev" = -o ] && out=$a
  case "$a" in
    --offload-arch=*) arch=${a#--offload-arch=} ;;
    --hip-device-lib-path=*) libs=${a#--hip-device-lib-path=} ;;
    -emit-llvm) ir=1 ;;
  esac
  prev=$a
done
if [ -n "$ir" ]; then
  printf 'BC\300\336 fake bitcode\n' >"$out"
  exit 0
fi
proc=${arch%%:*}
[ -d "$ROOT$libs" ] && libs=$ROOT$libs
if [ ! -e "$libs/oclc_isa_version_${proc#gfx}.bc" ]; then
  echo "clang: error: cannot find ROCm device library for $proc; provide its path via '--rocm-path' or '--rocm-device-lib-path', or pass '-nogpulib' to build without ROCm device library" >&2
  exit 1
fi
if [ ! -x "$LLVM_BIN/ld.lld" ]; then
  echo 'clang++: error: unable to execute command: Executable "lld" does'"n't exist!" >&2
  echo 'clang++: error: amdgcn-link command failed with exit code 1 (use -v to see invocation)' >&2
  exit 1
fi
cp "$ROOT/usr/share/rocmk-test/objects/$proc.hsaco" "$out"
