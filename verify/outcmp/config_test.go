package outcmp

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeTOML(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rocmk.toml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

func TestLoadRules(t *testing.T) {
	r, err := LoadRules(writeTOML(t, `
sources = ["kernels"]   # rocmk build's keys are left alone

[port]
rtol = 1e-3
ignore = ['^seed \d+$']
expect = "Test passed"
files = ["out.ppm"]
compare_stderr = true
disable_rules = ["device"]
timeout = "30s"         # rocmk port --run's, not ours

[[verify]]
kernel = "k"
`))
	require.NoError(t, err)
	assert.Equal(t, Rules{RelTol: 1e-3, AbsTol: 1e-8, Ignore: []string{`^seed \d+$`}, Expect: "Test passed",
		Files: []string{"out.ppm"}, CompareStderr: true, Disable: []string{"device"}}, r)

	r, err = LoadRules(writeTOML(t, "sources = [\"k\"]\n"))
	require.NoError(t, err)
	assert.Equal(t, DefaultRules(), r, "no [port] table: the defaults")

	r, err = LoadRules(writeTOML(t, "[port]\natol = 0.0\n"))
	require.NoError(t, err)
	assert.Equal(t, Rules{RelTol: 1e-5}, r, "a zero given is kept")
}

func TestLoadRulesErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"[port]\nrtol = \"big\"\n", "rocmk.toml:2:8:"},
		{"[port]\nignore = ['(']\n", "rocmk.toml [port]: ignore pattern \"(\""},
		{"[port]\nexpect = '['\n", "rocmk.toml [port]: expect pattern \"[\""},
		{"[port]\nrtol = -1.0\n", "rocmk.toml [port]: tolerances must not be negative"},
		{"[port]\ndisable_rules = ['times']\n", `unknown built-in rule "times"`},
		{"[port\n", "rocmk.toml:1:"},
	} {
		_, err := LoadRules(writeTOML(t, c.text))
		assert.ErrorContains(t, err, c.want, c.text)
	}
	_, err := LoadRules(filepath.Join(t.TempDir(), "none.toml"))
	assert.ErrorContains(t, err, "none.toml")
}
