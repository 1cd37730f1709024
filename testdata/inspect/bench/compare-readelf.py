#!/usr/bin/env python3
"""Whole-corpus timing: one `rocmk inspect --json` process vs llvm-readelf-15.

Usage (from the repository root, after `go build -o /tmp/rocmk .`):
    python3 testdata/inspect/bench/compare-readelf.py /tmp/rocmk [ROUNDS]

llvm-readelf stops at the first file it cannot recognise (a bundle), so its
single-process run gets the 54 ELF files of the corpus it can open (47 plain code
objects, 6 host ELFs, bad-msgpack.co); rocmk gets all 65 files (96 code objects,
bundles and compressed bundles included). Means over interleaved runs; CPU is
user+sys of the child processes.
"""
import glob, os, resource, subprocess, sys, time

ROCMK = sys.argv[1] if len(sys.argv) > 1 else "/tmp/rocmk"
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 9
RE = "/usr/lib/llvm-15/bin/llvm-readelf"
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus"))
files = sorted(f for d in ["co", "variants", "newllvm", "bundle", "host", "broken"] for f in glob.glob(d + "/*"))
elf = [f for f in files if open(f, "rb").read(4) == b"\x7fELF" and f != "broken/truncated.co"]
plain = [f for f in elf if f.endswith(".co") and not f.startswith("broken/")]
cases = {
    f"rocmk inspect --json, all {len(files)} files, 1 process": [[ROCMK, "inspect", "--json"] + files],
    f"llvm-readelf-15 --notes, the {len(elf)} ELF files it can open, 1 process": [[RE, "--notes"] + elf],
    f"rocmk inspect --json, the {len(plain)} plain code objects": [[ROCMK, "inspect", "--json"] + plain],
    f"llvm-readelf-15 --notes, the {len(plain)} plain code objects": [[RE, "--notes"] + plain],
    "rocmk --version (process start-up only)": [[ROCMK, "--version"]],
    f"llvm-readelf-15 --notes, one process per file ({len(files)})": [[RE, "--notes", f] for f in files],
}
tot = {k: [0.0, 0.0, 0] for k in cases}
for r in range(ROUNDS):
    for k, cmds in cases.items():
        per_file = len(cmds) > 1
        if per_file and r % 3:
            continue
        for _ in range(1 if per_file else 5):
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            for c in cmds:
                subprocess.run(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            t = time.perf_counter() - t0
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            tot[k][0] += t
            tot[k][1] += r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
            tot[k][2] += 1
for k, (w, c, n) in tot.items():
    print(f"{k}: {n} runs, wall {w / n * 1000:.1f} ms, CPU {c / n * 1000:.1f} ms")
