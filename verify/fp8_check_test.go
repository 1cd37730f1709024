package verify

import (
	"bytes"
	"encoding/binary"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite generated test data")

// fp8CheckDir holds the GPU check of the fp8 conversions against CUDA's
// (testdata/verify/fp8/README.md): its inputs and the codes and values
// this package computes for them.
var fp8CheckDir = filepath.Join("..", "testdata", "verify", "fp8")

// fp8CheckInputs are the float32 inputs of the GPU check: for both formats
// every finite code's value, every midpoint between neighbours (and past
// the largest, where saturation starts), the floats just around each, both
// signs; special values; seeded random values over the whole range.
func fp8CheckInputs() []float32 {
	var in []float32
	add := func(v float32) {
		for _, x := range []float32{v, math.Nextafter32(v, float32(math.Inf(1))), math.Nextafter32(v, float32(math.Inf(-1)))} {
			in = append(in, x, -x)
		}
	}
	for _, f := range []fp8Format{e4m3, e5m2} {
		for c := 0; c <= int(f.maxCode); c++ {
			v := f.decode(uint8(c))
			next := v + (v - f.decode(f.maxCode-1))
			if c < int(f.maxCode) {
				next = f.decode(uint8(c + 1))
			}
			add(float32(v))
			add(float32((v + next) / 2))
		}
	}
	for _, bits := range []uint32{0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0x7f7fffff, 0x00000001, 0x80000001, 0x0d800000} {
		in = append(in, math.Float32frombits(bits))
	}
	r := rand.New(rand.NewPCG(8, 3))
	for i := 0; i < 4096; i++ {
		in = append(in, float32(math.Ldexp(r.Float64()+0.5, r.IntN(38)-21)*float64(1-2*r.IntN(2))))
	}
	return in
}

// fp8CheckFiles are the check's data: the inputs (float32, and the same
// values as float64), for each input
// the four codes e4m3 saturating, e4m3 not, e5m2 saturating, e5m2 not, and
// the 256 e4m3 then 256 e5m2 decodes (float32).
func fp8CheckFiles() map[string][]byte {
	in := fp8CheckInputs()
	var inputs, inputs64, codes, decodes bytes.Buffer
	for _, x := range in {
		_ = binary.Write(&inputs, binary.LittleEndian, math.Float32bits(x))
		v := float64(x)
		_ = binary.Write(&inputs64, binary.LittleEndian, math.Float64bits(v))
		codes.Write([]byte{F64ToE4M3(v, true), F64ToE4M3(v, false), F64ToE5M2(v, true), F64ToE5M2(v, false)})
	}
	for _, dec := range []func(uint8) float64{E4M3ToF64, E5M2ToF64} {
		for c := 0; c < 256; c++ {
			_ = binary.Write(&decodes, binary.LittleEndian, math.Float32bits(float32(dec(uint8(c)))))
		}
	}
	return map[string][]byte{"inputs.f32": inputs.Bytes(), "inputs.f64": inputs64.Bytes(),
		"expected_codes.u8": codes.Bytes(), "expected_decodes.f32": decodes.Bytes()}
}

// TestFP8CheckFilesUpToDate: the GPU check's data is what this package
// computes now (go test ./verify -run TestFP8CheckFiles -update rewrites it).
func TestFP8CheckFilesUpToDate(t *testing.T) {
	for name, want := range fp8CheckFiles() {
		path := filepath.Join(fp8CheckDir, name)
		if *update {
			require.NoError(t, os.WriteFile(path, want, 0o644))
			continue
		}
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(want, got), "%s is stale: go test ./verify -run TestFP8CheckFiles -update", name)
	}
	assert.Greater(t, len(fp8CheckInputs()), 7000)
}
