package logs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// tailReference finds the tail's start the slow way, reading forward: the
// lines are runs of partial entries ended by a full one (or by the end of
// the file), and the tail starts after the last entry of the line before.
func tailReference(data []byte, n int64) int64 {
	var ends []int64 // where each line's last entry ends
	open := false    // a run of partial entries is under way
	for off := 0; ; {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			break
		}
		end := off + i + 1
		if e, err := parseCRI(data[off:end]); err == nil {
			if open {
				ends[len(ends)-1] = int64(end)
			} else {
				ends = append(ends, int64(end))
			}
			open = e.partial
		}
		off = end
	}
	if n >= int64(len(ends)) {
		return 0
	}
	return ends[int64(len(ends))-n-1]
}

// randomLog makes a log of every kind of line, some long enough to span
// the tail's read blocks, so that line heads fall on block edges.
func randomLog(rng *rand.Rand, size int) []byte {
	var b bytes.Buffer
	for sec := 0; b.Len() < size; sec++ {
		content := strings.Repeat("y", rng.IntN(200))
		switch rng.IntN(20) {
		case 0:
			content = strings.Repeat("z", rng.IntN(3*tailBlock))
		case 1:
			b.WriteString("torn\n")
			continue
		case 2:
			b.WriteString("\n")
			continue
		}
		tag := "F"
		if rng.IntN(3) == 0 {
			tag = "P"
		}
		b.WriteString(cri(sec, "stdout", tag, content))
	}
	if rng.IntN(2) == 0 {
		b.WriteString(strings.TrimSuffix(cri(0, "stdout", "F", "unterminated"), "\n"))
	}
	return b.Bytes()
}

func TestTailStart(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	f := func(data []byte, n int64) {
		t.Helper()
		got, err := tailStart(bytes.NewReader(data), int64(len(data)), n)
		if want := tailReference(data, n); err != nil || got != want {
			t.Errorf("tailStart(%d bytes, %d) = %d, %v; want %d", len(data), n, got, err, want)
		}
	}
	for _, data := range [][]byte{nil, []byte("\n"), []byte("no newline"), []byte(cri(0, "stdout", "F", "one"))} {
		for n := range int64(3) {
			f(data, n)
		}
	}
	for range 40 {
		data := randomLog(rng, rng.IntN(6*tailBlock))
		lines := int64(bytes.Count(data, []byte{'\n'}))
		for _, n := range []int64{0, 1, 2, 7, rng.Int64N(lines + 1), lines / 2, lines - 1, lines, lines + 1} {
			f(data, n)
		}
	}
}

type countingReaderAt struct {
	r     io.ReaderAt
	reads int
	bytes int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	c.bytes += int64(len(p))
	return c.r.ReadAt(p, off)
}

// bigLog is lines enough to make size bytes, numbered from 0.
func bigLog(size int) []byte {
	var b bytes.Buffer
	b.Grow(size + 200)
	head := strings.TrimSuffix(cri(0, "stdout", "F", "line "), "\n")
	for i := 0; b.Len() < size; i++ {
		b.WriteString(head)
		b.WriteString(strconv.Itoa(i))
		b.WriteString(" of a log big enough that reading it whole would show\n")
	}
	return b.Bytes()
}

func TestTailReadsOnlyTheEnd(t *testing.T) {
	data := bigLog(8 << 20)
	f := func(n int64, maxBytes int64) {
		t.Helper()
		c := &countingReaderAt{r: bytes.NewReader(data)}
		start, err := tailStart(c, int64(len(data)), n)
		if err != nil {
			t.Fatal(err)
		}
		if got := int64(bytes.Count(data[start:], []byte{'\n'})); got != n {
			t.Errorf("tail %d starts %d lines from the end", n, got)
		}
		if c.bytes > maxBytes {
			t.Errorf("tail %d read %d bytes in %d reads of a %d-byte log, want at most %d", n, c.bytes, c.reads, len(data), maxBytes)
		}
	}
	f(0, tailBlock)
	f(10, tailBlock)
	// About 100 bytes a line: 2000 lines are some 200 KiB of blocks.
	f(2000, 2000*120+tailBlock)
}

func TestReadTailOfBigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	if err := os.WriteFile(path, bigLog(4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	got := readLog(t, path, Options{TailLines: ptr[int64](3)})
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 3 || !strings.HasSuffix(got, "\n") {
		t.Fatalf("tail 3 = %q", got)
	}
	var first, last int
	fmt.Sscanf(lines[0], "line %d", &first)
	fmt.Sscanf(lines[2], "line %d", &last)
	if last != first+2 || first < 1000 {
		t.Errorf("tail 3 = %q, want the log's last three lines", got)
	}
}

func BenchmarkReadTail(b *testing.B) {
	path := filepath.Join(b.TempDir(), "0.log")
	if err := os.WriteFile(path, bigLog(16<<20), 0o644); err != nil {
		b.Fatal(err)
	}
	opts := Options{TailLines: ptr[int64](100), Timestamps: true}
	b.ReportAllocs()
	for b.Loop() {
		if err := Read(context.Background(), filepath.Dir(path), path, opts, io.Discard, nil); err != nil {
			b.Fatal(err)
		}
	}
}
