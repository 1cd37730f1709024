package commands

import (
	"errors"
	"io"
	"strings"

	"github.com/rocmk/rocmk/commands/term"
	"github.com/rocmk/rocmk/compile/toolchain"

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
release. The BUILD column names the toolchain that builds it (the ROCm
install's clang, or a newer clang with newer device libraries for the
targets the install lacks; 'no' when none does) and LIBS the release of its
device libraries (+isa: with an ISA library rocmk generates). 'rocmk
doctor' says why a toolchain was skipped.

Arguments, if any, select processors by name or target ID (gfx90a:xnack+).

Examples:
   rocmk targets
   rocmk targets --buildable --family rdna
   rocmk targets gfx90a gfx1100 --json`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "family", Usage: "only these families (`FAMILY`: gcn, cdna, rdna, generic, or exact: CDNA3, RDNA2...)"},
			&cli.BoolFlag{Name: "buildable", Usage: "only targets the discovered toolchain can compile for"},
			&cli.StringFlag{Name: "rocm-path", Usage: "ROCm install to use (default: ROCM_PATH, /opt/rocm, Debian /usr)"},
			clangFlag(),
		},
		Action: func(c *cli.Context) error {
			env := envOf(c)
			opts := targetsOptions{
				Names:     c.Args().Slice(),
				Families:  c.StringSlice("family"),
				Buildable: c.Bool("buildable"),
				ROCmPath:  c.String("rocm-path"),
				Clang:     c.String("clang"),
				CacheDir:  globals(c).CacheDir,
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
	Clang     string
	CacheDir  string // where probes are remembered, if it exists
}

type targetsDoc struct {
	Toolchain *targetsToolchain `json:"toolchain"`
	// Toolchains are the candidates in order of preference (see rocmk
	// doctor): each row's toolchain is one of them.
	Toolchains []*toolchain.Candidate `json:"toolchains"`
	Targets    []term.TargetRow       `json:"targets"`
}

type targetsToolchain struct {
	Clang        string `json:"clang"`
	ClangVersion string `json:"clang_version"`
	DeviceLibDir string `json:"device_lib_dir"`
	Source       string `json:"source"`
}

func runTargets(o targetsOptions, env Env, ui *term.UI) error {
	procs, err := inspect.FindProcessors(toolchain.SplitList(strings.Join(o.Names, ",")), splitCommas(o.Families))
	if err != nil {
		return usageError(err)
	}
	s, err := compile.OpenSession(compile.SessionOptions{ROCmPath: o.ROCmPath, Clang: o.Clang, Getenv: env.Getenv, Root: env.Root,
		LookPath: env.LookPath, Runner: env.Runner, CacheDir: o.CacheDir, CacheIfPresent: true})
	if err != nil {
		return err
	}
	defer s.Close(env.Context)
	inst, err := s.Resolver().Installation()
	var cands []*toolchain.Candidate
	if err == nil {
		cands, err = s.Resolver().Candidates(env.Context)
	}
	switch {
	case err != nil && (o.Buildable || !errors.Is(err, toolchain.ErrToolchainNotFound)):
		return err
	case err != nil:
		ui.Warnf("no ROCm toolchain found, so BUILD shows ? (rocmk doctor says why)")
	}
	doc := targetsDoc{Targets: []term.TargetRow{}, Toolchains: cands}
	if inst != nil {
		doc.Toolchain = &targetsToolchain{Clang: inst.Clang, ClangVersion: inst.ClangVersion, DeviceLibDir: inst.DeviceLibDir, Source: inst.Source}
	}
	for _, p := range procs {
		row := term.TargetRowOf(p, inst != nil, cands)
		if !o.Buildable || *row.Buildable {
			doc.Targets = append(doc.Targets, row)
		}
	}
	if len(doc.Targets) == 0 {
		return usagef("no target matches the filters")
	}
	if err := ui.Result("targets", doc, func(w io.Writer, s *term.Styles) error { return term.Targets(w, s, doc.Targets) }); err != nil {
		return err
	}
	term.TargetsFooter(ui, doc.Targets, cands)
	return nil
}
