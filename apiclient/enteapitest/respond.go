package enteapitest

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/quak-photos/quak/apiclient/enteapitest/model"
	"github.com/quak-photos/quak/apiclient/enteapitest/wire"
)

// writeJSON answers status with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Request-Id", "fake-"+fmt.Sprint(status))
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// statusOf is the status museum's handler gives an error of kind k.
var statusOf = map[model.Kind]int{
	model.BadRequest:      http.StatusBadRequest,
	model.Unauthorized:    http.StatusUnauthorized,
	model.PaymentRequired: http.StatusPaymentRequired,
	model.Forbidden:       http.StatusForbidden,
	model.NotFound:        http.StatusNotFound,
	model.Conflict:        http.StatusConflict,
	model.Gone:            http.StatusGone,
	model.TooLarge:        http.StatusRequestEntityTooLarge,
	model.StorageFull:     http.StatusUpgradeRequired,
	model.TooMany:         http.StatusTooManyRequests,
	model.Internal:        http.StatusInternalServerError,
	model.Unavailable:     http.StatusServiceUnavailable,
}

// writeErr answers err as museum does: a *model.Refusal with its status
// and body; anything else is a 500 {}.
func writeErr(w http.ResponseWriter, err error) {
	var rf *model.Refusal
	if !errors.As(err, &rf) {
		writeJSON(w, 500, struct{}{})
		return
	}
	status := statusOf[rf.Kind]
	switch {
	case rf.Shape == model.Middleware:
		writeJSON(w, status, wire.MiddlewareError{Error: rf.Message})
	case rf.Shape == model.EmptyError:
		writeJSON(w, status, map[string]any{"error": struct{}{}})
	case rf.Code == "":
		writeJSON(w, status, struct{}{})
	default:
		writeJSON(w, status, wire.TypedError{Code: rf.Code, Message: rf.Message})
	}
}

// badRequest is museum's 400 for a body it cannot bind.
var badRequest = &model.Refusal{Kind: model.BadRequest, Code: "BAD_REQUEST", Message: "bad body"}

func readJSON(r *http.Request, v any) bool {
	return json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(v) == nil
}

// decodeBody reads the JSON body into v, or answers 400 as museum does.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	if !readJSON(r, v) {
		writeErr(w, badRequest)
		return false
	}
	return true
}

// qint reads an integer query parameter.
func qint(r *http.Request, name string) (int64, bool) {
	v, err := strconv.ParseInt(r.URL.Query().Get(name), 10, 64)
	return v, err == nil
}

// pathID reads the {id} of a route's path.
func pathID(r *http.Request) (int64, bool) {
	v, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	return v, err == nil
}

// b64 is museum's form of bytes in JSON: standard base64 with padding.
func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// unb64 reads the base64 of a request as museum's clients write it
// (standard, padded); nil for anything else.
func unb64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil
	}
	return b
}
