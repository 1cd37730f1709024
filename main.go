// Command rocmk ports, builds, inspects and verifies HIP kernels for AMD GPUs.
package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/rocmk/rocmk/commands"
)

func main() {
	os.Exit(profiled(func() int { return commands.Main(os.Args, commands.DefaultEnv()) }))
}

// profiled runs f under a CPU profile written to $ROCMK_CPUPROFILE, when
// set (for `go tool pprof`: where does a run's CPU time go?).
func profiled(f func() int) int {
	path := os.Getenv("ROCMK_CPUPROFILE")
	if path == "" {
		return f()
	}
	out, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(out)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "rocmk: ROCMK_CPUPROFILE: %v\n", err)
		return f()
	}
	code := f()
	pprof.StopCPUProfile()
	if err := out.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "rocmk: ROCMK_CPUPROFILE: %v\n", err)
	}
	return code
}
