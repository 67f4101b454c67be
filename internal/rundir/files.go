package rundir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Files returns the entries of directory dir whose names begin with prefix
// and end with suffix (the two may not overlap), each joined to dir, in
// name order. It is the literal form of filepath.Glob(dir/prefix*suffix):
// dir is a user's path and may hold '[', '*', '?' or '\' (a results root
// under "/tmp/a/[x]"), which Glob would take for a pattern and so find
// nothing. A directory that does not exist has no entries; any other
// failure to read it is returned. A raw file kept gzipped (NAME.gz, see
// Open) is listed by its plain name, once.
func Files(dir, prefix, suffix string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, e := range entries {
		n := e.Name()
		if p, ok := strings.CutSuffix(n, ".gz"); ok && suffix != "" && !strings.HasSuffix(suffix, ".gz") {
			n = p
		}
		if !seen[n] && len(n) >= len(prefix)+len(suffix) && strings.HasPrefix(n, prefix) && strings.HasSuffix(n, suffix) {
			seen[n] = true
			out = append(out, filepath.Join(dir, n))
		}
	}
	sort.Strings(out)
	return out, nil
}
