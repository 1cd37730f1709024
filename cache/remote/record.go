package remote

import (
	"crypto/hmac"
	"encoding/hex"
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/rocmk/rocmk/cache"
)

// A record is what /ac/<action> holds: the action's output, named by its
// sha256 and size, and the Meta the local index needs.
//
// It is encoded as a Bazel Remote Execution API ActionResult with one
// output file, so servers that validate action-cache entries (bazel-remote
// does by default) accept and serve it; rocmk's own fields travel as a
// google.protobuf.Any in execution_metadata.auxiliary_metadata, the place
// the API leaves for tool metadata. Unknown fields are skipped on decoding:
// bazel-remote adds execution_metadata.worker to what it stores.
//
// With a key the Entry also carries the record's signature (sign.go), in a
// field of its own: to the server it is opaque bytes inside an Any.
type record struct {
	Action cache.ActionID
	Output cache.OutputID
	Size   int64
	Meta   cache.Meta
}

// Field numbers from build/bazel/remote/execution/v2/remote_execution.proto
// and google/protobuf/any.proto; entry* are rocmk.cache.v1.Entry's own.
const (
	resultOutputFiles        = 2 // ActionResult.output_files (OutputFile)
	resultExecMetadata       = 9 // ActionResult.execution_metadata (ExecutedActionMetadata)
	fileP                    = 1 // OutputFile.path
	fileDigest               = 2 // OutputFile.digest (Digest)
	digestHash               = 1 // Digest.hash (lowercase hex)
	digestSize               = 2 // Digest.size_bytes
	metaAuxiliary            = 11
	anyTypeURL               = 1
	anyValue                 = 2
	entryVersion             = 1
	entryAction              = 2
	entryKind                = 3
	entrySource              = 4
	entryTarget              = 5
	entryToolchain           = 6
	entryROCm                = 7
	entrySignature           = 8 // HMAC-SHA256 (sign.go); absent in unsigned records
	recordVersion            = 1
	outputPath               = "rocmk-output"
	entryTypeURL             = "type.googleapis.com/rocmk.cache.v1.Entry"
	maxRecordSize      int64 = 64 << 10
)

// marshal encodes an unsigned record.
func (r record) marshal() []byte { return r.encode(nil) }

// marshalSigned encodes r signed with key (unsigned without one).
func (r record) marshalSigned(key []byte) []byte { return r.encode(r.sign(key)) }

// encode encodes r with the signature sig (none if nil).
func (r record) encode(sig []byte) []byte {
	var digest []byte
	digest = protowire.AppendTag(digest, digestHash, protowire.BytesType)
	digest = protowire.AppendString(digest, r.Output.String())
	digest = protowire.AppendTag(digest, digestSize, protowire.VarintType)
	digest = protowire.AppendVarint(digest, uint64(r.Size))

	var file []byte
	file = protowire.AppendTag(file, fileP, protowire.BytesType)
	file = protowire.AppendString(file, outputPath)
	file = protowire.AppendTag(file, fileDigest, protowire.BytesType)
	file = protowire.AppendBytes(file, digest)

	var entry []byte
	entry = protowire.AppendTag(entry, entryVersion, protowire.VarintType)
	entry = protowire.AppendVarint(entry, recordVersion)
	for _, f := range []struct {
		num protowire.Number
		v   string
	}{{entryAction, r.Action.String()}, {entryKind, r.Meta.Kind}, {entrySource, r.Meta.Source},
		{entryTarget, r.Meta.Target}, {entryToolchain, r.Meta.Toolchain}, {entryROCm, r.Meta.ROCm}} {
		if f.v != "" {
			entry = protowire.AppendTag(entry, f.num, protowire.BytesType)
			entry = protowire.AppendString(entry, f.v)
		}
	}
	if sig != nil {
		entry = protowire.AppendTag(entry, entrySignature, protowire.BytesType)
		entry = protowire.AppendBytes(entry, sig)
	}
	var anyMsg []byte
	anyMsg = protowire.AppendTag(anyMsg, anyTypeURL, protowire.BytesType)
	anyMsg = protowire.AppendString(anyMsg, entryTypeURL)
	anyMsg = protowire.AppendTag(anyMsg, anyValue, protowire.BytesType)
	anyMsg = protowire.AppendBytes(anyMsg, entry)

	var meta []byte
	meta = protowire.AppendTag(meta, metaAuxiliary, protowire.BytesType)
	meta = protowire.AppendBytes(meta, anyMsg)

	var b []byte
	b = protowire.AppendTag(b, resultOutputFiles, protowire.BytesType)
	b = protowire.AppendBytes(b, file)
	b = protowire.AppendTag(b, resultExecMetadata, protowire.BytesType)
	b = protowire.AppendBytes(b, meta)
	return b
}

// errBadRecord is wrapped by every decoding failure.
var errBadRecord = errors.New("bad action record")

// rawRecord is what parseRecord read, before it is checked.
type rawRecord struct {
	output, action string
	sig            []byte
	size           uint64
	haveSize       bool
	version        uint64
	meta           cache.Meta
}

// readOutputFile reads an OutputFile; only rocmk's output path counts.
func (raw *rawRecord) readOutputFile(v []byte) error {
	var path, hash string
	var fsize uint64
	var okSize bool
	err := fields(v, func(num protowire.Number, v []byte, _ uint64) error {
		switch num {
		case fileP:
			path = string(v)
		case fileDigest:
			return fields(v, func(num protowire.Number, v []byte, n uint64) error {
				switch num {
				case digestHash:
					hash = string(v)
				case digestSize:
					fsize, okSize = n, true
				}
				return nil
			})
		}
		return nil
	})
	if err == nil && path == outputPath {
		raw.output, raw.size, raw.haveSize = hash, fsize, okSize
	}
	return err
}

// readAuxiliary reads an auxiliary metadata Any; only rocmk's entry counts.
func (raw *rawRecord) readAuxiliary(v []byte) error {
	var url string
	var value []byte
	if err := fields(v, func(num protowire.Number, v []byte, _ uint64) error {
		switch num {
		case anyTypeURL:
			url = string(v)
		case anyValue:
			value = v
		}
		return nil
	}); err != nil || url != entryTypeURL {
		return err
	}
	return fields(value, func(num protowire.Number, v []byte, n uint64) error {
		switch num {
		case entryVersion:
			raw.version = n
		case entryAction:
			raw.action = string(v)
		case entryKind:
			raw.meta.Kind = string(v)
		case entrySource:
			raw.meta.Source = string(v)
		case entryTarget:
			raw.meta.Target = string(v)
		case entryToolchain:
			raw.meta.Toolchain = string(v)
		case entryROCm:
			raw.meta.ROCm = string(v)
		case entrySignature:
			raw.sig = v
		}
		return nil
	})
}

// parseRecord decodes a record and checks that it is about action want.
// With a key it also checks the record's signature: a record unsigned,
// changed after signing or signed with another key is refused (errRefused).
func parseRecord(b []byte, want cache.ActionID, key []byte) (record, error) {
	var raw rawRecord
	err := fields(b, func(num protowire.Number, v []byte, _ uint64) error {
		switch num {
		case resultOutputFiles:
			return raw.readOutputFile(v)
		case resultExecMetadata:
			return fields(v, func(num protowire.Number, v []byte, _ uint64) error {
				if num != metaAuxiliary {
					return nil
				}
				return raw.readAuxiliary(v)
			})
		}
		return nil
	})
	r := record{Meta: raw.meta}
	output, action, sig, size, haveSize, version := raw.output, raw.action, raw.sig, raw.size, raw.haveSize, raw.version
	r.Size = int64(size)
	switch {
	case err != nil:
		return r, fmt.Errorf("%w: %v", errBadRecord, err)
	case version != recordVersion:
		return r, fmt.Errorf("%w: rocmk entry version %d, want %d", errBadRecord, version, recordVersion)
	case key != nil && len(sig) == 0:
		return r, fmt.Errorf("%w: unsigned", errRefused)
	// The signature covers the fields as read, the action included: a
	// changed field, or a record moved to another action's key with its
	// action rewritten, does not match.
	case key != nil && !hmac.Equal(sig, signature(key, action, output, size, r.Meta)):
		return r, fmt.Errorf("%w: bad signature (changed after signing, or signed with another key)", errRefused)
	case key != nil && action != want.String():
		return r, fmt.Errorf("%w: signed for another action", errRefused)
	case action != want.String():
		return r, fmt.Errorf("%w: it names another action", errBadRecord)
	case !haveSize || r.Size < 0 || r.Size > 1<<62:
		return r, fmt.Errorf("%w: no output size", errBadRecord)
	}
	o, err := hex.DecodeString(output)
	if err != nil || len(o) != cache.HashSize || hex.EncodeToString(o) != output {
		return r, fmt.Errorf("%w: bad output digest %q", errBadRecord, truncate(output, 80))
	}
	r.Action = want
	copy(r.Output[:], o)
	return r, nil
}

// fields calls f for each field of a protobuf message: v is the payload of
// a length-delimited field, n the value of a varint field.
func fields(b []byte, f func(num protowire.Number, v []byte, n uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := f(num, v, x); err != nil {
			return err
		}
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
