package enteapitest

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"

	"github.com/quak-photos/quak/apiclient"
)

// maxPlainParts is museum's cap on the parts of a multipart upload.
const maxPlainParts = 10000

// plainMultipartUploadURLs answers GET /files/multipart-upload-urls: count
// part URLs (1 to 10,000, else 400) that pin neither length nor checksum,
// under {"urls": {...}}, after the plan without a size, as museum does. The
// store still checks a part's Content-MD5 when one is sent, and refuses to
// complete an upload whose parts but the last are under 5 MiB.
func (s *Server) plainMultipartUploadURLs(w http.ResponseWriter, r *http.Request, u *User) {
	n, err := strconv.Atoi(r.URL.Query().Get("count"))
	if err != nil || n <= 0 || n > maxPlainParts {
		apiErr(w, 400, "", "")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key, id := s.mintKey(u), hex.EncodeToString(s.random(16))
	parts := make([]pin, n)
	for i := range parts {
		parts[i] = pin{size: -1}
	}
	s.up().multipart[id] = &multipart{key: key, parts: parts, got: map[int][]byte{}}
	out := apiclient.MultipartUpload{ObjectKey: key,
		CompleteURL: s.Store.URL + "/store/" + key + "?uploadId=" + id + "&X-Amz-Signature=fakesignature"}
	for i := range parts {
		out.PartURLs = append(out.PartURLs, fmt.Sprintf("%s/store/%s?partNumber=%d&uploadId=%s&X-Amz-Signature=fakesignature",
			s.Store.URL, key, i+1, id))
	}
	writeJSON(w, 200, map[string]any{"urls": out})
}

// partsTooSmall reports a completion whose listed parts, but the last,
// are not all 5 MiB or more: S3's EntityTooSmall.
func partsTooSmall(mp *multipart, numbers []int) bool {
	for i, n := range numbers {
		if part, ok := mp.got[n]; ok && i < len(numbers)-1 && len(part) < minPart {
			return true
		}
	}
	return false
}
