package download

// places are a run's places for files that come as several ranges at once:
// files of their own (multi), and as many again kept for downloads whose
// ring an earlier attempt or run left (extras), so that at most twice as
// many files come as ranges at once.
type places struct {
	multi  chan struct{}
	extras chan struct{}
}

// newPlaces makes n places, and n extras.
func newPlaces(n int) *places {
	return &places{multi: make(chan struct{}, n), extras: make(chan struct{}, n)}
}

// ticket takes one of the places, if one is free.
func (p *places) ticket() bool { return take(p.multi) }

func (p *places) unticket() { <-p.multi }

// extra takes one of the extras, if one is free.
func (p *places) extra() bool { return take(p.extras) }

func (p *places) unextra() { <-p.extras }

// take takes a place of c, if one is free.
func take(c chan struct{}) bool {
	select {
	case c <- struct{}{}:
		return true
	default:
		return false
	}
}
