package hipify

import "sort"

// thrustHeaders names the thrust header that declares each algorithm and
// iterator maker. CUDA's thrust headers include more of each other than
// rocThrust's do (CUDA's thrust/sort.h brings thrust::sequence in), so code
// that compiled with nvcc can miss a declaration under HIP.
var thrustHeaders = func() map[string]string {
	m := map[string]string{}
	add := func(header string, names ...string) {
		for _, n := range names {
			m[n] = "thrust/" + header + ".h"
		}
	}
	add("sequence", "sequence")
	add("fill", "fill", "fill_n")
	add("copy", "copy", "copy_if", "copy_n")
	add("transform", "transform", "transform_if")
	add("reduce", "reduce", "reduce_by_key")
	add("sort", "sort", "sort_by_key", "stable_sort", "stable_sort_by_key", "is_sorted", "is_sorted_until")
	add("scan", "inclusive_scan", "exclusive_scan", "inclusive_scan_by_key", "exclusive_scan_by_key")
	add("for_each", "for_each", "for_each_n")
	add("count", "count", "count_if")
	add("gather", "gather", "gather_if")
	add("scatter", "scatter", "scatter_if")
	add("unique", "unique", "unique_copy", "unique_by_key", "unique_by_key_copy")
	add("transform_reduce", "transform_reduce")
	add("extrema", "min_element", "max_element", "minmax_element")
	add("inner_product", "inner_product")
	add("tabulate", "tabulate")
	add("generate", "generate", "generate_n")
	add("remove", "remove", "remove_if", "remove_copy", "remove_copy_if")
	add("replace", "replace", "replace_if", "replace_copy", "replace_copy_if")
	add("reverse", "reverse", "reverse_copy")
	add("find", "find", "find_if", "find_if_not")
	add("equal", "equal")
	add("partition", "partition", "stable_partition", "partition_copy", "is_partitioned")
	add("merge", "merge", "merge_by_key")
	add("adjacent_difference", "adjacent_difference")
	add("uninitialized_fill", "uninitialized_fill", "uninitialized_fill_n")
	add("binary_search", "lower_bound", "upper_bound", "binary_search", "equal_range")
	add("transform_scan", "transform_inclusive_scan", "transform_exclusive_scan")
	add("set_operations", "set_difference", "set_intersection", "set_union", "set_symmetric_difference")
	add("logical", "all_of", "any_of", "none_of")
	add("mismatch", "mismatch")
	add("iterator/zip_iterator", "make_zip_iterator")
	add("iterator/transform_iterator", "make_transform_iterator")
	add("iterator/counting_iterator", "make_counting_iterator")
	return m
}()

// thrustIncludes returns the #include lines of the thrust headers the file
// calls into but does not include (each naming the first call that needs
// it). Calls are thrust::name( outside inactive branches.
func (f *file) thrustIncludes(included map[string]bool) []string {
	need := map[string]string{}
	for i := range f.toks {
		tk := &f.toks[i]
		if tk.kind != IDENT || tk.lit != "thrust" || tk.skip || tk.pp != "" {
			continue
		}
		c := f.next(i)
		if !f.isPunct(c, "::") {
			continue
		}
		n := f.next(c)
		if n >= len(f.toks) || f.toks[n].kind != IDENT || !f.isPunct(f.next(n), "(") {
			continue
		}
		if h, ok := thrustHeaders[f.toks[n].lit]; ok && !included[h] && need[h] == "" {
			need[h] = f.toks[n].lit
		}
	}
	var out []string
	for h, name := range need {
		out = append(out, "#include <"+h+"> // rocmk: for thrust::"+name)
	}
	sort.Strings(out)
	return out
}
