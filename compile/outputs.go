package compile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/rocmk/rocmk/inspect"
)

// ManifestFile is the name of the build manifest in the output directory.
const ManifestFile = "manifest.json"

// Manifest describes one build's outputs (manifest.json). It has no
// timestamps: the same build writes the same bytes.
type Manifest struct {
	Schema       string           `json:"schema"`
	Toolchain    string           `json:"toolchain"`
	ClangVersion string           `json:"clang_version,omitempty"`
	ROCmVersion  string           `json:"rocm_version,omitempty"`
	HIPVersion   string           `json:"hip_version,omitempty"`
	Targets      []string         `json:"targets"`
	Objects      []ManifestObject `json:"objects"`
	Bundles      []ManifestBundle `json:"bundles,omitempty"`
}

// ManifestObject is one code object.
type ManifestObject struct {
	Source  string   `json:"source"`
	Target  string   `json:"target"`
	File    string   `json:"file"`
	Size    int      `json:"size"`
	SHA256  string   `json:"sha256"`
	Kernels []string `json:"kernels"`
}

// ManifestBundle is one offload bundle.
type ManifestBundle struct {
	Source  string   `json:"source"`
	File    string   `json:"file"`
	Size    int      `json:"size"`
	SHA256  string   `json:"sha256"`
	Targets []string `json:"targets"`
}

// BundleName is the bundle file of a source: "<stem>.hipfb".
func BundleName(src string) string { return Stem(src) + ".hipfb" }

func (b *Builder) writeOutputs(r Request, outDir string, rep *Report) error {
	type srcObjs struct {
		src  string
		objs []*Result
		ok   bool
	}
	var order []*srcObjs
	bySrc := map[string]*srcObjs{}
	for _, res := range rep.Results {
		s := bySrc[res.Src]
		if s == nil {
			s = &srcObjs{src: res.Src, ok: true}
			bySrc[res.Src] = s
			order = append(order, s)
		}
		if res.Status == StatusHit || res.Status == StatusCompiled {
			s.objs = append(s.objs, res)
		} else {
			s.ok = false
		}
	}
	m := Manifest{Schema: "rocmk.build-manifest/v1", Toolchain: b.TC.Name()}
	if c, ok := b.TC.(*toolchain.Clang); ok {
		m.ClangVersion, m.ROCmVersion, m.HIPVersion = c.ClangVersion, c.ROCmVersion, c.HIPVersion
	}
	for _, t := range r.Targets {
		m.Targets = append(m.Targets, t.String())
	}
	var embeds []embedObj
	for _, s := range order {
		for _, res := range s.objs {
			var names []string
			for _, k := range res.Kernels {
				names = append(names, k.Name)
			}
			if names == nil {
				names = []string{}
			}
			m.Objects = append(m.Objects, ManifestObject{Source: filepath.Base(res.Src), Target: res.Target.String(),
				File: filepath.Base(res.Out), Size: res.Size, SHA256: res.SHA256, Kernels: names})
			embeds = append(embeds, embedObj{stem: Stem(res.Src), target: res.Target, file: filepath.Base(res.Out), data: res.Object.Data})
		}
		if r.Bundle && s.ok && len(s.objs) > 0 {
			var ents []BundleEntry
			var ts []string
			for _, res := range s.objs {
				ents = append(ents, BundleEntry{Target: res.Target, Data: res.Object.Data})
				ts = append(ts, res.Target.String())
			}
			data := WriteBundle(ents)
			p := filepath.Join(outDir, BundleName(s.src))
			if err := writeIfChanged(p, data); err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			rep.Bundles = append(rep.Bundles, p)
			m.Bundles = append(m.Bundles, ManifestBundle{Source: filepath.Base(s.src), File: filepath.Base(p),
				Size: len(data), SHA256: hex.EncodeToString(sum[:]), Targets: ts})
		}
	}
	if !r.NoManifest {
		j, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			return err
		}
		p := filepath.Join(outDir, ManifestFile)
		if err := writeIfChanged(p, append(j, '\n')); err != nil {
			return err
		}
		rep.Files = append(rep.Files, p)
	}
	for _, kind := range r.Embed {
		name, data, err := Embedding(kind, r.EmbedPackage, embeds)
		if err != nil {
			return err
		}
		p := filepath.Join(outDir, name)
		if err := writeIfChanged(p, data); err != nil {
			return err
		}
		rep.Files = append(rep.Files, p)
	}
	return nil
}

type embedObj struct {
	stem   string
	target inspect.Target
	file   string
	data   []byte
}

// EmbedKinds are the accepted --embed values.
var EmbedKinds = []string{"rust", "go", "c"}

// ident makes a C/Rust/Go identifier piece: letters, digits and '_'.
func ident(s string) string {
	s = strings.NewReplacer(":", "_", "+", "_on", "-", "_").Replace(s)
	var b strings.Builder
	for _, r := range s {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	out := b.String()
	if out == "" || unicode.IsDigit(rune(out[0])) {
		out = "_" + out
	}
	return out
}

// targetIdent names a target in identifiers: gfx90a:xnack- -> gfx90a_xnack_off.
func targetIdent(t inspect.Target) string {
	s := strings.NewReplacer(":", "_", "+", "_on", "-", "_off").Replace(t.String())
	return ident(s)
}

// Embedding renders one embedding file: "rust" (hsaco.rs), "go"
// (hsaco_embed.go, package pkg) or "c" (hsaco.h). The files refer to the
// code objects by their names next to them.
func Embedding(kind, pkg string, objs []embedObj) (string, []byte, error) {
	sort.SliceStable(objs, func(i, j int) bool { return objs[i].stem < objs[j].stem })
	var stems []string
	by := map[string][]embedObj{}
	for _, o := range objs {
		if _, ok := by[o.stem]; !ok {
			stems = append(stems, o.stem)
		}
		by[o.stem] = append(by[o.stem], o)
	}
	var b bytes.Buffer
	switch kind {
	case "rust":
		b.WriteString("// Code generated by rocmk build. DO NOT EDIT.\n//\n// AMDGPU code objects per kernel source and target, embedded with include_bytes!.\n// Use: hsaco::<source>::for_arch(\"gfx90a:sramecc+:xnack-\") (exact target ID,\n// else the processor's build with no xnack/sramecc setting).\n")
		for _, s := range stems {
			fmt.Fprintf(&b, "\n#[allow(dead_code)]\npub mod %s {\n", ident(s))
			for _, o := range by[s] {
				fmt.Fprintf(&b, "    pub const %s: &[u8] = include_bytes!(%q);\n", strings.ToUpper(targetIdent(o.target)), o.file)
			}
			b.WriteString("\n    /// The code object for a target ID, or None if it was not built.\n")
			b.WriteString("    pub fn for_arch(arch: &str) -> Option<&'static [u8]> {\n        match arch {\n")
			for _, o := range by[s] {
				fmt.Fprintf(&b, "            %q => Some(%s),\n", o.target.String(), strings.ToUpper(targetIdent(o.target)))
			}
			b.WriteString("            _ => {\n                let proc = arch.split(':').next().unwrap_or(arch);\n                match proc {\n")
			for _, o := range by[s] {
				if o.target.XNACK == inspect.FeatureAny && o.target.SRAMECC == inspect.FeatureAny {
					fmt.Fprintf(&b, "                    %q => Some(%s),\n", o.target.Proc, strings.ToUpper(targetIdent(o.target)))
				}
			}
			b.WriteString("                    _ => None,\n                }\n            }\n        }\n    }\n}\n")
		}
		return "hsaco.rs", b.Bytes(), nil
	case "go":
		if pkg == "" {
			pkg = "hsaco"
		}
		fmt.Fprintf(&b, "// Code generated by rocmk build. DO NOT EDIT.\n\n// Package %s embeds AMDGPU code objects per kernel source and target.\npackage %s\n\nimport (\n\t_ \"embed\"\n\t\"strings\"\n)\n", pkg, pkg)
		for _, s := range stems {
			for _, o := range by[s] {
				fmt.Fprintf(&b, "\n//go:embed %s\nvar %s_%s []byte\n", o.file, ident(s), targetIdent(o.target))
			}
		}
		b.WriteString("\n// Objects maps source stem, then target ID, to the code object.\nvar Objects = map[string]map[string][]byte{\n")
		for _, s := range stems {
			fmt.Fprintf(&b, "\t%q: {\n", s)
			for _, o := range by[s] {
				fmt.Fprintf(&b, "\t\t%q: %s_%s,\n", o.target.String(), ident(s), targetIdent(o.target))
			}
			b.WriteString("\t},\n")
		}
		b.WriteString("}\n\n// ForArch returns the code object of source for a target ID: the exact\n// target, else the processor's build with no xnack/sramecc setting.\nfunc ForArch(source, arch string) ([]byte, bool) {\n\tm := Objects[source]\n\tif b, ok := m[arch]; ok {\n\t\treturn b, true\n\t}\n\tproc, _, _ := strings.Cut(arch, \":\")\n\tb, ok := m[proc]\n\treturn b, ok\n}\n")
		return "hsaco_embed.go", b.Bytes(), nil
	case "c":
		b.WriteString("/* Code generated by rocmk build. DO NOT EDIT.\n * AMDGPU code objects per kernel source and target, and a lookup table.\n * Use: rocmk_hsaco_for_arch(\"vadd\", \"gfx90a:sramecc+:xnack-\"). */\n")
		b.WriteString("#ifndef ROCMK_HSACO_H\n#define ROCMK_HSACO_H\n\n#include <stddef.h>\n#include <string.h>\n\n")
		for _, s := range stems {
			for _, o := range by[s] {
				fmt.Fprintf(&b, "/* %s */\nstatic const unsigned char %s_%s[%d] = {", o.file, ident(s), targetIdent(o.target), len(o.data))
				for i, c := range o.data {
					if i%16 == 0 {
						b.WriteString("\n ")
					}
					fmt.Fprintf(&b, " 0x%02x,", c)
				}
				b.WriteString("\n};\n\n")
			}
		}
		b.WriteString("struct rocmk_hsaco {\n  const char *source;\n  const char *target;\n  const unsigned char *data;\n  size_t size;\n};\n\n")
		b.WriteString("static const struct rocmk_hsaco rocmk_hsaco_table[] = {\n")
		for _, s := range stems {
			for _, o := range by[s] {
				v := ident(s) + "_" + targetIdent(o.target)
				fmt.Fprintf(&b, "  {%q, %q, %s, sizeof %s},\n", s, o.target.String(), v, v)
			}
		}
		b.WriteString("  {0, 0, 0, 0}\n};\n\n")
		b.WriteString(`/* The code object of source for a target ID: the exact target, else the
 * processor's build with no xnack/sramecc setting; NULL if none. */
static inline const struct rocmk_hsaco *rocmk_hsaco_for_arch(const char *source, const char *arch) {
  const struct rocmk_hsaco *e;
  size_t plen = strcspn(arch, ":");
  for (e = rocmk_hsaco_table; e->source; e++)
    if (strcmp(e->source, source) == 0 && strcmp(e->target, arch) == 0) return e;
  for (e = rocmk_hsaco_table; e->source; e++)
    if (strcmp(e->source, source) == 0 && strlen(e->target) == plen && strncmp(e->target, arch, plen) == 0) return e;
  return 0;
}

#endif /* ROCMK_HSACO_H */
`)
		return "hsaco.h", b.Bytes(), nil
	}
	return "", nil, fmt.Errorf("unknown --embed kind %q (want rust, go or c)", kind)
}
