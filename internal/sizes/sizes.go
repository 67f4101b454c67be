// Package sizes is the payload sizes every part of the lab names the same
// way: the reference server serves /payload/<name>, the runners check their
// settings with `csb sizes`, the reports print them. 1k is 1024 bytes.
package sizes

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Size units accepted by ParseSize. The suffixes are binary: 1k is 1024 bytes.
const (
	KiB = 1 << 10
	MiB = 1 << 20
)

// MaxSizeBytes bounds one payload. Every body is held in memory for the life of
// the process, and a 64 MiB response is already far beyond what the HTTP
// matrix measures (1k to 100k).
const MaxSizeBytes = 64 * MiB

// DefaultSizes is the default value of -sizes.
const DefaultSizes = "1k,4k,10k,100k"

// A Size is one payload the server offers at /payload/<Name>.
type Size struct {
	Name  string // canonical spelling, as used in the URL: "1k", "100k", "1m", "1500"
	Bytes int
}

// ParseSizes parses a comma-separated list such as "1k,4k,10k,100k".
// Each item is a decimal byte count with an optional unit, k (1024) or m
// (1048576), in either case. Blanks around items are ignored. The result is
// sorted by size; two items that name the same size (such as "1k" and "1024")
// are an error, as are empty items, zero, and sizes above MaxSizeBytes.
func ParseSizes(s string) ([]Size, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("no sizes given")
	}
	var sizes []Size
	seen := make(map[int]string)
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		n, err := ParseSize(item)
		if err != nil {
			return nil, err
		}
		if prev, ok := seen[n]; ok {
			return nil, fmt.Errorf("size %q repeats %q (both are %d bytes)", item, prev, n)
		}
		seen[n] = item
		sizes = append(sizes, Size{Name: SizeName(n), Bytes: n})
	}
	slices.SortFunc(sizes, func(a, b Size) int { return a.Bytes - b.Bytes })
	return sizes, nil
}

// ErrTooLarge is a size above MaxSizeBytes.
var ErrTooLarge = errors.New("larger than the server serves")

// ParseSize parses one size: digits, then an optional k, K, m or M.
func ParseSize(s string) (int, error) {
	if s == "" {
		return 0, errors.New("empty size (want e.g. 1k, 100k, 1m or 1500)")
	}
	digits, mult := s, 1
	switch s[len(s)-1] {
	case 'k', 'K':
		digits, mult = s[:len(s)-1], KiB
	case 'm', 'M':
		digits, mult = s[:len(s)-1], MiB
	}
	// strconv.Atoi alone would accept a sign; only plain digits are a size.
	if digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, fmt.Errorf("invalid size %q (want digits with an optional k or m suffix, e.g. 1k, 100k, 1m or 1500)", s)
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n > MaxSizeBytes/mult {
		return 0, fmt.Errorf("size %q is larger than the maximum %s: %w", s, SizeName(MaxSizeBytes), ErrTooLarge)
	}
	n *= mult
	if n == 0 {
		return 0, fmt.Errorf("size %q is zero", s)
	}
	return n, nil
}

// SizeName returns the canonical spelling of n bytes: "Nm" when n is a whole
// number of MiB, else "Nk" when it is a whole number of KiB, else "N".
func SizeName(n int) string {
	switch {
	case n > 0 && n%MiB == 0:
		return strconv.Itoa(n/MiB) + "m"
	case n > 0 && n%KiB == 0:
		return strconv.Itoa(n/KiB) + "k"
	default:
		return strconv.Itoa(n)
	}
}
