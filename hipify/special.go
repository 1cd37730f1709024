package hipify

import "strings"

// argOp changes one argument of a call.
type argOp struct {
	kind byte   // 'w': wrap (text has one %s), 'd': delete, 'i': insert before (i == len: append), 'r': replace
	i    int    // argument index
	text string // wrapper pattern, inserted or replacement text
}

// callRule is a call whose arguments change between CUDA and HIP
// (hipify-clang's argument analysis).
type callRule struct {
	nargs  int  // the rule applies only with this many arguments (0: any)
	roc    bool // only under --roc
	miopen bool // only under --miopen
	// perm rebuilds the argument list: comma-separated source argument
	// indexes, or =literal text
	perm string
	to   string
	ops  []argOp
	// hazard, when set, is reported at the call
	hazard, hcode string
	// before, when set: the rule applies only to a target HIP older than
	// it (a newer HIP takes the call as CUDA writes it)
	before Version
}

const (
	hipSymbol = "HIP_SYMBOL(%s)"
	voidCast  = "reinterpret_cast<const void*>(%s)"
	maskNote  = "the lane mask is dropped: HIP's warp intrinsics act on the whole wavefront (64 lanes on CDNA); check the code relies on no partial-warp mask"
)

var callRules = map[string][]callRule{
	"cudaMemcpyToSymbol":                         {{ops: []argOp{{'w', 0, hipSymbol}}}},
	"cudaMemcpyToSymbolAsync":                    {{ops: []argOp{{'w', 0, hipSymbol}}}},
	"cudaMemcpyFromSymbol":                       {{ops: []argOp{{'w', 1, hipSymbol}}}},
	"cudaMemcpyFromSymbolAsync":                  {{ops: []argOp{{'w', 1, hipSymbol}}}},
	"cudaGetSymbolAddress":                       {{ops: []argOp{{'w', 1, hipSymbol}}}},
	"cudaGetSymbolSize":                          {{ops: []argOp{{'w', 1, hipSymbol}}}},
	"cudaGraphAddMemcpyNodeToSymbol":             {{ops: []argOp{{'w', 4, hipSymbol}}}},
	"cudaGraphAddMemcpyNodeFromSymbol":           {{ops: []argOp{{'w', 5, hipSymbol}}}},
	"cudaGraphMemcpyNodeSetParamsToSymbol":       {{ops: []argOp{{'w', 1, hipSymbol}}}},
	"cudaGraphMemcpyNodeSetParamsFromSymbol":     {{ops: []argOp{{'w', 2, hipSymbol}}}},
	"cudaGraphExecMemcpyNodeSetParamsToSymbol":   {{ops: []argOp{{'w', 2, hipSymbol}}}},
	"cudaGraphExecMemcpyNodeSetParamsFromSymbol": {{ops: []argOp{{'w', 3, hipSymbol}}}},
	"cudaFuncSetCacheConfig":                     {{ops: []argOp{{'w', 0, voidCast}}}},
	"cudaFuncGetAttributes":                      {{ops: []argOp{{'w', 1, voidCast}}}},
	"cudaFuncSetSharedMemConfig":                 {{ops: []argOp{{'w', 0, voidCast}}}},
	"cudaFuncSetAttribute":                       {{ops: []argOp{{'w', 0, voidCast}}}},
	"cudaLaunchKernel":                           {{ops: []argOp{{'w', 0, voidCast}}}},
	"cudaLaunchCooperativeKernel":                {{ops: []argOp{{'w', 0, voidCast}}}},
	"cudaMallocHost":                             {{nargs: 2, to: "hipHostMalloc", ops: []argOp{{'i', 2, "hipHostMallocDefault"}}}},
	"cudaEventCreate":                            {{nargs: 2, to: "hipEventCreateWithFlags"}},
	"cudaGraphInstantiate":                       {{nargs: 3, to: "hipGraphInstantiateWithFlags"}},
	"cuOccupancyMaxPotentialBlockSize":           {{nargs: 6, ops: []argOp{{'d', 3, ""}}}},
	"cuOccupancyMaxPotentialBlockSizeWithFlags":  {{nargs: 7, ops: []argOp{{'d', 3, ""}}}},
	"cudaGetDriverEntryPoint":                    {{nargs: 4, to: "hipGetProcAddress", ops: []argOp{{'i', 2, "603"}}}},
	// CUDA's defaults HIP lacks: flags of cudaMalloc3DArray (0, cudaArrayDefault,
	// as hipArrayDefault), and the typed-pointer template of cudaMallocPitch
	// (HIP 6.4 has it; HIP 5.2 only void**)
	"cudaMalloc3DArray": {{nargs: 3, ops: []argOp{{'i', 3, "0"}}}},
	"cudaMallocPitch":   {{nargs: 4, before: Version{6, 4, 0}, ops: []argOp{{'w', 0, "reinterpret_cast<void **>(%s)"}}}},

	// cuDNN -> MIOpen argument order (--miopen)
	"cudnnFindConvolutionForwardAlgorithmEx":       {{miopen: true, perm: "0,1,2,3,4,5,6,7,8,9,10,11,12,=true"}},
	"cudnnGetConvolutionForwardWorkspaceSize":      {{miopen: true, perm: "0,2,1,3,4,6"}},
	"cudnnConvolutionForward":                      {{miopen: true, perm: "0,1,2,3,4,5,6,7,10,11,12,8,9"}},
	"cudnnGetConvolutionBackwardDataWorkspaceSize": {{miopen: true, perm: "0,2,1,3,4,6"}},
	"cudnnConvolutionBackwardData":                 {{miopen: true, perm: "0,1,4,5,2,3,6,7,10,11,12,8,9"}},
	"cudnnSetPooling2dDescriptor":                  {{miopen: true, perm: "0,1,3,4,5,6,7,8"}},
	"cudnnGetPooling2dDescriptor":                  {{miopen: true, perm: "0,1,3,4,5,6,7,8"}},
	"cudnnSetPoolingNdDescriptor":                  {{miopen: true, perm: "0,1,3,4,5,6"}},
	"cudnnGetPoolingNdDescriptor":                  {{miopen: true, perm: "0,1,2,4,5,6,7"}},
	"cudnnSetLRNDescriptor":                        {{miopen: true, perm: "0,=miopenLRNCrossChannel,1,2,3,4"}},
	"cudnnSoftmaxForward":                          {{miopen: true, perm: "0,3,4,5,6,7,8,1,2"}},
	"cudnnSoftmaxBackward":                         {{miopen: true, perm: "0,3,4,5,6,7,8,9,10,1,2"}},
	"cusparseSpSM_solve":                           {{nargs: 10, ops: []argOp{{'i', 10, "nullptr"}}}},

	// warp intrinsics with a lane mask: HIP (before 6.2) has only the maskless forms
	"__shfl_sync":      {{to: "__shfl", ops: []argOp{{'d', 0, ""}}, hazard: maskNote, hcode: "sync-mask"}},
	"__shfl_up_sync":   {{to: "__shfl_up", ops: []argOp{{'d', 0, ""}}, hazard: maskNote, hcode: "sync-mask"}},
	"__shfl_down_sync": {{to: "__shfl_down", ops: []argOp{{'d', 0, ""}}, hazard: maskNote, hcode: "sync-mask"}},
	"__shfl_xor_sync":  {{to: "__shfl_xor", ops: []argOp{{'d', 0, ""}}, hazard: maskNote, hcode: "sync-mask"}},
	"__ballot_sync":    {{to: "__ballot", ops: []argOp{{'d', 0, ""}}, hazard: maskNote + "; __ballot returns a 64-bit mask", hcode: "sync-mask"}},
	"__any_sync":       {{to: "__any", ops: []argOp{{'d', 0, ""}}, hazard: maskNote, hcode: "sync-mask"}},
	"__all_sync":       {{to: "__all", ops: []argOp{{'d', 0, ""}}, hazard: maskNote, hcode: "sync-mask"}},
}

// special applies a call rule to the identifier at i, if one matches.
func (t *pass) special(i int) (bool, *pendingPerm) {
	tk := &t.toks[i]
	rules, ok := callRules[tk.lit]
	if !ok || t.isMember(i) {
		return false, nil
	}
	p := t.next(i)
	if !t.isPunct(p, "(") {
		return false, nil
	}
	q := t.matching(p)
	if q < 0 {
		return false, nil
	}
	args := t.splitArgsTemplates(p, q)
	for _, a := range args {
		if a[0] >= a[1] || t.rangeEmpty(a) {
			return false, nil // an empty argument: not a call we can rewrite
		}
	}
	for _, r := range rules {
		if r.nargs != 0 && r.nargs != len(args) || r.roc && !t.opt.Roc || r.miopen && !t.opt.MIOpen ||
			!r.before.IsZero() && (t.opt.HIPVersion.IsZero() || !t.opt.HIPVersion.Less(r.before)) {
			continue
		}
		for _, op := range r.ops {
			if op.i > len(args) || op.kind != 'i' && op.i >= len(args) {
				return false, nil
			}
		}
		to := r.to
		family := "runtime"
		if e, ok := Lookup(tk.lit); ok {
			family = e.Family
			if to == "" {
				var why string
				to, why = t.target(e)
				if to == "" {
					t.diag(tk.pos, SevUnsupported, "unsupported-api", tk.lit, tk.lit+" "+why)
					return true, nil
				}
			}
		}
		if to == "" {
			return false, nil
		}
		t.addEdit(tk.pos.Offset, tk.pos.Offset+len(tk.lit), to)
		t.o.rep.Replaced[family]++
		t.useCompat(to)
		if r.hazard != "" && !t.opt.NoHazards {
			t.diag(tk.pos, SevHazard, r.hcode, tk.lit, tk.lit+" -> "+to+": "+r.hazard)
		}
		var perm *pendingPerm
		if r.perm != "" {
			perm = &pendingPerm{open: p, close: q, args: args, perm: r.perm}
		}
		for _, op := range r.ops {
			t.argEdit(op, args, q)
		}
		return true, perm
	}
	return false, nil
}

// argEdit makes the edits of op on the arguments args of the call whose
// closing parenthesis is token q.
func (t *pass) argEdit(op argOp, args [][2]int, q int) {
	switch op.kind {
	case 'w':
		a := args[op.i]
		start, end := t.toks[a[0]].pos.Offset, t.endOf(a[1]-1)
		inner := strings.TrimSpace(string(t.src[start:end]))
		lead := len(t.src[start:end]) - len(strings.TrimLeft(string(t.src[start:end]), " \t\r\n"))
		if strings.HasPrefix(inner, strings.SplitN(op.text, "%s", 2)[0]) {
			return // already wrapped
		}
		t.addEdit(start+lead, start+lead, strings.SplitN(op.text, "%s", 2)[0])
		t.addEdit(start+lead+len(inner), start+lead+len(inner), strings.SplitN(op.text, "%s", 2)[1])
	case 'd':
		a := args[op.i]
		// delete the argument and the comma after it (or before it, for the last)
		if op.i+1 < len(args) {
			t.addEdit(t.toks[a[0]].pos.Offset, t.toks[args[op.i+1][0]].pos.Offset, "")
		} else if op.i > 0 {
			t.addEdit(t.endOf(args[op.i-1][1]-1), t.endOf(a[1]-1), "")
		} else {
			t.addEdit(t.toks[a[0]].pos.Offset, t.endOf(a[1]-1), "")
		}
	case 'i':
		if op.i == len(args) {
			t.addEdit(t.toks[q].pos.Offset, t.toks[q].pos.Offset, ", "+op.text)
		} else {
			at := t.firstTok(args[op.i])
			t.addEdit(at, at, op.text+", ")
		}
	case 'r':
		a := args[op.i]
		t.addEdit(t.firstTok(a), t.endOf(a[1]-1), op.text)
	}
}

func (f *file) firstTok(r [2]int) int { return f.toks[r[0]].pos.Offset }

type pendingPerm struct {
	open, close int
	args        [][2]int
	perm        string
}

// applyPerms rebuilds the argument lists of calls whose arguments move
// (perms, which the token pass found); it runs after the token pass so the
// arguments' own translations are kept.
func applyPerms(f *file, es *editList, perms []pendingPerm, o *out) []edit {
	t := &pass{file: f, o: o, prior: es}
	for _, pp := range perms {
		texts := make([]string, len(pp.args))
		for k, a := range pp.args {
			texts[k] = t.argString(a)
		}
		var out []string
		for _, f := range strings.Split(pp.perm, ",") {
			if strings.HasPrefix(f, "=") {
				out = append(out, f[1:])
				continue
			}
			n := 0
			for _, c := range f {
				n = n*10 + int(c-'0')
			}
			if n < len(texts) {
				out = append(out, texts[n])
			}
		}
		start, end := t.toks[pp.open].pos.Offset, t.endOf(pp.close)
		t.render(start, end)
		t.addEdit(start, end, "("+strings.Join(out, ", ")+")")
	}
	return t.edits
}

// splitArgsTemplates is splitArgs where the commas of template arguments
// (kernel<half, 128, 64>) do not split: a '<' after an identifier opens
// them when a matching '>' comes before the argument list ends.
func (f *file) splitArgsTemplates(open, close int) [][2]int {
	args := f.splitArgs(open, close)
	for k := 0; k+1 < len(args); k++ {
		depth := 0
		for j := args[k][0]; j < args[k][1]; j++ {
			switch {
			case f.isPunct(j, "<") && j > args[k][0] && f.toks[f.prev(j)].kind == IDENT:
				depth++
			case f.isPunct(j, ">") && depth > 0:
				depth--
			case f.isPunct(j, ">>") && depth > 0:
				depth = max(0, depth-2)
			}
		}
		if depth == 0 || !f.closesTemplate(args[k+1][0], close, depth) {
			continue
		}
		args[k][1] = args[k+1][1] // the comma was inside the template arguments
		args = append(args[:k+1], args[k+2:]...)
		k--
	}
	return args
}

// closesTemplate reports whether depth '>' come between from and close at
// bracket depth 0, before anything that cannot be in template arguments.
func (f *file) closesTemplate(from, close, depth int) bool {
	paren := 0
	for j := from; j < close; j++ {
		switch {
		case f.isPunct(j, "(") || f.isPunct(j, "["):
			paren++
		case f.isPunct(j, ")") || f.isPunct(j, "]"):
			paren--
		case paren == 0 && (f.isPunct(j, ";") || f.isPunct(j, "{") || f.isPunct(j, "&&") || f.isPunct(j, "||")):
			return false
		case paren == 0 && f.isPunct(j, ">"):
			depth--
		case paren == 0 && f.isPunct(j, ">>"):
			depth -= 2
		}
		if depth <= 0 {
			return true
		}
	}
	return false
}
