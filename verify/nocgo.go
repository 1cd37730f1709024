//go:build !cgo || !linux

package verify

func openHIP(int, func(string) string) (Runtime, error) {
	return nil, envError(ErrRuntimeUnavailable, "hip: rocmk was built without cgo (CGO_ENABLED=0) or not for linux, so it cannot dlopen libamdhip64.so")
}

func openCUDA(int, func(string) string) (Runtime, error) {
	return nil, envError(ErrRuntimeUnavailable, "cuda: rocmk was built without cgo (CGO_ENABLED=0) or not for linux, so it cannot dlopen libcuda.so.1")
}

func nvrtcID(func(string) string) (string, error) {
	return "", envError(ErrRuntimeUnavailable, "cuda: rocmk was built without cgo (CGO_ENABLED=0) or not for linux, so it cannot dlopen NVRTC")
}

func nvrtcLibrary() string { return "" }

func nvrtcCompile(func(string) string, string, []byte, map[string]string, []string) ([]byte, string, error) {
	_, err := nvrtcID(nil)
	return nil, "", err
}

const cgoOn = false

func hiprtcID(func(string) string) (string, error) {
	return "", envError(ErrRuntimeUnavailable, "hip: rocmk was built without cgo (CGO_ENABLED=0) or not for linux, so it cannot dlopen libhiprtc")
}

func hiprtcCompile(func(string) string, string, []byte, map[string]string, []string) ([]byte, string, error) {
	_, err := hiprtcID(nil)
	return nil, "", err
}
