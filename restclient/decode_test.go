package restclient

import (
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/suregql/suregql/internal/fake/restclienttest"
)

// decodeAnswer must read every answer of the Sure API as encoding/json
// reads it: each endpoint of the fake upstream, over the demo and the
// large families, decoded both ways, gives the same value.
func TestDecodeAnswer_ReadsWhatEncodingJSONReads(t *testing.T) {
	up := restclienttest.New()
	get := func(key, path string) []byte {
		req := httptest.NewRequest("GET", "/api/v1/"+path, nil)
		req.Header.Set("X-Api-Key", key)
		rec := httptest.NewRecorder()
		up.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
		return rec.Body.Bytes()
	}
	type answer struct {
		path string
		into func() any
	}
	var answers []answer
	for _, key := range []string{restclienttest.DemoKey, restclienttest.LargeFamilyKey} {
		for _, path := range []string{"categories?page=1&per_page=100", "categories?page=3&per_page=100&roots_only=true", "chats?page=1", "chats?page=2"} {
			answers = append(answers, answer{path, func() any {
				if path[:5] == "chats" {
					return new(ChatPage)
				}
				return new(CategoryPage)
			}})
			_ = key
		}
		for _, c := range up.Chats(key) {
			answers = append(answers, answer{"chats/" + c.ID, func() any { return new(Chat) }}, answer{"chats/" + c.ID + "?page=2", func() any { return new(Chat) }})
		}
		for _, id := range up.ImportIDs(key) {
			var v1 struct {
				Data Import `json:"data"`
			}
			body := get(key, "imports/"+id)
			if err := json.Unmarshal(body, &v1); err != nil {
				t.Fatalf("imports/%s: encoding/json: %v", id, err)
			}
			if v2, err := Imports.decodeShow(body); err != nil || !reflect.DeepEqual(&v1.Data, v2) {
				t.Errorf("imports/%s: the collection read %+v (%v), encoding/json %+v", id, v2, err, v1.Data)
			}
		}
		var l1 struct {
			Data []ImportSummary `json:"data"`
		}
		body := get(key, "imports?page=1&per_page=100")
		if err := json.Unmarshal(body, &l1); err != nil {
			t.Fatalf("imports: encoding/json: %v", err)
		}
		if l2, err := Imports.decodeList(body); err != nil || !reflect.DeepEqual(l1.Data, l2.Items) {
			t.Errorf("imports: the collection read %+v (%v), encoding/json %+v", l2, err, l1.Data)
		}
		for _, a := range answers {
			body := get(key, a.path)
			v1, v2 := a.into(), a.into()
			if err := json.Unmarshal(body, v1); err != nil {
				t.Fatalf("%s: encoding/json: %v", a.path, err)
			}
			if err := decodeAnswer(body, v2); err != nil {
				t.Fatalf("%s: decodeAnswer: %v", a.path, err)
			}
			if !reflect.DeepEqual(v1, v2) {
				t.Errorf("%s: decodeAnswer read %+v, encoding/json %+v", a.path, v2, v1)
			}
		}
		answers = answers[:0]
	}
}

// Where encoding/json is lenient, decodeAnswer is too.
func TestDecodeAnswer_AsLenientAsEncodingJSON(t *testing.T) {
	for _, body := range []string{
		"{\"categories\":[{\"id\":\"a\",\"name\":\"Caf\xe9\"}],\"pagination\":{\"page\":1}}", // invalid UTF-8
		`{"categories":[],"pagination":{"page":1},"pagination":{"page":2}}`,                  // a repeated member
		`{"categories":[],"pagination":{"page":1},"unknown":{"x":[1,2]}}`,                    // a member we do not know
	} {
		var v1, v2 CategoryPage
		err1 := json.Unmarshal([]byte(body), &v1)
		err2 := decodeAnswer([]byte(body), &v2)
		if (err1 == nil) != (err2 == nil) || !reflect.DeepEqual(v1, v2) {
			t.Errorf("%q: decodeAnswer (%+v, %v), encoding/json (%+v, %v)", body, v2, err2, v1, err1)
		}
	}
}

// decodeAnswer matches member names exactly (encoding/json ignores case):
// every field of what it decodes must name its member in a json tag.
func TestDecodedTypesNameEveryMember(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var check func(reflect.Type, string)
	check = func(typ reflect.Type, path string) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] || typ.PkgPath() != reflect.TypeFor[Chat]().PkgPath() {
			return
		}
		seen[typ] = true
		for f := range typ.Fields() {
			if f.IsExported() && f.Tag.Get("json") == "" {
				t.Errorf("%s.%s has no json tag", path, f.Name)
			}
			check(f.Type, path+"."+f.Name)
		}
	}
	for _, v := range []any{CategoryPage{}, ChatPage{}, Chat{}, Import{}, ImportSummary{}, pagingBlock{}, Account{}} {
		check(reflect.TypeOf(v), reflect.TypeOf(v).Name())
	}
}
