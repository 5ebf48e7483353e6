package main

import (
	"flag"
	"log/slog"
	"net/url"
	"strings"

	"github.com/podline/podline/internal/redact"
)

// secretFlags hold credentials, each with how its value is shown:
// wherever podline prints or serves its flags (/configz, the pprof
// command line) the value goes through its redactor. (What /configz has
// of --manifest-url-header is redacted already, entry by entry, by
// headerFlag; Headers leaves that as it is.)
var secretFlags = map[string]func(string) string{
	"manifest-url":        redact.URL,
	"manifest-url-header": redact.Headers,
}

// headerFlag is --manifest-url-header: "key:value" entries, as listFlag
// takes them. Its String, which is what podline shows of a flag's value
// (/configz), has each entry redacted on its own: an entry from
// --manifest-url-header-file may hold commas in its value, and the
// entries joined, then split at their commas, would cut a value into
// pieces, one of which ("Bearer a,user:pass") would show a piece of the
// credential as a header name.
type headerFlag []string

func (h *headerFlag) Set(v string) error { return (*listFlag)(h).Set(v) }

func (h *headerFlag) String() string {
	if h == nil { // the flag package may ask a nil one
		return ""
	}
	shown := make([]string, len(*h))
	for i, entry := range *h {
		shown[i] = redact.Header(entry)
	}
	return strings.Join(shown, ",")
}

// redacted is every flag's value as /configz shows it.
func redacted(flags map[string]string) map[string]string {
	out := make(map[string]string, len(flags))
	for k, v := range flags {
		if hide, ok := secretFlags[k]; ok {
			v = hide(v)
		}
		out[k] = v
	}
	return out
}

// redactedArgs is the command line (program name first, then args) with
// the values of secretFlags redacted, read as the flag package reads it:
// -name=value or --name=value, or -name value for a flag that is not
// boolean, until "--" or the first argument that is not a flag. It keeps
// the form and order of every argument, so it reads as what was typed.
func redactedArgs(fs *flag.FlagSet, program string, args []string) []string {
	out := make([]string, 0, len(args)+1)
	out = append(out, program)
	for i := 0; i < len(args); i++ {
		arg := args[i]
		name, value, hasValue, ok := flagArg(arg)
		if !ok {
			// The flag package stops here, and so does podline: what
			// follows is no flag's value.
			return append(out, args[i:]...)
		}
		hide, secret := secretFlags[name]
		switch {
		case secret && hasValue:
			out = append(out, arg[:len(arg)-len(value)]+hide(value))
		case hasValue || isBool(fs, name) || i+1 == len(args):
			out = append(out, arg)
		case secret:
			out = append(out, arg, hide(args[i+1]))
			i++
		default:
			out = append(out, arg, args[i+1])
			i++
		}
	}
	return out
}

// flagArg splits "-name", "--name" or either with "=value"; ok is false
// for what ends the flags ("--", "-", a non-flag).
func flagArg(arg string) (name, value string, hasValue, ok bool) {
	if len(arg) < 2 || arg[0] != '-' || arg == "--" {
		return "", "", false, false
	}
	name = strings.TrimPrefix(arg[1:], "-")
	name, value, hasValue = strings.Cut(name, "=")
	return name, value, hasValue, name != ""
}

func isBool(fs *flag.FlagSet, name string) bool {
	f := fs.Lookup(name)
	if f == nil {
		return false
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// warnArgvSecrets says once, at start, which credentials sit on the
// command line, where every local user reads them in /proc/<pid>/cmdline
// and podline cannot hide them, and where to put them instead.
func (o *options) warnArgvSecrets(log *slog.Logger) {
	if o.manifestURLFile == "" && hasCredentials(o.manifestURL) {
		log.Warn("--manifest-url carries credentials on the command line, which every local user can read in /proc; give the URL in --manifest-url-file instead",
			"url", redact.URL(o.manifestURL))
	}
	if o.manifestURLHeaderFile == "" && len(o.manifestURLHeader) > 0 {
		log.Warn("--manifest-url-header is on the command line, which every local user can read in /proc; give the headers in --manifest-url-header-file instead")
	}
}

// hasCredentials reports whether a URL holds what redaction hides.
func hasCredentials(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.User != nil || u.RawQuery != "" || u.Fragment != "")
}
