// Package kv reads KEY=VALUE files (run.env, plan.env, a host's facts and
// settings) and lists a map's keys in order. One copy, used by every package.
package kv

import (
	"bufio"
	"os"
	"sort"
	"strings"
)

// Read reads KEY<sep>VALUE lines of a file; blank lines and lines starting
// with '#' are skipped, a line without sep is ignored, keys and values are
// trimmed. A missing file returns an empty map and the error.
func Read(path, sep string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return map[string]string{}, err
	}
	defer f.Close()
	return Parse(bufio.NewScanner(f), sep)
}

// ParseString is Read over a string.
func ParseString(text, sep string) map[string]string {
	m, _ := Parse(bufio.NewScanner(strings.NewReader(text)), sep)
	return m
}

// Parse reads KEY<sep>VALUE lines from sc (see Read).
func Parse(sc *bufio.Scanner, sep string) (map[string]string, error) {
	m := map[string]string{}
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, sep)
		if !ok {
			continue
		}
		m[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return m, sc.Err()
}

// SortedKeys returns m's keys in order.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
