package kernels

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rocmk/rocmk/compile/toolchain"
	"github.com/stretchr/testify/require"
)

// The q4 qgemv kernel turns x into 8-bit integer limbs and sums a row with
// dot products of 4 bytes (qv_x<true, 32> in src/qgemv.hip.in). Its
// arithmetic is run here on the host, compiled from the generated module by
// a real C++ compiler with host stand-ins for the HIP API
// (testdata/kernels/host), through the target-independent dot4, and
// compared with the Go dequantization in float64: the AMD targets' code
// path cannot be run on a GPU here, and the NVIDIA one only on the device.
func TestQ4LaneArithmeticOnHost(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles C++; skipped with -short")
	}
	cxx := hostCXX(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "qgemv_q4")
	host, err := filepath.Abs(filepath.Join("..", "testdata", "kernels", "host"))
	require.NoError(t, err)
	out, err := exec.Command(cxx, "-std=c++17", "-O2", "-Wall", "-I"+host, "-I.", "-include", "cstring",
		filepath.Join(host, "qgemv_q4.cpp"), "-o", bin).CombinedOutput()
	require.NoError(t, err, "%s", out)

	f := QFormat{Bits: 4, Group: 32}
	type lane struct {
		x     [32]float32
		block []byte
		off   byte
	}
	r := rand.New(rand.NewPCG(25, 6))
	var lanes []lane
	for i := 0; i < 4000; i++ {
		var l lane
		scale := math.Pow(2, float64(r.IntN(200)-100)) // x from 2^-100 to 2^100
		for j := range l.x {
			switch i % 8 {
			case 1: // every x zero
			case 2: // mixed magnitudes: small values beside large ones
				l.x[j] = float32((r.Float64()*2 - 1) * scale * math.Pow(2, -float64(r.IntN(30))))
			case 3: // subnormal x
				l.x[j] = float32((r.Float64()*2 - 1) * 1e-40)
			case 4: // one large value, the rest small
				l.x[j] = float32((r.Float64()*2 - 1) * 1e-3)
				if j == 7 {
					l.x[j] = 3e30
				}
			default:
				l.x[j] = float32((r.Float64()*2 - 1) * scale)
			}
		}
		w := make([]float32, 32)
		for j := range w {
			w[j] = float32(r.NormFloat64())
		}
		l.block, err = f.Pack(w, 1, 32)
		require.NoError(t, err)
		if i%5 == 0 { // raw quants and scale: every nibble value, any f16
			for j := range l.block {
				l.block[j] = byte(r.Uint32())
			}
			l.block[1] &= 0x3f // finite scale, below 2
		}
		l.off = byte(2 * (i % 2))
		lanes = append(lanes, l)
	}
	// two lanes with a non-finite x: the result is NaN, not a number
	inf := lanes[10]
	inf.x[3] = float32(math.Inf(1))
	nan := lanes[11]
	nan.x[30] = float32(math.NaN())
	lanes = append(lanes, inf, nan)

	var in bytes.Buffer
	for _, l := range lanes {
		require.NoError(t, binary.Write(&in, binary.LittleEndian, l.x))
		in.Write(l.block)
		in.WriteByte(l.off)
	}
	cmd := exec.Command(bin)
	cmd.Stdin = &in
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	require.NoError(t, err)
	require.Len(t, raw, 4*len(lanes))

	worst := 0.0
	for i, l := range lanes {
		got := float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
		w, err := f.Unpack(l.block, 1, 32)
		require.NoError(t, err)
		var ref, mag, sumW, maxX float64
		finite := true
		for j, xv := range l.x {
			ref += w[j] * float64(xv)
			mag += math.Abs(w[j] * float64(xv))
			sumW += math.Abs(w[j])
			maxX = math.Max(maxX, math.Abs(float64(xv)))
			finite = finite && !math.IsInf(float64(xv), 0) && !math.IsNaN(float64(xv))
		}
		if !finite {
			require.True(t, math.IsNaN(got), "lane %d: x not finite, got %g, want NaN", i, got)
			continue
		}
		// x keeps 23 bits of the lane's largest |x| (of 2^-126 when all are
		// subnormal), so each term is off by up to |w| max|x| 2^-23; then
		// the float32 rounding of the conversion and the scales (to a subnormal
		// result's unit at least)
		diff := math.Abs(got - ref)
		bound := sumW*(math.Max(maxX, 0x1p-126)*0x1p-23) + 0x1p-21*math.Abs(ref) + 0x1p-149
		require.LessOrEqual(t, diff, bound, "lane %d (offset %d): got %g, want %g (sum of |terms| %g)", i, l.off, got, ref, mag)
		worst = math.Max(worst, diff/bound)
	}
	t.Logf("%d lanes; the largest error is %.2f of its bound", len(lanes), worst)
}

// hostCXX is a C++ compiler for the host: the ROCm toolchain's clang++
// (in either lane), else any on PATH.
func hostCXX(t *testing.T) string {
	if inst, err := toolchain.FindInstallation(toolchain.FindOptions{}); err == nil && inst.Clang != "" {
		return inst.Clang
	}
	for _, c := range []string{"clang++", "g++", "c++"} {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	t.Fatal("no C++ compiler (the ROCm toolchain's clang++, or g++): scripts/install-toolchain.sh installs one")
	return ""
}
