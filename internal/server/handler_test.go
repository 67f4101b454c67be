package server

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"csbench/internal/sizes"
)

func defaultSizes(t testing.TB) []sizes.Size {
	t.Helper()
	list, err := sizes.ParseSizes(sizes.DefaultSizes)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// wantBody is the payload of n bytes: the pattern repeated and cut at n.
func wantBody(n int) []byte {
	b := bytes.Repeat([]byte(Pattern), n/len(Pattern)+1)
	return b[:n]
}

func TestHandlerRoutes(t *testing.T) {
	h := NewHandler(defaultSizes(t))
	type want struct {
		status      int
		contentType string
		body        []byte
		allow       string
	}
	ok := func(body []byte) want { return want{200, payloadContentType, body, ""} }
	notFound := want{404, textContentType, []byte("404 page not found\n"), ""}
	notAllowed := want{405, textContentType, []byte("405 method not allowed\n"), "GET, HEAD"}
	for _, tc := range []struct {
		method, target string
		want           want
	}{
		{"GET", "/healthz", want{200, textContentType, []byte("ok\n"), ""}},
		{"GET", "/payload/1k", ok(wantBody(1024))},
		{"GET", "/payload/4k", ok(wantBody(4096))},
		{"GET", "/payload/10k", ok(wantBody(10240))},
		{"GET", "/payload/100k", ok(wantBody(102400))},
		{"GET", "/payload/1k?cache=bust", ok(wantBody(1024))}, // the query is ignored

		// Only the canonical spelling is a route.
		{"GET", "/payload/1K", notFound},
		{"GET", "/payload/1024", notFound},
		{"GET", "/payload/1k/", notFound},
		{"GET", "/payload/", notFound},
		{"GET", "/payload/1m", notFound}, // not configured
		{"GET", "/healthz/", notFound},
		{"GET", "/", notFound},
		{"POST", "/nope", notFound}, // unknown path: 404 whatever the method

		{"POST", "/healthz", notAllowed},
		{"PUT", "/payload/1k", notAllowed},
		{"DELETE", "/payload/1k", notAllowed},
		{"PATCH", "/payload/100k", notAllowed},
		{"OPTIONS", "/payload/1k", notAllowed},
	} {
		for _, method := range []string{tc.method, "HEAD"} {
			if method == "HEAD" && tc.want.status == 405 {
				continue // HEAD is allowed
			}
			t.Run(method+" "+tc.target, func(t *testing.T) {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(method, tc.target, nil))
				res := rec.Result()
				want := tc.want
				if res.StatusCode != want.status {
					t.Errorf("status = %d, want %d", res.StatusCode, want.status)
				}
				if got := res.Header.Get("Content-Type"); got != want.contentType {
					t.Errorf("Content-Type = %q, want %q", got, want.contentType)
				}
				// Content-Length is the full body length, for HEAD too.
				if got, want := res.Header.Values("Content-Length"), []string{strconv.Itoa(len(want.body))}; len(got) != 1 || got[0] != want[0] {
					t.Errorf("Content-Length = %q, want %q", got, want)
				}
				if got := res.Header.Get("Allow"); got != want.allow {
					t.Errorf("Allow = %q, want %q", got, want.allow)
				}
				wantBody := want.body
				if method == "HEAD" {
					wantBody = nil
				}
				if got := rec.Body.Bytes(); !bytes.Equal(got, wantBody) {
					t.Errorf("body: got %d bytes %.40q..., want %d bytes %.40q...", len(got), got, len(wantBody), wantBody)
				}
			})
		}
	}
}

// TestHandlerSharedHeaders checks that the precomputed header slices cannot
// be corrupted through one response: appending to a value must copy.
func TestHandlerSharedHeaders(t *testing.T) {
	h := NewHandler(defaultSizes(t))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/payload/1k", nil))
	rec.Header().Add("Content-Type", "text/html")
	rec2 := httptest.NewRecorder()
	h.ServeHTTP(rec2, httptest.NewRequest("GET", "/payload/1k", nil))
	if got := rec2.Header().Values("Content-Type"); len(got) != 1 || got[0] != payloadContentType {
		t.Fatalf("second response Content-Type = %q, want [%q]", got, payloadContentType)
	}
}

// fakeWriter is a reusable http.ResponseWriter, so that the benchmark and
// the allocation test measure the handler and not a recorder. Its header
// map is cleared, not replaced, between requests, as net/http hands every
// request an empty header map.
type fakeWriter struct {
	header http.Header
	status int
	n      int
}

func newFakeWriter() *fakeWriter { return &fakeWriter{header: make(http.Header, 4)} }

func (w *fakeWriter) Header() http.Header         { return w.header }
func (w *fakeWriter) WriteHeader(status int)      { w.status = status }
func (w *fakeWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

func (w *fakeWriter) reset() {
	clear(w.header)
	w.status, w.n = 0, 0
}

var handlerCases = []struct {
	name, method, target string
	status, n            int
}{
	{"healthz", "GET", "/healthz", 200, 3},
	{"GET_1k", "GET", "/payload/1k", 200, 1024},
	{"GET_100k", "GET", "/payload/100k", 200, 102400},
	{"HEAD_100k", "HEAD", "/payload/100k", 200, 0},
	{"404", "GET", "/payload/2k", 404, 19},
	{"405", "POST", "/payload/1k", 405, 23},
}

// TestHandlerAllocs is the allocation claim as a test: the handler itself
// allocates nothing on any path.
func TestHandlerAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	h := NewHandler(defaultSizes(t))
	for _, tc := range handlerCases {
		req := httptest.NewRequest(tc.method, tc.target, nil)
		w := newFakeWriter()
		allocs := testing.AllocsPerRun(1000, func() {
			w.reset()
			h.ServeHTTP(w, req)
		})
		if allocs != 0 {
			t.Errorf("%s %s: %v allocs per request, want 0", tc.method, tc.target, allocs)
		}
		if w.status != tc.status || w.n != tc.n {
			t.Errorf("%s %s: status %d, %d bytes; want %d, %d bytes", tc.method, tc.target, w.status, w.n, tc.status, tc.n)
		}
	}
}

// BenchmarkHandler measures ServeHTTP alone, with a reused request and
// ResponseWriter: run with go test -bench . -benchmem ./internal/server/
// and expect 0 allocs/op on every path.
func BenchmarkHandler(b *testing.B) {
	h := NewHandler(defaultSizes(b))
	for _, tc := range handlerCases {
		b.Run(tc.name, func(b *testing.B) {
			req := httptest.NewRequest(tc.method, tc.target, nil)
			w := newFakeWriter()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				w.reset()
				h.ServeHTTP(w, req)
			}
			b.StopTimer()
			if w.status != tc.status || w.n != tc.n {
				b.Fatalf("status %d, %d bytes; want %d, %d bytes", w.status, w.n, tc.status, tc.n)
			}
		})
	}
}
