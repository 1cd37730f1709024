// Package gpu is a runtime for programs that ship GPU kernels: it opens
// the GPU through verify's dlopen drivers, chooses the code object that
// fits the device (Choose), keeps one loaded module per device in a store
// safe for concurrent use (Device.Function), and compiles at run time with
// hipRTC when no shipped object fits, caching the result in rocmk's
// content-addressed cache. See docs/runtime.md.
package gpu
