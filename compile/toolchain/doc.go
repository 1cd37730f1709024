// Package toolchain finds and chooses the compilers rocmk builds with. It
// owns everything about the toolchain and nothing about a build:
//
//   - toolchain.go: discovery (FindInstallation over --rocm-path,
//     ROCM_PATH, HIP_PATH, /opt/rocm, /opt/rocm-X.Y.Z and Debian's /usr)
//     into an Installation, behind FindOptions (a root, an environment, a
//     LookPath and a runner.Runner, all replaceable in tests).
//   - clang.go: the Toolchain interface a Builder compiles through, Clang
//     (its argv for a Job, its identity, its search path) and the layouts
//     (clang, amdclang++, hipcc).
//   - toolchains.go, probe.go: the candidates (the installation's clang,
//     its other clangs, Debian's newer clangs with rocmk's device
//     libraries), each target's choice (TargetChoice) and the probe that
//     proves it compiles and links for the target.
//   - devlibs.go: device libraries generated for a target the installed
//     ones lack (PrepareDeviceLibs).
//   - identity.go: content identities of tools and trees (Remember,
//     TreeIdentity), remembered under their stat data.
//   - gpu.go, arch.go: the machine's GPUs (DetectGPUs) and the targets a
//     build selects (ResolveTargets).
//   - doctor.go: the Checkup `rocmk doctor` prints.
//   - resolver.go: the Resolver, one per command, that does each of these
//     once (a par.Cache per key) and is what compile's Session and the
//     commands ask.
//
// It imports only leaves (cache, cache/safefile, compile/par,
// compile/runner, inspect), never compile or commands.
package toolchain
