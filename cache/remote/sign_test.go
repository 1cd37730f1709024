package remote

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocmk/rocmk/cache"
)

const (
	testSecret  = "s3cret-signing-key-0123456789"
	otherSecret = "another-signing-key-9876543210"
)

var testKey, otherKey = deriveKey(testSecret), deriveKey(otherSecret)

// A record signed with the key reads back with it, and without one (a
// reader without a key does not check).
func TestSignRightKey(t *testing.T) {
	r := testRecord()
	b := r.marshalSigned(testKey)
	got, err := parseRecord(b, r.Action, testKey)
	require.NoError(t, err)
	assert.Equal(t, r, got)
	got, err = parseRecord(b, r.Action, nil)
	require.NoError(t, err)
	assert.Equal(t, r, got)
	assert.NotContains(t, string(b), testSecret)
	assert.Len(t, r.sign(testKey), sha256.Size)
}

// Unsigned, signed with another key, any field changed after signing, the
// action swapped: each is refused by a reader with the key.
func TestSignRefuses(t *testing.T) {
	r := testRecord()
	sig := r.sign(testKey)
	other := cache.ActionID(sha256.Sum256([]byte("other action")))
	changed := func(f func(*record)) []byte {
		c := r
		f(&c)
		return c.encode(sig) // the original signature on changed fields
	}
	for name, tc := range map[string]struct {
		b    []byte
		want cache.ActionID
		msg  string
	}{
		"unsigned":       {r.marshal(), r.Action, "unsigned"},
		"wrong key":      {r.marshalSigned(otherKey), r.Action, "bad signature"},
		"output changed": {changed(func(c *record) { c.Output = cache.OutputID(sha256.Sum256([]byte("evil"))) }), r.Action, "bad signature"},
		"size changed":   {changed(func(c *record) { c.Size++ }), r.Action, "bad signature"},
		"kind changed":   {changed(func(c *record) { c.Meta.Kind = "deps" }), r.Action, "bad signature"},
		"source changed": {changed(func(c *record) { c.Meta.Source = "evil.hip" }), r.Action, "bad signature"},
		"target changed": {changed(func(c *record) { c.Meta.Target = "gfx908" }), r.Action, "bad signature"},
		"toolchain":      {changed(func(c *record) { c.Meta.Toolchain = "clang 16" }), r.Action, "bad signature"},
		"rocm":           {changed(func(c *record) { c.Meta.ROCm = "6.0" }), r.Action, "bad signature"},
		"meta emptied":   {changed(func(c *record) { c.Meta.ROCm = "" }), r.Action, "bad signature"},
		// The action string flipped in place.
		"action flipped": {changed(func(c *record) { c.Action = other }), r.Action, "bad signature"},
		// The attack of issue 19: a valid record copied to another
		// action's key with its action rewritten to match.
		"action swapped": {changed(func(c *record) { c.Action = other }), other, "bad signature"},
		// Copied as it is: signed, but for another action.
		"moved": {r.marshalSigned(testKey), other, "signed for another action"},
		"signature cut": {func() []byte {
			b := r.encode(sig[:16])
			return b
		}(), r.Action, "bad signature"},
		"signature flipped": {func() []byte {
			s := append([]byte(nil), sig...)
			s[0] ^= 1
			return r.encode(s)
		}(), r.Action, "bad signature"},
	} {
		_, err := parseRecord(tc.b, tc.want, testKey)
		require.ErrorIs(t, err, errRefused, name)
		assert.ErrorContains(t, err, tc.msg, name)
		assert.NotContains(t, err.Error(), testSecret, name)
	}
	// Without a key nothing is checked: the swapped record is accepted
	// (the weakness the key closes).
	got, err := parseRecord(changed(func(c *record) { c.Action = other }), other, nil)
	require.NoError(t, err)
	assert.Equal(t, r.Output, got.Output)
}

// The key comes from the environment, as text or a file (trimmed, bounded,
// a regular file), and no message shows it.
func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "key")
	require.NoError(t, os.WriteFile(file, []byte(testSecret+"\n"), 0o600))
	c, err := Resolve("http://h", "", Settings{}, envOf(map[string]string{EnvKey: testSecret}))
	require.NoError(t, err)
	assert.Equal(t, testKey, c.Key)
	assert.Equal(t, EnvKey, c.KeyFrom)
	assert.Contains(t, c.Describe(), "signed entries only")
	assert.NotContains(t, c.Describe(), testSecret)
	c, err = Resolve("http://h", "", Settings{}, envOf(map[string]string{EnvKeyFile: file}))
	require.NoError(t, err)
	assert.Equal(t, testKey, c.Key, "the file's newline is not part of the key")
	assert.Contains(t, c.KeyFrom, file)
	c, err = Resolve("http://h", "", Settings{}, envOf(nil))
	require.NoError(t, err)
	assert.Nil(t, c.Key)
	assert.Contains(t, c.Describe(), "read-only, the default")
	assert.Contains(t, c.Describe(), "no key: unsigned entries trusted")

	big := filepath.Join(dir, "big")
	require.NoError(t, os.WriteFile(big, []byte(strings.Repeat("k", maxKeyFile+1)), 0o600))
	short := filepath.Join(dir, "short")
	require.NoError(t, os.WriteFile(short, []byte("s3cret\n"), 0o600))
	for _, tc := range []struct {
		env  map[string]string
		want []string
	}{
		{map[string]string{EnvKey: testSecret, EnvKeyFile: file}, []string{"both " + EnvKey + " and " + EnvKeyFile}},
		{map[string]string{EnvKey: "s3cret"}, []string{EnvKey + ": the key has 6 characters, want at least 16"}},
		{map[string]string{EnvKey: "   "}, []string{"the key has 0 characters"}},
		{map[string]string{EnvKeyFile: short}, []string{EnvKeyFile + " " + short + ": the key has 6 characters"}},
		{map[string]string{EnvKeyFile: filepath.Join(dir, "missing")}, []string{EnvKeyFile, filepath.Join(dir, "missing"), "no such file"}},
		{map[string]string{EnvKeyFile: dir}, []string{EnvKeyFile, dir, "not a regular file (a directory)"}},
		{map[string]string{EnvKeyFile: big}, []string{EnvKeyFile, big, "over the limit of 4096"}},
	} {
		_, err := Resolve("http://h", "", Settings{}, envOf(tc.env))
		require.Error(t, err, "%v", tc.env)
		for _, w := range tc.want {
			assert.Contains(t, err.Error(), w)
		}
		assert.NotContains(t, err.Error(), "s3cret")
	}
}

// Through real servers: a signing writer and a reader with the key; an
// unsigned writer, a reader with another key and a record swapped on the
// server are each a miss, counted apart from errors, with one warning.
func TestSignedTier(t *testing.T) {
	for _, s := range servers(t) {
		t.Run(s.name, func(t *testing.T) {
			key := map[string]string{EnvKey: testSecret}
			es := entries(3, "object")
			fill(t, newWriter(t, s.srv.URL, nil, key), es[:2])
			fill(t, newWriter(t, s.srv.URL, nil, nil), es[2:]) // unsigned

			b := newMachine(t, s.srv.URL, nil, key)
			for _, e := range es[:2] {
				data, got, err := b.GetBytes(e.id)
				require.NoError(t, err)
				assert.Equal(t, e.data, data)
				assert.True(t, got.Remote)
			}
			assertMissNothingStoredFor(t, b, es[2].id)
			assert.Equal(t, int64(1), b.Refused())
			assert.Equal(t, int64(1), b.Counters().Misses)
			assert.Zero(t, b.Counters().Errors, "a refusal is not a server failure")
			w := b.warn.list()
			require.Len(t, w, 1)
			assert.Contains(t, w[0], "refused as unsigned or badly signed")
			assert.Contains(t, w[0], EnvKey)
			assert.NotContains(t, w[0], testSecret)

			// A reader without a key takes signed and unsigned records.
			n := newMachine(t, s.srv.URL, nil, nil)
			for _, e := range es {
				_, _, err := n.GetBytes(e.id)
				require.NoError(t, err)
			}

			// Another key: every record refused, one warning.
			o := newMachine(t, s.srv.URL, nil, map[string]string{EnvKey: otherSecret})
			for _, e := range es {
				assertMissNothingStoredFor(t, o, e.id)
			}
			assert.Equal(t, int64(3), o.Refused())
			assert.Len(t, o.warn.list(), 1)

			// es[0]'s signed record stored under es[1]'s key with the
			// action rewritten: a valid object of the same target, refused.
			rec := record{Action: es[1].id, Output: cache.OutputID(sha256.Sum256(es[0].data)), Size: int64(len(es[0].data)), Meta: es[0].meta}
			s.plant(t, "ac/"+es[1].id.String(), rec.encode(record{Action: es[0].id, Output: rec.Output, Size: rec.Size, Meta: rec.Meta}.sign(testKey)))
			c := newMachine(t, s.srv.URL, nil, key)
			assertMissNothingStoredFor(t, c, es[1].id)
			assert.Equal(t, int64(1), c.Refused())
			data, _, err := newMachine(t, s.srv.URL, nil, nil).GetBytes(es[1].id)
			require.NoError(t, err, "without a key it is accepted")
			assert.Equal(t, es[0].data, data, "the wrong object: what the key is for")

			// Push with the key replaces the swapped and unsigned records.
			p := newWriter(t, s.srv.URL, nil, key)
			for _, e := range es {
				_, err := p.Local().PutBytes(e.id, e.data, e.meta)
				require.NoError(t, err)
			}
			rep, err := p.Push(context.Background(), 2, nil)
			require.NoError(t, err)
			assert.Equal(t, 1, rep.Present)
			assert.Equal(t, 2, rep.Uploaded)
			d := newMachine(t, s.srv.URL, nil, key)
			for _, e := range es {
				data, _, err := d.GetBytes(e.id)
				require.NoError(t, err)
				assert.Equal(t, e.data, data)
			}
			assert.Zero(t, d.Refused())
		})
	}
}

// assertMissNothingStoredFor: the lookup of id is a miss and stores nothing
// (other entries may be local).
func assertMissNothingStoredFor(t *testing.T, m machine, id cache.ActionID) {
	t.Helper()
	data, _, err := m.GetBytes(id)
	assert.ErrorIs(t, err, cache.ErrNotFound)
	assert.Nil(t, data)
	_, _, err = m.Local().GetBytes(id)
	assert.ErrorIs(t, err, cache.ErrNotFound, "nothing stored locally")
}
