package commands

import (
	"fmt"

	"github.com/rocmk/rocmk/commands/term"

	"github.com/urfave/cli/v2"
)

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script (bash, zsh or fish)",
		ArgsUsage: "bash|zsh|fish",
		Description: `Load it in the current shell, for example:
   source <(rocmk completion bash)
   rocmk completion fish > ~/.config/fish/completions/rocmk.fish`,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("completion needs one shell name: bash, zsh or fish")
			}
			return runCompletion(c.App, c.Args().First(), envOf(c))
		},
	}
}

func runCompletion(app *cli.App, shell string, env Env) error {
	switch shell {
	case "bash":
		_, err := fmt.Fprint(env.Stdout, term.BashCompletion)
		return err
	case "zsh":
		_, err := fmt.Fprint(env.Stdout, term.ZshCompletion)
		return err
	case "fish":
		s, err := app.ToFishCompletion()
		if err != nil {
			return err
		}
		_, err = fmt.Fprint(env.Stdout, s)
		return err
	}
	return usagef("unknown shell %q: want bash, zsh or fish", shell)
}
