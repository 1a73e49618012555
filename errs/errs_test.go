package errs

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestApiErrorMessageAndAs(t *testing.T) {
	e := &ApiError{Method: "GET", Path: "/collections/v2/diff", Status: 404, Code: "NOT_FOUND", Message: "gone", RequestID: "r-1"}
	wrapped := fmt.Errorf("album 7: %w", e)
	var got *ApiError
	if !errors.As(wrapped, &got) || got.Status != 404 {
		t.Fatalf("errors.As failed on %v", wrapped)
	}
	want := "GET /collections/v2/diff: HTTP 404 NOT_FOUND: gone (request id r-1)"
	if e.Error() != want {
		t.Fatalf("got %q, want %q", e.Error(), want)
	}
}

func TestTruncatedStreamErrorMessage(t *testing.T) {
	for _, tc := range []struct {
		e    TruncatedStreamError
		want string
	}{
		{TruncatedStreamError{Reason: NoFinal, Chunks: 2, Got: 66, Want: -1}, "ended before the final chunk after 2 chunks, 66 bytes"},
		{TruncatedStreamError{Reason: PartialChunk, Chunks: 0, Got: 5, Want: 40}, "ended inside a chunk after 0 chunks, 5 bytes of 40"},
		{TruncatedStreamError{Reason: TrailingData, Chunks: 1, Got: 18, Want: 17}, "has data after the final chunk"},
	} {
		err := fmt.Errorf("file 9: %w", &tc.e)
		var te *TruncatedStreamError
		if !errors.As(err, &te) {
			t.Fatalf("errors.As failed on %v", err)
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%q does not contain %q", err.Error(), tc.want)
		}
	}
}
