package summary

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLinkFor(t *testing.T) {
	l := LinkFor("1gbit", "ssh")
	if l.TCPCeilingMbps == nil || math.Abs(*l.TCPCeilingMbps-941.5) > 0.05 {
		t.Fatalf("ssh 1gbit ceiling = %v, want 941.5", Val(l.TCPCeilingMbps))
	}
	l = LinkFor("1gbit", "netns")
	if l.TCPCeilingMbps == nil || math.Abs(*l.TCPCeilingMbps-956.4) > 0.05 {
		t.Fatalf("netns 1gbit ceiling = %v, want 956.4", Val(l.TCPCeilingMbps))
	}
	if l := LinkFor("none", "netns"); l.TCPCeilingMbps != nil || l.RateMbps != nil {
		t.Fatalf("unshaped link has a ceiling: %+v", l)
	}
	if l := LinkFor("1gbit", "local"); l.TCPCeilingMbps != nil {
		t.Fatalf("loopback has a ceiling: %+v", l)
	}
	for rate, want := range map[string]float64{"100mbit": 100, "2500mbit": 2500, "10gbit": 10000, "500kbit": 0.5} {
		if got := RateMbps(rate); got != want {
			t.Errorf("RateMbps(%q) = %v, want %v", rate, got, want)
		}
	}
}

func TestCSVNullIsEmpty(t *testing.T) {
	s := &Summary{RunID: "r", Cells: []Cell{
		{Name: "a", Status: "ok", Params: map[string]string{"p": "1"}, Metrics: map[string]*float64{"x_mbps": F(1.5), "y_ms": nil}},
		{Name: "b", Status: "failed", Params: map[string]string{"p": "2"}, Metrics: map[string]*float64{}},
	}}
	var b bytes.Buffer
	if err := s.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	want := "run_id,cell,status,p,x_mbps,y_ms\nr,a,ok,1,1.5,\nr,b,failed,2,,\n"
	if b.String() != want {
		t.Fatalf("csv:\n%s\nwant:\n%s", b.String(), want)
	}
	if F(math.NaN()) != nil {
		t.Fatal("F(NaN) must be nil (null), not 0")
	}
}

func TestLoadRefusesAnotherSchemaVersion(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		doc, want string
	}{
		{`{"schema_version": 3, "phase": "00-iperf3"}`, "has schema_version 3; this csb reads schema_version 2"},
		{`{"phase": "00-iperf3"}`, "has no schema_version"},
	} {
		path := filepath.Join(dir, "summary.json")
		if err := os.WriteFile(path, []byte(tc.doc), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		var ve *VersionError
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), path+" "+tc.want) {
			t.Errorf("Load(%s) = %v, want a VersionError naming the file and %q", tc.doc, err, tc.want)
		}
	}
	path := filepath.Join(dir, "summary.json")
	if err := os.WriteFile(path, []byte(`{"schema_version": 2, "phase": "00-iperf3"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := Load(path); err != nil || s.Phase != "00-iperf3" {
		t.Errorf("Load(version 2) = %v, %v", s, err)
	}
}

// Write replaces summary.json and summary.csv by rename and leaves no
// temporary file behind; LoadDir reads back what it wrote.
func TestWriteIsTempAndRename(t *testing.T) {
	dir := t.TempDir()
	s := &Summary{SchemaVersion: SchemaVersion, Phase: "00-iperf3"}
	for i := 0; i < 2; i++ {
		if err := s.Write(dir); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != File+" "+CSVFile && strings.Join(names, " ") != CSVFile+" "+File {
		t.Errorf("files after Write: %v, want only %s and %s", names, File, CSVFile)
	}
	got, err := LoadDir(dir)
	if err != nil || got.Phase != "00-iperf3" {
		t.Errorf("LoadDir = %v, %v", got, err)
	}
}
