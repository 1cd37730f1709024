// Command rocmk ports, builds, inspects and verifies HIP kernels for AMD GPUs.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/rocmk/rocmk/commands"
	"github.com/rocmk/rocmk/compile"
)

func main() {
	// The worker mode `rocmk build --executor slurm` runs on cluster nodes
	// (hidden: not a command users type).
	if len(os.Args) == 3 && os.Args[1] == compile.WorkerCommand {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := compile.RunWorker(ctx, os.Args[2], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
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
