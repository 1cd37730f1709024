package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/rocmk/rocmk/cache/safefile"
	"github.com/rocmk/rocmk/commands/term"
	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/rocmk/rocmk/hipify"
	"github.com/rocmk/rocmk/verify/outcmp"
	"github.com/rocmk/rocmk/verify/program"
)

// portRunFlags are port --run's flags (with port's -I, --keep, --hip-include).
func portRunFlags() []cli.Flag {
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
		&cli.DurationFlag{Name: "timeout", Value: 60 * time.Second, Usage: "--run: each run's time limit (the whole process group is killed)", Action: positiveDuration("timeout")},
	}
}

// runPortProgram is `rocmk port --run`.
func runPortProgram(c *cli.Context) error {
	env, g := envOf(c), globals(c)
	if c.NArg() < 1 {
		return usagef("port --run takes a program (a .cu file or a directory), then -- and its arguments")
	}
	if c.String("spec") != "" {
		return usagef("--run builds a whole program; --spec checks kernels: give one of them")
	}
	rules, err := portRunRules(c)
	if err != nil {
		return err
	}
	o := program.Options{Program: c.Args().First(), Args: c.Args().Slice()[1:], Includes: c.StringSlice("I"), Rules: rules,
		Timeout: c.Duration("timeout"), Record: c.String("record"), Against: c.String("against"), GotOutput: c.String("got-output")}
	if o.Record != "" && o.Against != "" {
		return usagef("--record and --against are exclusive")
	}
	if o.GotOutput != "" && o.Against == "" {
		return usagef("--got-output compares a stored output with a recording: give --against FILE too")
	}
	ui := newUI(env, g)
	o.Info = ui.Infof
	fo := toolchain.FindOptions{Getenv: env.Getenv, LookPath: env.LookPath, Root: env.Root, Run: env.Runner}
	o.Tools = program.Discover(fo, c.String("hip-include"))
	if v, ok := hipify.ParseVersion(env.Getenv("ROCMK_HIP_VERSION")); ok {
		o.HIPVersion = v
	}
	o.Probe = func(ctx context.Context) string {
		rt, err := openRuntime(env, "auto", 0)
		if err != nil {
			return err.Error()
		}
		rt.Close()
		return ""
	}
	work, done, err := portRunWork(c.String("keep"))
	if err != nil {
		return err
	}
	defer done()
	o.Work = work
	rep, err := program.Run(c.Context, o)
	if err != nil {
		return err
	}
	if err := ui.Result("port-run", rep, func(w io.Writer, _ *term.Styles) error { return rep.WriteText(w) }); err != nil {
		return err
	}
	return portRunExit(rep.Err())
}

// portRunRules are the program's rocmk.toml [port] rules (when it has
// one), then the flags.
func portRunRules(c *cli.Context) (outcmp.Rules, error) {
	rules := outcmp.DefaultRules()
	dir := c.Args().First()
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		dir = filepath.Dir(dir)
	}
	if p := filepath.Join(dir, "rocmk.toml"); fileExists(p) {
		r, err := outcmp.LoadRules(p)
		if err != nil {
			return r, usageError(err)
		}
		rules = r
	}
	if v := c.Float64("rtol"); v >= 0 {
		rules.RelTol = v
	}
	if v := c.Float64("atol"); v >= 0 {
		rules.AbsTol = v
	}
	rules.Ignore = append(rules.Ignore, c.StringSlice("ignore")...)
	rules.Files = append(rules.Files, c.StringSlice("file")...)
	if e := c.String("expect"); e != "" {
		rules.Expect = e
	}
	return rules, nil
}

// portRunWork is --keep's directory, or a temporary one removed at the end.
func portRunWork(keep string) (string, func(), error) {
	if keep != "" {
		return keep, func() {}, os.MkdirAll(keep, 0o755)
	}
	dir, remove, err := safefile.MkdirTemp("rocmk-portrun-")
	return dir, remove, err
}

// portRunExit gives the report's error its exit status (the report has
// said what happened: no second message).
func portRunExit(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, program.ErrDiffer):
		return exitError{code: ExitMismatch, err: err}
	case errors.Is(err, program.ErrBuildFailed):
		return exitError{code: ExitBuildFailed, err: err}
	case errors.Is(err, program.ErrNoGPU):
		return exitError{code: ExitEnvMissing, err: fmt.Errorf("%w: %w", err, errEnvMissing)}
	}
	return exitError{code: ExitRunFailed, err: err}
}
