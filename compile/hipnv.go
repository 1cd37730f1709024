package compile

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// hipnvFS holds rocmk's HIP-on-NVIDIA headers (hipnv/hip) and the C and C++
// headers NVRTC lacks (hipnv/libc); see hipnv/README.md.
//
//go:embed hipnv/hip hipnv/hipcub hipnv/libc
var hipnvFS embed.FS

var hipnv struct {
	once sync.Once
	hip  map[string]string // "hip/hip_runtime.h" -> text
	libc map[string]string // "math.h" -> text
	id   string            // hash of both sets
}

func loadHIPNV() {
	hipnv.once.Do(func() {
		hipnv.hip, hipnv.libc = map[string]string{}, map[string]string{}
		h := sha256.New()
		_ = fs.WalkDir(hipnvFS, "hipnv", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := hipnvFS.ReadFile(p)
			if err != nil {
				return err
			}
			rel := strings.TrimPrefix(p, "hipnv/")
			fmt.Fprintf(h, "%s %d\n", rel, len(b))
			h.Write(b)
			if name, ok := strings.CutPrefix(rel, "libc/"); ok {
				hipnv.libc[name] = string(b)
			} else {
				hipnv.hip[rel] = string(b)
			}
			return nil
		})
		hipnv.id = hex.EncodeToString(h.Sum(nil))
	})
}

// nvrtcHeaders are the in-memory headers NVRTC compiles HIP sources with:
// rocmk's HIP headers and the C and C++ headers it lacks.
func nvrtcHeaders() map[string]string {
	loadHIPNV()
	out := make(map[string]string, len(hipnv.hip)+len(hipnv.libc))
	for n, s := range hipnv.hip {
		out[n] = s
	}
	for n, s := range hipnv.libc {
		out[n] = s
	}
	return out
}

// hipnvID identifies the embedded headers (for image keys).
func hipnvID() string {
	loadHIPNV()
	return hipnv.id
}

// hipnvTree is rocmk's HIP headers as a tree nvcc can be given with -I
// (placed under root, content-addressed like translated trees).
func hipnvTree(root string) (*Tree, error) {
	loadHIPNV()
	t := &Tree{byPath: map[string]*TreeFile{}, byRel: map[string]*TreeFile{}}
	for n, s := range hipnv.hip {
		f := &TreeFile{Rel: n, Data: []byte(s), Copied: "rocmk's HIP-on-NVIDIA header"}
		t.Files = append(t.Files, f)
		t.byRel[n] = f
	}
	sort.Slice(t.Files, func(i, j int) bool { return t.Files[i].Rel < t.Files[j].Rel })
	t.hash()
	if err := t.Place(root); err != nil {
		return nil, err
	}
	return t, nil
}

// cudaIncludeDirs finds the CUDA toolkit's include directory NVRTC needs
// for cuda_fp16.h and the like: from $CUDA_PATH, $CUDA_HOME, nvcc's
// installation, the directory NVRTC was loaded from (lib64/ or
// targets/<arch>/lib/ beside include/), /usr/local/cuda, /usr/include. Its
// cccl/ (CUDA 13's libcu++ and nv/target) comes with it.
func cudaIncludeDirs(getenv func(string) string, nvcc, nvrtcLib string) []string {
	var cands []string
	for _, v := range []string{"CUDA_PATH", "CUDA_HOME"} {
		if r := getenv(v); r != "" {
			cands = append(cands, filepath.Join(r, "include"))
		}
	}
	if nvcc != "" {
		if p, err := filepath.EvalSymlinks(nvcc); err == nil {
			nvcc = p
		}
		cands = append(cands, filepath.Join(filepath.Dir(filepath.Dir(nvcc)), "include"))
	}
	if nvrtcLib != "" {
		lib := filepath.Dir(nvrtcLib)
		cands = append(cands, filepath.Join(filepath.Dir(lib), "include"), filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(lib))), "include"))
	}
	cands = append(cands, "/usr/local/cuda/include", "/usr/include")
	for _, c := range cands {
		if _, err := os.Stat(filepath.Join(c, "cuda_fp16.h")); err != nil {
			continue
		}
		dirs := []string{c}
		if fi, err := os.Stat(filepath.Join(c, "cccl")); err == nil && fi.IsDir() {
			dirs = append(dirs, filepath.Join(c, "cccl"))
		}
		return dirs
	}
	return nil
}

// nvrtcLibrary is implemented by an NVRTC that can say which file it was
// loaded from (verify.NVRTC): the CUDA include directory is found beside it.
type nvrtcLibrary interface{ Library() string }

// HIPNVInclude writes rocmk's HIP-on-NVIDIA headers under root and returns
// the directory to give nvcc with -I (rocmk port --run builds whole
// programs with it).
func HIPNVInclude(root string) (string, error) {
	t, err := hipnvTree(root)
	if err != nil {
		return "", err
	}
	return t.Dir, nil
}
