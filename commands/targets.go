package commands

import (
	"errors"
	"io"
	"strings"

	"github.com/rocmk/rocmk/commands/term"

	"github.com/urfave/cli/v2"

	"github.com/rocmk/rocmk/compile"
	"github.com/rocmk/rocmk/inspect"
)

func targetsCommand() *cli.Command {
	return &cli.Command{
		Name:      "targets",
		Usage:     "list AMD GPU targets: family, wave size, LDS, VGPRs, features, and which the toolchain can build",
		ArgsUsage: "[processor or target ID...]",
		Description: `Prints rocmk's table of AMDGPU processors (gfx600 ... gfx1310) and generic
targets, with the occupancy parameters LLVM uses, the xnack/sramecc
target-ID features each supports, example products and the first LLVM/ROCm
release. The BUILD column says whether the discovered toolchain has device
libraries for it (see 'rocmk doctor').

Arguments, if any, select processors by name or target ID (gfx90a:xnack+).

Examples:
   rocmk targets
   rocmk targets --buildable --family rdna
   rocmk targets gfx90a gfx1100 --json`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "family", Usage: "only these families (`FAMILY`: gcn, cdna, rdna, generic, or exact: CDNA3, RDNA2...)"},
			&cli.BoolFlag{Name: "buildable", Usage: "only targets the discovered toolchain can compile for"},
			&cli.StringFlag{Name: "rocm-path", Usage: "ROCm install to use (default: ROCM_PATH, /opt/rocm, Debian /usr)"},
		},
		Action: func(c *cli.Context) error {
			env := envOf(c)
			opts := targetsOptions{
				Names:     c.Args().Slice(),
				Families:  c.StringSlice("family"),
				Buildable: c.Bool("buildable"),
				ROCmPath:  c.String("rocm-path"),
			}
			return runTargets(opts, env, newUI(env, globals(c)))
		},
	}
}

type targetsOptions struct {
	Names     []string
	Families  []string
	Buildable bool
	ROCmPath  string
}

type targetsDoc struct {
	Toolchain *targetsToolchain      `json:"toolchain"`
	Targets   []inspect.ProcessorDoc `json:"targets"`
}

type targetsToolchain struct {
	Clang        string `json:"clang"`
	ClangVersion string `json:"clang_version"`
	DeviceLibDir string `json:"device_lib_dir"`
	Source       string `json:"source"`
}

func runTargets(o targetsOptions, env Env, ui *term.UI) error {
	procs, err := inspect.FindProcessors(compile.SplitList(strings.Join(o.Names, ",")), splitCommas(o.Families))
	if err != nil {
		return usageError{err}
	}
	s, err := compile.OpenSession(compile.SessionOptions{ROCmPath: o.ROCmPath, Getenv: env.Getenv, Root: env.Root,
		LookPath: env.LookPath, Runner: env.Runner, NoCache: true})
	if err != nil {
		return err
	}
	inst, err := s.Installation()
	switch {
	case err != nil && (o.Buildable || !errors.Is(err, compile.ErrToolchainNotFound)):
		return err
	case err != nil:
		ui.Warnf("no ROCm toolchain found, so BUILD shows ? (rocmk doctor says why)")
	}
	doc := targetsDoc{Targets: []inspect.ProcessorDoc{}}
	if inst != nil {
		doc.Toolchain = &targetsToolchain{Clang: inst.Clang, ClangVersion: inst.ClangVersion, DeviceLibDir: inst.DeviceLibDir, Source: inst.Source}
	}
	buildable := 0
	for _, p := range procs {
		d := p.Doc()
		if inst != nil {
			b := inst.CanCompile(inspect.Target{Proc: p.Name})
			d.Buildable = &b
			if b {
				buildable++
			}
		}
		if !o.Buildable || d.Buildable != nil && *d.Buildable {
			doc.Targets = append(doc.Targets, d)
		}
	}
	if len(doc.Targets) == 0 {
		return usagef("no target matches the filters")
	}
	if err := ui.Result("targets", doc, func(w io.Writer, s *term.Styles) error { return term.Targets(w, s, doc.Targets) }); err != nil {
		return err
	}
	if inst != nil {
		ui.Infof("%d of %d targets buildable with clang %s (%s)", buildable, len(doc.Targets), inst.ClangVersion, inst.DeviceLibDir)
	}
	return nil
}
