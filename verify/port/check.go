package port

import (
	"context"

	"github.com/rocmk/rocmk/verify/spec"
)

// checkOnCPU is what can be checked of the specs without a GPU (no
// runtime, or --no-verify): every case's inputs and reference, so a
// reference reading past a buffer or a geometry that is not whole is the
// spec's error, not "metadata ok". Only a cancelled context is returned.
func checkOnCPU(ctx context.Context, specs []*spec.Spec, verdicts []*Verdict) error {
	for i, s := range specs {
		if verdicts[i].specBad {
			continue
		}
		if err := s.CheckCases(ctx); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			verdicts[i].fail(err)
			verdicts[i].specBad = true
		}
	}
	return nil
}
