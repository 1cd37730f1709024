package commands

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// Placeholder: replaced by the real command.
func buildCommand() *cli.Command {
	return &cli.Command{
		Name:   "build",
		Usage:  "(not implemented yet)",
		Action: func(*cli.Context) error { return errors.New("build: not implemented yet") },
	}
}
