//go:build linux && cgo

package verify

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHIPBackendMissingLibraryNamesWhatWasLookedFor(t *testing.T) {
	if !cgoEnabled() {
		t.Skip("needs cgo")
	}
	_, err := dlopenFirst([]string{"libamdhip64.so.99", "/nonexistent/libamdhip64.so"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "libamdhip64.so.99")
	assert.Contains(t, err.Error(), "/nonexistent/libamdhip64.so")
}

func TestMissingSymbolsAreAllNamed(t *testing.T) {
	if !cgoEnabled() {
		t.Skip("needs cgo")
	}
	lib, err := dlopenFirst([]string{"libc.so.6"})
	require.NoError(t, err)
	defer lib.close()
	got := map[int]bool{}
	err = lib.resolve([]symSpec{req("malloc"), req("cuNotThere"), opt("alsoNotThere"), req("hipNope", "free")}, func(i int, p unsafe.Pointer) {
		got[i] = p != nil
	})
	_ = got
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cuNotThere")
	assert.NotContains(t, err.Error(), "alsoNotThere", "optional symbols are not required")
	assert.NotContains(t, err.Error(), "hipNope", "an alternative name that exists satisfies the spec")
	assert.True(t, strings.Contains(err.Error(), "1 required symbol"))
}

// fileID names the file a library was really loaded from (NVRTC's cache
// identity): the resolved path behind the soname, with its size.
func TestLibraryFileIDIsTheLoadedFile(t *testing.T) {
	lib, err := dlopenFirst([]string{"libc.so.6"})
	require.NoError(t, err)
	defer lib.close()
	id := lib.fileID("malloc")
	f := strings.Fields(id)
	require.Len(t, f, 4, id)
	assert.True(t, strings.HasPrefix(f[0], "/"), "an absolute path, not the soname: %s", id)
	assert.Contains(t, f[0], "libc")
	assert.NotEqual(t, "0", f[1], "the file's size")
}
