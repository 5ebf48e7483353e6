package logs

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
)

// Buffers are held for as long as a follower follows, and a node may
// have a thousand followers idle: 16 KiB reads and 4 KiB writes (the
// HTTP answer buffers again below) keep that near 20 KiB each.
const (
	readBuffer  = 16 << 10
	writeBuffer = 4 << 10
)

// Read writes the container log at path, beneath dir, the pod log
// directory, to w as opts ask, as the kubelet answers /containerLogs: the
// entries' content, joined where the runtime split a long line,
// optionally stamped. opts.Previous is the caller's business (it picks
// path). A missing file is an error matching os.ErrNotExist. Only a
// regular file is read, and path may not go through a symbolic link
// beneath dir (ErrNotRegular, ErrLink): pods can write in the log
// directories (see OpenLog).
//
// With opts.Follow it keeps writing what the runtime appends, across log
// rotations, until ctx is done (its error, wrapped, is returned) or until
// running, asked every few seconds, reports the container stopped: what
// is left is written and Read returns nil. A nil running follows until
// ctx is done. Followers share the package's Hub, whose goroutine asks
// running: it must be quick and safe to call from any goroutine.
func Read(ctx context.Context, dir, path string, opts Options, w io.Writer, running func() bool) error {
	return defaultHub.Read(ctx, dir, path, opts, w, running)
}

// Read is the package's Read with h as the followers' hub.
func (h *Hub) Read(ctx context.Context, dir, path string, opts Options, w io.Writer, running func() bool) error {
	f, err := OpenLog(dir, path)
	if err != nil {
		return fmt.Errorf("open log %s: %w", path, err)
	}
	r, err := newLineReader(f)
	if err != nil {
		return fmt.Errorf("open log %s: %w", path, err)
	}
	defer r.close()
	flusher, _ := w.(http.Flusher)
	rd := &reading{
		dir:  dir,
		path: path,
		out:  newOutput(bufio.NewWriterSize(w, writeBuffer), flusher, opts),
		left: -1,
	}
	if n := opts.TailLines; n != nil {
		if err := r.seekTail(*n); err != nil {
			return fmt.Errorf("tail %d lines of log %s: %w", *n, path, err)
		}
		if !opts.Follow {
			if *n == 0 {
				return nil
			}
			// Stop at the lines found, not at lines written meanwhile.
			rd.left = *n
		}
	}
	if opts.Follow {
		return rd.follow(ctx, h, r, running)
	}
	stop, err := rd.drain(r)
	if err == nil && !stop && opts.TailLines == nil {
		// A line still being written is shown as far as it goes when
		// not following, as the kubelet shows it.
		if rest := r.rest(); len(rest) > 0 {
			_, err = rd.line(rest)
		}
	}
	if ferr := rd.out.flush(); err == nil {
		err = ferr
	}
	return err
}

// reading is one request's state, shared by the plain and follow reads.
type reading struct {
	dir  string // the pod log directory, path's (see OpenLog)
	path string
	out  *output
	// left is how many more lines a tail without follow writes; -1 is
	// no bound.
	left int64
}

// drain writes r's complete lines up to the end of its file and reports
// whether the request is done (byte limit or tail reached).
func (rd *reading) drain(r *lineReader) (stop bool, err error) {
	for {
		b, err := r.next()
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("read log %s: %w", rd.path, err)
		}
		if stop, err := rd.line(b); stop || err != nil {
			return stop, err
		}
	}
}

func (rd *reading) line(b []byte) (stop bool, err error) {
	e, err := parseCRI(b)
	if err != nil {
		// The kubelet skips what it cannot parse: one torn line (a
		// runtime killed mid-write) must not hide the rest of the log.
		// (It refuses the whole file when the first line is the torn
		// one, as it guesses the format from it; only CRI is read here.)
		return false, nil
	}
	full, err := rd.out.write(&e)
	if full || err != nil {
		return true, err
	}
	if rd.left > 0 && !e.partial {
		rd.left--
		return rd.left == 0, nil
	}
	return false, nil
}

// lineReader reads one log file a line at a time.
type lineReader struct {
	f    *os.File
	info os.FileInfo // the file's identity, to tell a rotation
	src  offsetReader
	br   *bufio.Reader
	// long gathers a line longer than br's buffer, and an unterminated
	// line at the end until the runtime writes the rest of it.
	long []byte
}

func newLineReader(f *os.File) (*lineReader, error) {
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	r := &lineReader{f: f, info: info, src: offsetReader{f: f}}
	r.br = bufio.NewReaderSize(&r.src, readBuffer)
	return r, nil
}

// next returns the next complete line, '\n' included, valid until the
// following call; at the end of the file it returns io.EOF.
func (r *lineReader) next() ([]byte, error) {
	for {
		b, err := r.br.ReadSlice('\n')
		switch err {
		case nil:
			if len(r.long) == 0 {
				return b, nil
			}
			line := append(r.long, b...)
			r.long = line[:0]
			return line, nil
		case bufio.ErrBufferFull, io.EOF:
			r.long = append(r.long, b...)
			if err == io.EOF {
				return nil, err
			}
		default:
			return nil, err
		}
	}
}

// rest returns the unterminated line the file ends with, if any.
func (r *lineReader) rest() []byte { return r.long }

// seekTail moves to where the last n lines start.
func (r *lineReader) seekTail(n int64) error {
	start, err := tailStart(r.f, r.info.Size(), n)
	if err != nil {
		return err
	}
	if _, err := r.f.Seek(start, io.SeekStart); err != nil {
		return err
	}
	r.src.off = start
	r.br.Reset(&r.src)
	return nil
}

// offset is how far into the file the lines returned and the rest go.
func (r *lineReader) offset() int64 { return r.src.off - int64(r.br.Buffered()) }

func (r *lineReader) close() { r.f.Close() }

// offsetReader reads f and keeps count of where it is: a follower tells
// the hub how much of its file it has, so that the hub's check can see a
// write no event told of.
type offsetReader struct {
	f   *os.File
	off int64
}

func (o *offsetReader) Read(p []byte) (int, error) {
	n, err := o.f.Read(p)
	o.off += int64(n)
	return n, err
}
