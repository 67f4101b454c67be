package server

import (
	"net/http"
	"strconv"

	"csbench/internal/sizes"
)

// Pattern is the content of every payload body: payload bodies are prefixes
// of this 64-byte line repeated. It is printable so a body can be looked at
// with curl, and fixed so two runs send the same bytes.
const Pattern = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.\n"

// Content types, set explicitly so net/http never sniffs a body.
const (
	payloadContentType = "application/octet-stream"
	textContentType    = "text/plain; charset=utf-8"
)

// Handler serves /healthz and /payload/<size>. Everything it sends (bodies and
// header values) is built once by NewHandler, so ServeHTTP allocates nothing:
// one map lookup, a few header map assignments, one Write. (Under net/http,
// whose ResponseWriter hands every request a new, empty header map, the
// first assignment allocates that map's storage: one allocation per
// request, net/http's map, in HTTP/1.1 and HTTP/2 alike; BenchmarkServe.)
type Handler struct {
	routes           map[string]*response
	notFound         response
	methodNotAllowed response
}

// A response is one precomputed reply. The header value slices are shared by
// every request; net/http only reads them, and each has len == cap so an
// append by anyone would copy rather than write into the shared array.
type response struct {
	status        int
	contentType   []string
	contentLength []string
	allow         []string // nil except for 405
	body          []byte
}

// NewHandler builds the bodies and routes for sizes once.
func NewHandler(list []sizes.Size) *Handler {
	largest := 0
	for _, s := range list {
		largest = max(largest, s.Bytes)
	}
	// One buffer; every body is a prefix of it and shares its memory.
	buf := make([]byte, largest)
	for i := range buf {
		buf[i] = Pattern[i%len(Pattern)]
	}

	h := &Handler{
		routes:           make(map[string]*response, len(list)+1),
		notFound:         newResponse(http.StatusNotFound, textContentType, []byte("404 page not found\n")),
		methodNotAllowed: newResponse(http.StatusMethodNotAllowed, textContentType, []byte("405 method not allowed\n")),
	}
	h.methodNotAllowed.allow = []string{"GET, HEAD"}
	healthz := newResponse(http.StatusOK, textContentType, []byte("ok\n"))
	h.routes["/healthz"] = &healthz
	for _, s := range list {
		r := newResponse(http.StatusOK, payloadContentType, buf[:s.Bytes:s.Bytes])
		h.routes[PayloadPath(s)] = &r
	}
	return h
}

// PayloadPath is the URL path that serves s.
func PayloadPath(s sizes.Size) string { return "/payload/" + s.Name }

func newResponse(status int, contentType string, body []byte) response {
	return response{
		status:        status,
		contentType:   []string{contentType},
		contentLength: []string{strconv.Itoa(len(body))},
		body:          body,
	}
}

// ServeHTTP answers GET and HEAD on a known path with its fixed reply, an
// unknown path with 404, and any other method on a known path with 405.
// It does no logging.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	resp := h.routes[r.URL.Path]
	switch {
	case resp == nil:
		resp = &h.notFound
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		resp = &h.methodNotAllowed
	}

	// Keys are already in canonical form, so direct map assignment is the
	// same as Header.Set without the canonicalisation and the new slice.
	hdr := w.Header()
	hdr["Content-Type"] = resp.contentType
	hdr["Content-Length"] = resp.contentLength
	if resp.allow != nil {
		hdr["Allow"] = resp.allow
	}
	w.WriteHeader(resp.status)
	if r.Method != http.MethodHead {
		// An error here means the client went away; there is nothing to do
		// about it and per-request logging would distort the measurement.
		_, _ = w.Write(resp.body)
	}
}
