package hipify

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var conformanceDir = filepath.Join("..", "testdata", "hipify", "conformance")

// cuda12Excludes are the tests HIPIFY's lit.cfg excludes when testing with
// CUDA 12.6, cuDNN 9 (the same list as hipify-score.py's cuda12 profile).
var cuda12Excludes = map[string]bool{
	"cudnn_convolution_forward.cu": true, "cuSPARSE_01.cu": true, "cuSPARSE_02.cu": true, "cuSPARSE_12.cu": true,
	"cusparse2rocsparse_10010_12000.cu": true, "cusparse2rocsparse_11010_12000.cu": true,
	"cusparse2rocsparse_11030_12000.cu": true, "cusparse2hipsparse_11030_12000.cu": true,
	"cusparse2rocsparse_9020_12000.cu": true, "cusparse2rocsparse_before_12000.cu": true,
	"cusparse2rocsparse_before_11000.cu": true, "cublaslt2hipblaslt_10010_10020.cu": true,
	"headers_test_06.cu": true, "headers_test_07.cu": true, "headers_test_08.cu": true, "headers_test_09.cu": true,
	"tex2dKernel.cpp": true, "cuSPARSE_11.cu": true, "cublas_0_based_indexing.cu": true,
	"cublas_0_based_indexing_rocblas.cu": true, "cub_01.cu": true, "cub_02.cu": true, "cub_03.cu": true,
	"cudnn2miopen_before_9000.cu": true,
}

var runRe = regexp.MustCompile(`RUN:(.*)$`)

// runOptions parses the hipify options of a test's RUN line, as
// tests/run_test.sh does: after %hipify_args a count 1..5 and that many
// options. ok is false when the file has no RUN line (a helper, not a test).
func runOptions(text string) (opts []string, clang []string, ok bool) {
	for _, line := range strings.Split(text, "\n") {
		m := runRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var toks []string
		for _, f := range strings.Fields(m[1]) {
			toks = append(toks, strings.Trim(f, `"`))
		}
		idx := func(s string) int {
			for i, t := range toks {
				if t == s {
					return i
				}
			}
			return -1
		}
		end := len(toks)
		if c := idx("%clang_args"); c >= 0 {
			end = c
			clang = toks[c+1:]
		}
		if h := idx("%hipify_args"); h >= 0 && h+1 < end {
			if n := strings.IndexByte("12345", toks[h+1][0]); len(toks[h+1]) == 1 && n >= 0 {
				opts = toks[h+2 : min(h+2+n+1, end)]
			}
		}
		return opts, clang, true
	}
	return nil, nil, false
}

func optionsFor(args, clang []string) (Options, error) {
	o := Options{Defines: map[string]string{}}
	for _, a := range args {
		switch strings.TrimLeft(a, "-") {
		case "hip-kernel-execution-syntax":
			o.KernelExecutionSyntax = true
		case "cuda-kernel-execution-syntax":
		case "roc":
			o.Roc = true
		case "miopen":
			o.MIOpen = true
		case "experimental":
			o.Experimental = true
		case "amap":
			o.Amap = true
		case "skip-excluded-preprocessor-conditional-blocks":
			o.SkipExcluded = true
		case "use-hip-data-types":
			o.UseHIPDataTypes = true
		case "default-preprocessor":
			o.DefaultPreprocessor = true
		default:
			return o, fmt.Errorf("unknown hipify option %q", a)
		}
	}
	for _, c := range clang {
		if strings.HasPrefix(c, "-D") {
			k, v, ok := strings.Cut(c[2:], "=")
			if !ok {
				v = "1"
			}
			o.Defines[k] = v
		}
	}
	return o, nil
}

type folderScore struct {
	tests, passed, checks, matched int
}

// TestConformance runs HIPIFY's own unit tests (cuda12 profile) through
// Translate and the FileCheck-style checker, and holds the targets: at
// least 100 of 112 tests pass every directive, no folder below 75% of its
// directives, at least 99% of all directives. -v prints the table.
func TestConformance(t *testing.T) {
	folders := map[string]*folderScore{}
	var failures []string
	total := folderScore{}
	err := filepath.WalkDir(conformanceDir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		ext := filepath.Ext(p)
		if d.IsDir() || !strings.Contains(".cu .cuh .cpp .c .hpp .h", ext) || ext == "" {
			return nil
		}
		src, err := os.ReadFile(p)
		require.NoError(t, err)
		args, clang, ok := runOptions(string(src))
		if !ok || cuda12Excludes[d.Name()] {
			return nil
		}
		rel, _ := filepath.Rel(conformanceDir, p)
		folder := filepath.ToSlash(filepath.Dir(rel))
		opt, err := optionsFor(args, clang)
		require.NoError(t, err, rel)
		out, _, err := Translate(rel, src, opt)
		require.NoError(t, err, rel)
		res := fileCheck(parseChecks(string(src), "CHECK"), canonOutput(string(out)))
		f := folders[folder]
		if f == nil {
			f = &folderScore{}
			folders[folder] = f
		}
		f.tests++
		f.checks += len(res)
		pass := true
		for _, r := range res {
			if r.ok {
				f.matched++
			} else {
				pass = false
				if len(failures) < 400 {
					failures = append(failures, fmt.Sprintf("%s:%d: %s: %s (%s)", rel, r.d.line, r.d.kind, r.d.pat, r.reason))
				}
			}
		}
		if pass {
			f.passed++
		}
		return nil
	})
	require.NoError(t, err)
	names := make([]string, 0, len(folders))
	for n := range folders {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "%-38s %5s %5s %7s %7s %7s %7s\n", "folder", "tests", "pass", "pass%", "checks", "matched", "chk%")
	for _, n := range names {
		f := folders[n]
		total.tests += f.tests
		total.passed += f.passed
		total.checks += f.checks
		total.matched += f.matched
		fmt.Fprintf(&b, "%-38s %5d %5d %6.1f%% %7d %7d %6.1f%%\n", n, f.tests, f.passed,
			100*float64(f.passed)/float64(f.tests), f.checks, f.matched, 100*float64(f.matched)/float64(f.checks))
	}
	fmt.Fprintf(&b, "%-38s %5d %5d %6.1f%% %7d %7d %6.1f%%\n", "TOTAL", total.tests, total.passed,
		100*float64(total.passed)/float64(total.tests), total.checks, total.matched, 100*float64(total.matched)/float64(total.checks))
	t.Log("\n" + b.String())
	if testing.Verbose() {
		for _, f := range failures {
			t.Log(f)
		}
	}
	assert.Equal(t, 112, total.tests, "cuda12 profile test count")
	assert.GreaterOrEqual(t, total.passed, 100, "tests passing every directive")
	assert.GreaterOrEqual(t, float64(total.matched)/float64(total.checks), 0.99, "directives matched")
	for _, n := range names {
		f := folders[n]
		assert.GreaterOrEqual(t, float64(f.matched)/float64(f.checks), 0.75, "directives matched in %s", n)
	}
}

func TestFileCheckSemantics(t *testing.T) {
	out := canonOutput("#include <hip/hip_runtime.h>\nint a = 1; // x\nhipMalloc(&p,  n);\n\nfoo();\n")
	for _, tc := range []struct {
		checks string
		pass   bool
	}{
		{"// CHECK: #include <hip/hip_runtime.h>\n// CHECK-NEXT: int a = 1;\n// CHECK: hipMalloc(&p, n);", true},
		{"// CHECK: int a = 1;\n// CHECK-NEXT: foo();", false},  // NEXT on the wrong line
		{"// CHECK-NOT: cudaMalloc\n// CHECK: foo();", true},    //
		{"// CHECK-NOT: hipMalloc\n// CHECK: foo();", false},    // NOT pattern present
		{"// CHECK: hipMalloc({{.*}});\n// CHECK-EMPTY:", true}, // regex, empty line
		{"// CHECK: hip{{[[:alpha:]]+}}(&[[P:[a-z]+]], n)\n// CHECK-NOT: [[P]]\n// CHECK: foo", true},
		{"// CHECK: foo();\n// CHECK: hipMalloc", false}, // order matters
		{"// CHECK-DAG: foo();\n// CHECK-DAG: int a", true},
		{"// CHECK-COUNT-2: hip", true},
		{"// CHECK-SAME: #include", true},
		{"// CHECK: x // this comment was blanked by the sed", false},
	} {
		res := fileCheck(parseChecks(tc.checks, "CHECK"), out)
		require.NotEmpty(t, res, tc.checks)
		pass := true
		for _, r := range res {
			pass = pass && r.ok
		}
		assert.Equal(t, tc.pass, pass, tc.checks)
	}
}

func TestRunOptions(t *testing.T) {
	o, c, ok := runOptions("// RUN: %run_test hipify \"%s\" \"%t\" %hipify_args 2 --roc --amap %clang_args -DX -ferror-limit=500\n")
	require.True(t, ok)
	assert.Equal(t, []string{"--roc", "--amap"}, o)
	assert.Equal(t, []string{"-DX", "-ferror-limit=500"}, c)
	o, _, ok = runOptions("// RUN: %run_test hipify \"%s\" \"%t\" %hipify_args \"-roc\" %clang_args\n")
	require.True(t, ok)
	assert.Empty(t, o, "a non-count token means no options, as run_test.sh")
	_, _, ok = runOptions("// helper header\n")
	assert.False(t, ok)
}
