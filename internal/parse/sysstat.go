package parse

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// sysstatDoc is the part of a sysstat JSON document (mpstat -o JSON, sadf -j)
// that the parsers use: the first host's header fields and the raw elements of
// its "statistics" array.
type sysstatDoc struct {
	header    map[string]json.RawMessage
	stats     []json.RawMessage
	truncated bool // the input ended before the document was closed
	started   bool // the opening brace was read
}

// readSysstat reads {"sysstat": {"hosts": [{..., "statistics": [...]}]}} as a
// stream, so that a document cut short (a tool killed by SIGTERM, a full disk)
// still yields every statistics element that was written whole. Such a cut is
// reported as truncated, not as an error; a document that is not JSON, or not
// shaped like this, is an error, and so is an empty input.
func readSysstat(r io.Reader) (*sysstatDoc, error) {
	doc := &sysstatDoc{header: map[string]json.RawMessage{}}
	dec := json.NewDecoder(r)
	dec.UseNumber()
	err := doc.walk(dec)
	if err == nil {
		return doc, nil
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		if !doc.started {
			return nil, errors.New("empty input: no sysstat JSON")
		}
		doc.truncated = true
		return doc, nil
	}
	return nil, err
}

func (doc *sysstatDoc) walk(dec *json.Decoder) error {
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	doc.started = true
	sawHosts := false
	for dec.More() {
		key, err := objectKey(dec)
		if err != nil {
			return err
		}
		if key != "sysstat" {
			if err := skipValue(dec); err != nil {
				return err
			}
			continue
		}
		if err := expectDelim(dec, '{'); err != nil {
			return err
		}
		for dec.More() {
			key, err := objectKey(dec)
			if err != nil {
				return err
			}
			if key != "hosts" {
				if err := skipValue(dec); err != nil {
					return err
				}
				continue
			}
			sawHosts = true
			if err := expectDelim(dec, '['); err != nil {
				return err
			}
			for n := 0; dec.More(); n++ {
				if n > 0 {
					return errors.New("sysstat JSON: more than one host; expected the output of one tool on one host")
				}
				if err := doc.walkHost(dec); err != nil {
					return err
				}
			}
			if err := expectDelim(dec, ']'); err != nil {
				return err
			}
		}
		if err := expectDelim(dec, '}'); err != nil {
			return err
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return err
	}
	if !sawHosts {
		return errors.New(`sysstat JSON: no "sysstat"."hosts" array`)
	}
	return nil
}

func (doc *sysstatDoc) walkHost(dec *json.Decoder) error {
	if err := expectDelim(dec, '{'); err != nil {
		return err
	}
	for dec.More() {
		key, err := objectKey(dec)
		if err != nil {
			return err
		}
		if key != "statistics" {
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return err
			}
			doc.header[key] = v
			continue
		}
		if err := expectDelim(dec, '['); err != nil {
			return err
		}
		for dec.More() {
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return err
			}
			doc.stats = append(doc.stats, v)
		}
		if err := expectDelim(dec, ']'); err != nil {
			return err
		}
	}
	return expectDelim(dec, '}')
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("sysstat JSON: at byte %d: got %v, want %q", dec.InputOffset(), tok, want)
	}
	return nil
}

func objectKey(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	key, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("sysstat JSON: at byte %d: got %v, want an object key", dec.InputOffset(), tok)
	}
	return key, nil
}

func skipValue(dec *json.Decoder) error {
	var v json.RawMessage
	return dec.Decode(&v)
}

// headerString returns the string header field key, or "" if it is absent.
func (doc *sysstatDoc) headerString(key string) (string, error) {
	raw, ok := doc.header[key]
	if !ok {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("sysstat JSON: header %q: %w", key, err)
	}
	return s, nil
}

// headerInt returns the integer header field key, or 0 if it is absent.
func (doc *sysstatDoc) headerInt(key string) (int, error) {
	raw, ok := doc.header[key]
	if !ok {
		return 0, nil
	}
	var n int
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, fmt.Errorf("sysstat JSON: header %q: %w", key, err)
	}
	return n, nil
}

// requireFloats copies each named JSON number of obj into the float64 that dst
// maps it to, and fails naming the first one that is absent or not a number.
// sysstat prints every field of an activity in every sample, so a missing one
// means a different tool version or flags: better an error than a silent 0.
func requireFloats(obj map[string]json.RawMessage, dst map[string]*float64) error {
	for key, p := range dst {
		raw, ok := obj[key]
		if !ok {
			return fmt.Errorf("missing field %q", key)
		}
		if err := json.Unmarshal(raw, p); err != nil {
			return fmt.Errorf("field %q: %w", key, err)
		}
	}
	return nil
}

// optionalFloats is requireFloats for fields that some flags omit: each
// present field gets a new *float64, each absent one leaves its pointer nil.
func optionalFloats(obj map[string]json.RawMessage, dst map[string]**float64) error {
	for key, pp := range dst {
		raw, ok := obj[key]
		if !ok {
			continue
		}
		var f float64
		if err := json.Unmarshal(raw, &f); err != nil {
			return fmt.Errorf("field %q: %w", key, err)
		}
		*pp = &f
	}
	return nil
}
