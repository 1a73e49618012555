package contract_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/publink"
)

// recorder keeps the shape of every JSON answer of the API: for each
// route, each JSON path seen and the types it had.
type recorder struct {
	api    string
	mu     sync.Mutex
	shapes map[string]map[string]map[string]bool // route → path → types
}

func newRecorder(api string) *recorder {
	return &recorder{api: strings.TrimRight(api, "/"), shapes: map[string]map[string]map[string]bool{}}
}

// wrap records through rt.
func (r *recorder) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err != nil || !strings.HasPrefix(req.URL.String(), r.api+"/") {
			return resp, err
		}
		if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
			return resp, nil
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil {
			return resp, nil //nolint:nilerr // the client meets the short body itself
		}
		var v any
		if json.Unmarshal(body, &v) == nil {
			r.add(routeOf(req, resp.StatusCode), v)
		}
		return resp, nil
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// ids are the parts of a path that name one thing: numbers, and the
// collection id of DELETE /collections/share-url/:id.
var ids = regexp.MustCompile(`/[0-9]+(/|$)`)

// routeOf names a request's route and status: "GET /files/preview/:id 200".
func routeOf(req *http.Request, status int) string {
	return req.Method + " " + ids.ReplaceAllString(req.URL.Path, "/:id$1") + " " + http.StatusText(status)
}

func (r *recorder) add(route string, v any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.shapes[route]
	if m == nil {
		m = map[string]map[string]bool{}
		r.shapes[route] = m
	}
	walk("", v, func(path, typ string) {
		if m[path] == nil {
			m[path] = map[string]bool{}
		}
		m[path][typ] = true
	})
}

// walk calls seen for v and each value inside it, with its path ("" is
// the top; ".key" an object's member; "[]" any element of an array) and
// its JSON type.
func walk(path string, v any, seen func(path, typ string)) {
	switch v := v.(type) {
	case map[string]any:
		seen(path, "object")
		for k, e := range v {
			walk(path+"."+k, e, seen)
		}
	case []any:
		seen(path, "array")
		for _, e := range v {
			walk(path+"[]", e, seen)
		}
	case string:
		seen(path, "string")
	case float64:
		seen(path, "number")
	case bool:
		seen(path, "bool")
	case nil:
		seen(path, "null")
	}
}

// shape is the recorded shape of route, each path with its types joined
// ("array|null"), or nil when the route was not seen.
func (r *recorder) shape(route string) map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.shapes[route]
	if m == nil {
		return nil
	}
	out := map[string]string{}
	for path, types := range m {
		var ts []string
		for t := range types {
			ts = append(ts, t)
		}
		sort.Strings(ts)
		out[path] = strings.Join(ts, "|")
	}
	return out
}

// update rewrites testdata/museum-shapes.json from a museum run.
var update = flag.Bool("update", false, "rewrite testdata/museum-shapes.json from the museum the environment names")

// goldenShapes is where the shapes of museum's answers are kept, as a
// museum run recorded them (go test -run TestContractJSONShapes -update
// with QUAK_MUSEUM_* set).
const goldenShapes = "testdata/museum-shapes.json"

// loginRoutes are the answers of a login, recorded when the session
// logged in.
var loginRoutes = []string{
	"GET /users/srp/attributes OK",
	"POST /users/srp/create-session OK",
	"POST /users/srp/verify-session OK",
}

// Museum's JSON, key for key and type for type: every answer of the
// routes quak uses, as the server sends it for what this test makes,
// has the shape museum's answers had (testdata/museum-shapes.json). Run
// against the fake, it fails when the fake leaves out a field museum
// sends, adds one it does not, or sends another type; against museum,
// when museum changed.
func TestContractJSONShapes(t *testing.T) {
	for _, tg := range targets() {
		t.Run(tg.name, func(t *testing.T) {
			s := tg.open(t)
			se := sessionOf(t, s)
			rec := newRecorder(s.endpoint())
			hc := s.client()
			hc.Transport = rec.wrap(http.DefaultTransport)
			anon, err := apiclient.New(s.endpoint(), hc, "contract")
			require.NoError(t, err)
			api := anon.WithToken(se.acct.Token)
			shaped := &session{acct: se.acct, api: api, hc: hc, rec: rec}
			ctx := context.Background()

			a := newAlbum(t, shaped)
			up := uploadFile(t, shaped, a, "shape.jpg", []byte("a photo"), enteapitest.FakeJPEG("shape"))
			one, err := api.CollectionFile(ctx, a.id, up.id)
			require.NoError(t, err)
			_, err = api.Collections(ctx, one.UpdationTime-1) // this album alone
			require.NoError(t, err)
			_, err = api.Diff(ctx, a.id, 0)
			require.NoError(t, err)
			_, err = api.CollectionFile(ctx, a.id, up.id+1_000_000_000)
			require.Error(t, err)
			_, err = api.FilesInfo(ctx, []int64{up.id})
			require.NoError(t, err)
			_, err = api.UploadURLs(ctx, 1)
			require.NoError(t, err)
			_, err = api.SessionValidity(ctx)
			require.NoError(t, err)
			_, err = api.UserDetails(ctx)
			require.NoError(t, err)
			_, err = anon.Collections(ctx, 0)
			require.Error(t, err)
			code, body := call(t, s, shaped, "POST", "/collections/share-url", map[string]any{"collectionID": a.id})
			require.Equal(t, http.StatusOK, code, "%s", body)
			t.Cleanup(func() { call(t, s, shaped, "DELETE", fmt.Sprintf("/collections/share-url/%d", a.id), nil) })
			var made struct {
				Result struct {
					URL string `json:"url"`
				} `json:"result"`
			}
			require.NoError(t, json.Unmarshal(body, &made))
			link, err := publink.Parse(made.Result.URL + "#" + publink.EncodeKey(a.key))
			require.NoError(t, err)
			lc, err := apiclient.NewLinkClient(s.endpoint(), hc, "quak-contract/1", link.AccessToken)
			require.NoError(t, err)
			_, err = lc.Info(ctx)
			require.NoError(t, err)
			_, err = lc.Diff(ctx, 0)
			require.NoError(t, err)

			got := map[string]map[string]string{}
			for route := range rec.shapes {
				got[route] = rec.shape(route)
			}
			for _, route := range loginRoutes {
				got[route] = se.rec.shape(route)
				require.NotNil(t, got[route], "the session's login was recorded")
			}
			if _, isMuseum := s.(*museum); isMuseum && *update {
				b, err := json.MarshalIndent(got, "", "  ")
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(goldenShapes, append(b, '\n'), 0o644))
				return
			}
			raw, err := os.ReadFile(goldenShapes)
			require.NoError(t, err)
			var want map[string]map[string]string
			require.NoError(t, json.Unmarshal(raw, &want))
			require.NotEmpty(t, want)
			for route, shape := range want {
				assert.Equal(t, shape, got[route], "the shape of %s", route)
			}
			for route := range got {
				assert.Contains(t, want, route, "an answer museum never gave")
			}
		})
	}
}
