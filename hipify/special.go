package hipify

// special handles calls whose arguments change; it reports whether it
// translated the token at i.
func (t *translator) special(i int) bool { return false }
