package remote

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// A backend stores blobs by key: "ac/<hex>" (action records) and
// "cas/<hex>" (outputs by their sha256).
type backend interface {
	// get returns the blob, or an error wrapping errNotFound; a blob
	// longer than max is an error, never read whole.
	get(ctx context.Context, key string, max int64) ([]byte, error)
	put(ctx context.Context, key string, data []byte) error
	has(ctx context.Context, key string) (bool, error)
	close() error
}

// errNotFound is a backend's miss: the server answered, without the key.
var errNotFound = errors.New("not found")

// errTooLong is a body longer than the caller's limit: bad content, not a
// failing server.
var errTooLong = errors.New("longer than expected")

// httpBackend speaks the HTTP cache protocol of Bazel's remote caching:
// GET, PUT and HEAD of <base>/ac/<hex> and <base>/cas/<hex>, as served by
// bazel-remote, nginx or Apache with WebDAV, and commercial caches.
type httpBackend struct {
	base   string // scheme://host[:port][/path], no trailing slash
	client *http.Client
	auth   func(*http.Request)
}

func newHTTPBackend(c *Config) (*httpBackend, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: min(c.Timeout, 5*time.Second), KeepAlive: 30 * time.Second}).DialContext
	tr.MaxIdleConnsPerHost = 16
	tr.ResponseHeaderTimeout = c.Timeout
	tr.Proxy = http.ProxyFromEnvironment
	if c.CAFile != "" {
		pool, err := loadCAFile(c.CAFile)
		if err != nil {
			return nil, err
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	b := &httpBackend{base: strings.TrimSuffix((&url.URL{Scheme: c.URL.Scheme, Host: c.URL.Host, Path: c.URL.Path}).String(), "/"),
		client: &http.Client{Transport: tr, CheckRedirect: sameOrigin}, auth: func(*http.Request) {}}
	switch {
	case c.Token != "":
		token := c.Token
		b.auth = func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
	case c.User != "":
		user, pass := c.User, c.Password
		b.auth = func(r *http.Request) { r.SetBasicAuth(user, pass) }
	}
	return b, nil
}

// sameOrigin follows a redirect only within the configured server (same
// scheme, host and port): the token or password goes with every request, and
// Go's client would send it on to another port of the same host, or over
// plain http.
func sameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if origin(req.URL) != origin(via[0].URL) {
		return fmt.Errorf("redirected to %s: not followed, credentials go only to %s (set the URL of the server that answers)",
			redact(req.URL), redact(via[0].URL))
	}
	return nil
}

// origin is scheme://host:port, with the scheme's default port.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return u.Scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// loadCAFile reads a PEM bundle of CA certificates (bounded: 4 MiB).
func loadCAFile(name string) (*x509.CertPool, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("remote cache CA file: %w", err)
	}
	defer f.Close()
	pem, err := io.ReadAll(io.LimitReader(f, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("remote cache CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("remote cache CA file %s: no PEM certificate in it", name)
	}
	return pool, nil
}

func (b *httpBackend) do(ctx context.Context, method, key string, body []byte) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, b.base+"/"+key, rd)
	if err != nil {
		return nil, err
	}
	b.auth(req)
	resp, err := b.client.Do(req)
	if err != nil {
		// *url.Error names the whole URL, whose path may hold a token: keep
		// only the cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%s %s: %w", method, shortKey(key), err)
	}
	return resp, nil
}

func (b *httpBackend) get(ctx context.Context, key string, max int64) ([]byte, error) {
	resp, err := b.do(ctx, http.MethodGet, key, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if err := statusError("GET", key, resp); err != nil {
		return nil, err
	}
	if resp.ContentLength > max {
		return nil, fmt.Errorf("GET %s: %d bytes, more than %d: %w", shortKey(key), resp.ContentLength, max, errTooLong)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		// net/http reports a body shorter than its Content-Length as
		// io.ErrUnexpectedEOF: a server that died or a cut connection.
		return nil, fmt.Errorf("GET %s: body cut short after %d bytes: %w", shortKey(key), len(data), err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("GET %s: more than %d bytes: %w", shortKey(key), max, errTooLong)
	}
	return data, nil
}

func (b *httpBackend) put(ctx context.Context, key string, data []byte) error {
	resp, err := b.do(ctx, http.MethodPut, key, data)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return statusError("PUT", key, resp)
}

func (b *httpBackend) has(ctx context.Context, key string) (bool, error) {
	resp, err := b.do(ctx, http.MethodHead, key, nil)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if err := statusError("HEAD", key, resp); err != nil {
		if errors.Is(err, errNotFound) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

func (b *httpBackend) close() error {
	b.client.CloseIdleConnections()
	return nil
}

// statusError maps a response status to nil (2xx), errNotFound (404) or an
// error naming the status. A small error body is drained so the connection
// can be reused; it is not shown (it may echo request headers).
func statusError(method, key string, resp *http.Response) error {
	if resp.StatusCode/100 == 2 {
		return nil
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%s %s: %w", method, shortKey(key), errNotFound)
	}
	return &StatusError{Method: method, Key: shortKey(key), Code: resp.StatusCode}
}

// StatusError is an HTTP answer other than 2xx and 404.
type StatusError struct {
	Method, Key string
	Code        int
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("%s %s: HTTP %d %s", e.Method, e.Key, e.Code, http.StatusText(e.Code))
	if e.Code == http.StatusUnauthorized || e.Code == http.StatusForbidden {
		msg += fmt.Sprintf(" (check %s, or %s and %s)", EnvToken, EnvUser, EnvPassword)
	}
	return msg
}

// shortKey abbreviates "cas/<64 hex>" to "cas/<12 hex>" for messages.
func shortKey(key string) string {
	if i := strings.IndexByte(key, '/'); i >= 0 && len(key)-i-1 > 12 {
		return key[:i+13]
	}
	return key
}
