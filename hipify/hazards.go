package hipify

// hazardOnce reports a hazard once per (code, name) per file.
func (t *translator) hazardOnce(p Pos, code, name, msg string) {
	k := code + "\x00" + name
	if t.seenHz[k] {
		return
	}
	t.seenHz[k] = true
	t.diag(p, SevHazard, code, name, msg)
}

func (t *translator) identHazards(i int)  {}
func (t *translator) numberHazards(i int) {}
