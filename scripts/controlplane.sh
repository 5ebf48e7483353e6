#!/usr/bin/env bash
# controlplane.sh: a one-machine Kubernetes control plane (etcd,
# kube-apiserver, kube-scheduler, kube-controller-manager) on loopback, for
# the cluster tests and `make cluster`. podline joins it as a node.
#
#   up                    start it (binaries from install-kube.sh, cached);
#                         returns once pods can be created; no-op when up
#   down                  stop everything and delete $CP_DIR (safe to repeat)
#   status                exit 0 when the API server is ready
#   env                   `export ...` lines: eval "$(scripts/controlplane.sh env)"
#   node-kubeconfig NAME  a client certificate for system:node:NAME; prints
#                         the path of a kubeconfig that embeds it
#   node-serving-cert NAME IP...
#                         a serving certificate for node NAME's port 10250,
#                         signed by the cluster CA; prints the cert, key and
#                         CA paths, one a line (the API server checks it
#                         with --kubelet-certificate-authority and podline
#                         checks the API server's client certificate with
#                         the CA)
#   restart-apiserver     stop and start kube-apiserver, wait until ready
#   stop-apiserver        stop kube-apiserver only (pods' statuses then wait)
#   start-apiserver       start it again, wait until ready
#
# `up` also runs metrics-server (install-metrics-server.sh) as a host process
# behind the API server's aggregation layer, so that `kubectl top` works: it
# listens on the node's address (the source of the default route; the API
# server dials it directly, --enable-aggregator-routing, since an Endpoint
# may not be a loopback address), port $METRICS_SERVER_PORT (4443), and
# scrapes every node's /metrics/resource at its InternalIP and status port
# every 10 s, as system:metrics-server (a client certificate; RBAC from
# metrics-server's own manifests), checking nodes' serving certificates with
# the cluster CA. APIService v1beta1.metrics.k8s.io is registered once it
# serves; the first figures come ~20 s after a pod starts (two scrapes).
# `up` on a control plane started without it adds it (restarting only
# kube-apiserver, for the front-proxy flags).
#
# Everything lives under $CP_DIR (/run/podline-cluster): pki/, etcd/ (data),
# logs/*.log, run/*.pid and the kubeconfigs. `up` reuses what is there (CA,
# certificates, etcd data), so a control plane whose processes died comes back
# with its objects, and node kubeconfigs handed out stay valid. `down` deletes
# it all; the next `up` makes a new cluster with a new CA.
#
# Env: NODE_MONITOR_GRACE_PERIOD (40s) is how long the controller-manager
# waits for a node's lease before it marks the node NotReady;
# METRICS_SERVER_PORT (4443) is metrics-server's; AUDIT_POLICY, a file, turns
# on kube-apiserver's audit log ($CP_DIR/logs/audit.log, PODLINE_AUDIT_LOG in
# `env`) with that policy, when `up` starts the control plane (the benchmarks
# count a node's requests in it; nothing else needs it).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CP_DIR=${PODLINE_CLUSTER:-/run/podline-cluster}
PKI=$CP_DIR/pki
CP_LOGS=$CP_DIR/logs
CP_PIDS=$CP_DIR/run
ADMIN_KUBECONFIG=$CP_DIR/admin.kubeconfig
# Serialises up/down/restarts. Outside $CP_DIR, which `down` removes while
# holding it; lock files in /run/lock are expected to stay.
CP_LOCK=/run/lock/$(basename "$CP_DIR").lock
NODE_MONITOR_GRACE_PERIOD=${NODE_MONITOR_GRACE_PERIOD:-40s}

API_URL=https://127.0.0.1:6443
ETCD_URL=http://127.0.0.1:2379
ETCD_PEER_URL=http://127.0.0.1:2380
SERVICE_CIDR=10.96.0.0/12
# In start order; stop_all stops them the other way round.
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler)

# metrics-server: a host process (no CNI for host-network pods here, no
# kube-proxy), its user in RBAC and the name the API server checks its
# serving certificate for (<service>.<namespace>.svc).
METRICS_SERVER_PORT=${METRICS_SERVER_PORT:-4443}
METRICS_SERVER_USER=system:metrics-server
METRICS_SERVER_HOST=metrics-server.kube-system.svc

usage() {
	sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}" >&2
	exit 2
}

# cp_pids NAME: live processes of component NAME that belong to this
# control plane (their command line names a file under $CP_DIR). Found in
# /proc rather than trusted from pid files, which outlive crashes.
cp_pids() {
	local p target stat comm
	for p in /proc/[0-9]*; do
		# The name (cut to 15 bytes) first, read without a fork: a readlink
		# per process costs ~15 ms here, and `up` looks ~20 times.
		read -r comm 2>/dev/null <"$p/comm" || continue
		[[ $comm == "${1:0:15}" ]] || continue
		target=$(readlink "$p/exe" 2>/dev/null) || continue
		target=${target% (deleted)}
		[[ ${target##*/} == "$1" ]] || continue
		stat=$(<"$p/stat") 2>/dev/null || continue
		stat=${stat##*) }
		[[ ${stat:0:1} != Z ]] || continue
		tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF -- "$CP_DIR/" && echo "${p#/proc/}"
	done
	return 0
}

# api_get PATH: GET from the API server as admin; the body on stdout.
api_get() {
	curl -fsS --max-time 3 --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" \
		"$API_URL$1" 2>/dev/null
}

api_ready() { [[ -f $PKI/admin.crt ]] && [[ $(api_get /readyz) == ok ]]; }

# wait_for SECONDS WHAT CMD...: polls CMD until it succeeds.
wait_for() {
	local deadline=$((SECONDS + $1)) what=$2
	shift 2
	until "$@"; do
		((SECONDS < deadline)) || die "$what not within $1 s (logs: $CP_LOGS)"
		sleep 0.2
	done
}

# --- certificates -----------------------------------------------------------
# ECDSA P-256 everywhere: keys are made in milliseconds, and every component
# (and client-go) accepts them.

new_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

# sign NAME SUBJECT EXTENSIONS [CA]: key NAME.key and certificate NAME.crt
# in $PKI, signed by CA (default: ca, the cluster CA). A random serial: nodes
# may be issued concurrently.
sign() {
	local name=$1 subj=$2 ext=$3 ca=${4:-ca}
	new_key "$PKI/$name.key"
	openssl req -new -key "$PKI/$name.key" -subj "$subj" 2>/dev/null |
		openssl x509 -req -CA "$PKI/$ca.crt" -CAkey "$PKI/$ca.key" -set_serial "0x$(openssl rand -hex 16)" \
			-days 3650 -extfile <(printf '%s\n' "$ext") -out "$PKI/$name.crt" 2>/dev/null ||
		die "signing $name ($subj) failed"
}

client_ext() { printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth'; }

# new_ca NAME CN: a self-signed CA, NAME.key and NAME.crt in $PKI.
new_ca() {
	new_key "$PKI/$1.key"
	openssl req -x509 -new -key "$PKI/$1.key" -subj "/CN=$2" -days 3650 \
		-addext 'basicConstraints=critical,CA:TRUE' -addext 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature' \
		-out "$PKI/$1.crt" 2>/dev/null || die "generating CA $2 failed"
}

# make_aggregation_pki: what aggregation and metrics-server need, made
# apart from make_pki so that a $PKI made before them (`.complete`, a control
# plane that kept running) gets them too. Each pair only when missing.
#   front-proxy-ca        the API server's --requestheader-client-ca-file:
#                         the only CA an aggregated server trusts the
#                         X-Remote-User/Group headers from
#   front-proxy-client    the API server's identity towards aggregated servers
#   metrics-server        its client identity (API server and nodes)
#   metrics-server-serving  its serving certificate, from the cluster CA (the
#                         APIService's caBundle) for the name the API server
#                         asks for
make_aggregation_pki() {
	[[ -f $PKI/front-proxy-ca.crt ]] || new_ca front-proxy-ca podline-front-proxy-ca
	[[ -f $PKI/front-proxy-client.crt ]] ||
		sign front-proxy-client /CN=front-proxy-client "$(client_ext)" front-proxy-ca
	[[ -f $PKI/metrics-server.crt ]] || sign metrics-server "/CN=$METRICS_SERVER_USER" "$(client_ext)"
	[[ -f $PKI/metrics-server-serving.crt ]] || sign metrics-server-serving /CN=metrics-server "$(printf '%s\n' \
		'basicConstraints=critical,CA:FALSE' 'keyUsage=critical,digitalSignature' 'extendedKeyUsage=serverAuth' \
		"subjectAltName=DNS:$METRICS_SERVER_HOST,DNS:$METRICS_SERVER_HOST.cluster.local,DNS:localhost,IP:127.0.0.1")"
	return 0
}

make_pki() {
	[[ -f $PKI/.complete ]] && return 0
	log "generating certificates in $PKI"
	rm -rf "$PKI"
	mkdir -p "$PKI"
	chmod 700 "$PKI"
	new_ca ca podline-cluster-ca
	sign apiserver /CN=kube-apiserver "$(printf '%s\n' 'basicConstraints=critical,CA:FALSE' \
		'keyUsage=critical,digitalSignature' 'extendedKeyUsage=serverAuth' \
		'subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local')"
	sign admin /O=system:masters/CN=podline-admin "$(client_ext)"
	sign controller-manager /CN=system:kube-controller-manager "$(client_ext)"
	sign scheduler /CN=system:kube-scheduler "$(client_ext)"
	# The API server's identity towards nodes (logs, exec); system:masters
	# keeps it out of RBAC set-up.
	sign apiserver-kubelet-client /O=system:masters/CN=kube-apiserver-kubelet-client "$(client_ext)"
	new_key "$PKI/sa.key"
	openssl pkey -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
	touch "$PKI/.complete"
}

# write_kubeconfig FILE USER CERT KEY: a kubeconfig with everything
# embedded, so it can be copied anywhere on this machine.
write_kubeconfig() {
	local tmp
	tmp=$(mktemp "$1.XXXXXX")
	cat >"$tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: podline
  cluster:
    server: $API_URL
    certificate-authority-data: $(base64 -w0 "$PKI/ca.crt")
users:
- name: $2
  user:
    client-certificate-data: $(base64 -w0 "$3")
    client-key-data: $(base64 -w0 "$4")
contexts:
- name: $2@podline
  context:
    cluster: podline
    user: $2
current-context: $2@podline
EOF
	chmod 600 "$tmp"
	mv "$tmp" "$1"
}

make_kubeconfigs() {
	write_kubeconfig "$ADMIN_KUBECONFIG" admin "$PKI/admin.crt" "$PKI/admin.key"
	write_kubeconfig "$CP_DIR/controller-manager.kubeconfig" system:kube-controller-manager \
		"$PKI/controller-manager.crt" "$PKI/controller-manager.key"
	write_kubeconfig "$CP_DIR/scheduler.kubeconfig" system:kube-scheduler "$PKI/scheduler.crt" "$PKI/scheduler.key"
	write_kubeconfig "$CP_DIR/metrics-server.kubeconfig" "$METRICS_SERVER_USER" \
		"$PKI/metrics-server.crt" "$PKI/metrics-server.key"
}

# --- processes ----------------------------------------------------------------

# flags_of NAME: the command line of component NAME, one argument a line.
flags_of() {
	case $1 in
	etcd) printf '%s\n' --name=podline --data-dir="$CP_DIR/etcd" \
		--listen-client-urls="$ETCD_URL" --advertise-client-urls="$ETCD_URL" \
		--listen-peer-urls="$ETCD_PEER_URL" --initial-advertise-peer-urls="$ETCD_PEER_URL" \
		--initial-cluster="podline=$ETCD_PEER_URL" --unsafe-no-fsync --log-level=warn ;;
	# --endpoint-reconciler-type=none: the kubernetes Service cannot have
	# the loopback address as an endpoint (validation refuses it), and
	# without kube-proxy no pod could reach it anyway.
	kube-apiserver) printf '%s\n' --etcd-servers="$ETCD_URL" \
		--bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port=6443 \
		--cert-dir="$CP_DIR/kube-apiserver" \
		--tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
		--client-ca-file="$PKI/ca.crt" \
		--kubelet-client-certificate="$PKI/apiserver-kubelet-client.crt" \
		--kubelet-client-key="$PKI/apiserver-kubelet-client.key" \
		--kubelet-certificate-authority="$PKI/ca.crt" \
		--kubelet-preferred-address-types=InternalIP,Hostname \
		--authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
		--allow-privileged=true --service-cluster-ip-range="$SERVICE_CIDR" \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
		--shutdown-watch-termination-grace-period=2s \
		--endpoint-reconciler-type=none --profiling=false \
		--requestheader-client-ca-file="$PKI/front-proxy-ca.crt" \
		--requestheader-allowed-names=front-proxy-client \
		--requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group \
		--requestheader-extra-headers-prefix=X-Remote-Extra- \
		--proxy-client-cert-file="$PKI/front-proxy-client.crt" --proxy-client-key-file="$PKI/front-proxy-client.key" \
		--enable-aggregator-routing=true
		if [[ -f $CP_DIR/audit-policy.yaml ]]; then
			printf '%s\n' --audit-policy-file="$CP_DIR/audit-policy.yaml" --audit-log-path="$CP_LOGS/audit.log"
		fi ;;
	# No --authentication/authorization-kubeconfig for these two: their
	# only clients are the health probes (always allowed), and delegated
	# authentication wants a front-proxy CA the API server does not have.
	# The controller-manager's default 20 QPS spends ~4 s of `up` on
	# discovery before the ServiceAccount controller starts.
	kube-controller-manager) printf '%s\n' \
		--kubeconfig="$CP_DIR/controller-manager.kubeconfig" \
		--bind-address=127.0.0.1 --secure-port=10257 --cert-dir="$CP_DIR/kube-controller-manager" \
		--leader-elect=false --use-service-account-credentials \
		--root-ca-file="$PKI/ca.crt" --service-account-private-key-file="$PKI/sa.key" \
		--cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" \
		--service-cluster-ip-range="$SERVICE_CIDR" \
		--node-monitor-grace-period="$(<"$CP_DIR/node-monitor-grace-period")" \
		--node-monitor-period=5s --kube-api-qps=100 --kube-api-burst=200 --profiling=false ;;
	kube-scheduler) printf '%s\n' \
		--kubeconfig="$CP_DIR/scheduler.kubeconfig" \
		--bind-address=127.0.0.1 --secure-port=10259 --cert-dir="$CP_DIR/kube-scheduler" \
		--leader-elect=false --profiling=false ;;
	# Delegated authentication and authorization through the same identity
	# (the API server's front-proxy certificate and headers, from the
	# extension-apiserver-authentication ConfigMap). Nodes are dialled at
	# their InternalIP and the port in their status (each test node has its
	# own) and checked with the cluster CA. 10 s is the shortest resolution
	# it takes; the scrape timeout must stay under 90 % of it.
	metrics-server) printf '%s\n' \
		--kubeconfig="$CP_DIR/metrics-server.kubeconfig" \
		--authentication-kubeconfig="$CP_DIR/metrics-server.kubeconfig" \
		--authorization-kubeconfig="$CP_DIR/metrics-server.kubeconfig" \
		--bind-address="$(<"$CP_DIR/metrics-server-ip")" --secure-port="$METRICS_SERVER_PORT" \
		--tls-cert-file="$PKI/metrics-server-serving.crt" --tls-private-key-file="$PKI/metrics-server-serving.key" \
		--kubelet-certificate-authority="$PKI/ca.crt" \
		--kubelet-preferred-address-types=InternalIP --kubelet-use-node-status-port \
		--metric-resolution=10s --kubelet-request-timeout=5s --profiling=false ;;
	*) die "BUG: no flags for $1" ;;
	esac
}

start_component() {
	local name=$1 exe pid
	if [[ $name == metrics-server ]]; then
		exe=$(<"$CP_DIR/metrics-server-bin")
	else
		exe=$(<"$CP_DIR/kube-bin")/$name
	fi
	local -a flags
	mapfile -t flags < <(flags_of "$name")
	# setsid: the component must outlive this script and its terminal. It
	# must not inherit the lock (fd 8), or every later command would wait.
	setsid "$exe" "${flags[@]}" </dev/null >>"$CP_LOGS/$name.log" 2>&1 8>&- &
	# Looked up, not taken from $!: setsid forks when it leads a process group.
	local deadline=$((SECONDS + 5))
	until pid=$(cp_pids "$name" | head -n 1) && [[ -n $pid ]]; do
		((SECONDS < deadline)) || die "$name exited at once; see $CP_LOGS/$name.log"
		sleep 0.05
	done
	echo "$pid" >"$CP_PIDS/$name.pid"
}

# stop_component NAME: TERM, then KILL after 30 s. Nothing there is fine.
stop_component() {
	local name=$1 p n=0
	local -a pids
	mapfile -t pids < <(cp_pids "$name")
	rm -f "$CP_PIDS/$name.pid"
	((${#pids[@]})) || return 0
	kill -TERM "${pids[@]}" 2>/dev/null || true
	while ((n++ < 300)); do
		[[ -z $(cp_pids "$name") ]] && return 0
		sleep 0.1
	done
	log "warning: $name (${pids[*]}) ignored SIGTERM for 30 s; killing it"
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
	sleep 0.5
	[[ -z $(cp_pids "$name") ]] || die "$name survived SIGKILL"
}

# port_free PORT: nobody listens on 127.0.0.1:PORT (or on every address).
port_free() {
	! ss -Hltn "( sport = :$1 )" 2>/dev/null | grep -q .
}

etcd_healthy() { curl -fsS --max-time 2 "$ETCD_URL/health" 2>/dev/null | grep -q '"health":"true"'; }

start_apiserver() {
	port_free 6443 || die "127.0.0.1:6443 is taken by another process (ss -ltnp 'sport = :6443')"
	start_component kube-apiserver
	wait_for 60 "kube-apiserver ready" api_ready
}

# pods_creatable: pod creation needs the default ServiceAccount (admission)
# and kube-root-ca.crt (the token volume), both made by the controller-manager.
pods_creatable() {
	api_get /api/v1/namespaces/default/serviceaccounts/default >/dev/null &&
		api_get /api/v1/namespaces/default/configmaps/kube-root-ca.crt >/dev/null
}

component_healthy() { curl -kfsS --max-time 2 "https://127.0.0.1:$1/healthz" 2>/dev/null | grep -qx ok; }

all_running() {
	local c
	for c in "${COMPONENTS[@]}"; do [[ -n $(cp_pids "$c") ]] || return 1; done
}

# stop_all: metrics-server (an aggregated server) and the API server first,
# etcd last; the API server takes ~60 s to exit when etcd is gone before it.
stop_all() {
	local c
	for c in metrics-server kube-apiserver kube-scheduler kube-controller-manager etcd; do stop_component "$c"; done
}

# --- metrics-server -------------------------------------------------------------

# node_ip: the source address of the default route, which podline reports
# as the node's InternalIP.
node_ip() {
	ip -4 route get 192.0.2.1 2>/dev/null | awk '{for (i = 1; i < NF; i++) if ($i == "src") print $(i + 1)}'
}

kubectl_admin() { "$(<"$CP_DIR/kube-bin")/kubectl" --kubeconfig "$ADMIN_KUBECONFIG" "$@"; }

# metrics_server_objects: what metrics-server's manifests (v0.8.0,
# manifests/base) give it, for a user instead of a ServiceAccount (plus
# nodes/stats), and a Service without selector whose EndpointSlice is the
# host address it listens on.
metrics_server_objects() {
	local ip=$1
	cat <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: system:aggregated-metrics-reader
  labels:
    rbac.authorization.k8s.io/aggregate-to-view: "true"
    rbac.authorization.k8s.io/aggregate-to-edit: "true"
    rbac.authorization.k8s.io/aggregate-to-admin: "true"
rules:
- apiGroups: ["metrics.k8s.io"]
  resources: ["pods", "nodes"]
  verbs: ["get", "list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: system:metrics-server
rules:
- apiGroups: [""]
  resources: ["nodes/metrics", "nodes/stats"]
  verbs: ["get"]
- apiGroups: [""]
  resources: ["pods", "nodes"]
  verbs: ["get", "list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: system:metrics-server
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:metrics-server
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: $METRICS_SERVER_USER
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: metrics-server:system:auth-delegator
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:auth-delegator
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: $METRICS_SERVER_USER
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: metrics-server-auth-reader
  namespace: kube-system
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: extension-apiserver-authentication-reader
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: $METRICS_SERVER_USER
---
apiVersion: v1
kind: Service
metadata:
  name: metrics-server
  namespace: kube-system
spec:
  ports:
  - name: https
    port: 443
    protocol: TCP
    targetPort: $METRICS_SERVER_PORT
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: metrics-server-host
  namespace: kube-system
  labels:
    kubernetes.io/service-name: metrics-server
    endpointslice.kubernetes.io/managed-by: controlplane.sh.podline.dev
addressType: IPv4
endpoints:
- addresses: ["$ip"]
  conditions:
    ready: true
ports:
- name: https
  port: $METRICS_SERVER_PORT
  protocol: TCP
EOF
}

# metrics_server_apiservice: registered only once metrics-server serves: an
# APIService that does not answer makes discovery stale, and kubectl then
# complains on stderr about metrics.k8s.io in every command.
metrics_server_apiservice() {
	cat <<EOF
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1beta1.metrics.k8s.io
spec:
  service:
    name: metrics-server
    namespace: kube-system
    port: 443
  group: metrics.k8s.io
  version: v1beta1
  caBundle: $(base64 -w0 "$PKI/ca.crt")
  groupPriorityMinimum: 100
  versionPriority: 100
EOF
}

# apply_objects NAME: kubectl apply of stdin as admin; quiet unless it fails.
apply_objects() {
	local out
	out=$(kubectl_admin apply -f - 2>&1) || die "applying the $1 objects failed: $out"
}

metrics_server_serves() {
	curl -fsS --max-time 2 --cacert "$PKI/ca.crt" \
		--resolve "$METRICS_SERVER_HOST:$METRICS_SERVER_PORT:$(<"$CP_DIR/metrics-server-ip")" \
		"https://$METRICS_SERVER_HOST:$METRICS_SERVER_PORT/livez" 2>/dev/null | grep -qx ok
}

# start_metrics_server: RBAC, Service and EndpointSlice, then the process
# (which reads the extension-apiserver-authentication ConfigMap as it
# starts). Returns without waiting; register_metrics_server finishes.
start_metrics_server() {
	local ip
	ip=$(node_ip)
	[[ -n $ip ]] || die "no default route: metrics-server needs an address the API server may dial (not loopback)"
	echo "$ip" >"$CP_DIR/metrics-server-ip"
	metrics_server_objects "$ip" | apply_objects metrics-server
	start_component metrics-server
}

# register_metrics_server: waits until metrics-server serves (it usually
# does by the time the controller-manager is ready), then registers the
# APIService; it turns Available a moment later, and `kubectl top` has
# figures after two scrapes.
register_metrics_server() {
	wait_for 60 "metrics-server serving on $(<"$CP_DIR/metrics-server-ip"):$METRICS_SERVER_PORT" metrics_server_serves
	metrics_server_apiservice | apply_objects APIService
}

# aggregation_enabled: the running API server has the front-proxy flags
# (one started by an older controlplane.sh has not).
aggregation_enabled() {
	local pid
	pid=$(cp_pids kube-apiserver | head -n 1)
	[[ -n $pid ]] && tr '\0' '\n' <"/proc/$pid/cmdline" | grep -qx -- --enable-aggregator-routing=true
}

# --- commands -------------------------------------------------------------------

lock() {
	exec 8>"$CP_LOCK"
	flock -w 300 8 || die "another controlplane.sh holds $CP_LOCK for 5 min"
}

cmd_up() {
	need_root "controlplane.sh up"
	local start=$SECONDS bin ms_bin
	lock
	if all_running && api_ready; then
		if [[ -n $(cp_pids metrics-server) ]]; then
			# An `up` that failed before registering it left it out.
			api_get /apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io >/dev/null ||
				register_metrics_server
			log "control plane already up: $API_URL (KUBECONFIG=$ADMIN_KUBECONFIG)"
			return
		fi
		# Started by a controlplane.sh without metrics-server: add it, and
		# the API server's aggregation flags, keeping the rest as it runs.
		add_metrics_server
		log "control plane up in $((SECONDS - start)) s: $API_URL (KUBECONFIG=$ADMIN_KUBECONFIG)"
		return
	fi
	bin=$("$PODLINE_SCRIPTS/install-kube.sh" control-plane)
	ms_bin=$("$PODLINE_SCRIPTS/install-metrics-server.sh")
	# Some components alive but not all, or not answering: start afresh
	# (on the same certificates and etcd data).
	stop_all
	local port
	for port in 2379 2380 6443 10257 10259 "$METRICS_SERVER_PORT"; do
		port_free "$port" || die "port $port is taken by another process (ss -ltnp 'sport = :$port')"
	done
	mkdir -p "$CP_DIR" "$CP_LOGS" "$CP_PIDS"
	chmod 700 "$CP_DIR"
	echo "$bin" >"$CP_DIR/kube-bin"
	echo "$ms_bin" >"$CP_DIR/metrics-server-bin"
	echo "$NODE_MONITOR_GRACE_PERIOD" >"$CP_DIR/node-monitor-grace-period"
	rm -f "$CP_DIR/audit-policy.yaml"
	if [[ -n ${AUDIT_POLICY:-} ]]; then cp "$AUDIT_POLICY" "$CP_DIR/audit-policy.yaml"; fi
	make_pki
	make_aggregation_pki
	make_kubeconfigs
	log "starting etcd, kube-apiserver, kube-controller-manager, kube-scheduler, metrics-server (logs: $CP_LOGS)"
	start_component etcd
	wait_for 30 "etcd healthy" etcd_healthy
	start_apiserver
	start_component kube-controller-manager
	start_component kube-scheduler
	# While the controller-manager starts up.
	start_metrics_server
	wait_for 60 "kube-controller-manager healthy" component_healthy 10257
	wait_for 60 "kube-scheduler healthy" component_healthy 10259
	wait_for 60 "default ServiceAccount and kube-root-ca.crt" pods_creatable
	register_metrics_server
	log "control plane up in $((SECONDS - start)) s: $API_URL (KUBECONFIG=$ADMIN_KUBECONFIG)"
}

# add_metrics_server: metrics-server for a control plane that runs without
# it; the API server is restarted when it lacks the aggregation flags.
add_metrics_server() {
	local ms_bin
	ms_bin=$("$PODLINE_SCRIPTS/install-metrics-server.sh")
	echo "$ms_bin" >"$CP_DIR/metrics-server-bin"
	port_free "$METRICS_SERVER_PORT" ||
		die "port $METRICS_SERVER_PORT is taken by another process (ss -ltnp 'sport = :$METRICS_SERVER_PORT')"
	make_aggregation_pki
	make_kubeconfigs
	if ! aggregation_enabled; then
		log "restarting kube-apiserver with the aggregation flags metrics-server needs"
		stop_component kube-apiserver
		start_apiserver
	fi
	log "starting metrics-server (log: $CP_LOGS/metrics-server.log)"
	start_metrics_server
	register_metrics_server
}

cmd_down() {
	need_root "controlplane.sh down"
	lock
	stop_all
	[[ -d $CP_DIR ]] && rm -rf "${CP_DIR:?}"
	log "control plane down"
}

cmd_status() {
	local c pids rc=0
	for c in "${COMPONENTS[@]}" metrics-server; do
		pids=$(cp_pids "$c" | tr '\n' ' ')
		echo "$c: ${pids:-not running}"
	done
	if api_ready; then
		echo "kube-apiserver ready at $API_URL"
	else
		echo "kube-apiserver not ready at $API_URL"
		rc=1
	fi
	return "$rc"
}

cmd_env() {
	[[ -s $CP_DIR/kube-bin ]] || die "the control plane is not up: run scripts/controlplane.sh up"
	local bin
	bin=$(<"$CP_DIR/kube-bin")
	printf 'export %s=%q\n' KUBECONFIG "$ADMIN_KUBECONFIG" \
		PODLINE_ADMIN_KUBECONFIG "$ADMIN_KUBECONFIG" \
		PODLINE_KUBECTL "$bin/kubectl" \
		PODLINE_CONTROLPLANE "$PODLINE_SCRIPTS/controlplane.sh" \
		PODLINE_METRICS_SERVER_LOG "$CP_LOGS/metrics-server.log" \
		PODLINE_NODE_MONITOR_GRACE_PERIOD "$(<"$CP_DIR/node-monitor-grace-period")"
	if [[ -f $CP_DIR/audit-policy.yaml ]]; then
		printf 'export %s=%q\n' PODLINE_AUDIT_LOG "$CP_LOGS/audit.log"
	fi
	# Left for the caller's shell to expand.
	# shellcheck disable=SC2016
	printf 'export PATH=%q:"$PATH"\n' "$bin"
}

# cmd_node_kubeconfig NAME: the identity the Node authorizer and
# NodeRestriction expect of node NAME.
cmd_node_kubeconfig() {
	local name=${1:-}
	[[ $name =~ ^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$ ]] ||
		die "node name '$name' is not a lowercase DNS subdomain"
	[[ -f $PKI/.complete ]] || die "no cluster certificates in $PKI: run scripts/controlplane.sh up"
	mkdir -p "$CP_DIR/nodes"
	sign "node-$name" "/O=system:nodes/CN=system:node:$name" "$(client_ext)"
	write_kubeconfig "$CP_DIR/nodes/$name.kubeconfig" "system:node:$name" \
		"$PKI/node-$name.crt" "$PKI/node-$name.key"
	echo "$CP_DIR/nodes/$name.kubeconfig"
}

# cmd_node_serving_cert NAME IP...: what a node serves logs, exec and
# stats with, trusted by the API server.
cmd_node_serving_cert() {
	local name=${1:-} ip sans
	shift || true
	[[ $name =~ ^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$ ]] ||
		die "node name '$name' is not a lowercase DNS subdomain"
	[[ -f $PKI/.complete ]] || die "no cluster certificates in $PKI: run scripts/controlplane.sh up"
	sans="DNS:$name"
	for ip in "$@"; do sans+=",IP:$ip"; done
	sign "node-$name-serving" "/O=system:nodes/CN=system:node:$name" "$(printf '%s\n' \
		'basicConstraints=critical,CA:FALSE' 'keyUsage=critical,digitalSignature' \
		'extendedKeyUsage=serverAuth' "subjectAltName=$sans")"
	printf '%s\n' "$PKI/node-$name-serving.crt" "$PKI/node-$name-serving.key" "$PKI/ca.crt"
}

cmd_stop_apiserver() {
	need_root "controlplane.sh stop-apiserver"
	lock
	stop_component kube-apiserver
	log "kube-apiserver stopped"
}

cmd_start_apiserver() {
	need_root "controlplane.sh start-apiserver"
	lock
	[[ -n $(cp_pids etcd) ]] || die "etcd is not running: run scripts/controlplane.sh up"
	if [[ -z $(cp_pids kube-apiserver) ]]; then
		start_apiserver
	else
		wait_for 60 "kube-apiserver ready" api_ready
	fi
	log "kube-apiserver ready"
}

case ${1:-} in
up) cmd_up ;;
down) cmd_down ;;
status) cmd_status ;;
env) cmd_env ;;
node-kubeconfig) cmd_node_kubeconfig "${2:-}" ;;
node-serving-cert) cmd_node_serving_cert "${@:2}" ;;
stop-apiserver) cmd_stop_apiserver ;;
start-apiserver) cmd_start_apiserver ;;
restart-apiserver)
	cmd_stop_apiserver
	cmd_start_apiserver
	;;
-h | --help | help) usage ;;
*) usage ;;
esac
