package remote

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/rocmk/rocmk/cache"
	"github.com/rocmk/rocmk/cache/safefile"
)

// Signed action entries. Anyone who may write to the server can store any
// record under any action; the output's sha256 only proves the bytes match
// the record. With a key, a writer signs each record with HMAC-SHA256 over
// the action and everything the record says (the output's sha256 and size
// and the Meta), and a reader with the key uses only records signed with
// it. Outputs (cas/) need no signature: they are named by their sha256,
// which the signed record holds.

// The environment variables that hold the key: secret text, like the
// credentials never read from a flag or a file that may be committed, and
// never printed.
const (
	EnvKey     = "ROCMK_REMOTE_CACHE_KEY"      // the key itself
	EnvKeyFile = "ROCMK_REMOTE_CACHE_KEY_FILE" // a file holding it
)

const (
	maxKeyFile = 4 << 10 // a key file is a line of text, not a stream
	minKeyLen  = 16      // shorter keys can be guessed offline from any signed record
	// keyContext separates the signing key from any other use of the
	// same secret (a token, a password).
	keyContext = "rocmk remote cache: action entry signing key v1"
	// macContext starts every signed message.
	macContext = "rocmk.cache.v1.Entry signature\x00"
)

// errRefused is wrapped by the refusals of a record that is not signed
// with the reader's key: a miss, counted apart from server failures.
var errRefused = errors.New("action entry refused")

// loadKey reads the key from the environment: the signing key derived
// from it and where it came from (for messages; never the key), or nil.
func loadKey(getenv func(string) string) ([]byte, string, error) {
	text, file := getenv(EnvKey), getenv(EnvKeyFile)
	from := EnvKey
	switch {
	case text != "" && file != "":
		return nil, "", fmt.Errorf("both %s and %s are set: use one", EnvKey, EnvKeyFile)
	case file != "":
		// safefile refuses named pipes and devices and bounds the read.
		b, err := safefile.Read(file, maxKeyFile)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", EnvKeyFile, err)
		}
		text, from = string(b), EnvKeyFile+" "+file
	case text == "":
		return nil, "", nil
	}
	// Whitespace around the key is not part of it: a file written by echo
	// and a variable set from it give the same key.
	text = strings.TrimSpace(text)
	if len(text) < minKeyLen {
		return nil, "", fmt.Errorf("%s: the key has %d characters, want at least %d (e.g. openssl rand -hex 32)", from, len(text), minKeyLen)
	}
	return deriveKey(text), from, nil
}

// deriveKey turns the secret text into the HMAC key:
// HMAC-SHA256(secret, keyContext).
func deriveKey(secret string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(keyContext))
	return m.Sum(nil)
}

// signature is a record's MAC: HMAC-SHA256 over macContext and the
// record's fields as the record holds them (strings, not parsed values, so
// that what is checked is exactly what was read), each one written, even
// empty, in a fixed order and length-prefixed: no two records share a
// message.
func signature(key []byte, action, output string, size uint64, m cache.Meta) []byte {
	b := []byte(macContext)
	for _, s := range []string{action, output, m.Kind, m.Source, m.Target, m.Toolchain, m.ROCm} {
		b = protowire.AppendString(b, s)
	}
	b = protowire.AppendVarint(b, size)
	mac := hmac.New(sha256.New, key)
	mac.Write(b)
	return mac.Sum(nil)
}

// sign is the signature of r (nil without a key: an unsigned record).
func (r record) sign(key []byte) []byte {
	if key == nil {
		return nil
	}
	return signature(key, r.Action.String(), r.Output.String(), uint64(r.Size), r.Meta)
}
