// Package redact hides the credentials podline was given (in the
// --manifest-url and its headers) from what podline prints or serves: its
// log, /configz, /debug/pprof/cmdline and the errors of net/http's
// client, which carry the URL they failed on.
//
// The rules, the same everywhere:
//
//   - A URL keeps its scheme, host, port and path. Its userinfo goes
//     whole, user and password alike, since tokens are often given as the
//     user (https://<token>@host/); so does every query value, with the
//     names kept; a query item without '=' goes whole; so does a fragment.
//   - A header keeps its name; its value goes.
//   - net/http's client errors keep their words: the URL they name is
//     redacted as any URL, and whatever their cause quotes goes whole
//     (a redirect's Location that does not parse, a piece of a URL).
//
// Every query value, not a list of names: credentials travel under too
// many names to list (token, access_token, sig, X-Amz-Signature,
// X-Goog-Signature, an Azure SAS's sv/se/sp/sig, api_key, code, ...), and
// a name missed is a credential in the log. A manifest URL's query values
// are rarely what an operator needs to see, and the names show its shape.
// The path is kept: it is what tells one manifest URL from another, even
// though a path can hold a token too (keep those in a header).
//
// The package owns only these rules: where a credential is printed is
// the caller's business.
package redact

import (
	"errors"
	"net/url"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Mark stands where a credential was.
const Mark = "<redacted>"

// URL is raw with its userinfo, query values and fragment replaced by
// Mark. What does not parse as a URL is all Mark: nothing of it can be
// told safe.
func URL(raw string) string {
	if raw == "" {
		return ""
	}
	// Mark does not parse in userinfo: taken for a word, a URL redacted
	// already comes back as it is (Mark stands only where redaction
	// puts Mark again).
	u, err := url.Parse(strings.ReplaceAll(raw, Mark, "redacted"))
	if err != nil || u.Scheme == "" {
		// Without a scheme, the text may be anything: a token alone.
		return Mark
	}
	return redactURL(u)
}

func redactURL(u *url.URL) string {
	if u.Opaque != "" {
		// scheme:opaque (no "//"): nothing tells where a credential
		// would start.
		return u.Scheme + ":" + Mark
	}
	bare := *u
	bare.User, bare.RawQuery, bare.ForceQuery, bare.Fragment, bare.RawFragment = nil, "", false, "", ""
	s := bare.String()
	if u.User != nil {
		if i := strings.Index(s, "//"); i >= 0 {
			s = s[:i+2] + Mark + "@" + s[i+2:]
		}
	}
	if u.RawQuery != "" || u.ForceQuery {
		s += "?" + query(u.RawQuery)
	}
	if u.Fragment != "" {
		s += "#" + Mark
	}
	return s
}

// query keeps the names of name=value items, in their order.
func query(raw string) string {
	items := strings.Split(raw, "&")
	for i, item := range items {
		switch name, _, ok := strings.Cut(item, "="); {
		case ok:
			items[i] = name + "=" + Mark
		case item != "":
			items[i] = Mark
		}
	}
	return strings.Join(items, "&")
}

// Header is one "key:value" header entry, as --manifest-url-header takes
// it, with its value replaced by Mark. An entry without ':', or whose
// key is no header name, is all Mark: it may be a value given alone.
func Header(entry string) string {
	k, _, ok := strings.Cut(entry, ":")
	if k = strings.TrimSpace(k); !ok || len(validation.IsHTTPHeaderName(k)) > 0 {
		return Mark
	}
	return k + ":" + Mark
}

// Headers is a comma-separated list of Header entries, as the flag's
// value is written.
func Headers(list string) string {
	if list == "" {
		return ""
	}
	entries := strings.Split(list, ",")
	for i, e := range entries {
		entries[i] = Header(e)
	}
	return strings.Join(entries, ",")
}

// Error is err with the URLs in its text redacted: a *url.Error (what
// http.Client.Do returns) names the URL of the request that failed, the
// manifest URL or a redirect's target, with its query and its user (the
// client hides only the password), and its cause loses every quoted
// piece (see cause); every occurrence of raw, the URL podline was given,
// goes too. The result matches what err matched under errors.Is and
// errors.As; a *url.Error that err is, rather than wraps, is replaced by
// its redacted copy, so that even unwrapping shows none.
func Error(err error, raw string) error {
	if err == nil {
		return nil
	}
	inner, msg := err, err.Error()
	var ue *url.Error
	if errors.As(err, &ue) {
		red := &url.Error{Op: ue.Op, URL: URL(ue.URL), Err: cause(ue.Err)}
		msg = strings.ReplaceAll(msg, ue.Error(), red.Error())
		if err == error(ue) {
			inner = red
		}
	}
	if raw != "" {
		msg = strings.ReplaceAll(msg, raw, URL(raw))
	}
	return &redacted{msg: msg, err: inner}
}

// cause is a *url.Error's cause with every quoted piece of its text
// replaced by Mark. net/http and net/url quote what they could not use: a
// redirect's Location that does not parse (`failed to parse Location
// header "…": parse "…": invalid port ":s3cret" after host`), the piece
// of a URL url.Parse stopped at. A Location is the server's choice and
// may carry credentials as the manifest URL does, and what does not parse
// cannot be told safe. A cause with nothing quoted comes back as it is;
// one with, as a copy that still unwraps to what it wrapped, never to
// its own text.
func cause(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	shown := unquoted(msg)
	if shown == msg {
		return err
	}
	return &redacted{msg: shown, err: errors.Unwrap(err)}
}

// unquoted is s with every Go-quoted string in it replaced by Mark; an
// unterminated quote takes the rest of s with it.
func unquoted(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '"')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		b.WriteString(Mark)
		q, err := strconv.QuotedPrefix(s[i:])
		if err != nil {
			return b.String()
		}
		s = s[i+len(q):]
	}
}

// redacted is an error whose text is redacted.
type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }
