package commands

import (
	"runtime"
	"strings"

	"github.com/urfave/cli/v2"
)

// globalOptions are the flags every command accepts, before or after the
// command name.
type globalOptions struct {
	JSON     bool
	Verbose  int
	Quiet    bool
	CacheDir string // --cache-dir, else $ROCMK_CACHE_DIR, else "" (the default dir)
	Jobs     int
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
		&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "parallel jobs", Value: runtime.NumCPU(), DefaultText: "number of CPUs"},
	}
}

func stateOf(c *cli.Context) *runState {
	return c.App.Metadata["state"].(*runState)
}

// envOf returns the Env the App was built with.
func envOf(c *cli.Context) Env { return stateOf(c).env }

// globals reads the global flags, whichever level of the command line set them.
func globals(c *cli.Context) globalOptions {
	st := stateOf(c)
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
		if ctx.IsSet("jobs") && ctx.Int("jobs") > 0 {
			g.Jobs = ctx.Int("jobs")
		}
	}
	if g.CacheDir == "" {
		g.CacheDir = st.env.Getenv("ROCMK_CACHE_DIR")
	}
	if g.JSON {
		g.Verbose = 0
	}
	return g
}

// splitList splits target lists the way the ecosystem's variables write them
// (PYTORCH_ROCM_ARCH, GPU_TARGETS): commas, semicolons or spaces.
func splitList(in []string) []string {
	var out []string
	for _, s := range in {
		out = append(out, strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == ';' })...)
	}
	return out
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
