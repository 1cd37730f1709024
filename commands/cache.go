package commands

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// Placeholder: replaced by the real command.
func cacheCommand() *cli.Command {
	return &cli.Command{
		Name:   "cache",
		Usage:  "(not implemented yet)",
		Action: func(*cli.Context) error { return errors.New("cache: not implemented yet") },
	}
}
