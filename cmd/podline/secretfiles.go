package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"syscall"

	"github.com/podline/podline/internal/redact"
	"github.com/podline/podline/sources"
)

// maxSecretFile bounds what a credentials file may hold: a URL or a few
// headers, never a reason to read a large file at start.
const maxSecretFile = 64 << 10

// loadManifestSecrets takes the manifest URL and its headers from
// --manifest-url-file and --manifest-url-header-file, so that the
// credentials in them need not sit on the command line, and checks both
// however they were given: an http or https URL, and well-formed
// headers. A file and its flag together are refused: which one wins
// would be a guess.
func (o *options) loadManifestSecrets() error {
	if o.manifestURLFile != "" {
		if o.manifestURL != "" {
			return errors.New("--manifest-url and --manifest-url-file are both set: give one")
		}
		raw, err := readSecretFile("--manifest-url-file", o.manifestURLFile)
		if err != nil {
			return err
		}
		if o.manifestURL, err = urlFromFile(o.manifestURLFile, raw); err != nil {
			return err
		}
	}
	if o.manifestURLHeaderFile != "" {
		if len(o.manifestURLHeader) > 0 {
			return errors.New("--manifest-url-header and --manifest-url-header-file are both set: give one")
		}
		raw, err := readSecretFile("--manifest-url-header-file", o.manifestURLHeaderFile)
		if err != nil {
			return err
		}
		if o.manifestURLHeader, err = headersFromFile(o.manifestURLHeaderFile, raw); err != nil {
			return err
		}
	}
	flagName := "--manifest-url"
	if o.manifestURLFile != "" {
		flagName = "--manifest-url-file " + o.manifestURLFile
	}
	if err := checkManifestURL(o.manifestURL); err != nil {
		return fmt.Errorf("%s: %w", flagName, err)
	}
	if o.manifestURLHeaderFile == "" {
		if _, err := sources.ParseHeaders(o.manifestURLHeader); err != nil {
			return fmt.Errorf("--manifest-url-header: %w", err)
		}
	}
	return nil
}

// readSecretFile reads a file of credentials. It must be a regular file
// that only its owner, root or podline's own user, may read or change:
// credentials moved out of argv into a file other users can read are no
// better hidden, and whoever can change the manifest URL chooses what
// podline runs as root.
//
// The open does not wait (O_NONBLOCK), and the type is checked on what
// was opened: a named pipe (a shell's <(...) is one) would hold the open,
// and podline's start, until a writer came, and forever if none does.
func readSecretFile(flagName, path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagName, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagName, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s %s: not a regular file: %s", flagName, path, fileKind(st.Mode()))
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%s %s: mode %04o lets other users read or change the credentials in it; make it 0600 (chmod go-rwx %s)", flagName, path, perm, path)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Uid != 0 && int(sys.Uid) != os.Geteuid() {
		return nil, fmt.Errorf("%s %s: owned by uid %d; it must be root's or podline's own (uid %d)", flagName, path, sys.Uid, os.Geteuid())
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagName, err)
	}
	if len(data) > maxSecretFile {
		return nil, fmt.Errorf("%s %s: larger than %d KiB; it holds a URL or a few headers", flagName, path, maxSecretFile>>10)
	}
	return data, nil
}

// fileKind names what a credentials file is when not a regular file.
func fileKind(mode os.FileMode) string {
	switch mode.Type() {
	case os.ModeDir:
		return "a directory"
	case os.ModeNamedPipe:
		return "a named pipe"
	case os.ModeSocket:
		return "a socket"
	case os.ModeDevice:
		return "a block device"
	case os.ModeDevice | os.ModeCharDevice:
		return "a character device"
	}
	return "not a file"
}

// urlFromFile is the one URL a --manifest-url-file holds, surrounding
// white space (a final newline) aside.
func urlFromFile(path string, data []byte) (string, error) {
	s := strings.TrimSpace(string(data))
	if s == "" {
		return "", fmt.Errorf("--manifest-url-file %s: empty; want the URL", path)
	}
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		line := strings.Count(s[:i], "\n") + 2
		return "", fmt.Errorf("--manifest-url-file %s:%d: want the URL alone, on one line", path, line)
	}
	return s, nil
}

// headersFromFile reads a --manifest-url-header-file: one "Key: value"
// header a line, as HTTP writes them, with blank lines and lines starting
// with '#' skipped. A value may hold commas, which the flag's
// comma-separated form cannot. An error names the file and line, never
// the line's text.
func headersFromFile(path string, data []byte) ([]string, error) {
	var entries []string
	for i, line := range bytes.Split(data, []byte("\n")) {
		s := strings.TrimSpace(string(line))
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		if _, _, err := sources.ParseHeader(s); err != nil {
			return nil, fmt.Errorf("--manifest-url-header-file %s:%d: %w", path, i+1, err)
		}
		entries = append(entries, s)
	}
	return entries, nil
}

// checkManifestURL refuses what could never be fetched, without quoting
// the URL whole: it may hold credentials.
func checkManifestURL(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse quotes the URL in its error; its cause alone does not.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("not a URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("want an http or https URL with a host, got %s", redact.URL(raw))
	}
	return nil
}
