package hipify

import (
	"path/filepath"
	"sync"
)

// A project may define a compat name itself (ggml's vendors/hip.h has its
// own __vsub4). Its definition must win in every file that sees it, not
// only in the defining file: projectDefines finds, for each job of a tree,
// the compat names that the files it includes (transitively, by quoted
// #include resolved beside the including file) define in active code.

// scanFacts are what one file defines and the local files it includes.
type scanFacts struct {
	defines  []string
	includes []string // cleaned paths
}

// scanJob reads and scans one job for its definitions and includes.
func scanJob(o TreeOptions, j Job) scanFacts {
	if j.Src == "" || o.Read == nil {
		return scanFacts{}
	}
	src, err := o.Read(j.Src)
	if err != nil || checkText(j.Name, src) != nil || IsCompatHeader(src) {
		return scanFacts{} // translateOne reports it
	}
	opt := o.Translate
	if opt.DefaultPreprocessor {
		opt.SkipExcluded = true
	}
	f := newFile(j.Name, src, &opt)
	var s scanFacts
	for id := range f.defines {
		s.defines = append(s.defines, id)
	}
	for i := range f.toks {
		tk := &f.toks[i]
		if tk.skip || tk.kind != HASH || tk.lit != "#include" {
			continue
		}
		h := f.next(i)
		if h < len(f.toks) && f.toks[h].kind == STRING && len(f.toks[h].lit) > 2 {
			s.includes = append(s.includes, filepath.Join(filepath.Dir(j.Src), f.toks[h].lit[1:len(f.toks[h].lit)-1]))
		}
	}
	return s
}

// projectDefines returns, for each job, the compat names defined by the
// files it includes (nil where none).
func projectDefines(o TreeOptions, jobs []Job) []map[string]bool {
	facts := make([]scanFacts, len(jobs))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < min(max(1, o.Jobs), len(jobs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				facts[i] = scanJob(o, jobs[i])
			}
		}()
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	byPath := map[string]int{}
	for i, j := range jobs {
		if j.Src != "" {
			byPath[filepath.Clean(j.Src)] = i
		}
	}
	out := make([]map[string]bool, len(jobs))
	for i := range jobs {
		seen := map[int]bool{i: true}
		stack := []int{i}
		for len(stack) > 0 {
			k := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, inc := range facts[k].includes {
				if n, ok := byPath[inc]; ok && !seen[n] {
					seen[n] = true
					stack = append(stack, n)
					for _, id := range facts[n].defines {
						if out[i] == nil {
							out[i] = map[string]bool{}
						}
						out[i][id] = true
					}
				}
			}
		}
	}
	return out
}
