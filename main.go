// Command rocmk ports, builds, inspects and verifies HIP kernels for AMD GPUs.
package main

import (
	"os"

	"github.com/rocmk/rocmk/commands"
)

func main() {
	os.Exit(commands.Main(os.Args, commands.DefaultEnv()))
}
