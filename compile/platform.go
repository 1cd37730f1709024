package compile

// Platform is the kind of device an image is built for.
type Platform int

const (
	// AMD devices run code objects that clang builds for their target.
	AMD Platform = iota + 1
	// NVIDIA devices run cubins that nvcc or NVRTC build for their sm_XY.
	NVIDIA
	// Host devices run the source as it is (verify's Go-reference
	// runtime): the image is the source, nothing compiles.
	Host
)

func (p Platform) String() string {
	switch p {
	case AMD:
		return "AMD"
	case NVIDIA:
		return "NVIDIA"
	case Host:
		return "host"
	}
	return "unknown platform"
}
