package logs

import (
	"bytes"
	"fmt"
	"io"
)

const (
	// tailBlock is what one backward read takes: a few hundred ordinary
	// lines, so a typical tail is one or two reads however big the file.
	tailBlock = 32 << 10
	// headMax is enough of a line to parse its timestamp, stream and tag.
	headMax = 128
)

// tailStart returns the offset in r (of size bytes) where the last n
// lines begin, reading blocks backwards from the end: a container log can
// be hundreds of megabytes and `kubectl logs --tail` wants a screenful.
//
// A line is what the output shows as one: partial entries belong to the
// full entry that ends them, so a long line is never cut at its start.
// Entries still partial at the end of the file make the last line; an
// unterminated last line (a write under way) and malformed lines count
// for nothing, as they print nothing.
func tailStart(r io.ReaderAt, size, n int64) (int64, error) {
	buf := make([]byte, tailBlock+headMax)
	var (
		lines   int64
		seen    bool  // a well-formed entry was met
		lineEnd int64 = -1
		carry   int   // bytes of the following block kept after this one
		data    []byte
	)
	// count classifies the complete line starting at off, whose head is
	// head, and reports whether the n lines are complete without it.
	count := func(off int64, head []byte) bool {
		if int64(len(head)) > lineEnd-off {
			head = head[:lineEnd-off]
		}
		if len(head) > headMax {
			head = head[:headMax]
		}
		e, err := parseCRI(head)
		if err != nil {
			// A head cut before the content is as good as the line.
			return false
		}
		if !e.partial || !seen {
			lines++
		}
		seen = true
		return lines > n
	}
	for right := size; right > 0; {
		left := max(right-tailBlock, 0)
		block := buf[:right-left]
		// Keep the start of the block read before (it follows this one)
		// behind this one: a line starting near this block's end has its
		// head there.
		copy(buf[len(block):len(block)+carry], buf[:carry])
		if _, err := r.ReadAt(block, left); err != nil && err != io.EOF {
			return 0, fmt.Errorf("read at %d: %w", left, err)
		}
		data = buf[:len(block)+carry]
		for i := len(block) - 1; i >= 0; i-- {
			i = bytes.LastIndexByte(block[:i+1], '\n')
			if i < 0 {
				break
			}
			nl := left + int64(i)
			if lineEnd < 0 {
				// What follows the last '\n' is not a line yet.
				lineEnd = nl + 1
				continue
			}
			if count(nl+1, data[i+1:]) {
				return lineEnd, nil
			}
			lineEnd = nl + 1
		}
		carry = min(len(block), headMax)
		right = left
	}
	if lineEnd > 0 && count(0, data) {
		return lineEnd, nil
	}
	return 0, nil
}
