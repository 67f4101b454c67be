// Package atomicfile writes a file so that a reader, a crash or a full disk
// never sees it half-written: the bytes go to a temporary file in the same
// directory, which is synced and then renamed over the target. On any
// failure the temporary file is removed and the previous file, if any, is
// left exactly as it was. Every file the csb command writes goes through it.
package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// Write replaces path with data (mode perm).
func Write(path string, data []byte, perm os.FileMode) error {
	return WriteWith(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteWith replaces path with what fill writes (mode perm). When fill
// fails, nothing is renamed and fill's error is returned. A path that is
// not a regular file (/dev/null, /dev/stdout, a pipe) is written in place:
// renaming over it would replace the device with a file, and for root
// that breaks /dev/null for every process on the machine.
func WriteWith(path string, perm os.FileMode, fill func(io.Writer) error) (err error) {
	if fi, serr := os.Stat(path); serr == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		return writeInPlace(path, fill)
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return describe(path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = fill(f); err != nil {
		return describe(path, err)
	}
	if err = f.Chmod(perm); err != nil {
		return describe(path, err)
	}
	// Sync before the rename: a full disk or an I/O error shows up here at
	// the latest (delayed allocation), while the old file is still in place.
	if err = f.Sync(); err != nil {
		return describe(path, err)
	}
	if err = f.Close(); err != nil {
		return describe(path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return describe(path, err)
	}
	// The rename itself is durable once the directory is synced; a
	// directory that cannot be synced (some filesystems) is not an error.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// writeInPlace writes what fill writes into path, which is not a regular
// file: opened for writing, never created, renamed or removed.
func writeInPlace(path string, fill func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return describe(path, err)
	}
	if err := fill(f); err != nil {
		f.Close()
		return describe(path, err)
	}
	if err := f.Close(); err != nil {
		return describe(path, err)
	}
	return nil
}

// Copy replaces dst with the contents of the file src (mode perm).
func Copy(dst, src string, perm os.FileMode) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return Write(dst, b, perm)
}

// Append replaces path with its current contents followed by data, so a
// failure leaves the file as it was (never half an appended block).
func Append(path string, data []byte) error {
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	perm := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		perm = st.Mode().Perm()
	}
	return Write(path, append(bytes.Clone(old), data...), perm)
}

// ErrDiskFull is matched (errors.Is) by the error of a write that failed
// because the filesystem had no space (ENOSPC) or the user's quota was
// used up (EDQUOT).
var ErrDiskFull = errors.New("disk full")

type diskFullError struct {
	path string
	err  error
}

func (e *diskFullError) Error() string {
	return fmt.Sprintf("disk full: no space left on %s (writing %s); the previous %s, if any, is unchanged",
		filepath.Dir(e.path), filepath.Base(e.path), filepath.Base(e.path))
}
func (e *diskFullError) Unwrap() []error { return []error{ErrDiskFull, e.err} }

// describe names the disk and the file when err is a full disk; any other
// error is returned with the path added when it does not carry one.
func describe(path string, err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return &diskFullError{path: path, err: err}
	}
	var pe *os.PathError
	var le *os.LinkError
	if errors.As(err, &pe) || errors.As(err, &le) {
		return err
	}
	return fmt.Errorf("write %s: %w", path, err)
}
