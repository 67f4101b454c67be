package rundir

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// The committed reference runs keep their larger raw files gzipped
// (scripts/references.sh: every file of raw/ and monitors/ of 64 KiB or
// more becomes NAME.gz, the same bytes). Every reader of a run's raw files
// opens them here, so that a run reads the same plain or gzipped: the
// summary of a reference is what its raw files make, whichever form they
// are in.

// Open opens the raw file at path or, where path does not exist, its gzip
// copy path.gz, decompressed. The error of a file that is in neither form
// is path's (fs.ErrNotExist).
func Open(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return f, err
	}
	gf, gerr := os.Open(path + ".gz")
	if gerr != nil {
		return nil, err
	}
	zr, gerr := gzip.NewReader(gf)
	if gerr != nil {
		gf.Close()
		return nil, fmt.Errorf("%s.gz: %w", path, gerr)
	}
	return gzipFile{zr, gf}, nil
}

// ReadFile reads the raw file at path, or its gzip copy (Open).
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// Exists tells whether the raw file at path is there, plain or gzipped.
func Exists(path string) bool {
	if _, err := os.Stat(path); err == nil {
		return true
	}
	_, err := os.Stat(path + ".gz")
	return err == nil
}

// gzipFile closes the gzip reader and the file under it; Close also
// reports a copy cut short (gzip's checksum is checked at its end, which a
// reader that stops early never reaches).
type gzipFile struct {
	*gzip.Reader
	f *os.File
}

func (g gzipFile) Close() error {
	err := g.Reader.Close()
	if cerr := g.f.Close(); err == nil {
		err = cerr
	}
	return err
}
