// Package hipify translates CUDA C++ sources to HIP (Translate), maps whole
// trees (PlanTree, RunTree), finds kernel definitions (Kernels,
// CheckParity) and ships the compatibility header (CompatHeader). It works
// on tokens, not on raw text: a go/scanner-style Scanner splits the source
// into comments, string/char/raw-string literals, numbers, identifiers,
// punctuation and preprocessor directives, and Translate rewrites only what
// the mapping tables (generated from ROCm/HIPIFY's CUDA-to-HIP tables) name.
//
// Translate runs a fixed sequence of passes, in the manner of go/scanner
// and go/parser: each is a function of a read-only context and of the
// values earlier passes returned, never of state another pass left in a
// shared struct.
//
//   - newFile (file.go) scans the source and finds the facts every pass
//     reads: inactive branches under -D (cond.go), an earlier
//     translation's compat block, template kernels, the libraries
//     included, the compat names the file mentions or defines. Nothing
//     writes to the *file afterwards.
//   - cudaMacros (cudamacros.go) maps CUDA's guard, version and arch
//     macros in conditionals; it returns its edits and the tokens it
//     handled, which the token pass skips.
//   - includes (pass.go, headers.go) maps #includes and adds hip_runtime.h;
//     it returns its edits, the insertions nothing may enclose, and the
//     anchor where a compat block goes.
//   - tokenPass (pass.go) renames identifiers and string literals (the
//     generated tables, zz_map.go), rewrites calls whose arguments change
//     (special.go), library namespaces (namespaces.go), CUDA macros in code,
//     warpSize in constant expressions (warpsize.go: the file's
//     #define NAME warpSize come from warpDefsOf, a function of the file),
//     and reports hazards (hazards.go); it returns its edits and the calls
//     whose argument lists move.
//   - The enclosing passes render earlier edits into larger ones, from the
//     sorted editList (edits.go): applyPerms (special.go), expandLaunchMacros
//     (macrolaunch.go, which translates each macro's expansion through the
//     same passes), launches (pass.go), translatePTX (ptx.go; it returns the
//     asm it replaced), and, last, ptxFallbacks (ptxbranch.go; it returns the
//     asm it routed around, whose hazards go).
//   - placeCompat (pass.go, compat.go) writes the compat block for the
//     pieces the passes asked for, at the includes pass's anchor.
//
// Diagnostics, replacement counts and compat pieces go to one collector
// (out, edits.go) that every pass is handed explicitly.
package hipify

//go:generate go run ./gen -tables gen/tables -o zz_map.go
