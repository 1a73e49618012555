package download

// OnWholeInRing has fn hear of each chunk as it is whole in a ring, until
// the returned func is called.
func OnWholeInRing(fn func(j int64)) (undo func()) {
	wholeInRing = fn
	return func() { wholeInRing = nil }
}

// TakePlaces takes n of f's multi-stream places and extras of the places
// beside them, as files in flight as ranges would.
func TakePlaces(f *Fetcher, n, extras int) {
	for range n {
		if !f.source().places.ticket() {
			panic("no place left")
		}
	}
	for range extras {
		if !f.source().places.extra() {
			panic("no extra place left")
		}
	}
}
