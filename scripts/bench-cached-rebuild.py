#!/usr/bin/env python3
"""bench-cached-rebuild.py: fully cached rebuilds of the bundled kernels,
`rocmk build -q --arch gfx90a,gfx1030` (26 jobs, all hits), for one or more
rocmk binaries, runs interleaved so load from other work hits them alike.
Prints the median and minimum of the process's wall time and of its
user+sys CPU time.

    scripts/bench-cached-rebuild.py RUNS BIN [BIN...]

Each binary gets its own cache and output directory (a fresh temporary
directory; the first build, cold, is not timed). Compare binaries built from
two commits: go build -o /tmp/rocmk-old . (at the old commit), then at the new.
"""
import os, resource, statistics, subprocess, sys, tempfile, time

def main():
    runs, bins = int(sys.argv[1]), sys.argv[2:]
    bins = [os.path.abspath(b) for b in bins]
    dirs = {b: tempfile.mkdtemp(prefix="rocmk-bench-") for b in bins}
    res = {b: ([], []) for b in bins}

    def one(b):
        env = dict(os.environ, ROCMK_CACHE_DIR=os.path.join(dirs[b], "cache"))
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        p = subprocess.run([b, "build", "-q", "--arch", "gfx90a,gfx1030", "-o", "out"],
                           cwd=dirs[b], env=env, capture_output=True, text=True)
        t1 = time.perf_counter()
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode != 0:
            sys.exit(f"{b}: exit {p.returncode}: {p.stderr}")
        return (t1 - t0) * 1e3, (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1e3

    for b in bins:
        one(b)  # cold build fills the cache
    for _ in range(runs):
        for b in bins:
            w, c = one(b)
            res[b][0].append(w)
            res[b][1].append(c)
    for b in bins:
        w, c = res[b]
        print(f"{b}: n={runs} wall median {statistics.median(w):.1f} ms (min {min(w):.1f}), "
              f"cpu median {statistics.median(c):.1f} ms (min {min(c):.1f})")

if __name__ == "__main__":
    main()
