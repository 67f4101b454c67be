package httpphase

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"csbench/internal/atomicfile"
	"csbench/internal/dist"
	"csbench/internal/parse"
	"csbench/internal/rundir"
)

// TallySchemaVersion is the version of <cell>.h2load.tally.json.
const TallySchemaVersion = 1

// TallyFile is <cell>.h2load.tally.json: what summarize reads of h2load's
// --log-file (parse.H2loadTally), kept in place of the log in the
// committed references (scripts/references.sh): the log's requests by
// status and the exact distribution of the completed ones' elapsed times,
// with the name, line count, size and SHA-256 of the log it was made from
// (git history keeps the log).
type TallyFile struct {
	SchemaVersion int               `json:"schema_version"`
	Log           TallySource       `json:"log"`
	Statuses      map[string]uint64 `json:"statuses"` // "200", ...; "-1": the failed streams
	LatencyUs     dist.Dist         `json:"latency_us"`
}

// TallySource names the log a tally was made from: its bytes unzipped.
type TallySource struct {
	Name   string `json:"name"`
	Lines  uint64 `json:"lines"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// H2loadTallyName is the tally beside h2load's text output
// <cell>.h2load.txt: <cell>.h2load.tally.json.
func H2loadTallyName(textPath string) string {
	return strings.TrimSuffix(textPath, ".txt") + ".tally.json"
}

// WriteH2loadTally reads the log at logPath (<cell>.h2load.log, plain or
// gzipped) and writes its tally beside it (temp and rename), returning
// the tally file's path.
func WriteH2loadTally(logPath string) (string, error) {
	logPath = strings.TrimSuffix(logPath, ".gz")
	if !strings.HasSuffix(logPath, ".h2load.log") {
		return "", fmt.Errorf("%s: not an h2load log (<cell>.h2load.log, or .log.gz)", logPath)
	}
	f, err := rundir.Open(logPath)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	cr := &countReader{r: io.TeeReader(f, h)}
	lg, err := parse.ParseH2loadLog(cr)
	if err != nil {
		return "", fmt.Errorf("%s: %w", logPath, err)
	}
	t := lg.Tally()
	tf := TallyFile{SchemaVersion: TallySchemaVersion,
		Log:       TallySource{Name: filepath.Base(logPath), Lines: uint64(len(lg.Requests)), Bytes: cr.n, SHA256: hex.EncodeToString(h.Sum(nil))},
		Statuses:  map[string]uint64{},
		LatencyUs: t.Latency}
	for s, c := range t.Statuses {
		tf.Statuses[strconv.Itoa(s)] = c
	}
	b, err := json.Marshal(tf)
	if err != nil {
		return "", err
	}
	out := H2loadTallyName(strings.TrimSuffix(logPath, ".log") + ".txt")
	return out, atomicfile.Write(out, append(b, '\n'), 0o644)
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// readH2loadTally is the tally of h2load text textPath's cell: its log's
// (H2loadLogName, plain or gzipped) where the log is there, else the
// tally file's (H2loadTallyName) that took its place.
func readH2loadTally(textPath string) (parse.H2loadTally, error) {
	lf, err := rundir.Open(H2loadLogName(textPath))
	if err == nil {
		defer lf.Close()
		lg, err := parse.ParseH2loadLog(lf)
		if err != nil {
			return parse.H2loadTally{}, err
		}
		return lg.Tally(), nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return parse.H2loadTally{}, err
	}
	b, terr := rundir.ReadFile(H2loadTallyName(textPath))
	if errors.Is(terr, fs.ErrNotExist) {
		return parse.H2loadTally{}, fmt.Errorf("no h2load log: %w", err)
	}
	if terr != nil {
		return parse.H2loadTally{}, terr
	}
	var tf TallyFile
	if err := json.Unmarshal(b, &tf); err != nil {
		return parse.H2loadTally{}, fmt.Errorf("%s: %w", H2loadTallyName(textPath), err)
	}
	if tf.SchemaVersion != TallySchemaVersion {
		return parse.H2loadTally{}, fmt.Errorf("%s: schema_version %d, this csb reads %d", H2loadTallyName(textPath), tf.SchemaVersion, TallySchemaVersion)
	}
	t := parse.H2loadTally{Statuses: map[int]uint64{}, Latency: tf.LatencyUs}
	var completed uint64
	for k, c := range tf.Statuses {
		s, err := strconv.Atoi(k)
		if err != nil || (s != -1 && (s < 100 || s > 999)) {
			return parse.H2loadTally{}, fmt.Errorf("%s: status %q: want -1 or an HTTP status", H2loadTallyName(textPath), k)
		}
		t.Statuses[s] = c
		if s != -1 {
			completed += c
		}
	}
	if completed != t.Latency.Count() || t.Done() != tf.Log.Lines {
		return parse.H2loadTally{}, fmt.Errorf("%s: %d completed by status, %d in latency_us, %d of %d lines: not one log's",
			H2loadTallyName(textPath), completed, t.Latency.Count(), t.Done(), tf.Log.Lines)
	}
	return t, nil
}
