package outcmp

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestBuiltinRules: each rule on lines as programs print them; the pair
// must pass with that rule fired, and fail with it disabled.
func TestBuiltinRules(t *testing.T) {
	for _, c := range []struct {
		rule, want, got string
	}{
		{"time", "took 3.2 ms", "took 4.75 ms"},
		{"time", "Time= 0.123 msec", "Time= 0.131 msec"},
		{"time", "elapsed 1.2s", "elapsed 0.9s"},
		{"time", "Processing time: 12.500000 (ms)", "Processing time: 9.000000 (ms)"},
		{"time", "kernel: 0.42 ms", "kernel: 0.61 ms"},
		{"time", "Time = 0.00008 s", "Time = 0.00011 s"},
		{"time", "Average time 17.2 us per launch", "Average time 21.9 us per launch"},
		{"time", "Duration = 73", "Duration = 71"},
		{"bandwidth", "Bandwidth = 1412.3 GB/s", "Bandwidth = 1290.7 GB/s"},
		{"bandwidth", "Performance= 1234.5 GFlop/s", "Performance= 1111.0 GFlop/s"},
		{"bandwidth", "1532.78 Gflops", "1390.02 Gflops"},
		{"bandwidth", "TFLOPS: 116.47", "TFLOPS: 104.33"},
		{"bandwidth", "GB/s: 3012.5", "GB/s: 2987.0"},
		{"bandwidth", "Host to Device Bandwidth 25.3 MB/s", "Host to Device Bandwidth 21.1 MB/s"},
		{"bandwidth", "Throughput = 97.8708 GOptions/s", "Throughput = 85.9044 GOptions/s"},
		{"bandwidth", "Gigaoptions per second    : 97.870807", "Gigaoptions per second    : 85.904381"},
		{"pointer", "d_A at 0x7f3a5c000000", "d_A at 0x7fa1bc200000"},
		{"pointer", "host ptr 0x55d2c3a1e2b0", "host ptr 0x5612f0a4c010"},
		{"device", `GPU Device 0: "NVIDIA H200" with compute capability 9.0`, `GPU Device 0: "AMD Instinct MI300X" with compute capability 9.4`},
		{"device", `Device 0: "NVIDIA H200"`, `Device 0: "AMD Radeon PRO W7900"`},
		{"device", `> Using CUDA Device [0]: NVIDIA H200`, `> Using CUDA Device [0]: gfx942`},
		{"device", `  CUDA Driver Version / Runtime Version          13.0 / 13.0`, `  CUDA Driver Version / Runtime Version          6.4 / 6.4`},
		{"device", `  CUDA Capability Major/Minor version number:    9.0`, `  CUDA Capability Major/Minor version number:    9.4`},
		{"device", `  Device PCI Domain ID / Bus ID / location ID:   0 / 25 / 0`, `  Device PCI Domain ID / Bus ID / location ID:   0 / 193 / 0`},
		{"pid", "worker pid 41234 started", "worker pid 41301 started"},
		{"pid", "PID: 77", "PID: 78"},
		{"date", "Run on 2026-11-28 12:50:48", "Run on 2026-11-29 09:01:02"},
		{"date", "Sat Nov 28 12:50:48 UTC 2026", "Sun Nov 29 09:01:02 UTC 2026"},
		{"date", "started at 12:50:48.123", "started at 12:51:02.004"},
	} {
		ref, got := Run{Stdout: []byte(c.want + "\n")}, Run{Stdout: []byte(c.got + "\n")}
		v := Compare(ref, got, DefaultRules())
		assert.True(t, v.Pass, "%s: %q vs %q: %s (%s)", c.rule, c.want, c.got, v.Reason, v.Detail)
		if assert.Len(t, v.RulesFired, 1, "%s: %q", c.rule, c.want) {
			assert.Equal(t, Fired{Rule: c.rule, Count: 1, Example: `"` + c.want + `" vs "` + c.got + `"`}, fired1(v))
		}
		r := DefaultRules()
		r.Disable = []string{c.rule}
		assert.False(t, Compare(ref, got, r).Pass, "%s disabled: %q", c.rule, c.want)
	}
}

func fired1(v Verdict) Fired {
	f := v.RulesFired[0]
	f.Example = unquoteExample(f.Example)
	return f
}

// unquoteExample undoes %q's escaping of the device lines' quotes.
func unquoteExample(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && s[i+1] == '"' {
			continue
		}
		out = append(out, s[i])
	}
	return string(out)
}

// TestRulesDoNotHideResults: what a rule masks is only its span; a result
// on the same line, or a line the rules do not know, is still compared.
func TestRulesDoNotHideResults(t *testing.T) {
	for _, c := range [][2]string{
		{"took 3.2 ms, sum 10.5", "took 4.1 ms, sum 11.5"},
		{"Result = PASS", "Result = FAIL"},
		{"checksum 0x1f2e3d4c", "checksum 0x1f2e3d4d"}, // 32-bit values are not pointers
		{"processed 5 items", "processed 6 items"},
		{"3 seconds", "3 hours"},
		{"Bandwidth = 12 GB/s, errors 0", "Bandwidth = 11 GB/s, errors 2"},
		{"device count 1 errors 0", "device count 1 errors 1"},
	} {
		v := Compare(Run{Stdout: []byte(c[0])}, Run{Stdout: []byte(c[1])}, DefaultRules())
		assert.False(t, v.Pass, "%q vs %q", c[0], c[1])
	}
}
