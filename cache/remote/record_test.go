package remote

import (
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/rocmk/rocmk/cache"
)

func testRecord() record {
	return record{Action: cache.ActionID(sha256.Sum256([]byte("action"))), Output: cache.OutputID(sha256.Sum256([]byte("out"))),
		Size: 3, Meta: cache.Meta{Kind: "object", Source: "vadd.hip", Target: "gfx90a:xnack+", Toolchain: "clang 15.0.6", ROCm: "5.2.3"}}
}

func TestRecordRoundTrip(t *testing.T) {
	r := testRecord()
	got, err := parseRecord(r.marshal(), r.Action, nil)
	require.NoError(t, err)
	assert.Equal(t, r, got)
}

// bazel-remote re-encodes what it stores with execution_metadata.worker
// set; the record must still decode, and its output file must be the first
// field a REAPI reader sees.
func TestRecordToleratesServerFields(t *testing.T) {
	r := testRecord()
	b := r.marshal()
	var meta []byte
	meta = protowire.AppendTag(meta, 1, protowire.BytesType) // ExecutedActionMetadata.worker
	meta = protowire.AppendString(meta, "10.0.0.7")
	b = protowire.AppendTag(b, resultExecMetadata, protowire.BytesType)
	b = protowire.AppendBytes(b, meta)
	b = protowire.AppendTag(b, 4, protowire.VarintType) // exit_code
	b = protowire.AppendVarint(b, 0)
	got, err := parseRecord(b, r.Action, nil)
	require.NoError(t, err)
	assert.Equal(t, r, got)

	num, typ, _ := protowire.ConsumeTag(b)
	assert.Equal(t, protowire.Number(2), num, "ActionResult.output_files")
	assert.Equal(t, protowire.BytesType, typ)
	assert.Contains(t, string(b), r.Output.String(), "the digest hash is the hex sha256, as REAPI's Digest.hash")
}

func TestRecordRejects(t *testing.T) {
	r := testRecord()
	good := r.marshal()
	other := cache.ActionID(sha256.Sum256([]byte("other")))
	_, err := parseRecord(good, other, nil)
	assert.ErrorContains(t, err, "names another action")

	noEntry := record{Action: r.Action, Output: r.Output, Size: 3}.marshal()
	// Strip the auxiliary metadata: an ActionResult from some other tool.
	_, err = parseRecord(noEntry[:len(noEntry)/2], r.Action, nil)
	assert.ErrorIs(t, err, errBadRecord)

	for name, b := range map[string][]byte{
		"empty":     nil,
		"garbage":   []byte("<html>502 Bad Gateway</html>"),
		"truncated": good[:len(good)-5],
		"json":      []byte(`{"action":"` + r.Action.String() + `"}`),
	} {
		_, err := parseRecord(b, r.Action, nil)
		assert.ErrorIs(t, err, errBadRecord, name)
	}

	bad := r
	bad.Size = -1
	_, err = parseRecord(bad.marshal(), r.Action, nil)
	assert.ErrorIs(t, err, errBadRecord, "negative size")

	upper := strings.Replace(string(good), r.Output.String(), strings.ToUpper(r.Output.String()), 1)
	_, err = parseRecord([]byte(upper), r.Action, nil)
	assert.ErrorContains(t, err, "bad output digest", "digest hashes are lowercase hex")
}

func FuzzParseRecord(f *testing.F) {
	r := testRecord()
	f.Add(r.marshal())
	f.Add(r.marshalSigned(testKey))
	f.Add([]byte{0x12, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := parseRecord(b, r.Action, nil)
		if err == nil {
			again, err := parseRecord(got.marshal(), r.Action, nil)
			if err != nil || again != got {
				t.Fatalf("re-encoding changed the record: %v %+v %+v", err, again, got)
			}
		}
	})
}
