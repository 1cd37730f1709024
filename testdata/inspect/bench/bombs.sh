#!/bin/sh
# Peak memory and time of `rocmk inspect` on the bombs of testdata/inspect/bombs
# (docs/inspect.md, "Bombs"). Usage: bombs.sh ROCMK [DIR]
# Needs GNU time (/usr/bin/time). Extraction goes to a temporary directory.
set -u
rocmk=$1
dir=${2:-$(dirname "$0")/../bombs}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() {
	label=$1
	shift
	/usr/bin/time -f "%M %e" -o "$out/time" "$rocmk" inspect "$@" >/dev/null 2>"$out/err"
	code=$?
	last=$(tail -n 1 "$out/time") # GNU time may put "Command exited with..." first
	kb=${last% *}
	secs=${last#* }
	written=$(du -sk "$out/x" 2>/dev/null | cut -f1)
	printf '%-34s exit %s  peak RSS %6d MB  %6.2f s  extracted %s KB\n' "$label" "$code" $((kb / 1024)) "$secs" "${written:-0}"
	rm -rf "$out/x"
}
z=$dir/zeros-1g.ccob
run "zeros-1g.ccob" "$z"
run "zeros-1g.ccob x8" "$z" "$z" "$z" "$z" "$z" "$z" "$z" "$z"
run "host-6x1g.o" "$dir/host-6x1g.o"
run "bundle-1g.ccob" "$dir/bundle-1g.ccob"
b=$dir/bundle-1g.ccob
run "bundle-1g.ccob x8" "$b" "$b" "$b" "$b" "$b" "$b" "$b" "$b"
run "overclaim.ccob" "$dir/overclaim.ccob"
run "extract-overlap.hipfb --extract" --extract "$out/x" "$dir/extract-overlap.hipfb"
run "extract-dupes.hipfb --extract" --extract "$out/x" "$dir/extract-dupes.hipfb"
