package remote

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestResolvePrecedence(t *testing.T) {
	file := Settings{Remote: "redis://file:6379/2", RemoteMode: "read-only", Timeout: "3s", MaxSize: "1MiB", Prefix: "team:", TTL: "7d"}
	env := envOf(map[string]string{EnvURL: "https://env.example/cache/", EnvMode: "write-only"})

	c, err := Resolve("http://flag:8080", "read-write", file, env)
	require.NoError(t, err)
	assert.Equal(t, "http://flag:8080", c.String())
	assert.Equal(t, ReadWrite, c.Mode)

	c, err = Resolve("", "", file, env)
	require.NoError(t, err)
	assert.Equal(t, "https://env.example", c.String(), "scheme://host only")
	assert.Equal(t, WriteOnly, c.Mode)

	c, err = Resolve("", "", file, envOf(nil))
	require.NoError(t, err)
	assert.Equal(t, "redis://file:6379", c.String())
	assert.Equal(t, ReadOnly, c.Mode)
	assert.Equal(t, 3*time.Second, c.Timeout)
	assert.Equal(t, int64(1<<20), c.MaxSize)
	assert.Equal(t, "team:", c.Prefix)
	assert.Equal(t, 7*24*time.Hour, c.TTL)

	c, err = Resolve("off", "", file, env)
	require.NoError(t, err)
	assert.Nil(t, c, "--remote-cache off wins over the environment and the file")
	c, err = Resolve("", "", Settings{}, envOf(nil))
	require.NoError(t, err)
	assert.Nil(t, c)

	c, err = Resolve("http://h", "", Settings{}, envOf(nil))
	require.NoError(t, err)
	assert.Equal(t, ReadOnly, c.Mode, "read-only unless told to write")
	assert.Empty(t, c.ModeFrom)
	assert.Nil(t, c.Key)
	assert.Equal(t, DefaultTimeout, c.Timeout)
	assert.Equal(t, int64(DefaultMaxSize), c.MaxSize)
	assert.Equal(t, DefaultPrefix, c.Prefix)
}

func TestResolveErrors(t *testing.T) {
	for _, tc := range []struct {
		url, mode string
		file      Settings
		env       map[string]string
		want      string
	}{
		{url: "ftp://h/x", want: `--remote-cache: URL scheme "ftp"`},
		{url: "h:8080", want: "URL scheme"},
		{url: "http://", want: "no host"},
		{url: "http://h/?x=1", want: "query"},
		{url: "redis://h/cache", want: "database number"},
		{url: "http://h", mode: "rw", want: `--remote-cache-mode: remote cache mode "rw"`},
		{file: Settings{Remote: "http://h", Timeout: "soon"}, want: "remote_timeout"},
		{file: Settings{Remote: "http://h", MaxSize: "big"}, want: "remote_max_size"},
		{file: Settings{Remote: "redis://h", TTL: "forever"}, want: "redis_ttl"},
		{url: "http://h", env: map[string]string{EnvToken: "t", EnvUser: "u"}, want: "not both"},
		{env: map[string]string{EnvURL: "gopher://h"}, want: EnvURL + ": URL scheme"},
	} {
		_, err := Resolve(tc.url, tc.mode, tc.file, envOf(tc.env))
		assert.ErrorContains(t, err, tc.want, "%+v", tc)
	}
}

// Credentials in a URL are refused, and the refusal does not repeat them.
func TestResolveRefusesCredentialsInURL(t *testing.T) {
	for _, u := range []string{"https://alice:hunter2@cache.example/", "redis://:hunter2@r:6379", "http://hunter2@h/", "http://a:hunter2@h/%zz"} {
		_, err := Resolve(u, "", Settings{}, envOf(nil))
		require.Error(t, err, u)
		assert.NotContains(t, err.Error(), "hunter2", u)
	}
}

func TestResolveCredentialsFromEnv(t *testing.T) {
	c, err := Resolve("https://h", "", Settings{}, envOf(map[string]string{EnvUser: "ci", EnvPassword: "pw", EnvCAFile: "/etc/ca.pem"}))
	require.NoError(t, err)
	assert.Equal(t, "ci", c.User)
	assert.Equal(t, "pw", c.Password)
	assert.Equal(t, "/etc/ca.pem", c.CAFile)
	assert.NotContains(t, c.String(), "pw")
}

// A URL shows in messages as scheme://host only: mistyped credentials end up
// in the path (https:/user:pw@host) or the opaque part (https:user:pw@host),
// a token in the query or the path.
func TestURLErrorsHideCredentials(t *testing.T) {
	for _, u := range []string{"https:/user:pw@host", "https:///user:pw@host/x", "https:user:pw@host",
		"http://host/p?token=pw", "user:pw@host", "redis://host/user:pw"} {
		_, err := Resolve("", "", Settings{}, envOf(map[string]string{EnvURL: u}))
		require.Error(t, err, u)
		assert.NotContains(t, err.Error(), "pw", u)
		assert.NotContains(t, err.Error(), "user", u)
		t.Log(err)
	}
	c, err := Resolve("https://cache.example:8443/pw-t0ken/rocmk/", "", Settings{}, envOf(nil))
	require.NoError(t, err)
	assert.Equal(t, "https://cache.example:8443", c.String())
}
