package toolchain

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/compile/runner"
)

// realClang is this machine's toolchain, or a skip when there is none.
func realClang(b *testing.B) *Clang {
	b.Helper()
	if testing.Short() {
		b.Skip("runs the real compiler: the full lane (make test)")
	}
	in, err := FindInstallation(FindOptions{})
	if err != nil {
		b.Skipf("no toolchain: %v", err)
	}
	tc, err := NewClang(in, LayoutClang)
	require.NoError(b, err)
	return tc
}

// BenchmarkToolchainIdentity measures the content identity of the real
// toolchain (clang's sha256 and --version, every device library's sha256):
// "computed" as a first build on a machine pays it, "remembered" as every
// later build does (the stamp's stats and one local cache lookup per
// identity, in a new process: the process memo cleared).
func BenchmarkToolchainIdentity(b *testing.B) {
	tc := realClang(b)
	for _, remembered := range []bool{false, true} {
		name := map[bool]string{false: "computed", true: "remembered"}[remembered]
		b.Run(name, func(b *testing.B) {
			c, err := cache.Open(filepath.Join(b.TempDir(), "cache"))
			require.NoError(b, err)
			for b.Loop() {
				ids.Clear()
				if !remembered {
					b.StopTimer()
					c, err = cache.Open(filepath.Join(b.TempDir(), "cache"))
					require.NoError(b, err)

					b.StartTimer()
				}
				_, err := toolchainID(tc, c, runner.ExecRunner{})
				require.NoError(b, err)
				_, err = TreeIdentity(c, "devicelibs", tc.DeviceLibDir)
				require.NoError(b, err)
			}
		})
	}
}
