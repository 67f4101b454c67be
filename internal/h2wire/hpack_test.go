package h2wire

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// huffmanEncode is the encoder side of the HPACK Huffman code, for the
// tests: the decoder must invert it.
func huffmanEncode(s []byte) []byte {
	var out []byte
	var acc uint64
	bits := 0
	for _, c := range s {
		acc = acc<<hpackHuffLen[c] | uint64(hpackHuffCode[c])
		bits += int(hpackHuffLen[c])
		for bits >= 8 {
			bits -= 8
			out = append(out, byte(acc>>bits))
		}
	}
	if bits > 0 { // pad with the start of EOS: ones
		out = append(out, byte(acc<<(8-bits))|byte(0xff>>bits))
	}
	return out
}

// TestHuffmanCanonical: the decoder relies on the code being canonical:
// the codes of one length consecutive, each length's first code following
// the last of the shorter ones.
func TestHuffmanCanonical(t *testing.T) {
	d := huffman
	var next uint32
	prev := 0
	for l := 1; l <= 30; l++ {
		if d.count[l] == 0 {
			continue
		}
		next <<= l - prev
		if d.first[l] != next {
			t.Fatalf("length %d: first code %#x, want %#x", l, d.first[l], next)
		}
		for k := uint32(0); k < d.count[l]; k++ {
			code, length := huffCode(int(d.syms[d.offset[l]+k]))
			if length != l || code != d.first[l]+k {
				t.Fatalf("length %d: code %d is %#x/%d, want %#x/%d", l, k, code, length, d.first[l]+k, l)
			}
		}
		next, prev = d.first[l]+d.count[l], l
	}
	if next != 1<<30 { // the last code, EOS, is all ones: the code is complete
		t.Errorf("after the longest codes, next %#x, want %#x: the code is not complete", next, 1<<30)
	}
}

// TestHuffmanDecode: the examples of RFC 7541 Appendix C, and every byte
// value through the encoder and back.
func TestHuffmanDecode(t *testing.T) {
	for _, c := range []struct{ hex, s string }{
		{"f1e3c2e5f23a6ba0ab90f4ff", "www.example.com"}, // C.4.1
		{"a8eb10649cbf", "no-cache"},                    // C.4.2
		{"25a849e95ba97d7f", "custom-key"},              // C.4.3
		{"25a849e95bb8e8b4bf", "custom-value"},          // C.4.3
		{"6402", "302"},                                 // C.6.1
		{"aec3771a4b", "private"},                       // C.6.1
		{"d07abe941054d444a8200595040b8166e082a62d1bff", "Mon, 21 Oct 2013 20:13:21 GMT"},
		{"9d29ad171863c78f0b97c8e9ae82ae43d3", "https://www.example.com"},
		{"1001", "200"},
		{"", ""},
	} {
		src, _ := hex.DecodeString(c.hex)
		dst := make([]byte, 64)
		n, err := huffmanDecode(dst, src)
		if err != nil || string(dst[:n]) != c.s {
			t.Errorf("%s: %q, %v; want %q", c.hex, dst[:n], err, c.s)
		}
		if got := hex.EncodeToString(huffmanEncode([]byte(c.s))); got != c.hex {
			t.Errorf("encoding %q: %s, want %s", c.s, got, c.hex)
		}
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	dst := make([]byte, 256)
	if n, err := huffmanDecode(dst, huffmanEncode(all)); err != nil || string(dst[:n]) != string(all) {
		t.Errorf("every byte value: %v, decoded %d bytes", err, n)
	}
	for _, c := range []struct{ name, hex, msg string }{
		{"EOS inside", "ffffffff", "EOS"}, // 30 ones, then padding
		{"padding of 8 bits", "1001ff", "padding"},
		{"padding with a zero", "1000", "padding"},
		{"longer than dst", huffmanHex("20000"), "longer than"},
	} {
		src, _ := hex.DecodeString(c.hex)
		var dst [4]byte
		_, err := huffmanDecode(dst[:], src)
		if !errors.Is(err, ErrBadResponse) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want a bad response saying %q", c.name, err, c.msg)
		}
	}
}

func huffmanHex(s string) string { return hex.EncodeToString(huffmanEncode([]byte(s))) }

// huffmanLit is the string literal of s, Huffman-coded, in hex.
func huffmanLit(s string) string {
	b := huffmanEncode([]byte(s))
	return hex.EncodeToString(append(hpackAppendInt(nil, 0x80, 7, len(b)), b...))
}

// TestHpackStatus: every way a server may encode :status, the first
// field of its header block.
func TestHpackStatus(t *testing.T) {
	for _, c := range []struct {
		name, hex string
		want      int
	}{
		{"indexed 200", "88", 200},
		{"indexed 204", "89", 204},
		{"indexed 206", "8a", 206},
		{"indexed 304", "8b", 304},
		{"indexed 400", "8c", 400},
		{"indexed 404", "8d", 404},
		{"indexed 500", "8e", 500},
		{"indexed, then other fields", "88" + "5f0a" + hex.EncodeToString([]byte("text/plain")), 200},
		{"after a table size update", "3fe11f" + "88", 200},
		{"incremental indexing, raw", "4803" + hex.EncodeToString([]byte("503")), 503},
		{"incremental indexing, Huffman 302 (RFC 7541 C.6.1)", "4882" + "6402", 302},
		{"incremental indexing, Huffman 200", "4882" + "1001", 200},
		{"without indexing, raw", "0803" + hex.EncodeToString([]byte("201")), 201},
		{"without indexing, name of entry 13", "0d03" + hex.EncodeToString([]byte("429")), 429},
		{"never indexed, Huffman", "1882" + huffmanHex("200"), 200},
		{"literal name", "0007" + hex.EncodeToString([]byte(":status")) + "03" + hex.EncodeToString([]byte("418")), 418},
		{"literal name, Huffman", "00" + huffmanLit(":status") + huffmanLit("503"), 503},
	} {
		b, err := hex.DecodeString(c.hex)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := hpackStatus(b)
		if err != nil || got != c.want {
			t.Errorf("%s: %d, %v; want %d", c.name, got, err, c.want)
		}
	}
	for _, c := range []struct{ name, hex string }{
		{"empty", ""},
		{"only a size update", "3fe11f"},
		{":method first", "82"},
		{"dynamic entry", "be"},
		{"literal named :path", "0403" + hex.EncodeToString([]byte("200"))},
		{"literal name not :status", "0007" + hex.EncodeToString([]byte(":statuz")) + "03" + hex.EncodeToString([]byte("200"))},
		{"two digits", "0802" + hex.EncodeToString([]byte("20"))},
		{"four digits", "0804" + hex.EncodeToString([]byte("2000"))},
		{"not digits", "0803" + hex.EncodeToString([]byte("2x0"))},
		{"leading zero", "0803" + hex.EncodeToString([]byte("099"))},
		{"string cut short", "0805" + hex.EncodeToString([]byte("200"))},
		{"value too long", "0809" + hex.EncodeToString([]byte("200200200"))},
		{"integer cut short", "ff"},
		{"bad Huffman", "4882" + "1000"},
	} {
		b, _ := hex.DecodeString(c.hex)
		if got, err := hpackStatus(b); !errors.Is(err, ErrBadResponse) {
			t.Errorf("%s: %d, %v; want a bad response", c.name, got, err)
		}
	}
}

// TestHpackInt: the integers of RFC 7541 C.1, both ways.
func TestHpackInt(t *testing.T) {
	for _, c := range []struct {
		n   uint
		v   int
		hex string
	}{
		{5, 10, "0a"},       // C.1.1
		{5, 1337, "1f9a0a"}, // C.1.2
		{8, 42, "2a"},       // C.1.3
		{4, 58, "0f2b"},
		{7, 127, "7f00"},
	} {
		b := hpackAppendInt(nil, 0, c.n, c.v)
		if hex.EncodeToString(b) != c.hex {
			t.Errorf("%d with a %d-bit prefix: %x, want %s", c.v, c.n, b, c.hex)
		}
		v, rest, err := hpackInt(b, c.n)
		if err != nil || v != c.v || len(rest) != 0 {
			t.Errorf("reading %s: %d, %d left, %v", c.hex, v, len(rest), err)
		}
	}
}
