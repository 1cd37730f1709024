package commands

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// Placeholder: replaced by the real command.
func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:   "verify",
		Usage:  "(not implemented yet)",
		Action: func(*cli.Context) error { return errors.New("verify: not implemented yet") },
	}
}
