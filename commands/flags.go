package commands

import (
	"math"
	"runtime"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
)

// globalOptions are the flags every command accepts, before or after the
// command name.
type globalOptions struct {
	JSON     bool
	Verbose  int
	Quiet    bool
	CacheDir string // --cache-dir ("": not given; cache.ResolveDir says which cache)
	Jobs     int
	// --remote-cache and --remote-cache-mode (the environment and
	// rocmk.toml are read by remote.Resolve), and --remote-upload.
	RemoteCache, RemoteCacheMode string
	RemoteUpload                 bool
}

// runState is per-App state the flag library needs an address for.
type runState struct {
	env      Env
	notFound string // set when the first argument names no command
}

func globalFlags(st *runState) []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "json", Usage: "print one JSON document on stdout and nothing else"},
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "more detail on stderr (repeat for more: -v -v)"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only results and errors"},
		&cli.StringFlag{Name: "cache-dir", Usage: "build cache directory (env ROCMK_CACHE_DIR; default: user cache dir/rocmk)"},
		&cli.StringFlag{Name: "remote-cache", Usage: "shared cache `URL`: http(s)://host/path or redis(s)://host:port, off (env ROCMK_REMOTE_CACHE)"},
		&cli.StringFlag{Name: "remote-cache-mode", Usage: "`MODE` of the remote cache: read-only (default), read-write, write-only (env ROCMK_REMOTE_CACHE_MODE)"},
		&cli.BoolFlag{Name: "remote-upload", Usage: "upload to the remote cache too (--remote-cache-mode read-write: how CI populates it)"},
		&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "parallel jobs", Value: runtime.NumCPU(), DefaultText: "number of CPUs", Action: intAtLeast("jobs", 1)},
	}
}

func stateOf(c *cli.Context) *runState {
	return c.App.Metadata["state"].(*runState)
}

// envOf returns the Env the App was built with.
func envOf(c *cli.Context) Env { return stateOf(c).env }

// globals reads the global flags, whichever level of the command line set them.
func globals(c *cli.Context) globalOptions {
	g := globalOptions{Jobs: runtime.NumCPU()}
	for _, ctx := range c.Lineage() {
		// Each level counts its own -v flags (urfave/cli's shared Count
		// pointer is decremented once per flag set it is applied to).
		if ctx.IsSet("verbose") {
			g.Verbose += max(ctx.Count("verbose"), 1)
		}
		if ctx.IsSet("json") && ctx.Bool("json") {
			g.JSON = true
		}
		if ctx.IsSet("quiet") && ctx.Bool("quiet") {
			g.Quiet = true
		}
		if ctx.IsSet("cache-dir") && g.CacheDir == "" {
			g.CacheDir = ctx.String("cache-dir")
		}
		if ctx.IsSet("remote-cache") && g.RemoteCache == "" {
			g.RemoteCache = ctx.String("remote-cache")
		}
		if ctx.IsSet("remote-cache-mode") && g.RemoteCacheMode == "" {
			g.RemoteCacheMode = ctx.String("remote-cache-mode")
		}
		if ctx.IsSet("remote-upload") && ctx.Bool("remote-upload") {
			g.RemoteUpload = true
		}
		if ctx.IsSet("jobs") && ctx.Int("jobs") > 0 {
			g.Jobs = ctx.Int("jobs")
		}
	}
	if g.JSON {
		g.Verbose = 0
	}
	return g
}

// intAtLeast is a flag action that refuses values below least (exit 2).
func intAtLeast(name string, least int) func(*cli.Context, int) error {
	return func(_ *cli.Context, v int) error {
		if v < least {
			return usagef("--%s %d: want %d or more", name, v, least)
		}
		return nil
	}
}

// floatAtLeast0 is a flag action that refuses negative numbers and NaN (exit 2).
func floatAtLeast0(name string) func(*cli.Context, float64) error {
	return func(_ *cli.Context, v float64) error {
		if !(v >= 0) || math.IsInf(v, 1) {
			return usagef("--%s %v: want a number of 0 or more", name, v)
		}
		return nil
	}
}

// positiveDuration is a flag action that refuses durations of 0 or less (exit 2).
func positiveDuration(name string) func(*cli.Context, time.Duration) error {
	return func(_ *cli.Context, d time.Duration) error {
		if d <= 0 {
			return usagef("--%s %v: want a duration above 0 (e.g. 30s)", name, d)
		}
		return nil
	}
}

// splitCommas splits repeatable comma-separated flag values (kernel patterns,
// dtypes), trimming spaces and dropping empty items.
func splitCommas(in []string) []string {
	var out []string
	for _, s := range in {
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// flagsFirst moves the flags written after a command's arguments in front
// of them: "rocmk build k.hip -o out" becomes "rocmk build -o out -- k.hip",
// because urfave/cli, like Go's flag package, stops at the first argument.
// Whether a flag takes the next argument as its value comes from the
// command's own flag list, so "-o out" and "-o=out" both move whole, and
// hipify-perl's single-dash names (-roc, -o=FILE) are flags like any other.
// "--" still ends the flags: what follows it stays an argument. Unknown
// flags move too, so that the parser reports them (exit 2).
func flagsFirst(app *cli.App, args []string) []string {
	if len(args) < 2 || args[len(args)-1] == "--generate-bash-completion" {
		return args // shell completion passes partial command lines: leave them be
	}
	out := []string{args[0]}
	flags, cmds := app.Flags, app.Commands
	i := 1
	// Down the command path ("cache ls"): flags before a command name
	// belong to its parent and stay where they are.
	for {
		for i < len(args) && args[i] != "--" && isFlagArg(args[i]) {
			out = append(out, args[i])
			if takesValue(flags, args[i]) && i+1 < len(args) {
				out = append(out, args[i+1])
				i++
			}
			i++
		}
		if i == len(args) || args[i] == "--" {
			return append(out, args[i:]...)
		}
		cmd := findCommand(cmds, args[i])
		if cmd == nil {
			return append(out, args[i:]...) // urfave/cli says what is wrong
		}
		out = append(out, args[i])
		i++
		flags, cmds = cmd.Flags, cmd.Subcommands
		if len(cmds) == 0 {
			break
		}
	}
	var positional []string
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			positional = append(positional, args[i+1:]...)
			i = len(args)
		case !isFlagArg(a):
			positional = append(positional, a)
		default:
			out = append(out, a)
			if takesValue(flags, a) && i+1 < len(args) {
				out = append(out, args[i+1])
				i++
			}
		}
	}
	if len(positional) > 0 {
		out = append(append(out, "--"), positional...)
	}
	return out
}

// isFlagArg reports whether a looks like a flag ("-" alone is an argument: stdin).
func isFlagArg(a string) bool { return len(a) > 1 && a[0] == '-' }

// takesValue reports whether the flag a (-name, --name; not -name=value)
// is one of flags and takes the next argument as its value.
func takesValue(flags []cli.Flag, a string) bool {
	name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
	if strings.Contains(name, "=") {
		return false
	}
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				v, ok := f.(interface{ TakesValue() bool })
				return ok && v.TakesValue()
			}
		}
	}
	return false
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}
