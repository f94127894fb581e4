package audit

import (
	"bytes"
	"fmt"
	"io"
)

// scanBack calls fn for each line of the first size bytes of r, last line
// first, reading only as far back as fn needs. A line is passed without its
// newline; terminated is false only for a final line with no newline after
// it. fn returns false to stop. The slice passed to fn is valid only during
// the call.
func scanBack(r io.ReaderAt, size int64, fn func(line []byte, terminated bool) bool) error {
	if size <= 0 {
		return nil
	}
	const chunk = 8 << 10
	// win holds the bytes of the file from winStart up to lineEnd, the end
	// (exclusive, before its newline) of the line being looked for.
	var win []byte
	winStart, lineEnd := size, size
	terminated := true
	first := true
	for {
		i := bytes.LastIndexByte(win[:lineEnd-winStart], '\n')
		if i < 0 && winStart > 0 {
			n := int64(max(chunk, len(win)))
			n = min(n, winStart)
			grown := make([]byte, int(n)+int(lineEnd-winStart))
			if _, err := r.ReadAt(grown[:n], winStart-n); err != nil {
				return fmt.Errorf("audit: read at %d: %w", winStart-n, err)
			}
			copy(grown[n:], win[:lineEnd-winStart])
			win, winStart = grown, winStart-n
			if first {
				first = false
				if win[len(win)-1] == '\n' {
					lineEnd--
				} else {
					terminated = false
				}
			}
			continue
		}
		line := win[i+1 : lineEnd-winStart]
		if !fn(line, terminated) || i < 0 {
			return nil
		}
		terminated = true
		lineEnd = winStart + int64(i)
	}
}
