package sizes

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseSizes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []Size
	}{
		{DefaultSizes, []Size{{"1k", 1024}, {"4k", 4096}, {"10k", 10240}, {"100k", 102400}}},
		{"100k,1k", []Size{{"1k", 1024}, {"100k", 102400}}}, // sorted by size
		{"1K", []Size{{"1k", 1024}}},
		{"1024", []Size{{"1k", 1024}}},
		{"1m", []Size{{"1m", 1048576}}},
		{"1M", []Size{{"1m", 1048576}}},
		{"1048576", []Size{{"1m", 1048576}}},
		{"2048k", []Size{{"2m", 2097152}}},
		{"1536k", []Size{{"1536k", 1572864}}},
		{"1500", []Size{{"1500", 1500}}},
		{"1", []Size{{"1", 1}}},
		{"01k", []Size{{"1k", 1024}}},
		{" 1k , 4k ", []Size{{"1k", 1024}, {"4k", 4096}}},
		{"64m", []Size{{"64m", MaxSizeBytes}}},
	} {
		got, err := ParseSizes(tc.in)
		if err != nil {
			t.Errorf("ParseSizes(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseSizes(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestParseSizesErrors(t *testing.T) {
	for _, tc := range []struct {
		in, wantErr string
	}{
		{"", "no sizes"},
		{"  ", "no sizes"},
		{"1k,", "empty size"},
		{",1k", "empty size"},
		{"1k,,4k", "empty size"},
		{"k", "invalid size"},
		{"m", "invalid size"},
		{"1g", "invalid size"},
		{"1kb", "invalid size"},
		{"1.5k", "invalid size"},
		{"-1k", "invalid size"},
		{"+1k", "invalid size"},
		{"0x10", "invalid size"},
		{"1 k", "invalid size"},
		{"1e3", "invalid size"},
		{"１k", "invalid size"}, // fullwidth digit
		{"0", "is zero"},
		{"0k", "is zero"},
		{"65m", "larger than the maximum 64m"},
		{"67108865", "larger than the maximum"},
		{"99999999999999999999999k", "larger than the maximum"},
		{"1k,1k", "repeats"},
		{"1k,1024", `size "1024" repeats "1k"`},
		{"1m,1024k", "repeats"},
	} {
		got, err := ParseSizes(tc.in)
		if err == nil {
			t.Errorf("ParseSizes(%q) = %v, want an error containing %q", tc.in, got, tc.wantErr)
			continue
		}
		if !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("ParseSizes(%q) error = %q, want it to contain %q", tc.in, err, tc.wantErr)
		}
	}
}

func TestSizeName(t *testing.T) {
	for n, want := range map[int]string{
		1: "1", 1000: "1000", 1023: "1023", 1024: "1k", 1025: "1025",
		10240: "10k", 102400: "100k", 1 << 20: "1m", 3 << 20: "3m", 1<<20 + 1024: "1025k",
	} {
		if got := SizeName(n); got != want {
			t.Errorf("SizeName(%d) = %q, want %q", n, got, want)
		}
		// Every canonical name parses back to the same size.
		if back, err := ParseSize(want); err != nil || back != n {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", want, back, err, n)
		}
	}
}
