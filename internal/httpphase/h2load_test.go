package httpphase

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"csbench/internal/parse"
)

// h2loadCell copies the parser's fixture NAME (.txt, .log) into a
// directory as a cell's raw output <cell>.h2load.txt and its log, and
// returns the text's path.
func h2loadCell(t *testing.T, dir, name, cell string) string {
	t.Helper()
	path := filepath.Join(dir, cell+".h2load.txt")
	for src, dst := range map[string]string{name + ".txt": path, name + ".log": H2loadLogName(path)} {
		b, err := os.ReadFile(filepath.Join("..", "parse", "testdata", src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func TestReadH2load(t *testing.T) {
	dir := t.TempDir()
	l, err := ReadH2load(h2loadCell(t, dir, "h2load-h2c-slots", "1k-h2"))
	if err != nil {
		t.Fatal(err)
	}
	// The fixture: 2129 succeeded in -D 3, 2227630 bytes of traffic, h2c,
	// time for request 12.98 .. 72.18 ms, mean 55.70 ms.
	if l.Tool != "h2load" || l.Protocol != "h2c" || l.DurationS != 3 || l.Responses != 2129 || l.OK != 2129 ||
		*l.WireBytes != 2227630 || l.ErrorsTotal != 0 || l.CrossCheck != "" || l.Dist == nil || l.Dist.Count() != 2129 {
		t.Fatalf("load: %+v", l)
	}
	if got := l.RPS(); got < 709.6 || got > 709.7 {
		t.Errorf("RPS %v, want 2129 / 3 s (h2load printed 709.67)", got)
	}
	if mn, mx, mean := *l.Latency["p50"], *l.Latency["max"], *l.Latency["mean"]; mn < 12.98 || mx < 72.18 || mx > 72.19 || mean < 55.69 || mean > 55.71 {
		t.Errorf("latency p50 %v max %v mean %v ms, want max 72.18, mean 55.70 (h2load's text)", mn, mx, mean)
	}
	if err := Check(l, 0); err != nil {
		t.Errorf("check: %v", err)
	}

	// Two clients: the merge's p99 is the p99 of both logs' requests.
	other := filepath.Join(dir, "other")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	l2, err := ReadH2load(h2loadCell(t, other, "h2load-h2-tls-slots", "1k-h2"))
	if err != nil {
		t.Fatal(err)
	}
	m := MergeLoads([]*Load{l, l2})
	var logs []*parse.H2loadLog
	for _, p := range []string{filepath.Join(dir, "1k-h2.h2load.log"), filepath.Join(other, "1k-h2.h2load.log")} {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		lg, err := parse.ParseH2loadLog(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		logs = append(logs, lg)
	}
	d := parse.MergeH2loadLogs(logs...).Latency()
	p99, _ := d.Percentile(99)
	if m.Latency["p99"] == nil || *m.Latency["p99"] != float64(p99)/1000 {
		t.Errorf("merged p99 %v ms, want %v us from both logs' requests", m.Latency["p99"], p99)
	}
	if m.Protocol != "h2c,h2" || m.Responses != l.Responses+l2.Responses {
		t.Errorf("merge: protocol %q, responses %v", m.Protocol, m.Responses)
	}
}

func TestReadH2loadRefusals(t *testing.T) {
	dir := t.TempDir()
	// An HTTP/1.1-only server: h2load prints h2c, every request errored,
	// exit 0: read, and not ok.
	l, err := ReadH2load(h2loadCell(t, dir, "h2load-h1-only-server", "x"))
	if err == nil {
		t.Fatalf("a -n run read as a cell: %+v", l)
	}
	path := h2loadCell(t, dir, "h2load-h2c-slots", "cut")
	if err := os.Remove(H2loadLogName(path)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadH2load(path); err == nil || !strings.Contains(err.Error(), "no h2load log") {
		t.Errorf("no log: %v", err)
	}
	// A log that is not the text's run: the figures stay, the latencies
	// are not taken from it.
	path = h2loadCell(t, dir, "h2load-h2c-slots", "odd")
	b, _ := os.ReadFile(H2loadLogName(path))
	if err := os.WriteFile(H2loadLogName(path), b[:strings.LastIndex(string(b[:len(b)-1]), "\n")+1], 0o600); err != nil {
		t.Fatal(err)
	}
	l, err = ReadH2load(path)
	if err != nil || l.CrossCheck == "" || l.Dist != nil || l.Latency["p99"] != nil {
		t.Errorf("a log one line short: %v %+v", err, l)
	}
}

// TestReadH2loadGzipLog: a log kept as its gzip copy (<cell>.h2load.log.gz,
// as scripts/references.sh keeps the committed runs') reads as the log.
func TestReadH2loadGzipLog(t *testing.T) {
	dir := t.TempDir()
	plain, err := ReadH2load(h2loadCell(t, dir, "h2load-h2c-slots", "1k-h2"))
	if err != nil {
		t.Fatal(err)
	}
	zdir := t.TempDir()
	path := h2loadCell(t, zdir, "h2load-h2c-slots", "1k-h2")
	log := H2loadLogName(path)
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(b)
	zw.Close()
	if err := os.WriteFile(log+".gz", z.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	zl, err := ReadH2load(path)
	if err != nil {
		t.Fatal(err)
	}
	if zl.Dist == nil || zl.Dist.Count() != plain.Dist.Count() || *zl.Latency["p99"] != *plain.Latency["p99"] || zl.CrossCheck != "" {
		t.Fatalf("from the gzip copy: %+v, want the plain log's %+v", zl, plain)
	}
	if err := os.WriteFile(log+".gz", []byte("not gzip"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadH2load(path); err == nil || !strings.Contains(err.Error(), ".gz") {
		t.Errorf("a broken gzip copy: %v, want an error naming it", err)
	}
}

// TestReadH2loadTally: a cell whose log was replaced by its tally (csb
// h2load-tally, as scripts/references.sh keeps the committed runs) reads
// to the same figures, each fixture of several statuses and failed
// streams; a tally that is not one log's is refused; the log wins where
// both are there.
func TestReadH2loadTally(t *testing.T) {
	for _, name := range []string{"h2load-h2c-slots", "h2load-h2-tls-slots"} {
		dir := t.TempDir()
		path := h2loadCell(t, dir, name, "1k-h2")
		want, err := ReadH2load(path)
		if err != nil {
			t.Fatal(err)
		}
		out, err := WriteH2loadTally(H2loadLogName(path))
		if err != nil || out != H2loadTallyName(path) || filepath.Base(out) != "1k-h2.h2load.tally.json" {
			t.Fatalf("%s: tally %q, %v", name, out, err)
		}
		got, err := ReadH2load(path) // both there: the log's
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: with the log and the tally: %v", name, err)
		}
		b, _ := os.ReadFile(H2loadLogName(path))
		if err := os.Remove(H2loadLogName(path)); err != nil {
			t.Fatal(err)
		}
		got, err = ReadH2load(path)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: from the tally: %+v, %v; want %+v", name, got, err, want)
		}
		var tf TallyFile
		tb, _ := os.ReadFile(out)
		if err := json.Unmarshal(tb, &tf); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if tf.Log.Name != "1k-h2.h2load.log" || tf.Log.Bytes != int64(len(b)) || tf.Log.SHA256 != hex.EncodeToString(sum[:]) ||
			tf.Log.Lines != uint64(bytes.Count(b, []byte{'\n'})) {
			t.Errorf("%s: source %+v, want the log's %d bytes, %d lines", name, tf.Log, len(b), bytes.Count(b, []byte{'\n'}))
		}
		// One request more by status than the latencies hold: not one log's.
		tf.Statuses["200"]++
		tb, _ = json.Marshal(tf)
		if err := os.WriteFile(out, tb, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadH2load(path); err == nil || !strings.Contains(err.Error(), "not one log's") {
			t.Errorf("%s: a tampered tally: %v", name, err)
		}
	}
	if _, err := WriteH2loadTally(filepath.Join(t.TempDir(), "x.txt")); err == nil {
		t.Error("a file not named as a log was tallied")
	}
	// Every status and the failed streams (-1) come back as they were.
	dir := t.TempDir()
	log := filepath.Join(dir, "c.h2load.log")
	lines := "1796167022261700\t200\t500\n1796167022261701\t404\t70\n1796167022261702\t-1\t9\n1796167022261703\t200\t500\n"
	if err := os.WriteFile(log, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	lg, err := parse.ParseH2loadLog(strings.NewReader(lines))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WriteH2loadTally(log); err != nil {
		t.Fatal(err)
	}
	os.Remove(log)
	got, err := readH2loadTally(filepath.Join(dir, "c.h2load.txt"))
	if want := lg.Tally(); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("tally %+v, %v; want %+v", got, err, want)
	}
}
