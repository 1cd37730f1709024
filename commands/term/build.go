package term

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"

	"github.com/rocmk/rocmk/compile"
)

// ResourceUsage is build --resource-usage's table: per kernel its registers,
// spills, LDS and scratch.
func ResourceUsage(w io.Writer, s *Styles, rep *compile.Report) error {
	t := Table{Header: []string{"SOURCE", "TARGET", "KERNEL", "VGPR", "SGPR", "AGPR", "SPILLS", "LDS", "SCRATCH"},
		Right: map[int]bool{3: true, 4: true, 5: true, 6: true, 7: true, 8: true}}
	rs := append([]*compile.Result(nil), rep.Results...)
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Src < rs[j].Src })
	for _, r := range rs {
		for _, k := range r.Kernels {
			t.Rows = append(t.Rows, []string{filepath.Base(r.Src), r.Target.String(), k.Name,
				fmt.Sprint(k.VGPRs), fmt.Sprint(k.SGPRs), fmt.Sprint(k.AGPRs), fmt.Sprint(k.VGPRSpills + k.SGPRSpills), fmt.Sprint(k.LDS), fmt.Sprint(k.Scratch)})
		}
	}
	return t.Render(w, s)
}
