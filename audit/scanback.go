package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// ErrLongLine is returned when reading a log backwards meets a line longer
// than MaxLine: no record is that long, so the file was not written by
// mcphost alone. Reading stops there rather than load the line.
var ErrLongLine = errors.New("longer than the longest record")

// scanChunk is how much scanBack reads at a time.
const scanChunk = 8 << 10

// scanBack calls fn for each line of the first size bytes of r, last line
// first, reading only as far back as fn needs. A line is passed without its
// newline; terminated is false only for a final line with no newline after
// it. fn returns false to stop. The slice passed to fn is valid only during
// the call.
//
// Memory stays bounded whatever the file holds: a line longer than MaxLine
// (newline included) stops the scan with an error wrapping ErrLongLine that
// says where the line ends, after reading at most MaxLine+scanChunk bytes of
// it; scanBack never holds more than about twice MaxLine.
func scanBack(r io.ReaderAt, size int64, fn func(line []byte, terminated bool) bool) error {
	if size <= 0 {
		return nil
	}
	// win holds the bytes of the file from winStart up to lineEnd, the end
	// (exclusive, before its newline) of the line being looked for.
	var win []byte
	winStart, lineEnd := size, size
	terminated := true
	first := true
	for {
		have := int(lineEnd - winStart)
		i := bytes.LastIndexByte(win[:have], '\n')
		if i < 0 && winStart > 0 {
			if have >= MaxLine {
				return fmt.Errorf("the line ending at byte %d is %w (%d bytes)", lineEnd, ErrLongLine, MaxLine)
			}
			// Read at least a chunk, and as much as the unfinished line holds
			// already, so that a long line is read in few steps; never much
			// past MaxLine.
			n := int64(min(max(scanChunk, have), MaxLine+scanChunk-have))
			n = min(n, winStart)
			grown := make([]byte, int(n)+have)
			if _, err := r.ReadAt(grown[:n], winStart-n); err != nil {
				return fmt.Errorf("audit: read at %d: %w", winStart-n, err)
			}
			copy(grown[n:], win[:have])
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
		line := win[i+1 : have]
		if len(line) >= MaxLine {
			return fmt.Errorf("the line ending at byte %d is %w (%d bytes)", lineEnd, ErrLongLine, MaxLine)
		}
		if !fn(line, terminated) || i < 0 {
			return nil
		}
		terminated = true
		lineEnd = winStart + int64(i)
	}
}
