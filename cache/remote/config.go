package remote

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/rocmk/rocmk/cache"
)

// Mode says which way entries travel between the local cache and the
// remote one.
type Mode string

const (
	ReadWrite Mode = "read-write" // look up and upload: CI populating the cache (--remote-upload)
	ReadOnly  Mode = "read-only"  // look up only (the default): a client writes only when told to
	WriteOnly Mode = "write-only" // upload only: CI seeding a cache it never reads
)

func (m Mode) reads() bool  { return m != WriteOnly }
func (m Mode) writes() bool { return m != ReadOnly }

// ParseMode parses a --remote-cache-mode value.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ReadWrite, ReadOnly, WriteOnly:
		return m, nil
	}
	return "", fmt.Errorf("remote cache mode %q: want read-write, read-only or write-only", s)
}

// The environment variables that configure the remote tier. Credentials
// come only from the environment: never from a flag, a URL or a file that
// may be committed, and they are never printed.
const (
	EnvURL      = "ROCMK_REMOTE_CACHE"          // URL, or "off"
	EnvMode     = "ROCMK_REMOTE_CACHE_MODE"     // read-write, read-only, write-only
	EnvToken    = "ROCMK_REMOTE_CACHE_TOKEN"    // HTTP: Authorization: Bearer <token>
	EnvUser     = "ROCMK_REMOTE_CACHE_USER"     // HTTP basic auth user, Redis ACL user
	EnvPassword = "ROCMK_REMOTE_CACHE_PASSWORD" // HTTP basic auth password, Redis AUTH password
	EnvCAFile   = "ROCMK_REMOTE_CACHE_CA_FILE"  // PEM file of CA certificates (instead of the system roots)
	// EnvKey and EnvKeyFile (sign.go) hold the key that signs action records.
)

// Settings are the [cache] table of rocmk.toml (compile.ProjectCache has
// the same fields, so one converts to the other). Empty means unset.
type Settings struct {
	Remote     string `toml:"remote"`
	RemoteMode string `toml:"remote_mode"`
	CAFile     string `toml:"remote_ca_file"`
	Timeout    string `toml:"remote_timeout"`
	MaxSize    string `toml:"remote_max_size"`
	Prefix     string `toml:"redis_prefix"`
	TTL        string `toml:"redis_ttl"`
}

// Config is a resolved remote tier configuration.
type Config struct {
	URL      *url.URL // http, https, redis or rediss; never carries credentials
	Mode     Mode
	ModeFrom string        // where Mode was set ("" = nowhere: the read-only default)
	CAFile   string        // "" = the system roots
	Timeout  time.Duration // per request
	MaxSize  int64         // bigger outputs are neither uploaded nor downloaded
	Prefix   string        // Redis key prefix
	TTL      time.Duration // Redis key lifetime, 0 = none
	// Credentials, read from the environment by Resolve.
	Token, User, Password string
	// Key signs uploaded action records and is required of fetched ones
	// (sign.go); nil = records are neither signed nor checked. It is
	// derived from the secret in the environment, and KeyFrom names where
	// that came from (for messages).
	Key     []byte
	KeyFrom string
	// Background uploads: at most QueueLen outputs (and QueueBytes bytes)
	// wait; Close waits at most FlushTimeout for them.
	QueueLen     int
	QueueBytes   int64
	FlushTimeout time.Duration
	// RetryAfter is how long the circuit breaker leaves a failing server
	// alone (0 = DefaultRetryAfter).
	RetryAfter time.Duration
}

// Defaults.
const (
	DefaultTimeout      = 10 * time.Second
	DefaultMaxSize      = 64 << 20
	DefaultPrefix       = "rocmk:"
	DefaultFlushTimeout = 30 * time.Second
)

// String is the URL for people: scheme://host[:port] only (redact).
func (c *Config) String() string { return redact(c.URL) }

// redact is how every message shows a URL: scheme://host[:port], never the
// userinfo, path, query or fragment. A path or query may hold a token, and a
// mistyped URL puts credentials in the path (https:/user:pw@host,
// https:///user:pw@host) or in the opaque part (https:user:pw@host).
func redact(u *url.URL) string { return u.Scheme + "://" + u.Host }

// Resolve builds the configuration from the --remote-cache and
// --remote-cache-mode flags, the environment and the project's [cache]
// table, in that order of precedence. It returns nil when no remote cache
// is configured, or when the URL is "off".
func Resolve(flagURL, flagMode string, file Settings, getenv func(string) string) (*Config, error) {
	raw, from := first(flagURL, "--remote-cache", getenv(EnvURL), EnvURL, file.Remote, "rocmk.toml [cache] remote")
	if raw == "" || raw == "off" {
		return nil, nil
	}
	u, err := parseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	// Read-only unless told otherwise: a client that uploads can make
	// every other one use what it stores.
	c := &Config{URL: u, Mode: ReadOnly, Timeout: DefaultTimeout, MaxSize: DefaultMaxSize, Prefix: DefaultPrefix,
		QueueLen: 256, QueueBytes: 256 << 20, FlushTimeout: DefaultFlushTimeout}
	if m, from := first(flagMode, "--remote-cache-mode", getenv(EnvMode), EnvMode, file.RemoteMode, "rocmk.toml [cache] remote_mode"); m != "" {
		if c.Mode, err = ParseMode(m); err != nil {
			return nil, fmt.Errorf("%s: %w", from, err)
		}
		c.ModeFrom = from
	}
	c.CAFile, _ = first(getenv(EnvCAFile), "", file.CAFile, "")
	if file.Timeout != "" {
		if c.Timeout, err = time.ParseDuration(file.Timeout); err != nil || c.Timeout <= 0 {
			return nil, fmt.Errorf("rocmk.toml [cache] remote_timeout %q: want a duration such as 10s", file.Timeout)
		}
	}
	if file.MaxSize != "" {
		if c.MaxSize, err = cache.ParseSize(file.MaxSize); err != nil || c.MaxSize <= 0 {
			return nil, fmt.Errorf("rocmk.toml [cache] remote_max_size %q: want a size such as 64MiB", file.MaxSize)
		}
	}
	if file.Prefix != "" {
		c.Prefix = file.Prefix
	}
	if file.TTL != "" {
		if c.TTL, err = cache.ParseAge(file.TTL); err != nil {
			return nil, fmt.Errorf("rocmk.toml [cache] redis_ttl %q: %v", file.TTL, err)
		}
	}
	c.Token, c.User, c.Password = getenv(EnvToken), getenv(EnvUser), getenv(EnvPassword)
	if c.Token != "" && c.User != "" {
		return nil, fmt.Errorf("both %s and %s are set: use a bearer token or basic auth, not both", EnvToken, EnvUser)
	}
	if c.Key, c.KeyFrom, err = loadKey(getenv); err != nil {
		return nil, err
	}
	return c, nil
}

// Describe says, for -v, how the tier uses the server: the mode
// (and whether it is the default) and whether records are signed.
func (c *Config) Describe() string {
	s := string(c.Mode)
	if c.ModeFrom == "" {
		s += ", the default: --remote-upload to upload"
	}
	if c.Key != nil {
		return s + "; signed entries only, key from " + c.KeyFrom
	}
	return s + "; no key: unsigned entries trusted"
}

// first returns the first non-empty value and the name of where it came from.
func first(kv ...string) (string, string) {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i] != "" {
			return kv[i], kv[i+1]
		}
	}
	return "", ""
}

func parseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse's error repeats the raw text, which may hold a password.
		return nil, errors.New("not a valid URL")
	}
	switch u.Scheme {
	case "http", "https", "redis", "rediss":
	default:
		if u.Host == "" { // "user:pw@host" parses as scheme "user": show none of it
			return nil, errors.New("URL scheme: want http://, https://, redis:// or rediss:// and a host")
		}
		return nil, fmt.Errorf("URL scheme %q: want http://, https://, redis:// or rediss://", u.Scheme)
	}
	if u.User != nil {
		return nil, fmt.Errorf("credentials in the URL are not accepted (they would show in process lists and logs): set %s, or %s and %s",
			EnvToken, EnvUser, EnvPassword)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("URL %s has no host: want %s://host[:port][/path]", redact(u), u.Scheme)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("URL %s: query and fragment are not supported", redact(u))
	}
	if strings.HasPrefix(u.Scheme, "redis") && strings.Trim(u.Path, "/") != "" {
		if db := strings.Trim(u.Path, "/"); strings.Trim(db, "0123456789") != "" {
			return nil, fmt.Errorf("URL %s: the path of a Redis URL is a database number", redact(u))
		}
	}
	return u, nil
}
