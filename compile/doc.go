// Package compile builds HIP sources into AMD GPU code objects, in
// parallel through the cache. Session (session.go) is one command's
// set-up: the runner.Runner every program goes through, the
// toolchain.Resolver, the Store (the local cache, or its remote tier) and
// nothing else; its Plan (plan.go: sources, rocmk.toml, targets, output
// names, checked once), Build, Pull, Images and Close are what commands
// use. The parts:
//
//   - builder.go, job.go, deps.go, includes.go, readroots.go: the Builder
//     (plan, dry run, schedule, collect) and its cache keys: the include
//     graph over compile/includes' scan, the deps entries, the roots a
//     compiler reads.
//   - outputs.go: the outputs beside the objects (manifest, bundles through
//     compile/bundle, embedding files through compile/embedding).
//   - image.go, imagesrc.go, hipnv.go: ImageBuilder, the image one GPU
//     loads, per Platform (platform.go).
//   - tree.go, treebuild.go, parity.go: translated trees of CUDA sources.
//   - project.go: rocmk.toml.
//
// The toolchain (discovery, choice, probes, GPUs, identities, doctor's
// checkup) is compile/toolchain's; response files are compile/rspfile's.
package compile
