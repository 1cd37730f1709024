package commands

import (
	"github.com/urfave/cli/v2"

	"github.com/rocmk/rocmk/commands/portrun"
	"github.com/rocmk/rocmk/compile/toolchain"
)

// runPortProgram is `rocmk port --run` (commands/portrun, verify/program).
func runPortProgram(c *cli.Context) error {
	env := envOf(c)
	fo := toolchain.FindOptions{Getenv: env.Getenv, LookPath: env.LookPath, Root: env.Root, Run: env.Runner}
	return portrun.Run(c, fo, newUI(env, globals(c)), func() string {
		rt, err := openRuntime(env, "auto", 0) // the GPU after the runs
		if err != nil {
			return err.Error()
		}
		rt.Close()
		return ""
	})
}
