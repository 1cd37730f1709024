// Package inspect reads what AMD and NVIDIA compilers write, without
// running anything: it owns the formats and the GPU tables.
//
//   - file.go, extract.go, inflate.go: Open a .hsaco, an offload bundle
//     (.hipfb, compressed or not, within a Budget) or an ELF host binary
//     with embedded GPU code, into a File of Images.
//   - codeobject.go: ReadCodeObject parses an AMDGPU code object: its
//     Target, Kernels (registers, LDS, scratch, spills) and descriptors.
//   - cubin.go: the kernel names of an NVIDIA cubin.
//   - target.go, processors.go, targets_doc.go: targets (gfx90a:xnack+),
//     their parsing and order, and the processor table (families, waves,
//     LDS, first ROCm) that `rocmk targets` prints.
//   - occupancy.go, diff.go, report.go: occupancy, kernel diffs between two
//     builds (--fail-on) and the reports `rocmk inspect` prints.
//
// It imports nothing of rocmk; compile, verify and commands build on it.
package inspect
