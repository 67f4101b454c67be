package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
)

// h2Raw is a minimal HTTP/2 client over one connection, written from RFC
// 9113 for the tests: it reads the server's SETTINGS as sent on the wire,
// and sends one GET at a time from a request frame built once, so that an
// allocation count of the whole process is the server's (net/http's
// client allocates far more per request than the server does).
type h2Raw struct {
	c        net.Conn
	hdr      [9]byte
	buf      []byte // one frame's payload
	req      []byte // HEADERS frame of the request; the stream id is patched in
	stream   uint32
	unacked  uint32 // DATA bytes received since the last connection WINDOW_UPDATE
	Settings map[uint16]uint32
}

const (
	h2FrameData         = 0x0
	h2FrameHeaders      = 0x1
	h2FrameRSTStream    = 0x3
	h2FrameSettings     = 0x4
	h2FramePing         = 0x6
	h2FrameGoAway       = 0x7
	h2FrameWindowUpdate = 0x8

	h2FlagEndStream  = 0x1
	h2FlagAck        = 0x1
	h2FlagEndHeaders = 0x4

	h2SettingMaxConcurrentStreams = 0x3
	h2SettingInitialWindowSize    = 0x4

	h2Window = 1 << 30
)

func h2Frame(typ, flags byte, stream uint32, payload []byte) []byte {
	f := make([]byte, 9, 9+len(payload))
	f[0], f[1], f[2] = byte(len(payload)>>16), byte(len(payload)>>8), byte(len(payload))
	f[3], f[4] = typ, flags
	binary.BigEndian.PutUint32(f[5:], stream)
	return append(f, payload...)
}

// newH2Raw sends the client preface, a SETTINGS frame with a large initial
// stream window and a connection WINDOW_UPDATE to match, then reads frames
// until the server's SETTINGS, which it acknowledges. Requests will be GET
// (or method) scheme://authority/path.
func newH2Raw(c net.Conn, method, scheme, path string) (*h2Raw, error) {
	h := &h2Raw{c: c, buf: make([]byte, 1<<14), Settings: map[uint16]uint32{}}
	var settings [6]byte
	binary.BigEndian.PutUint16(settings[:], h2SettingInitialWindowSize)
	binary.BigEndian.PutUint32(settings[2:], h2Window)
	var inc [4]byte
	binary.BigEndian.PutUint32(inc[:], h2Window-65535)
	out := []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
	out = append(out, h2Frame(h2FrameSettings, 0, 0, settings[:])...)
	out = append(out, h2Frame(h2FrameWindowUpdate, 0, 0, inc[:])...)
	if _, err := c.Write(out); err != nil {
		return nil, err
	}
	for {
		typ, flags, _, payload, err := h.readFrame()
		if err != nil {
			return nil, fmt.Errorf("waiting for the server's SETTINGS: %w", err)
		}
		if typ == h2FrameGoAway {
			return nil, errors.New("GOAWAY before SETTINGS")
		}
		if typ != h2FrameSettings || flags&h2FlagAck != 0 {
			continue
		}
		for i := 0; i+6 <= len(payload); i += 6 {
			h.Settings[binary.BigEndian.Uint16(payload[i:])] = binary.BigEndian.Uint32(payload[i+2:])
		}
		if _, err := c.Write(h2Frame(h2FrameSettings, h2FlagAck, 0, nil)); err != nil {
			return nil, err
		}
		break
	}

	// HPACK (RFC 7541): :method GET is static entry 2 (0x82), HEAD has no
	// entry (literal with name index 2); :scheme http 6 (0x86), https 7
	// (0x87); :path (index 4) and :authority (index 1) as literals without
	// indexing, no Huffman coding.
	var block []byte
	switch method {
	case "GET":
		block = append(block, 0x82)
	default:
		block = append(block, 0x02, byte(len(method)))
		block = append(block, method...)
	}
	switch scheme {
	case "http":
		block = append(block, 0x86)
	case "https":
		block = append(block, 0x87)
	default:
		return nil, fmt.Errorf("scheme %q", scheme)
	}
	block = append(block, 0x04, byte(len(path)))
	block = append(block, path...)
	block = append(block, 0x01, 1, 'x')
	h.req = h2Frame(h2FrameHeaders, h2FlagEndStream|h2FlagEndHeaders, 0, block)
	return h, nil
}

func (h *h2Raw) readFrame() (typ, flags byte, stream uint32, payload []byte, err error) {
	if _, err = io.ReadFull(h.c, h.hdr[:]); err != nil {
		return
	}
	n := int(h.hdr[0])<<16 | int(h.hdr[1])<<8 | int(h.hdr[2])
	if n > len(h.buf) {
		h.buf = make([]byte, n)
	}
	payload = h.buf[:n]
	if _, err = io.ReadFull(h.c, payload); err != nil {
		return
	}
	return h.hdr[3], h.hdr[4], binary.BigEndian.Uint32(h.hdr[5:]) & 0x7fffffff, payload, nil
}

// Send sends the request on the next stream and reads nothing.
func (h *h2Raw) Send() error {
	h.stream += 2
	if h.stream == 2 {
		h.stream = 1
	}
	binary.BigEndian.PutUint32(h.req[5:], h.stream)
	_, err := h.c.Write(h.req)
	return err
}

// Do sends the request on the next stream and reads to the end of its
// response. It returns the first byte of the response's header block
// (0x88 is :status 200 from HPACK's static table, as net/http encodes it)
// and the number of body bytes.
func (h *h2Raw) Do() (status byte, body int, err error) {
	if err := h.Send(); err != nil {
		return 0, 0, err
	}
	for {
		typ, flags, stream, payload, err := h.readFrame()
		if err != nil {
			return 0, 0, err
		}
		switch typ {
		case h2FrameData:
			body += len(payload)
			h.unacked += uint32(len(payload))
			if h.unacked > h2Window/2 {
				var inc [4]byte
				binary.BigEndian.PutUint32(inc[:], h.unacked)
				if _, err := h.c.Write(h2Frame(h2FrameWindowUpdate, 0, 0, inc[:])); err != nil {
					return 0, 0, err
				}
				h.unacked = 0
			}
		case h2FrameHeaders:
			if stream == h.stream && len(payload) > 0 {
				status = payload[0]
			}
		case h2FrameSettings:
			if flags&h2FlagAck == 0 {
				if _, err := h.c.Write(h2Frame(h2FrameSettings, h2FlagAck, 0, nil)); err != nil {
					return 0, 0, err
				}
			}
			continue
		case h2FramePing:
			if flags&h2FlagAck == 0 {
				if _, err := h.c.Write(h2Frame(h2FramePing, h2FlagAck, 0, payload)); err != nil {
					return 0, 0, err
				}
			}
			continue
		case h2FrameGoAway, h2FrameRSTStream:
			return 0, 0, fmt.Errorf("frame type %d from the server", typ)
		default:
			continue
		}
		if stream == h.stream && flags&h2FlagEndStream != 0 {
			return status, body, nil
		}
	}
}
