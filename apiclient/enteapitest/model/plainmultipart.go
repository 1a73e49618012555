package model

import "encoding/hex"

// maxPlainParts is museum's cap on the parts of a multipart upload.
const maxPlainParts = 10000

// PlainMultipartUploadURLs answers GET /files/multipart-upload-urls after
// its guard (the rate limit, the plan without a size): count parts (1 to
// 10,000, else 400) whose URLs pin neither length nor checksum. The store
// still checks a part's Content-MD5 when one is sent, and refuses to
// complete an upload whose parts but the last are under 5 MiB.
func (m *Museum) PlainMultipartUploadURLs(u *User, count int) (MultipartUpload, error) {
	if count <= 0 || count > maxPlainParts {
		return MultipartUpload{}, plain(BadRequest)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	parts := make([]Pin, count)
	for i := range parts {
		parts[i] = Pin{Size: -1}
	}
	mu := MultipartUpload{Key: m.mintKey(u), ID: hex.EncodeToString(m.random(16)), Parts: count}
	m.up.multipart[mu.ID] = &multipart{key: mu.Key, parts: parts, got: map[int][]byte{}}
	return mu, nil
}

// partsTooSmall reports a completion whose listed parts, but the last,
// are not all 5 MiB or more: S3's EntityTooSmall.
func partsTooSmall(mp *multipart, parts []CompletedPart) bool {
	for i, p := range parts {
		if got, ok := mp.got[p.Number]; ok && i < len(parts)-1 && len(got) < minPart {
			return true
		}
	}
	return false
}
