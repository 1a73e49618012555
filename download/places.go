package download

func (f *Fetcher) multiFiles() int {
	if f.MultiFiles > 0 {
		return f.MultiFiles
	}
	return MultiStreamFiles
}

func (f *Fetcher) streamAbove() int64 {
	if f.StreamAbove > 0 {
		return f.StreamAbove
	}
	return DefaultStreamAbove
}

// ticket takes one of the MultiStreamFiles places, if one is free.
func (f *Fetcher) ticket() bool { return take(f.places().multi) }

func (f *Fetcher) unticket() { <-f.places().multi }

// extra takes one of the places beside them kept for downloads whose ring
// was left over, if one is free: at most twice MultiStreamFiles files come
// as ranges at once.
func (f *Fetcher) extra() bool { return take(f.places().extras) }

func (f *Fetcher) unextra() { <-f.places().extras }

// places are the Fetcher's multi-stream places, made on first use.
func (f *Fetcher) places() *Fetcher {
	f.multiOnce.Do(func() {
		f.multi = make(chan struct{}, f.multiFiles())
		f.extras = make(chan struct{}, f.multiFiles())
	})
	return f
}

// take takes a place of c, if one is free.
func take(c chan struct{}) bool {
	select {
	case c <- struct{}{}:
		return true
	default:
		return false
	}
}
