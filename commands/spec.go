package commands

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/rocmk/rocmk/commands/term"

	"github.com/urfave/cli/v2"

	"github.com/rocmk/rocmk/verify/spec"
)

func specCommand() *cli.Command {
	return &cli.Command{
		Name:  "spec",
		Usage: "work with kernel specs (what rocmk port and verify --spec check a kernel against)",
		Subcommands: []*cli.Command{{
			Name:      "init",
			Usage:     "draft a kernel spec from the kernels' signatures in a CUDA or HIP source",
			ArgsUsage: "FILE.cu",
			Description: `Writes a [[verify]] table per __global__ function of FILE (or per --kernel):
argument names and dtypes from the signature, const pointers as random
inputs and other pointers as outputs, integer scalars named like sizes (n,
num_heads, head_size...) bound to sizes, struct parameters with the fields
the file defines. The launch geometry, element counts, other values and the
reference are guesses marked TODO. The draft parses; fill in the TODOs, then
run 'rocmk port FILE --spec SPEC'. See docs/port.md.

Examples:
   rocmk spec init rotary.cu > rotary.toml
   rocmk spec init kernels.cu --kernel softmax -o softmax.toml`,
			Flags: []cli.Flag{
				&cli.StringSliceFlag{Name: "kernel", Aliases: []string{"k"}, Usage: "only these kernels (`NAME`; repeatable, comma lists)"},
				&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the draft to `FILE` (never replaces one) instead of stdout"},
			},
			Action: func(c *cli.Context) error {
				args := c.Args().Slice()
				if len(args) != 1 {
					return usagef("spec init takes one source file (got %d arguments)", len(args))
				}
				env := envOf(c)
				o := specInitOptions{File: args[0], Kernels: splitCommas(c.StringSlice("kernel")), Output: c.String("output")}
				return runSpecInit(o, env, newUI(env, globals(c)))
			},
		}},
	}
}

type specInitOptions struct {
	File    string
	Kernels []string
	Output  string
}

type specInitDoc struct {
	File    string   `json:"file"`
	Kernels []string `json:"kernels"`
	Output  string   `json:"output,omitempty"`
	Spec    string   `json:"spec"`
}

func runSpecInit(o specInitOptions, env Env, ui *term.UI) error {
	limit, err := inputLimit(env, maxSourceSize)
	if err != nil {
		return err
	}
	src, err := readInput(o.File, limit)
	if err != nil {
		return err
	}
	draft, err := spec.Draft(filepath.Base(o.File), src, o.Kernels)
	if err != nil {
		return err
	}
	doc := &specInitDoc{File: o.File, Kernels: []string{}, Output: o.Output, Spec: string(draft)}
	for _, k := range spec.Kernels(o.File, src) {
		if len(o.Kernels) == 0 || slices.Contains(o.Kernels, k.Name) {
			doc.Kernels = append(doc.Kernels, k.Name)
		}
	}
	if o.Output != "" {
		if err := writeNew(o.Output, draft); err != nil {
			return err
		}
		ui.Infof("wrote %s: %d kernel spec(s) to fill in (TODO)", o.Output, len(doc.Kernels))
		return ui.Result("spec-init", doc, nil)
	}
	return ui.Result("spec-init", doc, func(w io.Writer, _ *term.Styles) error {
		_, err := w.Write(draft)
		return err
	})
}

// writeNew creates path with data; an existing file is an error, so a draft
// never replaces a spec being edited.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s exists: not replacing it (remove it, or print the draft to stdout)", path)
	}
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}
