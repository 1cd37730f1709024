// Package portrun is the flags of `rocmk port --run` and their reading
// into program.Options, beside commands (as commands/term is its output),
// so that commands/ stays a thin wiring of flags to packages.
package portrun

import (
	"context"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/rocmk/rocmk/cache/safefile"
	"github.com/rocmk/rocmk/commands/term"
	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/rocmk/rocmk/verify/program"
)

// Flags are port --run's own flags (it shares port's -I, --keep and
// --hip-include).
func Flags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "run", Usage: "build and run the whole program and its translation, and compare what they print"},
		&cli.StringFlag{Name: "record", Usage: "--run: run the original only and save its run to FILE (on NVIDIA)"},
		&cli.StringFlag{Name: "against", Usage: "--run: compare the translation with a recording instead of running the original"},
		&cli.StringFlag{Name: "got-output", Usage: "--run --against: compare this stored output instead of running the translation"},
		&cli.Float64Flag{Name: "rtol", Value: -1, Usage: "--run: relative tolerance of numbers (default 1e-5 or rocmk.toml's)"},
		&cli.Float64Flag{Name: "atol", Value: -1, Usage: "--run: absolute tolerance of numbers (default 1e-8 or rocmk.toml's)"},
		&cli.StringSliceFlag{Name: "ignore", Usage: "--run: a regular expression of lines to mask (repeatable)"},
		&cli.StringFlag{Name: "expect", Usage: "--run: a regular expression the output must match"},
		&cli.StringSliceFlag{Name: "file", Usage: "--run: a file the program writes, compared too (repeatable)"},
		&cli.DurationFlag{Name: "timeout", Value: 60 * time.Second, Usage: "--run: each run's time limit (the whole process group is killed)",
			Action: func(_ *cli.Context, d time.Duration) error {
				if d <= 0 {
					return safefile.Usagef("--timeout must be positive (got %s)", d)
				}
				return nil
			}},
	}
}

// Options reads the flags: the program, its arguments after --, the
// rules (rocmk.toml's [port], then the flags), the toolchains found with
// fo, and the work directory (done removes a temporary one). Bad flags are
// usage errors.
func Options(c *cli.Context, fo toolchain.FindOptions) (o program.Options, done func(), err error) {
	prog := c.Args().First()
	o = program.Options{Program: prog, Args: c.Args().Tail(), Includes: c.StringSlice("I"), Timeout: c.Duration("timeout"),
		Record: c.String("record"), Against: c.String("against"), GotOutput: c.String("got-output")}
	switch {
	case prog == "" || c.String("spec") != "":
		return o, nil, safefile.Usagef("port --run takes a program (a .cu file or a directory), then -- and its arguments; no --spec")
	case o.Record != "" && o.Against != "" || o.GotOutput != "" && o.Against == "":
		return o, nil, safefile.Usagef("--record and --against are exclusive; --got-output compares with a recording (--against)")
	}
	if o.Rules, err = program.LoadRules(prog, program.RuleFlags{RelTol: c.Float64("rtol"), AbsTol: c.Float64("atol"),
		Ignore: c.StringSlice("ignore"), Files: c.StringSlice("file"), Expect: c.String("expect")}); err != nil {
		return o, nil, &safefile.UsageError{Err: err}
	}
	o.Tools = program.Discover(fo, c.String("hip-include"))
	o.Work, done, err = program.WorkDir(c.String("keep"))
	return o, done, err
}

// Run is `rocmk port --run`: program.Run with the flags' options, its
// report through ui. probe says whether the GPU is usable after the runs
// ("" when it is).
func Run(c *cli.Context, fo toolchain.FindOptions, ui *term.UI, probe func() string) error {
	o, done, err := Options(c, fo)
	if err != nil {
		return err
	}
	defer done()
	o.Info = ui.Infof
	o.Probe = func(context.Context) string { return probe() }
	rep, err := program.Run(c.Context, o)
	if err != nil {
		return err
	}
	if err := ui.Result("port-run", rep, func(w io.Writer, _ *term.Styles) error { return rep.WriteText(w) }); err != nil {
		return err
	}
	return rep.Err()
}
