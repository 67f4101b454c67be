package rundir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Files returns the entries of directory dir whose names begin with prefix
// and end with suffix (the two may not overlap), each joined to dir, in
// name order. It is the literal form of filepath.Glob(dir/prefix*suffix):
// dir is a user's path and may hold '[', '*', '?' or '\' (a results root
// under "/tmp/a/[x]"), which Glob would take for a pattern and so find
// nothing. A directory that does not exist has no entries; any other
// failure to read it is returned.
func Files(dir, prefix, suffix string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if len(n) >= len(prefix)+len(suffix) && strings.HasPrefix(n, prefix) && strings.HasSuffix(n, suffix) {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out, nil
}
