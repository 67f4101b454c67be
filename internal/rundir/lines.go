package rundir

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"csbench/internal/atomicfile"
)

// LinesSchemaVersion is the version of NAME.lines.json.
const LinesSchemaVersion = 1

// Lines is NAME.lines.json: all that summarize reads of a raw listing
// NAME, its count of lines (an `ss` listing of every held connection is
// 70 MB a host at C1M). The committed references keep it in the listing's
// place (scripts/references.sh), with the listing's name, size and SHA-256
// unzipped; git history keeps the listing.
type Lines struct {
	SchemaVersion int    `json:"schema_version"`
	Name          string `json:"name"`
	Lines         uint64 `json:"lines"` // those not blank
	Bytes         int64  `json:"bytes"`
	SHA256        string `json:"sha256"`
}

// LinesName is the lines file of the raw listing at path (plain or .gz):
// NAME.lines.json.
func LinesName(path string) string { return strings.TrimSuffix(path, ".gz") + ".lines.json" }

// CountLines is the number of lines that are not blank in the raw listing
// at path (Open: plain or gzipped) or, where the listing is in neither
// form, in its lines file (LinesName). The error of a listing with neither
// is the listing's (fs.ErrNotExist).
func CountLines(path string) (uint64, error) {
	l, err := readListing(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return l.Lines, err
	}
	b, lerr := ReadFile(LinesName(path))
	if errors.Is(lerr, fs.ErrNotExist) {
		return 0, err
	}
	if lerr != nil {
		return 0, lerr
	}
	var lf Lines
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&lf); err != nil {
		return 0, fmt.Errorf("%s: %w", LinesName(path), err)
	}
	if lf.SchemaVersion != LinesSchemaVersion {
		return 0, fmt.Errorf("%s: schema_version %d, this csb reads %d", LinesName(path), lf.SchemaVersion, LinesSchemaVersion)
	}
	if want := filepath.Base(strings.TrimSuffix(path, ".gz")); lf.Name != want {
		return 0, fmt.Errorf("%s: counts %q, not %q", LinesName(path), lf.Name, want)
	}
	return lf.Lines, nil
}

// WriteLines reads the raw listing at path (plain or gzipped) and writes
// its lines file beside it (temp and rename), returning its path.
func WriteLines(path string) (string, error) {
	path = strings.TrimSuffix(path, ".gz")
	l, err := readListing(path)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(l)
	if err != nil {
		return "", err
	}
	out := LinesName(path)
	return out, atomicfile.Write(out, append(b, '\n'), 0o644)
}

// readListing counts the listing at path (Open) into its Lines.
func readListing(path string) (Lines, error) {
	f, err := Open(path)
	if err != nil {
		return Lines{}, err
	}
	h := sha256.New()
	c := &byteCount{w: h}
	l := Lines{SchemaVersion: LinesSchemaVersion, Name: filepath.Base(path)}
	sc := bufio.NewScanner(io.TeeReader(f, c))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			l.Lines++
		}
	}
	if err := sc.Err(); err != nil {
		f.Close()
		return Lines{}, fmt.Errorf("%s: %w", path, err)
	}
	// (A gzip copy cut short is found at its end, by Close.)
	if err := f.Close(); err != nil {
		return Lines{}, fmt.Errorf("%s: %w", path, err)
	}
	l.Bytes, l.SHA256 = c.n, hex.EncodeToString(h.Sum(nil))
	return l, nil
}

// byteCount passes writes on to w, counting their bytes.
type byteCount struct {
	w io.Writer
	n int64
}

func (c *byteCount) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.w.Write(p)
}
