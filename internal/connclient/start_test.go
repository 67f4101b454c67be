package connclient

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// -start-file: the start time appears in the file later; bad content and a
// file that never comes are errors that say which.
func TestWaitStart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "start")
	want := time.Now().Add(time.Second).UnixMilli()
	go func() {
		time.Sleep(50 * time.Millisecond)
		os.WriteFile(path+".tmp", []byte("  "+itoa(want)+"\n"), 0o644)
		os.Rename(path+".tmp", path)
	}()
	at, err := waitStart(context.Background(), path, 5*time.Second)
	if err != nil || at.UnixMilli() != want {
		t.Fatalf("got %v %v, want %d", at, err, want)
	}
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("soon\n"), 0o644)
	if _, err := waitStart(context.Background(), bad, time.Second); err == nil || !strings.Contains(err.Error(), "Unix milliseconds") {
		t.Errorf("bad content: %v", err)
	}
	if _, err := waitStart(context.Background(), filepath.Join(dir, "never"), 30*time.Millisecond); err == nil || !strings.Contains(err.Error(), "-start-wait") {
		t.Errorf("no file: %v", err)
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
