package commands

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// Placeholder: replaced by the real command.
func hipifyCommand() *cli.Command {
	return &cli.Command{
		Name:   "hipify",
		Usage:  "(not implemented yet)",
		Action: func(*cli.Context) error { return errors.New("hipify: not implemented yet") },
	}
}
