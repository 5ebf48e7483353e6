package prober

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Lifecycle hooks (postStart, preStop) run the same actions as probes, with
// the kubelet's differences: no timeout of their own (the caller's context
// bounds them), success or failure once, never a threshold, and an HTTP
// hook fails only when no answer came: the kubelet does not look at its
// status code (kubernetes/kubernetes#78286 asks it to).

// hookUserAgent is what the kubelet's HTTP hooks say they are.
const hookUserAgent = "kube-lifecycle/1.36"

// hookClient sends HTTP hooks as the probes go out (no keep-alives, no
// certificate check, same-host redirects), without a timeout. Hooks are
// rare: net/http's client is good enough for them.
var hookClient = &http.Client{
	Transport: &http.Transport{
		DialContext:       probeDialer.DialContext,
		TLSClientConfig:   probeTLS,
		DisableKeepAlives: true,
	},
	CheckRedirect: sameHostRedirects,
}

// sameHostRedirects follows redirects as the kubelet does: to the same host
// only, at most maxRedirects. A redirect elsewhere ends with the 3xx.
func sameHostRedirects(req *http.Request, via []*http.Request) error {
	if req.URL.Hostname() != via[0].URL.Hostname() {
		return http.ErrUseLastResponse
	}
	if len(via) >= maxRedirects {
		return errTooManyRedirects
	}
	return nil
}

var (
	errInvalidHook = errors.New("invalid handler: no exec, httpGet or sleep action")
	errNoPodIP     = errors.New("failed to find networking container: the pod has no IP address")
	errSleepCut    = errors.New("container terminated before sleep hook finished")
)

// HookResult is what one run of a lifecycle hook gave.
type HookResult struct {
	// Err is why the hook failed; nil when it succeeded.
	Err error
	// Output is an exec hook's output, stdout then stderr, up to 10 KiB.
	Output string
	// Fallback is set when an HTTPS hook was answered in plain HTTP and
	// its retry over HTTP succeeded, as the kubelet retries it: the
	// host:port, for the LifecycleHTTPFallback warning.
	Fallback string
}

// RunHook runs a lifecycle handler of container c, whose instance is
// containerID in a pod at podIP (the node's address for a host-network
// pod). It returns when the action has: ctx alone bounds it.
func RunHook(ctx context.Context, exec Execer, h *v1.LifecycleHandler, c *v1.Container, containerID, podIP string) (res HookResult) {
	defer func() {
		// One broken hook must not take podline with it.
		if r := recover(); r != nil {
			res = HookResult{Err: fmt.Errorf("lifecycle hook panicked: %v", r)}
		}
	}()
	switch {
	case h == nil:
		return HookResult{Err: errInvalidHook}
	case h.Exec != nil:
		return execHook(ctx, exec, h.Exec.Command, containerID)
	case h.HTTPGet != nil:
		return httpHook(ctx, h.HTTPGet, c, podIP)
	case h.Sleep != nil:
		return HookResult{Err: sleepHook(ctx, time.Duration(h.Sleep.Seconds)*time.Second)}
	}
	return HookResult{Err: errInvalidHook}
}

// execHook runs the command without a timeout; a non-zero exit is an
// error worded as the kubelet's runtime client words it.
func execHook(ctx context.Context, exec Execer, cmd []string, containerID string) HookResult {
	if exec == nil {
		return HookResult{Err: errNoExecer}
	}
	resp, err := exec.ExecSync(ctx, containerID, cmd, 0)
	if err != nil {
		return HookResult{Err: err}
	}
	res := HookResult{Output: combinedOutput(resp.GetStdout(), resp.GetStderr())}
	if code := resp.GetExitCode(); code != 0 {
		res.Err = fmt.Errorf("command '%s' exited with %d: %s", strings.Join(cmd, " "), code, resp.GetStderr())
	}
	return res
}

// httpHook sends the GET once. Any answer will do, whatever its status;
// an HTTPS hook answered in plain HTTP is sent again over HTTP, without
// its Authorization header, as the kubelet does since it sends HTTPS
// hooks as HTTPS (they used to go out as HTTP).
func httpHook(ctx context.Context, g *v1.HTTPGetAction, c *v1.Container, podIP string) HookResult {
	h := newHTTPHandlerAs(g, c, hookUserAgent)
	if h.err != nil {
		return HookResult{Err: h.err}
	}
	if h.host == "" && podIP == "" {
		return HookResult{Err: errNoPodIP}
	}
	req, err := h.request(ctx, podIP)
	if err != nil {
		return HookResult{Err: err}
	}
	err = send(req)
	if !httpAnswerToHTTPS(err) {
		return HookResult{Err: err}
	}
	plain := req.Clone(ctx)
	plain.URL.Scheme = "http"
	plain.Header.Del("Authorization")
	if send(plain) != nil {
		return HookResult{Err: err}
	}
	return HookResult{Fallback: plain.URL.Host}
}

// request is the hook's GET to the pod's address ip unless the action
// names a host.
func (h *httpHandler) request(ctx context.Context, ip string) (*http.Request, error) {
	host := h.host
	if host == "" {
		host = ip
	}
	u := h.url
	u.Host = net.JoinHostPort(host, h.port)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header = h.header.Clone()
	req.Host = h.hostHeader
	return req, nil
}

// send does one request and reads a little of the answer before closing
// it, so a server that writes its body before looking at the connection
// does not see it reset.
func send(req *http.Request) error {
	res, err := hookClient.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(res.Body, maxOutput))
	res.Body.Close()
	return nil
}

// httpAnswerToHTTPS reports the error of a TLS handshake answered in
// plain HTTP.
func httpAnswerToHTTPS(err error) bool {
	var ue *url.Error
	return errors.As(err, &ue) && strings.Contains(ue.Err.Error(), "server gave HTTP response to HTTPS client")
}

// sleepHook waits d, or fails when ctx ends first.
func sleepHook(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return errSleepCut
	}
}

// Message words a failed hook as the kubelet does in the container's
// waiting message and its log (never in an event: the output may hold
// secrets). container is the container's name, pod the kubelet's
// "name_namespace(uid)".
func (r HookResult) Message(h *v1.LifecycleHandler, container, pod string) string {
	switch {
	case h == nil:
	case h.Exec != nil:
		return fmt.Sprintf("Exec lifecycle hook (%v) for Container %q in Pod %q failed - error: %v, message: %q",
			h.Exec.Command, container, pod, r.Err, r.Output)
	case h.HTTPGet != nil:
		return fmt.Sprintf("HTTP lifecycle hook (%s) for Container %q in Pod %q failed - error: %v",
			h.HTTPGet.Path, container, pod, r.Err)
	case h.Sleep != nil:
		return fmt.Sprintf("Sleep lifecycle hook (%d) for Container %q in Pod %q failed - error: %v",
			h.Sleep.Seconds, container, pod, r.Err)
	}
	return fmt.Sprintf("Cannot run handler: %v", r.Err)
}
