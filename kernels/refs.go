package kernels

import "math"

// The CPU references, in float64. Each kernel's output is the reference of
// the inputs (already rounded to the dtype), rounded to the dtype once.

// Unary ops by name.
var unaryOps = map[string]func(float64) float64{
	"copy": func(x float64) float64 { return x },
	"neg":  func(x float64) float64 { return -x },
	"abs":  math.Abs,
	"exp":  math.Exp,
	"log":  math.Log,
	"sqrt": math.Sqrt,
	"tanh": math.Tanh,
	"relu": relu,
	"gelu": gelu,
	"silu": silu,
}

var unaryOrder = []string{"copy", "neg", "abs", "exp", "log", "sqrt", "tanh", "relu", "gelu", "silu"}

func relu(x float64) float64 {
	if math.IsNaN(x) {
		return x
	}
	if x > 0 {
		return x
	}
	return 0
}

// gelu is the tanh approximation (PyTorch approximate="tanh", candle gelu).
func gelu(x float64) float64 {
	if math.IsInf(x, 0) {
		if x > 0 {
			return x
		}
		return math.Copysign(0, -1)
	}
	const k = 0.7978845608028654 // sqrt(2/pi)
	return 0.5 * x * (1 + math.Tanh(k*(x+0.044715*x*x*x)))
}

// silu is x * sigmoid(x).
func silu(x float64) float64 {
	if math.IsInf(x, -1) {
		return math.Copysign(0, -1)
	}
	return x / (1 + math.Exp(-x))
}

// Binary ops by name.
var binaryOps = map[string]func(a, b float64) float64{
	"add":     func(a, b float64) float64 { return a + b },
	"sub":     func(a, b float64) float64 { return a - b },
	"mul":     func(a, b float64) float64 { return a * b },
	"div":     func(a, b float64) float64 { return a / b },
	"minimum": minimum,
	"maximum": maximum,
}

var binaryOrder = []string{"add", "sub", "mul", "div", "minimum", "maximum"}

// minimum propagates NaN (torch.minimum).
func minimum(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return math.Min(a, b)
}

func maximum(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return math.Max(a, b)
}

// rowSum, rowMax, rowMin, rowArgmax reduce one row.
func rowSum(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s
}

func rowMax(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		if math.IsNaN(v) {
			return v
		}
		m = math.Max(m, v)
	}
	return m
}

func rowMin(x []float64) float64 {
	m := math.Inf(1)
	for _, v := range x {
		if math.IsNaN(v) {
			return v
		}
		m = math.Min(m, v)
	}
	return m
}

// rowArgmax is the first index of the maximum; NaN counts as the maximum.
func rowArgmax(x []float64) int {
	best := 0
	for i, v := range x {
		if math.IsNaN(v) {
			return i
		}
		if v > x[best] {
			best = i
		}
	}
	return best
}

// softmaxRow writes exp(x-max)/sum into out.
func softmaxRow(x, out []float64) {
	m := rowMax(x)
	var s float64
	for i, v := range x {
		out[i] = math.Exp(v - m)
		s += out[i]
	}
	for i := range out {
		out[i] /= s
	}
}

// rmsnormRow: x / sqrt(mean(x^2) + eps) * alpha.
func rmsnormRow(x, alpha, out []float64, eps float64) {
	var ss float64
	for _, v := range x {
		ss += v * v
	}
	r := 1 / math.Sqrt(ss/float64(len(x))+eps)
	for i, v := range x {
		out[i] = v * r * alpha[i]
	}
}

// layernormRow: (x - mean) / sqrt(var + eps) * alpha + beta.
func layernormRow(x, alpha, beta, out []float64, eps float64) {
	n := float64(len(x))
	mean := rowSum(x) / n
	var q float64
	for _, v := range x {
		q += (v - mean) * (v - mean)
	}
	r := 1 / math.Sqrt(q/n+eps)
	for i, v := range x {
		out[i] = (v-mean)*r*alpha[i] + beta[i]
	}
}

// sortBefore orders by value, NaN last, ties by index (stable argsort).
func sortBefore(x []float64, a, b int) bool {
	va, vb := x[a], x[b]
	na, nb := math.IsNaN(va), math.IsNaN(vb)
	if na || nb {
		if na == nb {
			return a < b
		}
		return nb
	}
	if va != vb {
		return va < vb
	}
	return a < b
}
