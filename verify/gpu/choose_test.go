package gpu

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmk/rocmk/compile/bundle"
	"github.com/rocmk/rocmk/inspect"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func objs(ids ...string) []Object {
	var out []Object
	for _, id := range ids {
		out = append(out, Object{Target: inspect.MustParseTarget(id), Data: []byte(id), From: "embedded"})
	}
	return out
}

func TestChooseTable(t *testing.T) {
	for _, c := range []struct {
		device string
		have   []string
		want   string // chosen target ID, "" = none
		match  Match
		why    string // in Explain or the error
	}{
		{"gfx90a:sramecc+:xnack-", []string{"gfx90a", "gfx90a:sramecc+:xnack-", "gfx90a:xnack-"}, "gfx90a:sramecc+:xnack-", MatchExact, "exact target ID"},
		// xnack/sramecc "any" runs in either mode; the more specific build wins.
		{"gfx90a:sramecc+:xnack-", []string{"gfx90a", "gfx90a:xnack-"}, "gfx90a:xnack-", MatchCompatible, "sramecc any runs with the device's sramecc on"},
		{"gfx90a:sramecc+:xnack+", []string{"gfx90a", "gfx90a:xnack-"}, "gfx90a", MatchCompatible, "xnack any runs with the device's xnack on"},
		{"gfx90a:sramecc-:xnack+", []string{"gfx90a:sramecc+", "gfx90a:xnack-"}, "", MatchNone, "built for sramecc on, the device runs sramecc off"},
		{"gfx908:sramecc+:xnack-", []string{"gfx908:xnack+"}, "", MatchNone, "built for xnack on, the device runs xnack off"},
		// A device of unknown mode takes only "any".
		{"gfx90a", []string{"gfx90a:xnack+", "gfx90a"}, "gfx90a", MatchExact, "exact"},
		{"gfx90a", []string{"gfx90a:xnack+"}, "", MatchNone, "the device's xnack mode is unknown"},
		// Generic targets cover their members only, after the processor's own.
		{"gfx1100", []string{"gfx11-generic", "gfx1030"}, "gfx11-generic", MatchGeneric, "generic target covering gfx1100"},
		{"gfx1151", []string{"gfx11-generic", "gfx1151"}, "gfx1151", MatchExact, "passed over gfx11-generic"},
		{"gfx1201", []string{"gfx11-generic", "gfx12-generic"}, "gfx12-generic", MatchGeneric, "gfx11-generic from embedded: another processor"},
		{"gfx942:sramecc+:xnack-", []string{"gfx9-generic", "gfx9-4-generic:xnack-"}, "gfx9-4-generic:xnack-", MatchGeneric, "generic"},
		{"gfx942:sramecc+:xnack+", []string{"gfx9-4-generic:xnack-"}, "", MatchNone, "built for xnack off, the device runs xnack on"},
		{"gfx906:sramecc-:xnack-", []string{"gfx9-generic", "gfx9-4-generic"}, "gfx9-generic", MatchGeneric, "gfx9-4-generic from embedded: another processor"},
		{"gfx1030", []string{"gfx10-1-generic", "gfx10-3-generic"}, "gfx10-3-generic", MatchGeneric, "generic"},
		{"gfx1010:xnack-", []string{"gfx10-1-generic", "gfx10-3-generic"}, "gfx10-1-generic", MatchGeneric, "generic"},
		{"gfx1100", []string{"gfx1101", "gfx1030"}, "", MatchNone, "another processor (gfx1101 is not gfx1100)"},
		{"gfx1100", nil, "", MatchNone, "no code objects to choose from"},
	} {
		t.Run(c.device+"/"+strings.Join(c.have, ","), func(t *testing.T) {
			ch, err := Choose(c.device, objs(c.have...))
			if c.want == "" {
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrNoObject)
				assert.Contains(t, err.Error(), c.why)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, ch.Object.Target.String())
			assert.Equal(t, c.want, string(ch.Object.Data))
			assert.Equal(t, c.match, ch.Match)
			assert.Contains(t, ch.Explain(), c.why)
			assert.Contains(t, ch.Explain(), "device "+inspect.MustParseTarget(c.device).String())
		})
	}
}

func TestChooseBadDevice(t *testing.T) {
	_, err := Choose("gfx91", objs("gfx90a"))
	require.Error(t, err)
	assert.ErrorIs(t, err, inspect.ErrInvalidTarget)
	assert.Contains(t, err.Error(), "device target")
}

func TestFromEmbedded(t *testing.T) {
	got, err := FromEmbedded(map[string][]byte{"gfx90a:xnack-": []byte("a"), "gfx1100": []byte("b")})
	require.NoError(t, err)
	ch, err := Choose("gfx90a:sramecc-:xnack-", got)
	require.NoError(t, err)
	assert.Equal(t, "a", string(ch.Object.Data))

	_, err = FromEmbedded(map[string][]byte{"sm_90": nil})
	assert.ErrorIs(t, err, inspect.ErrInvalidTarget)
}

// TestFromBundle chooses among the real code objects of a bundle laid out
// as clang-offload-bundler does (compile/bundle).
func TestFromBundle(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "toolchain", "machine-debian", "usr", "share", "rocmk-test", "objects")
	var entries []bundle.Entry
	data := map[string][]byte{}
	for _, p := range []string{"gfx90a", "gfx942", "gfx1100"} {
		b, err := os.ReadFile(filepath.Join(dir, p+".hsaco"))
		require.NoError(t, err)
		f, err := inspect.Parse(p, b)
		require.NoError(t, err)
		require.Len(t, f.Objects, 1)
		entries = append(entries, bundle.Entry{Target: f.Objects[0].Target, Data: b})
		data[p] = b
	}
	got, err := FromBundle("k.hipfb", bundle.Write(entries))
	require.NoError(t, err)
	require.Len(t, got, 3)
	ch, err := Choose("gfx1100", got)
	require.NoError(t, err)
	assert.Equal(t, data["gfx1100"], ch.Object.Data)
	assert.Contains(t, ch.Object.From, "k.hipfb entry hipv4-amdgcn-amd-amdhsa--gfx1100")

	_, err = Choose("gfx1201", got)
	var ne *NoObjectError
	require.True(t, errors.As(err, &ne))
	assert.Len(t, ne.Rejected, 3)

	_, err = FromBundle("x", []byte("not a bundle"))
	assert.Error(t, err)
}
