package verify

import "fmt"

// maxArgBytes bounds the packed kernel arguments (the C shims copy them into a
// fixed buffer).
const maxArgBytes = 256

// packArgs lays args out at their alignment (natural for scalars), as the
// kernel ABI does, and returns the buffer and each argument's offset plus the
// total size at the end.
func packArgs(args []Arg) ([]byte, []int32, error) {
	if len(args) > 64 {
		return nil, nil, fmt.Errorf("%d kernel arguments: at most 64", len(args))
	}
	offs := make([]int32, len(args)+1)
	var buf []byte
	for i, a := range args {
		if _, isBuf := a.IsBuf(); isBuf {
			return nil, nil, fmt.Errorf("argument %d is an unresolved buffer reference", i)
		}
		if al := a.Align(); al <= 0 || al&(al-1) != 0 || al > maxArgBytes {
			return nil, nil, fmt.Errorf("argument %d: alignment %d is not a power of two up to %d", i, al, maxArgBytes)
		}
		for len(buf)%a.Align() != 0 {
			buf = append(buf, 0)
		}
		offs[i] = int32(len(buf))
		buf = append(buf, a.Bytes()...)
	}
	offs[len(args)] = int32(len(buf))
	if len(buf) > maxArgBytes {
		return nil, nil, fmt.Errorf("kernel arguments take %d bytes: at most %d", len(buf), maxArgBytes)
	}
	return buf, offs, nil
}
