package outcmp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/rocmk/rocmk/cache/safefile"
)

// RecordingSchema names the format of a Recording file.
const RecordingSchema = "rocmk.port-recording/v1"

// MaxRecordingSize bounds what ReadRecording reads: a program's output and
// the files it was asked to keep, base64 where binary.
const MaxRecordingSize = 256 << 20

// Recording is a reference run saved on a machine that has the original's
// toolchain (nvcc) for a machine that has not: rocmk port --run --record.
type Recording struct {
	Schema    string    `json:"schema"`
	Program   string    `json:"program"`   // the program's source, as given
	Args      []string  `json:"args"`      // its arguments
	Toolchain string    `json:"toolchain"` // what built it ("nvcc 13.0")
	Device    string    `json:"device"`    // what it ran on ("NVIDIA H200")
	Run       Run       `json:"run"`
	Created   time.Time `json:"created"`
}

// WriteRecording writes rec to path atomically (a temporary file renamed
// over path); an empty Schema is filled in.
func WriteRecording(path string, rec Recording) error {
	if rec.Schema == "" {
		rec.Schema = RecordingSchema
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return safefile.Write(path, append(data, '\n'), safefile.Options{})
}

// ReadRecording reads a recording written by WriteRecording; errors name
// the file (and the line of a JSON error).
func ReadRecording(path string) (Recording, error) {
	var rec Recording
	data, err := safefile.Read(path, MaxRecordingSize)
	if err != nil {
		return rec, fmt.Errorf("recording %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return rec, fmt.Errorf("recording %s: corrupt: %s", path, jsonError(data, err))
	}
	if dec.More() {
		return rec, fmt.Errorf("recording %s: corrupt: data after the recording", path)
	}
	if rec.Schema != RecordingSchema {
		return rec, fmt.Errorf("recording %s: schema %q, want %q", path, rec.Schema, RecordingSchema)
	}
	return rec, nil
}

// jsonError places a decoding error at its line.
func jsonError(data []byte, err error) string {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 || off > int64(len(data)) {
		return err.Error()
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	return fmt.Sprintf("line %d: %v", line, err)
}

// runJSON is Run on disk: output as text when it is UTF-8 (readable and
// diffable), else as base64 in the *_base64 field.
type runJSON struct {
	ExitCode     int                 `json:"exit_code"`
	Signal       string              `json:"signal,omitempty"`
	TimedOut     bool                `json:"timed_out,omitempty"`
	Stdout       *string             `json:"stdout,omitempty"`
	StdoutBase64 []byte              `json:"stdout_base64,omitempty"`
	Stderr       *string             `json:"stderr,omitempty"`
	StderrBase64 []byte              `json:"stderr_base64,omitempty"`
	Files        map[string]fileJSON `json:"files,omitempty"`
	ElapsedNS    int64               `json:"elapsed_ns"`
}

type fileJSON struct {
	Text   *string `json:"text,omitempty"`
	Base64 []byte  `json:"base64,omitempty"`
}

func textOrBase64(b []byte) (*string, []byte) {
	if len(b) == 0 {
		return nil, nil
	}
	if utf8.Valid(b) {
		s := string(b)
		return &s, nil
	}
	return nil, b
}

func fromTextOrBase64(s *string, b []byte) []byte {
	if s != nil {
		return []byte(*s)
	}
	return b
}

// MarshalJSON writes Run as runJSON.
func (r Run) MarshalJSON() ([]byte, error) {
	j := runJSON{ExitCode: r.ExitCode, Signal: r.Signal, TimedOut: r.TimedOut, ElapsedNS: int64(r.Elapsed)}
	j.Stdout, j.StdoutBase64 = textOrBase64(r.Stdout)
	j.Stderr, j.StderrBase64 = textOrBase64(r.Stderr)
	if len(r.Files) > 0 {
		j.Files = map[string]fileJSON{}
		for name, data := range r.Files {
			var f fileJSON
			f.Text, f.Base64 = textOrBase64(data)
			j.Files[name] = f
		}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (r *Run) UnmarshalJSON(data []byte) error {
	var j runJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*r = Run{ExitCode: j.ExitCode, Signal: j.Signal, TimedOut: j.TimedOut, Elapsed: time.Duration(j.ElapsedNS),
		Stdout: fromTextOrBase64(j.Stdout, j.StdoutBase64), Stderr: fromTextOrBase64(j.Stderr, j.StderrBase64)}
	if len(j.Files) > 0 {
		r.Files = map[string][]byte{}
		for name, f := range j.Files {
			r.Files[name] = fromTextOrBase64(f.Text, f.Base64)
		}
	}
	return nil
}
