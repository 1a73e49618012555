package wire_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/enteapitest/wire"
)

// b64 is the client's binary field: a string of base64 on the wire.
var b64 = reflect.TypeOf(apiclient.B64(nil))

// keys lists the JSON keys of t, each with its JSON type: ".file.size
// number", "[]" standing for any element of an array.
func keys(t reflect.Type, path string, out map[string]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == b64 || t.Kind() == reflect.String || (t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8):
		out[path] = "string"
	case t.Kind() == reflect.Bool:
		out[path] = "bool"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Float64:
		out[path] = "number"
	case t.Kind() == reflect.Slice:
		out[path] = "array"
		keys(t.Elem(), path+"[]", out)
	case t.Kind() == reflect.Map || t.Kind() == reflect.Interface:
		out[path] = "object"
	case t.Kind() == reflect.Struct:
		out[path] = "object"
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			keys(f.Type, path+"."+name, out)
		}
	}
}

// The client's JSON is museum's: every key each of apiclient's wire types
// reads or sends is a key of museum's own type, with its JSON type
// (package wire, written from museum's source apart from the client). A
// wrong tag on a field quak never reads in a test (a recovery key, a
// link's enableJoin) fails here; the contract suite holds package wire
// to a running museum's answers.
func TestClientKeysAreMuseums(t *testing.T) {
	checked := map[string]bool{}
	for _, pair := range []struct{ client, museum any }{
		{apiclient.File{}, wire.File{}},
		{apiclient.FileAttributes{}, wire.FileAttributes{}},
		{apiclient.FileInfo{}, wire.FileInfo{}},
		{apiclient.MagicMetadata{}, wire.MagicMetadata{}},
		{apiclient.DiffPage{}, wire.Diff{}},
		{apiclient.TrashItem{}, wire.Trash{}},
		{apiclient.TrashPage{}, wire.TrashDiff{}},
		{apiclient.Collection{}, wire.Collection{}},
		{apiclient.CollectionUser{}, wire.CollectionUser{}},
		{apiclient.NewCollection{}, wire.Collection{}},
		{apiclient.CollectionFileItem{}, wire.CollectionFileItem{}},
		{apiclient.NewFile{}, wire.File{}},
		{apiclient.UploadedObject{}, wire.FileAttributes{}},
		{apiclient.SealedMetadata{}, wire.FileAttributes{}},
		{apiclient.UploadURL{}, wire.UploadURL{}},
		{apiclient.MultipartUpload{}, wire.MultipartUploadURLs{}},
		{apiclient.KeyAttributes{}, wire.KeyAttributes{}},
		{apiclient.SRPAttributes{}, wire.SRPAttributes{}},
		{apiclient.AuthResponse{}, wire.EmailAuthorizationResponse{}},
		{apiclient.UserDetails{}, wire.UserDetails{}},
		{apiclient.Subscription{}, wire.Subscription{}},
		{apiclient.FamilyData{}, wire.FamilyMemberResponse{}},
		{apiclient.FamilyMember{}, wire.FamilyMember{}},
		{apiclient.LinkSettings{}, wire.PublicURL{}},
	} {
		checked[reflect.TypeOf(pair.client).Name()] = true
		client, museum := map[string]string{}, map[string]string{}
		keys(reflect.TypeOf(pair.client), "", client)
		keys(reflect.TypeOf(pair.museum), "", museum)
		var paths []string
		for p := range client {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		assert.Greater(t, len(paths), 1, "%T has JSON keys", pair.client)
		for _, p := range paths {
			want, ok := museum[p]
			if assert.True(t, ok, "%T's key %q is not museum's (%T)", pair.client, p, pair.museum) {
				assert.Equal(t, want, client[p], "%T's key %q", pair.client, p)
			}
		}
	}
	for _, name := range tagged(t, filepath.Join("..", "..")) {
		assert.True(t, checked[name], "apiclient.%s has JSON tags: pair it with museum's type above", name)
	}
}

// tagged names the struct types of the package in dir (its non-test
// files) that have a field with a JSON tag.
func tagged(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	var out []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		f, err := parser.ParseFile(fset, name, src, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gd.Specs {
				ts, ok := spec.(*ast.TypeSpec)
				if !ok {
					continue
				}
				if st, ok := ts.Type.(*ast.StructType); ok && hasJSONTag(st) {
					out = append(out, ts.Name.Name)
				}
			}
		}
	}
	require.NotEmpty(t, out, "apiclient's wire types were found")
	return out
}

func hasJSONTag(st *ast.StructType) bool {
	for _, f := range st.Fields.List {
		if f.Tag != nil && strings.Contains(f.Tag.Value, `json:"`) {
			return true
		}
	}
	return false
}

// The walk itself: a renamed key, a key of another type, a nested key.
func TestKeysWalk(t *testing.T) {
	type inner struct {
		Size int64 `json:"size,omitempty"`
	}
	var v struct {
		Key     apiclient.B64 `json:"key"`
		Parts   []inner       `json:"parts"`
		Ptr     *inner        `json:"ptr"`
		Skipped string        `json:"-"`
		Plain   bool
		hidden  int
	}
	_ = v.hidden
	got := map[string]string{}
	keys(reflect.TypeOf(v), "", got)
	assert.Equal(t, map[string]string{"": "object", ".key": "string", ".parts": "array", ".parts[]": "object",
		".parts[].size": "number", ".ptr": "object", ".ptr.size": "number", ".Plain": "bool"}, got)
}
