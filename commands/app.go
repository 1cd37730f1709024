// Package commands is rocmk's command line: flag parsing, rendering and exit
// codes. Each command lives in its own file as a *cli.Command whose Action
// reads flags into an options struct and calls a plain runX function.
package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/rocmk/rocmk/commands/term"

	"github.com/urfave/cli/v2"

	"github.com/rocmk/rocmk/cache/safefile"
)

// Version is set at link time (-ldflags "-X github.com/rocmk/rocmk/commands.Version=...");
// otherwise it comes from the module's build info.
var Version = ""

func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func init() {
	// -v is --verbose in rocmk, so --version has no short alias.
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version"}
}

// commandList is every rocmk command, in help order.
func commandList() []*cli.Command {
	return []*cli.Command{
		hipifyCommand(),
		buildCommand(),
		cacheCommand(),
		inspectCommand(),
		verifyCommand(),
		portCommand(),
		specCommand(),
		targetsCommand(),
		doctorCommand(),
		completionCommand(),
	}
}

// New builds the command tree bound to env. It never exits the process.
func New(env Env) *cli.App {
	env = env.withDefaults()
	st := &runState{env: env}
	app := &cli.App{
		Name:                  "rocmk",
		Usage:                 "port, build, inspect and verify GPU kernels for AMD ROCm/HIP",
		Version:               version(),
		Reader:                env.Stdin,
		Writer:                env.Stdout,
		ErrWriter:             env.Stderr,
		Flags:                 globalFlags(st),
		EnableBashCompletion:  true,
		HideHelpCommand:       false,
		Metadata:              map[string]any{"state": st},
		ExitErrHandler:        func(*cli.Context, error) {}, // Main maps errors to exit codes
		CustomAppHelpTemplate: cli.AppHelpTemplate + "\n" + exitCodeTable + "\n",
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageError(err)
		},
		CommandNotFound: func(c *cli.Context, name string) {
			st.notFound = name
		},
	}
	app.Commands = commandList()
	for _, cmd := range app.Commands {
		prepare(cmd, st)
	}
	return app
}

// prepare adds the global flags, the usage-error hook and the exit-code
// table to a command and its subcommands.
func prepare(cmd *cli.Command, st *runState) {
	cmd.Flags = append(cmd.Flags, globalFlags(st)...)
	if cmd.OnUsageError == nil {
		cmd.OnUsageError = func(_ *cli.Context, err error, _ bool) error { return usageError(err) }
	}
	if cmd.CustomHelpTemplate == "" && len(cmd.Subcommands) == 0 {
		cmd.CustomHelpTemplate = cli.CommandHelpTemplate + "\n" + exitCodeTable + "\n"
	}
	for _, sub := range cmd.Subcommands {
		prepare(sub, st)
	}
}

// interruptGrace is how long a command has to return after SIGINT or
// SIGTERM cancelled its context, before Main gives up on it.
const interruptGrace = 500 * time.Millisecond

// Main runs rocmk with args (args[0] is the program name) and returns the
// exit code. SIGINT and SIGTERM cancel the command's context: compilers are
// killed (runner.ExecRunner kills their process groups) and the command
// returns. One still running interruptGrace later is blocked where no
// context reaches (a read of a pipe, a system call): Main then removes the
// temporary files of the writes in progress and returns 130 without it, as
// it does at once on a second signal. Outputs are whole or untouched either
// way: every write goes to a temporary file first.
func Main(args []string, env Env) int {
	env = env.withDefaults()
	ctx, cancel := context.WithCancel(env.Context)
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	env.Context = ctx
	done := make(chan int, 1)
	go func() { done <- run(args, env) }()
	select {
	case code := <-done:
		return code
	case <-sigs:
	}
	cancel()
	select {
	case code := <-done:
		if code == ExitInterrupted {
			return code // run reported it
		}
	case <-sigs:
	case <-time.After(interruptGrace):
	}
	safefile.RemoveTemps()
	reportError(env, errors.New("interrupted"), ExitInterrupted, wantsJSON(args))
	return ExitInterrupted
}

// run is Main without signal handling, for in-process tests.
func run(args []string, env Env) int {
	env = env.withDefaults()
	app := New(env)
	st := app.Metadata["state"].(*runState)
	err := app.RunContext(env.Context, flagsFirst(app, args))
	if err == nil && st.notFound != "" {
		err = usagef("unknown command %q (see 'rocmk help')", st.notFound)
	}
	if err == nil {
		return ExitOK
	}
	code := exitCode(err)
	if errors.Is(err, context.Canceled) {
		err = errors.New("interrupted")
	}
	var silent exitError
	if errors.As(err, &silent) && silent.err == errSilent {
		return code
	}
	reportError(env, err, code, wantsJSON(args))
	return code
}

// errSilent is wrapped in an exitError when the result already told the user.
var errSilent = errors.New("")

// reportError prints the error on stderr: styled text, or a JSON line in --json mode.
func reportError(env Env, err error, code int, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(map[string]any{"message_type": "exit_error", "code": code, "message": err.Error()})
		fmt.Fprintln(env.Stderr, string(b))
		return
	}
	s := term.NewStyles(term.NewRenderer(env.Stderr, envLookup{env}))
	fmt.Fprintln(env.Stderr, s.Err.Render("rocmk:")+" "+term.Printable(err.Error(), "\n\t"))
	if errors.As(err, new(*safefile.UsageError)) {
		fmt.Fprintln(env.Stderr, s.Dim.Render("run 'rocmk help' for usage"))
	}
}

// wantsJSON reports whether --json appears among the arguments; used only to
// format errors that happen before or during flag parsing.
func wantsJSON(args []string) bool {
	for _, a := range args[1:] {
		if a == "--" {
			break
		}
		if a == "--json" || a == "-json" || a == "--json=true" {
			return true
		}
	}
	return false
}
