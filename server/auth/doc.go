// Package auth authenticates and authorizes requests to podline's
// authenticated port (10250) the way the kubelet does, so that clients and
// RBAC rules written for the kubelet work unchanged:
//
//   - authentication tries a client certificate (verified against
//     --client-ca-file), then a bearer token (checked with the TokenReview
//     API and cached), then, only when enabled, falls back to
//     system:anonymous;
//   - authorization asks, per request, about resource "nodes", name = the
//     node, with a subresource taken from the path (see RequestAttributes),
//     either through the SubjectAccessReview API (cached) or not at all
//     (AlwaysAllow).
//
// Why a package of its own rather than the apiserver's library: that
// library drags in most of an API server; podline needs a few hundred lines
// of it, written against client-go's typed clients.
//
// Defaults. The kubelet's command-line defaults are open: --anonymous-auth
// is true and --authorization-mode is AlwaysAllow, so anyone who reaches
// 10250 without credentials may exec into any container unless the
// deployer closed it (its config-file defaults are closed, but a node
// started from flags alone is not). Podline's anonymous default is closed:
// a request with no valid credentials gets 401 unless anonymous access is
// asked for, and an anonymous request is then still subject to
// authorization. A credential that is presented and fails is always a
// 401, never an anonymous request.
//
// Two further choices are deliberately stricter than the kubelet:
//
//   - the path is cleaned before it is mapped to a subresource, so
//     /stats/../exec is authorized as the proxy subresource it reaches,
//     not as stats;
//   - the streaming endpoints (/exec, /attach, /portForward, /run) are
//     authorized with verb create whatever the HTTP method: a WebSocket
//     upgrade arrives as a GET, and "get nodes/proxy" (a permission
//     monitoring agents are commonly given) must not be enough to run a
//     command in a container.
//
// Which paths are open. None: on the kubelet every path of 10250 passes
// through its filter, including the handlers it also serves on the
// read-only port. Filter is meant to wrap the whole handler of 10250; the
// unauthenticated endpoints live on ports of their own (healthz on 10248,
// the read-only port 10255). A caller that leaves a path of 10250 outside
// Filter makes it open to anyone who reaches the port.
package auth
