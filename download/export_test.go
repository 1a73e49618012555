package download

// OnWholeInRing has fn hear of each chunk as it is whole in a ring, until
// the returned func is called.
func OnWholeInRing(fn func(j int64)) (undo func()) {
	wholeInRing = fn
	return func() { wholeInRing = nil }
}
