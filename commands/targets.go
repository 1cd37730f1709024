package commands

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// Placeholder: replaced by the real command.
func targetsCommand() *cli.Command {
	return &cli.Command{
		Name:   "targets",
		Usage:  "(not implemented yet)",
		Action: func(*cli.Context) error { return errors.New("targets: not implemented yet") },
	}
}
