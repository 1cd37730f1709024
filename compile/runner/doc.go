// Package runner is the one way rocmk runs a program: Runner (the
// interface every compile, probe, discovery step, nvcc run and doctor's
// ldconfig goes through), Cmd and Output (a program and what it left),
// ExecRunner (the only code that starts processes, each in its own process
// group so a cancel kills its children), and Shell (-x and -n: print each
// command, and run it or not). It imports nothing of rocmk, so any package
// can run programs without importing compile. TestOneExecPath keeps
// os/exec's process starting in runner.go alone.
package runner
