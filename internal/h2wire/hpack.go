package h2wire

import (
	"fmt"
	"slices"
)

// The part of HPACK (RFC 7541) this client needs: literals to encode its
// one request, and the decoding of a response's first field, :status. It
// keeps no dynamic table, and by protocol needs none: the client's
// SETTINGS (BuildRequest) sets SETTINGS_HEADER_TABLE_SIZE to 0, and a
// server applies a SETTINGS frame before the frames that follow it (RFC
// 9113 §6.5.3), here the request, so the response's header block is
// encoded for a table of size 0: it may begin with a dynamic table size
// update to 0 (§4.2, skipped by hpackStatus) and can name only entries
// of the static table. Besides, :status is the first field of the block
// (a pseudo-header), and every other field, and every later block, is
// skipped.

// hpackAppendLiteral appends a literal header field without indexing
// (RFC 7541 §6.2.2) whose name is entry index of the static table and
// whose value is v, not Huffman-coded.
func hpackAppendLiteral(b []byte, index int, v string) []byte {
	b = hpackAppendInt(b, 0x00, 4, index)
	b = hpackAppendInt(b, 0x00, 7, len(v)) // H = 0: raw
	return append(b, v...)
}

// hpackAppendInt appends v as an integer with an n-bit prefix (§5.1),
// the first byte's high bits being first.
func hpackAppendInt(b []byte, first byte, n uint, v int) []byte {
	limit := 1<<n - 1
	if v < limit {
		return append(b, first|byte(v))
	}
	b = append(b, first|byte(limit))
	for v -= limit; v >= 0x80; v >>= 7 {
		b = append(b, byte(v)|0x80)
	}
	return append(b, byte(v))
}

// hpackInt reads an integer with an n-bit prefix from the start of b; it
// returns the integer and the rest of b.
func hpackInt(b []byte, n uint) (int, []byte, error) {
	if len(b) == 0 {
		return 0, nil, fmt.Errorf("%w: HPACK integer cut short", ErrBadResponse)
	}
	limit := 1<<n - 1
	v := int(b[0]) & limit
	b = b[1:]
	if v < limit {
		return v, b, nil
	}
	for shift := 0; len(b) > 0 && shift < 28; shift += 7 {
		c := b[0]
		b = b[1:]
		v += int(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, b, nil
		}
	}
	return 0, nil, fmt.Errorf("%w: HPACK integer cut short or too large", ErrBadResponse)
}

// hpackString reads a string literal (§5.2) from the start of b into dst,
// Huffman-decoded if it is coded; it returns the bytes written to dst and
// the rest of b. A string longer than dst is an error.
func hpackString(dst, b []byte) (int, []byte, error) {
	if len(b) == 0 {
		return 0, nil, fmt.Errorf("%w: HPACK string cut short", ErrBadResponse)
	}
	huff := b[0]&0x80 != 0
	n, b, err := hpackInt(b, 7)
	if err != nil {
		return 0, nil, err
	}
	if n > len(b) {
		return 0, nil, fmt.Errorf("%w: HPACK string of %d bytes, %d left", ErrBadResponse, n, len(b))
	}
	s, b := b[:n], b[n:]
	if !huff {
		if len(s) > len(dst) {
			return 0, nil, fmt.Errorf("%w: HPACK string of %d bytes, want at most %d", ErrBadResponse, len(s), len(dst))
		}
		return copy(dst, s), b, nil
	}
	m, err := huffmanDecode(dst, s)
	return m, b, err
}

// hpackStaticStatus is the :status of the static table's entries 8 to 14.
var hpackStaticStatus = [...]int{200, 204, 206, 304, 400, 404, 500}

// hpackStatus decodes the :status of a response's header block: its first
// field after any dynamic table size updates, indexed (static entries 8 to
// 14) or a literal (with or without indexing, never indexed) whose name is
// :status (static entries 8 to 14, or the name itself) and whose value is
// three digits, raw or Huffman-coded.
func hpackStatus(block []byte) (int, error) {
	b := block
	var err error
	for len(b) > 0 && b[0]&0xe0 == 0x20 { // dynamic table size update
		if _, b, err = hpackInt(b, 5); err != nil {
			return 0, err
		}
	}
	if len(b) == 0 {
		return 0, fmt.Errorf("%w: HTTP/2 response without :status", ErrBadResponse)
	}
	isStatus := func(i int) bool { return i >= 8 && i < 8+len(hpackStaticStatus) }
	var prefix uint
	switch {
	case b[0]&0x80 != 0: // indexed
		i, _, err := hpackInt(b, 7)
		if err != nil {
			return 0, err
		}
		if !isStatus(i) {
			return 0, fmt.Errorf("%w: HTTP/2 response's first field is entry %d, not :status", ErrBadResponse, i)
		}
		return hpackStaticStatus[i-8], nil
	case b[0]&0xc0 == 0x40: // literal with incremental indexing
		prefix = 6
	default: // literal without indexing (0000), never indexed (0001)
		prefix = 4
	}
	i, b, err := hpackInt(b, prefix)
	if err != nil {
		return 0, err
	}
	var buf [8]byte
	if i == 0 { // the name is a literal too
		n, rest, err := hpackString(buf[:], b)
		if err != nil || string(buf[:n]) != ":status" {
			return 0, fmt.Errorf("%w: HTTP/2 response's first field is not :status", ErrBadResponse)
		}
		b = rest
	} else if !isStatus(i) {
		return 0, fmt.Errorf("%w: HTTP/2 response's first field is named by entry %d, not :status", ErrBadResponse, i)
	}
	n, _, err := hpackString(buf[:], b)
	if err != nil {
		return 0, err
	}
	v := buf[:n]
	if len(v) != 3 || v[0] < '1' || v[0] > '9' || v[1] < '0' || v[1] > '9' || v[2] < '0' || v[2] > '9' {
		return 0, fmt.Errorf("%w: HTTP/2 :status %q", ErrBadResponse, string(v)) // a copy: buf stays on the stack
	}
	return int(v[0]-'0')*100 + int(v[1]-'0')*10 + int(v[2]-'0'), nil
}

// huffman is the decoding side of the HPACK Huffman code, which is
// canonical: the codes of one length are consecutive, in the order of
// their symbols (TestHuffmanCanonical). For each length, the first code,
// how many codes have it, and where their symbols begin in syms.
var huffman = newHuffmanDecoder()

type huffmanDecoder struct {
	first, count, offset [31]uint32
	syms                 [257]uint16
}

const huffmanEOS = 256

func huffCode(sym int) (code uint32, length int) {
	if sym == huffmanEOS {
		return 1<<30 - 1, 30
	}
	return hpackHuffCode[sym], int(hpackHuffLen[sym])
}

func newHuffmanDecoder() *huffmanDecoder {
	d := &huffmanDecoder{}
	for i := range d.syms {
		d.syms[i] = uint16(i)
	}
	slices.SortFunc(d.syms[:], func(a, b uint16) int {
		ca, la := huffCode(int(a))
		cb, lb := huffCode(int(b))
		if la != lb {
			return la - lb
		}
		return int(ca) - int(cb)
	})
	for i, s := range d.syms {
		code, l := huffCode(int(s))
		if d.count[l] == 0 {
			d.first[l], d.offset[l] = code, uint32(i)
		}
		d.count[l]++
	}
	return d
}

// huffmanDecode decodes the Huffman-coded src into dst and returns the
// bytes written: an error if dst is too short, src holds EOS or a code of
// no symbol, or its padding is longer than 7 bits or not all ones.
func huffmanDecode(dst, src []byte) (int, error) {
	d := huffman
	var code uint32
	bits, n := 0, 0
	for _, c := range src {
		for i := 7; i >= 0; i-- {
			code = code<<1 | uint32(c>>i&1)
			bits++
			if k := code - d.first[bits]; code >= d.first[bits] && k < d.count[bits] {
				sym := d.syms[d.offset[bits]+k]
				if sym == huffmanEOS {
					return 0, fmt.Errorf("%w: HPACK Huffman string holds EOS", ErrBadResponse)
				}
				if n == len(dst) {
					return 0, fmt.Errorf("%w: HPACK string longer than %d bytes", ErrBadResponse, len(dst))
				}
				dst[n] = byte(sym)
				n++
				code, bits = 0, 0
			} else if bits == 30 {
				return 0, fmt.Errorf("%w: HPACK Huffman code of no symbol", ErrBadResponse)
			}
		}
	}
	if bits > 7 || code != 1<<bits-1 {
		return 0, fmt.Errorf("%w: HPACK Huffman padding is not the start of EOS", ErrBadResponse)
	}
	return n, nil
}
