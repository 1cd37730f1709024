package compile

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"

	"github.com/rocmk/rocmk/compile/bundle"
	"github.com/rocmk/rocmk/compile/embedding"
	"github.com/rocmk/rocmk/compile/toolchain"
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
	var embeds []embedding.Object
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
			embeds = append(embeds, embedding.Object{Stem: Stem(res.Src), Target: res.Target, File: filepath.Base(res.Out), Data: res.Object.Data})
		}
		if r.Bundle && s.ok && len(s.objs) > 0 {
			var ents []bundle.Entry
			var ts []string
			for _, res := range s.objs {
				ents = append(ents, bundle.Entry{Target: res.Target, Data: res.Object.Data})
				ts = append(ts, res.Target.String())
			}
			data := bundle.Write(ents)
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
		name, data, err := embedding.Render(kind, r.EmbedPackage, embeds)
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
