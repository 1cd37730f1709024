package kernels

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/inspect"
)

var update = flag.Bool("update", false, "rewrite testdata/kernels/resources.txt from this machine's build")

// only, with -update, builds just these modules (comma-separated, e.g.
// gemm.hip,gemv.hip) and rewrites just their kernels' lines: a changed
// module's budget without rebuilding the whole suite.
var only = flag.String("only", "", "with -update: build and rewrite only these modules (gemm.hip,...)")

// resourcesFile holds the suite's resource budget: per toolchain, target and
// kernel, the static LDS, scratch and spills it may use (exactly), the VGPRs
// (up to the end of the allocation granule) and the waves per SIMD it must
// reach at the suite's own launch geometry.
var resourcesFile = filepath.Join("..", "testdata", "kernels", "resources.txt")

type budget struct {
	LDS, Scratch, Spills, VGPRs, Waves int
}

func (b budget) String() string {
	return fmt.Sprintf("lds=%d scratch=%d spills=%d vgprs=%d waves=%d", b.LDS, b.Scratch, b.Spills, b.VGPRs, b.Waves)
}

// TestSuiteResources holds every suite kernel to its budget on each target,
// read back with inspect from the real build: a private array promoted to
// LDS, a spill or a register blow-up that costs occupancy fails here rather
// than on a customer's GPU. After a deliberate change, rewrite the file with
// `go test ./kernels -run TestSuiteResources -update` and review the diff.
func TestSuiteResources(t *testing.T) {
	suite := buildSuite(t)
	got := measure(t, suite)
	if *update {
		writeBudgets(t, suite, got)
		return
	}
	budgets := readBudgets(t)
	for _, tg := range suite.targets {
		tc := suite.toolchain[tg]
		want := budgets[tc]
		if !assert.NotNil(t, want, "%s has no budget for %s: add it with -update on a machine with that toolchain", resourcesFile, tc) {
			continue
		}
		p, _ := inspect.LookupProcessor(tg)
		granule := p.Granule64
		if p.Wave() == 32 {
			granule = p.Granule32
		}
		for key, g := range got {
			if strings.Fields(key)[0] != tg {
				continue
			}
			w, ok := want[key]
			if !assert.True(t, ok, "%s %s: no budget (new kernel or target? run -update)", tc, key) {
				continue
			}
			assert.Equal(t, w.LDS, g.LDS, "%s: static LDS bytes (budget %s, got %s)", key, w, g)
			assert.Equal(t, w.Scratch, g.Scratch, "%s: scratch bytes per lane (budget %s, got %s)", key, w, g)
			assert.Equal(t, w.Spills, g.Spills, "%s: spilled registers (budget %s, got %s)", key, w, g)
			assert.LessOrEqual(t, g.VGPRs, roundUp(w.VGPRs, granule), "%s: VGPRs past the granule of the budget (budget %s, got %s)", key, w, g)
			assert.GreaterOrEqual(t, g.Waves, w.Waves, "%s: waves per SIMD (budget %s, got %s)", key, w, g)
		}
		for key := range want {
			if _, ok := got[key]; strings.Fields(key)[0] == tg && !ok {
				assert.Fail(t, "in the budget but not built (kernel removed? run -update)", "%s %s", tc, key)
			}
		}
	}
}

// measure reads every kernel's resources from the build; the occupancy uses
// the launch geometry of the kernel's registry case (256 threads for
// kernels the registry does not launch).
func measure(t *testing.T, s *builtSuite) map[string]budget {
	launch := map[string][2]int{} // kernel -> block threads, dynamic LDS
	for _, sp := range Registry() {
		c := sp.Make(Options{Size: 1 << 12})
		launch[c.Kernel] = [2]int{int(c.Block.X * c.Block.Y * c.Block.Z), c.Shared}
	}
	out := map[string]budget{}
	for tg, mods := range s.objects {
		p, ok := inspect.LookupProcessor(tg)
		require.True(t, ok, tg)
		for _, co := range mods {
			for _, k := range co.Kernels {
				l, ok := launch[k.Name]
				if !ok {
					l = [2]int{256, 0}
				}
				out[tg+" "+k.Name] = budget{LDS: int(k.LDS), Scratch: int(k.Scratch), Spills: k.SGPRSpills + k.VGPRSpills,
					VGPRs: k.VGPRs, Waves: k.Occupancy(p, l[0], l[1]).WavesPerSIMD}
			}
		}
	}
	return out
}

func roundUp(n, g int) int {
	if g <= 0 {
		return n
	}
	return (n + g - 1) / g * g
}

// readBudgets parses resources.txt: "toolchain target kernel lds= scratch= spills= vgprs= waves=".
func readBudgets(t *testing.T) map[string]map[string]budget {
	f, err := os.Open(resourcesFile)
	require.NoError(t, err)
	defer f.Close()
	all := map[string]map[string]budget{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		var tc, tg, k string
		var b budget
		_, err := fmt.Sscanf(text, "%s %s %s lds=%d scratch=%d spills=%d vgprs=%d waves=%d", &tc, &tg, &k, &b.LDS, &b.Scratch, &b.Spills, &b.VGPRs, &b.Waves)
		require.NoError(t, err, "%s:%d: %q", resourcesFile, line, text)
		if all[tc] == nil {
			all[tc] = map[string]budget{}
		}
		all[tc][tg+" "+k] = b
	}
	require.NoError(t, sc.Err())
	return all
}

// writeBudgets replaces the lines of resources.txt for the targets the
// suite built (each under its toolchain) with got, keeping the lines of
// other toolchains and targets.
func writeBudgets(t *testing.T, suite *builtSuite, got map[string]budget) {
	all := map[string]map[string]budget{}
	if _, err := os.Stat(resourcesFile); err == nil {
		all = readBudgets(t)
	}
	for _, tg := range suite.targets {
		tc := suite.toolchain[tg]
		if all[tc] == nil {
			all[tc] = map[string]budget{}
		}
		for key := range all[tc] {
			if strings.Fields(key)[0] == tg && (*only == "" || got[key] != budget{}) {
				delete(all[tc], key)
			}
		}
		for key, g := range got {
			if strings.Fields(key)[0] == tg {
				all[tc][key] = g
			}
		}
	}
	var b strings.Builder
	b.WriteString("# The bundled kernel suite's resource budget, read from real builds (kernels/resources_test.go).\n")
	b.WriteString("# toolchain target kernel: static LDS bytes, scratch bytes per lane, spilled registers (exact),\n")
	b.WriteString("# VGPRs (up to the end of their allocation granule), waves per SIMD at the suite's launch geometry (at least).\n")
	b.WriteString("# Rewrite: go test ./kernels -run TestSuiteResources -update\n")
	var tcs []string
	for tc := range all {
		tcs = append(tcs, tc)
	}
	sort.Strings(tcs)
	for _, tc := range tcs {
		var keys []string
		for k := range all[tc] {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			ti, tj := strings.Fields(keys[i])[0], strings.Fields(keys[j])[0]
			if ti != tj {
				return inspect.ProcessorIndex(ti) < inspect.ProcessorIndex(tj)
			}
			return keys[i] < keys[j]
		})
		for _, k := range keys {
			fmt.Fprintf(&b, "%s %s %s\n", tc, k, all[tc][k])
		}
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(resourcesFile), 0o755))
	require.NoError(t, os.WriteFile(resourcesFile, []byte(b.String()), 0o644))
}
