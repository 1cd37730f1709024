package commands

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// Placeholder: replaced by the real command.
func portCommand() *cli.Command {
	return &cli.Command{
		Name:   "port",
		Usage:  "(not implemented yet)",
		Action: func(*cli.Context) error { return errors.New("port: not implemented yet") },
	}
}
