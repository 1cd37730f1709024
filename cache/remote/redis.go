package remote

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisBackend stores blobs as Redis strings under <prefix>ac/<hex> and
// <prefix>cas/<hex>, each with the configured TTL (as sccache does).
type redisBackend struct {
	client *redis.Client
	prefix string
	ttl    time.Duration
}

// quietLogger drops go-redis's own log lines: its errors reach the Tier,
// which reports the first one and counts the rest (stderr is the user's).
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

var setLogger sync.Once

func newRedisBackend(c *Config) (*redisBackend, error) {
	setLogger.Do(func() { redis.SetLogger(quietLogger{}) })
	o := &redis.Options{
		Addr:     c.URL.Host,
		Username: c.User,
		Password: c.Password,
		// A dead server must cost one failed attempt, not a series of
		// retries per lookup: the circuit breaker decides when to retry.
		MaxRetries:            -1,
		DialerRetries:         1,
		DialTimeout:           min(c.Timeout, 5*time.Second),
		ReadTimeout:           c.Timeout,
		WriteTimeout:          c.Timeout,
		ContextTimeoutEnabled: true,
		DisableIdentity:       true, // no CLIENT SETINFO: older servers and proxies reject it
	}
	if c.URL.Port() == "" {
		o.Addr = net.JoinHostPort(c.URL.Hostname(), "6379")
	}
	if db := strings.Trim(c.URL.Path, "/"); db != "" {
		n, err := strconv.Atoi(db)
		if err != nil {
			return nil, fmt.Errorf("redis URL: database %q is not a number", db)
		}
		o.DB = n
	}
	if c.URL.Scheme == "rediss" {
		o.TLSConfig = &tls.Config{ServerName: c.URL.Hostname(), MinVersion: tls.VersionTLS12}
		if c.CAFile != "" {
			pool, err := loadCAFile(c.CAFile)
			if err != nil {
				return nil, err
			}
			o.TLSConfig.RootCAs = pool
		}
	}
	// Every reply passes through respGuard: go-redis allocates what a reply
	// announces before reading it, so a lying server could crash rocmk. The
	// largest string rocmk asks for is a blob of the size limit plus the
	// probe byte of GETRANGE.
	maxBulk := max(c.MaxSize, maxRecordSize) + 1
	dial := redis.NewDialer(o) // go-redis's own (TCP, TLS), reading o when called
	o.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return guardRESP(conn, maxBulk), nil
	}
	return &redisBackend{client: redis.NewClient(o), prefix: c.Prefix, ttl: c.TTL}, nil
}

// get reads at most max+1 bytes (GETRANGE, not GET: a huge value planted
// under a key is never read whole). Redis answers an empty string for a
// missing key; no stored blob is empty (records never are, and an empty
// output is looked up by its hash, which the empty answer then matches).
func (b *redisBackend) get(ctx context.Context, key string, max int64) ([]byte, error) {
	s, err := b.client.GetRange(ctx, b.prefix+key, 0, max).Result()
	if err != nil {
		return nil, fmt.Errorf("GETRANGE %s: %w", shortKey(key), redisErr(err))
	}
	if s == "" && max > 0 {
		return nil, fmt.Errorf("GET %s: %w", shortKey(key), errNotFound)
	}
	if int64(len(s)) > max {
		return nil, fmt.Errorf("GET %s: more than %d bytes: %w", shortKey(key), max, errTooLong)
	}
	return []byte(s), nil
}

func (b *redisBackend) put(ctx context.Context, key string, data []byte) error {
	if err := b.client.Set(ctx, b.prefix+key, data, b.ttl).Err(); err != nil {
		return fmt.Errorf("SET %s: %w", shortKey(key), redisErr(err))
	}
	return nil
}

func (b *redisBackend) has(ctx context.Context, key string) (bool, error) {
	n, err := b.client.Exists(ctx, b.prefix+key).Result()
	if err != nil {
		return false, fmt.Errorf("EXISTS %s: %w", shortKey(key), redisErr(err))
	}
	return n > 0, nil
}

func (b *redisBackend) close() error { return b.client.Close() }

// redisErr adds a hint to authentication errors (the server's text names
// no secret).
func redisErr(err error) error {
	msg := err.Error()
	if strings.HasPrefix(msg, "NOAUTH") || strings.HasPrefix(msg, "WRONGPASS") || strings.Contains(msg, "NOPERM") {
		return fmt.Errorf("%w (check %s and %s)", err, EnvUser, EnvPassword)
	}
	if errors.Is(err, redis.Nil) {
		return errNotFound
	}
	return err
}
