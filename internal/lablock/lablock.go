// Package lablock keeps one run at a time on each resource a run binds: a
// netns lab instance, a server host's port, a client host's port range.
// Every account on the machine sees the same locks: each is a file
// Dir/csb-<key>.lock in a directory every user may write and no user may
// empty of another's files (/run/lock, or /tmp, sticky), held with flock(2)
// by one small process per run (csb lock) that ends with the run, however
// it ends. Beside each lock, Dir/csb-<key>.<uid>.holder names the run that
// holds it (PID, runner, start, user), so a refusal can name it.
package lablock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"csbench/internal/kv"
)

// Dirs are where the locks may live, in order: the first that exists,
// is a directory (not a link) and is sticky if others may write it.
var Dirs = []string{"/run/lock", "/tmp"}

// Dir is the lock directory of this machine.
func Dir() (string, error) {
	for _, d := range Dirs {
		st, err := os.Lstat(d)
		if err != nil || !st.IsDir() {
			continue
		}
		m := st.Mode()
		if m.Perm()&0o022 != 0 && m&os.ModeSticky == 0 {
			continue
		}
		return d, nil
	}
	return "", fmt.Errorf("no lock directory: none of %s is a sticky directory", strings.Join(Dirs, ", "))
}

// Path is key's lock file in dir.
func Path(dir, key string) string { return filepath.Join(dir, "csb-"+key+".lock") }

// Holder is what a holder file says.
type Holder struct {
	PID     int
	Runner  string
	Started string
	User    string
}

// Text names the holder for people: "run PID 123 (runner, started T)".
func (h *Holder) Text() string {
	if h == nil || h.PID == 0 {
		return "an unknown process (no holder file beside its lock)"
	}
	r, s := h.Runner, h.Started
	if r == "" {
		r = "unknown runner"
	}
	if s == "" {
		s = "at an unknown time"
	}
	return fmt.Sprintf("run PID %d (%s, started %s)", h.PID, r, s)
}

// holderFiles are key's holder files in dir.
func holderFiles(dir, key string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	prefix := "csb-" + key + "."
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, prefix) && strings.HasSuffix(n, ".holder") {
			out = append(out, filepath.Join(dir, n))
		}
	}
	sort.Strings(out)
	return out
}

func readHolder(path string) *Holder {
	fields, err := kv.Read(path, "=")
	if err != nil {
		return nil
	}
	pid, _ := strconv.Atoi(fields["pid"])
	return &Holder{PID: pid, Runner: fields["runner"], Started: fields["started"], User: fields["user"]}
}

// Alive reports whether pid names a running process.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// CurrentHolder is the holder of key whose process lives, else the last
// one recorded (a run that died), else nil.
func CurrentHolder(dir, key string) *Holder {
	var last *Holder
	for _, f := range holderFiles(dir, key) {
		h := readHolder(f)
		if h == nil {
			continue
		}
		if Alive(h.PID) {
			return h
		}
		last = h
	}
	return last
}

// Held is the locks one run holds.
type Held struct {
	dir   string
	keys  []string
	files []*os.File
}

// open opens a lock file for flock: made (0644) when missing, else read
// only when another user made it (flock needs no write access).
func open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if errors.Is(err, os.ErrPermission) {
		f, err = os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	}
	if err != nil {
		return nil, err
	}
	_ = f.Chmod(0o644) // a lock file of ours any user can open
	return f, nil
}

// TryAll takes every key's lock or none: it returns the locks, or the
// first key that another run holds.
func TryAll(dir string, keys []string) (*Held, string, error) {
	h := &Held{dir: dir}
	for _, k := range keys {
		f, err := open(Path(dir, k))
		if err != nil {
			h.Release()
			return nil, "", fmt.Errorf("lock %s: %w", Path(dir, k), err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			h.Release()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, k, nil
			}
			return nil, "", fmt.Errorf("flock %s: %w", Path(dir, k), err)
		}
		h.keys, h.files = append(h.keys, k), append(h.files, f)
	}
	return h, "", nil
}

// Busy reports whether another process holds key's lock.
func Busy(dir, key string) bool {
	f, err := os.Open(Path(dir, key))
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return true
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

// Record writes the holder file of every lock held (temp file and rename;
// one per user, so no user replaces another's) and returns the holders it
// found left by runs that are gone (their locks now this run's).
func (h *Held) Record(me Holder) ([]string, error) {
	var taken []string
	uid := strconv.Itoa(os.Getuid())
	for _, k := range h.keys {
		if old := CurrentHolder(h.dir, k); old != nil && old.PID != me.PID && !Alive(old.PID) {
			taken = append(taken, k+" "+old.Text())
		}
		text := fmt.Sprintf("pid=%d\nstarted=%s\nrunner=%s\nuser=%s\nlab=%s\n", me.PID, me.Started, me.Runner, me.User, k)
		p := filepath.Join(h.dir, "csb-"+k+"."+uid+".holder")
		tmp := p + ".tmp"
		if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
			return taken, err
		}
		if err := os.Rename(tmp, p); err != nil {
			return taken, err
		}
	}
	return taken, nil
}

// Forget removes this run's holder files (those naming pid).
func (h *Held) Forget(pid int) {
	uid := strconv.Itoa(os.Getuid())
	for _, k := range h.keys {
		p := filepath.Join(h.dir, "csb-"+k+"."+uid+".holder")
		if hd := readHolder(p); hd != nil && hd.PID == pid {
			os.Remove(p)
		}
	}
}

// Release lets go of every lock.
func (h *Held) Release() {
	for _, f := range h.files {
		f.Close()
	}
	h.files = nil
}
