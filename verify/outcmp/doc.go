// Package outcmp compares what two runs of a program printed: the CUDA
// original (the reference, run now or replayed from a Recording) and its
// HIP translation. It knows nothing about building or running; rocmk port
// --run hands it two Runs and prints the Verdict.
//
// The comparison is line by line, never sorted: reordered output is a
// difference. Numbers are compared within a tolerance, the text around them
// must be equal, and built-in rules mask what differs by nature between two
// runs (times, bandwidths, pointers, device names, PIDs and dates). Each rule
// that hid a difference is reported with a count and an example, so a mask
// that hides too much is seen. docs/port-report.md ("Comparison rules")
// describes the rules.
package outcmp
