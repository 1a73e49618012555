package model

// A public link's reads (PL.3, PL.6): what a reader
// without an account gets.

// LinkInfo answers GET /public-collection/info (PL.3): the album as its
// owner has it, minus sharees and private magic metadata, the link's
// settings without its url, expiry or device limit (always blank here),
// and the device token minted ("" for none).
func (m *Museum) LinkInfo(r *LinkRequest) (CollectionView, LinkSettings, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, row, minted, err := m.linkAuth(r)
	if err != nil {
		return CollectionView{}, LinkSettings{}, "", err
	}
	a := l.album
	c, _ := m.collectionFor(a, a.Owner)
	c.Sharees, c.MagicMetadata = nil, nil
	s := row.settings("")
	s.DeviceLimit, s.ValidTill = 0, 0
	return c, s, minted, nil
}

// LinkDiff answers GET /public-collection/diff (PL.3) for sinceTime since
// (ok false: missing or not a number, 400): the owner's diff of the album
// without private magic metadata.
func (m *Museum) LinkDiff(r *LinkRequest, since int64, ok bool, raw string) ([]Entry, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, _, _, err := m.linkAuth(r)
	if err != nil {
		return nil, false, err
	}
	if !ok {
		return nil, false, refuse(BadRequest, "BAD_REQUEST", "invalid sinceTime val: "+raw)
	}
	page, more := m.page(l.album, since, nil) // magicMetadata is never sent (PL.3)
	return page, more, nil
}

// LinkObject answers GET /public-collection/files/{download,preview}/:id
// (PL.3) for fileID (ok false: not a number, 400 {}): the object key to
// redirect to when the file is live in the link's album, else 403 {}; 404
// {} for no such object row. enableDownload is not enforced (PL.9.3), and
// the device limit is not checked (PL.5).
func (m *Museum) LinkObject(r *LinkRequest, fileID int64, ok, thumb bool) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, _, _, err := m.linkAuth(r)
	if err != nil {
		return "", err
	}
	e := l.album.entries[fileID]
	switch {
	case !ok:
		return "", plain(BadRequest)
	case e == nil || e.deleted:
		return "", plain(Forbidden)
	}
	key := e.file.content.object
	if thumb {
		key = e.file.thumb.object
	}
	if key == "" {
		return "", plain(NotFound)
	}
	return key, nil
}

// LinkVerifyPassword answers POST /public-collection/verify-password
// (PL.6) for passHash (ok false: the body did not bind): after the token
// checks, 10 a minute per IP across all links; then 400 without a
// passHash or for a link without a password, 401 {} for a wrong one, else
// a JWT of the passHash for 365 days.
func (m *Museum) LinkVerifyPassword(r *LinkRequest, passHash string, ok bool) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, _, _, err := m.linkAuth(r)
	if err != nil {
		return "", err
	}
	if countIn(m.links.attempts, r.IP, m.clock.now) > 10 { // ulule/limiter's memory store, museum's "10-M"
		return "", RateLimited
	}
	if !ok || passHash == "" {
		return "", refuse(BadRequest, "BAD_REQUEST", "")
	}
	row := l.current()
	switch {
	case row.disabled:
		return "", plain(NotFound) // no active row for the album any more
	case row.passHash == "":
		return "", plain(BadRequest)
	case passHash != row.passHash:
		return "", plain(Unauthorized)
	}
	return signJWT(m.links.secret, passwordClaim{PassKey: passHash, ExpiryTime: m.clock.now + 365*microsPerDay}), nil
}
