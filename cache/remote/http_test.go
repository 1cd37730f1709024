package remote

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A redirect to another port of the same host is not followed: Go's client
// would send the bearer token or the basic-auth password with it. It is a
// miss (or a failed upload) and one warning that names scheme://host only.
func TestHTTPRedirectToAnotherPortRefused(t *testing.T) {
	var mu sync.Mutex
	var leaked []string // requests that reached the other port
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		leaked = append(leaked, r.Method+" "+r.URL.Path+" auth="+r.Header.Get("Authorization"))
		mu.Unlock()
		w.WriteHeader(http.StatusNotFound)
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path+"?sig=s3cr3t-sig", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	require.NotEqual(t, srv.URL, other.URL)

	e := entries(1, "object")[0]
	for _, env := range []map[string]string{{EnvToken: "t0ken-value"}, {EnvUser: "ci", EnvPassword: "s3cret-pw"}} {
		m := newWriter(t, srv.URL+"/rocmk", nil, env)
		assertMissNothingStored(t, m, e.id)
		_, err := m.PutBytes(e.id, e.data, e.meta)
		require.NoError(t, err)
		require.NoError(t, m.Close(context.Background()))
		assert.Equal(t, int64(2), m.Counters().Errors, "the lookup and the upload")
		assertOneWarning(t, m, "redirected to "+other.URL+": not followed")
		for _, secret := range []string{"t0ken-value", "s3cret-pw", "s3cr3t-sig", "/rocmk"} {
			assert.NotContains(t, m.warn.list()[0], secret)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, leaked, "no request reached the other port")
}

// A redirect within the configured server (same scheme, host and port) is
// followed, with the credentials.
func TestHTTPRedirectWithinServerFollowed(t *testing.T) {
	store := map[string][]byte{}
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t0ken-value" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if old, ok := strings.CutPrefix(r.URL.Path, "/old/"); ok {
			http.Redirect(w, r, "/new/"+old, http.StatusPermanentRedirect)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		switch r.Method {
		case http.MethodPut:
			b, _ := io.ReadAll(r.Body)
			store[r.URL.Path] = b
		case http.MethodGet:
			b, ok := store[r.URL.Path]
			if !ok {
				w.WriteHeader(http.StatusNotFound)
				return
			}
			w.Write(b)
		}
	}))
	defer srv.Close()
	e := entries(1, "object")[0]
	env := map[string]string{EnvToken: "t0ken-value"}
	fill(t, newWriter(t, srv.URL+"/old", nil, env), []entry{e})
	m := newMachine(t, srv.URL+"/old", nil, env)
	data, _, err := m.GetBytes(e.id)
	require.NoError(t, err)
	assert.Equal(t, e.data, data)
	assert.Empty(t, m.warn.list())
}

// The tier's warning names the server as scheme://host: a token in the
// URL's path stays out of it.
func TestWarningHidesURLPath(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	m := newMachine(t, srv.URL+"/pw-t0ken/rocmk", nil, nil)
	assertMissNothingStored(t, m, entries(1, "object")[0].id)
	assertOneWarning(t, m, "remote cache "+srv.URL+": GET ac/")
	assert.NotContains(t, m.warn.list()[0], "t0ken")
}
