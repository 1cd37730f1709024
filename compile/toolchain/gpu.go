package toolchain

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/rocmk/rocmk/inspect"
)

// GPU is one GPU the machine has, as the runtime would number it.
type GPU struct {
	Vendor string `json:"vendor"`         // "AMD" or "NVIDIA"
	Name   string `json:"name"`           // marketing name where known
	Arch   string `json:"arch"`           // "gfx90a", "sm_90"
	Source string `json:"source"`         // "kfd", "amdgpu-arch", "rocminfo", "nvidia-smi"
	Index  int    `json:"index"`          // device ordinal after the *_VISIBLE_DEVICES filters
	Node   int    `json:"node,omitempty"` // KFD topology node
}

// DetectGPUs lists the machine's GPUs: AMD ones from the KFD sysfs
// topology (gfx_target_version; CPU nodes have 0), else from amdgpu-arch or
// rocminfo when they are on PATH; NVIDIA ones from nvidia-smi. It honours
// ROCR_VISIBLE_DEVICES, then HIP_VISIBLE_DEVICES (or CUDA_VISIBLE_DEVICES),
// and HSA_OVERRIDE_GFX_VERSION[_<n>] for AMD, CUDA_VISIBLE_DEVICES (or
// HIP_VISIBLE_DEVICES) for NVIDIA. No GPU is not an error: the list is
// empty. A non-nil error reports a bad variable or a failing tool; the list
// returned with it holds what could be found.
func DetectGPUs(o FindOptions) ([]GPU, error) {
	var errs []error
	amd, err := kfdGPUs(o)
	if err != nil {
		errs = append(errs, err)
	}
	if len(amd) == 0 {
		amd = toolGPUs(o)
	}
	nv, err := nvidiaGPUs(o)
	if err != nil {
		errs = append(errs, err)
	}
	return append(amd, nv...), errors.Join(errs...)
}

const kfdNodes = "/sys/class/kfd/kfd/topology/nodes"

// kfdGPUs reads the KFD topology and applies the AMD visibility and
// override variables.
func kfdGPUs(o FindOptions) ([]GPU, error) {
	ents, err := os.ReadDir(o.path(kfdNodes))
	if err != nil {
		return nil, nil // no KFD: no AMD GPU driver loaded
	}
	type node struct {
		n    int
		ver  int
		uuid uint64
		name string
	}
	var nodes []node
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		props, err := os.ReadFile(o.path(kfdNodes + "/" + e.Name() + "/properties"))
		if err != nil {
			continue
		}
		kv := parseProps(props)
		ver := int(kv["gfx_target_version"])
		if ver == 0 {
			continue // CPU node
		}
		nd := node{n: n, ver: ver, uuid: kv["unique_id"]}
		if b, err := os.ReadFile(o.path(kfdNodes + "/" + e.Name() + "/name")); err == nil {
			nd.name = strings.TrimSpace(string(b))
		}
		nodes = append(nodes, nd)
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].n < nodes[j].n })
	var gpus []GPU
	for i, nd := range nodes {
		g := GPU{Vendor: "AMD", Arch: decodeGfxTargetVersion(nd.ver), Source: "kfd", Index: i, Node: nd.n}
		g.Name = amdName(nd.name, g.Arch)
		gpus = append(gpus, g)
	}
	var errs []error
	// ROCR_VISIBLE_DEVICES: indices or GPU-<unique_id> UUIDs, applied first.
	if v, ok := envValue(o, "ROCR_VISIBLE_DEVICES"); ok {
		uuids := make([]string, len(nodes))
		for i, nd := range nodes {
			uuids[i] = fmt.Sprintf("GPU-%016x", nd.uuid)
		}
		var err error
		gpus, err = filterVisible(gpus, v, "ROCR_VISIBLE_DEVICES", uuids)
		errs = append(errs, err)
	}
	hipVar := "HIP_VISIBLE_DEVICES"
	v, ok := envValue(o, hipVar)
	if !ok {
		hipVar = "CUDA_VISIBLE_DEVICES"
		v, ok = envValue(o, hipVar)
	}
	if ok {
		var err error
		gpus, err = filterVisible(gpus, v, hipVar, nil)
		errs = append(errs, err)
	}
	// HSA_OVERRIDE_GFX_VERSION (all devices) and _<n> (one device).
	for i := range gpus {
		for _, k := range []string{fmt.Sprintf("HSA_OVERRIDE_GFX_VERSION_%d", gpus[i].Index), "HSA_OVERRIDE_GFX_VERSION"} {
			v := o.getenv(k)
			if v == "" {
				continue
			}
			arch, err := parseOverride(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %v", k, v, err))
				break
			}
			gpus[i].Arch = arch
			gpus[i].Source = "kfd+" + k
			break
		}
	}
	return gpus, errors.Join(errs...)
}

func envValue(o FindOptions, k string) (string, bool) {
	v := o.getenv(k)
	return v, v != ""
}

func parseProps(b []byte) map[string]uint64 {
	kv := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 {
			if n, err := strconv.ParseUint(f[1], 10, 64); err == nil {
				kv[f[0]] = n
			}
		}
	}
	return kv
}

// decodeGfxTargetVersion turns KFD's gfx_target_version into a processor
// name: major = V/10000, minor = (V/100)%100, stepping = V%100, the last
// two in hex: 90010 -> gfx90a, 90402 -> gfx942, 110000 -> gfx1100.
func decodeGfxTargetVersion(v int) string {
	return fmt.Sprintf("gfx%d%x%x", v/10000, (v/100)%100, v%100)
}

// parseOverride turns HSA_OVERRIDE_GFX_VERSION "10.3.0" into "gfx1030".
func parseOverride(v string) (string, error) {
	parts := strings.Split(strings.TrimSpace(v), ".")
	if len(parts) != 3 {
		return "", errors.New("want major.minor.stepping, e.g. 10.3.0")
	}
	var n [3]int
	for i, p := range parts {
		x, err := strconv.Atoi(p)
		if err != nil || x < 0 || (i > 0 && x > 15) {
			return "", errors.New("want major.minor.stepping, e.g. 10.3.0")
		}
		n[i] = x
	}
	arch := fmt.Sprintf("gfx%d%x%x", n[0], n[1], n[2])
	if _, ok := inspect.LookupProcessor(arch); !ok {
		return arch, fmt.Errorf("%s is not a known processor", arch)
	}
	return arch, nil
}

// filterVisible keeps the GPUs a *_VISIBLE_DEVICES list names, in the
// list's order, and renumbers them from 0. Entries are indices into gpus,
// or (with uuids) UUID strings. An empty or unparsable entry ends the list,
// as the runtimes do, with an error for the unparsable one.
func filterVisible(gpus []GPU, list, name string, uuids []string) ([]GPU, error) {
	var out []GPU
	var err error
	used := map[int]bool{}
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		idx := -1
		if n, e := strconv.Atoi(f); e == nil {
			idx = n
		} else if uuids != nil {
			for i, u := range uuids {
				if strings.EqualFold(u, f) {
					idx = i
				}
			}
		}
		if idx < 0 || idx >= len(gpus) || used[idx] {
			if f != "" && (idx < 0 || used[idx]) {
				err = fmt.Errorf("%s=%q: entry %q does not name a GPU; devices after it are hidden", name, list, f)
			}
			break
		}
		used[idx] = true
		g := gpus[idx]
		g.Index = len(out)
		out = append(out, g)
	}
	return out, err
}

func amdName(kfdName, arch string) string {
	if kfdName != "" && !strings.EqualFold(kfdName, "ip discovery") && !strings.HasPrefix(kfdName, "gfx") {
		return kfdName
	}
	return "AMD " + arch
}

var (
	reGfxLine      = regexp.MustCompile(`(?m)^\s*(gfx[0-9a-f]{3,4})\s*$`)
	reRocminfoName = regexp.MustCompile(`(?m)^\s*Name:\s+(gfx[0-9a-f]{3,4})\s*$`)
	reMarketing    = regexp.MustCompile(`(?m)^\s*Marketing Name:\s+(.+?)\s*$`)
)

// toolGPUs asks amdgpu-arch, then rocminfo (when on PATH). These go
// through the ROCm runtime, which applies the visibility variables itself.
func toolGPUs(o FindOptions) []GPU {
	for _, tool := range []string{"amdgpu-arch", "offload-arch", "rocminfo"} {
		p, err := o.lookPath(tool)
		if err != nil {
			p = o.rocmTool(tool)
		}
		if p == "" {
			continue
		}
		out, err := o.run(p)
		if err != nil {
			continue
		}
		var gpus []GPU
		if tool == "rocminfo" {
			names := reMarketing.FindAllSubmatch(out, -1)
			for i, m := range reRocminfoName.FindAllSubmatch(out, -1) {
				g := GPU{Vendor: "AMD", Arch: string(m[1]), Source: tool, Index: i, Name: "AMD " + string(m[1])}
				// Marketing names come per agent, CPUs first; take the last len(gpus) ones.
				if k := len(names) - len(reRocminfoName.FindAllSubmatch(out, -1)) + i; k >= 0 && k < len(names) {
					g.Name = string(names[k][1])
				}
				gpus = append(gpus, g)
			}
		} else {
			for i, m := range reGfxLine.FindAllSubmatch(out, -1) {
				gpus = append(gpus, GPU{Vendor: "AMD", Arch: string(m[1]), Source: tool, Index: i, Name: "AMD " + string(m[1])})
			}
		}
		if len(gpus) > 0 {
			return gpus
		}
	}
	return nil
}

// rocmTool finds a ROCm tool that is not on PATH in the usual ROCm
// directories: --rocm-path, ROCM_PATH, /opt/rocm (bin/ and llvm/bin/).
func (o FindOptions) rocmTool(name string) string {
	for _, root := range []string{o.ROCmPath, o.getenv("ROCM_PATH"), "/opt/rocm"} {
		if root == "" {
			continue
		}
		for _, dir := range []string{"/bin/", "/llvm/bin/", "/lib/llvm/bin/"} {
			if p := filepath.Clean(root) + dir + name; o.isExec(p) {
				return o.path(p)
			}
		}
	}
	return ""
}

// nvidiaGPUs runs nvidia-smi --query-gpu=index,name,compute_cap.
func nvidiaGPUs(o FindOptions) ([]GPU, error) {
	p, err := o.lookPath("nvidia-smi")
	if err != nil {
		return nil, nil
	}
	out, err := o.run(p, "--query-gpu=index,name,compute_cap", "--format=csv,noheader")
	if err != nil {
		return nil, fmt.Errorf("nvidia-smi: %v", err)
	}
	gpus, err := parseNvidiaSMI(out)
	if err != nil {
		return nil, err
	}
	name := "CUDA_VISIBLE_DEVICES"
	v, ok := envValue(o, name)
	if !ok {
		name = "HIP_VISIBLE_DEVICES"
		v, ok = envValue(o, name)
	}
	if ok {
		return filterVisible(gpus, v, name, nil)
	}
	return gpus, nil
}

func parseNvidiaSMI(out []byte) ([]GPU, error) {
	var gpus []GPU
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.Split(line, ",")
		if len(f) != 3 {
			return gpus, fmt.Errorf("nvidia-smi: unexpected line %q", line)
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		idx, err := strconv.Atoi(f[0])
		if err != nil {
			return gpus, fmt.Errorf("nvidia-smi: unexpected line %q", line)
		}
		gpus = append(gpus, GPU{Vendor: "NVIDIA", Name: f[1], Arch: "sm_" + strings.ReplaceAll(f[2], ".", ""), Source: "nvidia-smi", Index: idx})
	}
	return gpus, nil
}

// AMDTargets returns the distinct processors of the AMD GPUs, in processor order.
func AMDTargets(gpus []GPU) []inspect.Target {
	seen := map[string]bool{}
	var out []inspect.Target
	for _, g := range gpus {
		if g.Vendor != "AMD" || seen[g.Arch] {
			continue
		}
		seen[g.Arch] = true
		if t, err := inspect.ParseTarget(g.Arch); err == nil {
			out = append(out, t)
		}
	}
	inspect.SortTargets(out)
	return out
}
