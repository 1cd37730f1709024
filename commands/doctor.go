package commands

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// Placeholder: replaced by the real command.
func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:   "doctor",
		Usage:  "(not implemented yet)",
		Action: func(*cli.Context) error { return errors.New("doctor: not implemented yet") },
	}
}
