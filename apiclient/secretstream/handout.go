package secretstream

// handout is what a chunked stream's reader hands out: the chunk it made
// last, until it is read whole, the error that ended the stream, and the
// checkpoints before and after that chunk. The decrypting Reader and the
// EncryptReader share it.
type handout struct {
	out []byte // the chunk not yet handed out whole
	err error  // sticky
	// cp is the last point the stream can be taken up from; next is the
	// one the chunk in out makes, once out is handed out whole.
	cp      Checkpoint
	next    Checkpoint
	hasNext bool
	// OnCheckpoint, if set, hears of each new checkpoint as it settles.
	OnCheckpoint func(Checkpoint)
}

// read hands out the chunk in out, making the next one with produce
// whenever none is pending; produce's error ends the stream.
func (h *handout) read(p []byte, produce func() error) (int, error) {
	for len(h.out) == 0 {
		h.settle()
		if h.err != nil {
			return 0, h.err
		}
		h.err = produce()
	}
	n := copy(p, h.out)
	h.out = h.out[n:]
	return n, nil
}

// Checkpoint returns the point after the last chunk handed out whole (its
// plaintext by a Reader, its ciphertext by an EncryptReader), and false
// before the first such chunk. A FINAL chunk makes none: a finished stream
// needs no taking up. It holds a subkey of the file key: keep it in memory
// only.
func (h *handout) Checkpoint() (Checkpoint, bool) {
	h.settle()
	return h.cp, h.cp.Chunks > 0
}

// settle promotes the checkpoint of the chunk just made once it is all
// handed out.
func (h *handout) settle() {
	if len(h.out) == 0 && h.hasNext {
		h.cp, h.hasNext = h.next, false
		if h.OnCheckpoint != nil {
			h.OnCheckpoint(h.cp)
		}
	}
}

// made records the chunk just made in out: the stream can be taken up at
// next once it is handed out whole.
func (h *handout) made(next Checkpoint) {
	h.next, h.hasNext = next, true
}
