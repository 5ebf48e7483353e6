#!/usr/bin/env bash
# registry.sh up|down|status|env: an OCI registry on loopback for the image
# pull tests: the CNCF distribution registry (install-registry.sh), TLS from
# a CA made here, htpasswd auth, and the locally built busybox pushed into
# it as $REGISTRY_ADDR/private/busybox:{1.36,latest}.
#   up      install (cached), make the CA and certificate, start the
#           registry, push busybox, and tell containerd to trust the CA (a
#           hosts.toml under the hosts dir its config names); no-op when up
#   down    stop the registry, delete its state and the hosts.toml
#   status  exit 0 when the registry answers
#   env     `export ...` lines for the tests: eval "$(scripts/registry.sh env)"
#           (PODLINE_REGISTRY_LOG is its log, the access log included)
#
# Every image in it needs the credentials (htpasswd applies to all
# repositories): a pull without them, or with a wrong password, gets the
# registry's 401. Its own CA rather than the control plane's: the
# standalone tests need the registry without a control plane.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=containerd-config.sh
source "$PODLINE_SCRIPTS/containerd-config.sh"

REGISTRY_ADDR=${REGISTRY_ADDR:-127.0.0.1:5043}
REG_DIR=$PODLINE_RUN/registry
REG_PKI=$REG_DIR/pki
REG_CONFIG=$REG_DIR/config.yml
REG_LOG=$REG_DIR/registry.log
REG_PID=$REG_DIR/registry.pid
REG_USER=podline
REG_REPO=private/busybox
REG_TAGS=(1.36 latest)
HOSTS_TOML=$CONTAINERD_HOSTS_DIR/$REGISTRY_ADDR/hosts.toml

usage() {
	sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}" >&2
	exit 2
}

# registry_pid prints the pid of our registry if it runs.
registry_pid() {
	local pid
	[[ -s $REG_PID ]] || return 1
	pid=$(<"$REG_PID")
	[[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$PODLINE_BIN/registry"* ]] || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$REG_CONFIG" || return 1
	echo "$pid"
}

password() { cat "$REG_DIR/password"; }

registry_answers() {
	[[ -s $REG_DIR/password ]] &&
		curl -fsS --max-time 2 --cacert "$REG_PKI/ca.crt" -u "$REG_USER:$(password)" \
			"https://$REGISTRY_ADDR/v2/" >/dev/null 2>&1
}

new_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

# make_pki: a CA for this registry alone and its serving certificate.
make_pki() {
	mkdir -p "$REG_PKI"
	chmod 700 "$REG_PKI"
	new_key "$REG_PKI/ca.key"
	openssl req -x509 -new -key "$REG_PKI/ca.key" -subj /CN=podline-registry-ca -days 30 \
		-addext 'basicConstraints=critical,CA:TRUE' -addext 'keyUsage=critical,keyCertSign,cRLSign' \
		-out "$REG_PKI/ca.crt" 2>/dev/null || die "registry CA generation failed"
	new_key "$REG_PKI/registry.key"
	openssl req -new -key "$REG_PKI/registry.key" -subj /CN=podline-registry 2>/dev/null |
		openssl x509 -req -CA "$REG_PKI/ca.crt" -CAkey "$REG_PKI/ca.key" -set_serial "0x$(openssl rand -hex 16)" \
			-days 30 -out "$REG_PKI/registry.crt" -extfile <(printf '%s\n' 'basicConstraints=critical,CA:FALSE' \
				'keyUsage=critical,digitalSignature' 'extendedKeyUsage=serverAuth' \
				"subjectAltName=IP:${REGISTRY_ADDR%:*},DNS:localhost") 2>/dev/null ||
		die "registry certificate failed"
}

write_config() {
	cat >"$REG_CONFIG" <<YAML
# Written by scripts/registry.sh up.
version: 0.1
log:
  level: warn
  # The access log is how the pull tests count what reached the
  # registry (one manifest request for one shared pull).
  accesslog:
    disabled: false
storage:
  filesystem:
    rootdirectory: $REG_DIR/data
  delete:
    enabled: true
http:
  addr: $REGISTRY_ADDR
  secret: $(openssl rand -hex 16)
  tls:
    certificate: $REG_PKI/registry.crt
    key: $REG_PKI/registry.key
auth:
  htpasswd:
    realm: podline-registry
    path: $REG_DIR/htpasswd
YAML
}

# write_hosts_toml: containerd reads the hosts dir on every pull, so the
# registry's CA is trusted without restarting it.
write_hosts_toml() {
	mkdir -p "$(dirname "$HOSTS_TOML")"
	cat >"$HOSTS_TOML.tmp" <<TOML
# Written by scripts/registry.sh up; removed by down.
server = "https://$REGISTRY_ADDR"

[host."https://$REGISTRY_ADDR"]
  capabilities = ["pull", "resolve"]
  ca = "$REG_PKI/ca.crt"
TOML
	mv "$HOSTS_TOML.tmp" "$HOSTS_TOML"
	if [[ -f $CONTAINERD_CONFIG ]] && ! grep -qF "config_path = \"$CONTAINERD_HOSTS_DIR\"" "$CONTAINERD_CONFIG"; then
		log "warning: $CONTAINERD_CONFIG predates the registry hosts dir; pulls from $REGISTRY_ADDR fail until" \
			"'scripts/runtime.sh down && scripts/runtime.sh up'"
	fi
}

# ocipush_tool prints the path of the pusher, built once per source.
ocipush_tool() {
	local tool sum
	sum=$({ go env GOVERSION; cat "$PODLINE_SCRIPTS"/ocipush/*.go; } | sha256sum | cut -c1-16)
	tool=$PODLINE_CACHE/tools/ocipush-$sum
	if [[ ! -x $tool ]]; then
		mkdir -p "$PODLINE_CACHE/tools"
		(cd "$PODLINE_SCRIPTS/.." && CGO_ENABLED=0 go build -trimpath -buildvcs=false -o "$tool.tmp" ./scripts/ocipush)
		find "$PODLINE_CACHE/tools" -maxdepth 1 -name 'ocipush-*' ! -name "ocipush-$sum*" -delete
		mv "$tool.tmp" "$tool"
	fi
	echo "$tool"
}

push_busybox() {
	local busybox tool
	busybox=$("$PODLINE_SCRIPTS/images.sh" build | tail -n 1)
	tool=$(ocipush_tool)
	local -a tags=()
	local t
	for t in "${REG_TAGS[@]}"; do tags+=(-tag "$t"); done
	"$tool" -tar "$busybox" -registry "$REGISTRY_ADDR" -repo "$REG_REPO" "${tags[@]}" -label "dev.podline.registry=$REG_REPO" \
		-user "$REG_USER:$(password)" -cacert "$REG_PKI/ca.crt" >"$REG_DIR/busybox.digest"
}

cmd_up() {
	need_root "registry.sh up"
	local start=$SECONDS
	exec 9>"/run/lock/podline-registry.lock"
	flock -w 300 9 || die "another registry.sh holds the lock"
	# A registry started by an older version of this script, without its
	# access log, is started again.
	if registry_pid >/dev/null && registry_answers && [[ -s $REG_DIR/busybox.digest ]] &&
		grep -q 'disabled: false' "$REG_CONFIG"; then
		write_hosts_toml
		log "registry already up: $REGISTRY_ADDR"
		return
	fi
	"$PODLINE_SCRIPTS/install-registry.sh"
	registry_down
	mkdir -p "$REG_DIR/data"
	chmod 700 "$REG_DIR"
	make_pki
	openssl rand -hex 12 >"$REG_DIR/password"
	htpasswd -Bbn "$REG_USER" "$(password)" >"$REG_DIR/htpasswd" 2>/dev/null || die "htpasswd failed"
	write_config
	log "starting registry on $REGISTRY_ADDR (log: $REG_LOG)"
	# setsid: it must outlive this script. OTEL_TRACES_EXPORTER: without
	# it the registry keeps trying to send traces to a collector on
	# localhost.
	OTEL_TRACES_EXPORTER=none setsid "$PODLINE_BIN/registry" serve "$REG_CONFIG" \
		</dev/null >>"$REG_LOG" 2>&1 9>&- &
	local deadline=$((SECONDS + 30)) pid
	until registry_answers; do
		((SECONDS < deadline)) || die "registry did not answer in 30 s (see $REG_LOG)"
		sleep 0.1
	done
	for pid in $(pgrep -f -- "$REG_CONFIG"); do
		[[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$PODLINE_BIN/registry"* ]] && echo "$pid" >"$REG_PID"
	done
	registry_pid >/dev/null || die "registry answers but its process was not found"
	push_busybox
	write_hosts_toml
	log "registry up: $REGISTRY_ADDR/$REG_REPO@$(<"$REG_DIR/busybox.digest") in $((SECONDS - start)) s"
}

registry_down() {
	local pid i
	if pid=$(registry_pid); then
		kill "$pid"
		for ((i = 0; i < 100; i++)); do [[ -d /proc/$pid ]] || break; sleep 0.1; done
		[[ -d /proc/$pid ]] && kill -9 "$pid"
	fi
	rm -rf "${REG_DIR:?}" "$(dirname "$HOSTS_TOML")"
}

cmd_down() {
	need_root "registry.sh down"
	exec 9>"/run/lock/podline-registry.lock"
	flock -w 300 9 || die "another registry.sh holds the lock"
	registry_down
	log "registry down"
}

cmd_status() {
	if registry_answers; then
		echo "registry answers on https://$REGISTRY_ADDR (pid $(registry_pid || echo '?'))"
		return 0
	fi
	echo "registry does not answer on https://$REGISTRY_ADDR"
	return 1
}

cmd_env() {
	registry_answers || die "registry is not up"
	printf 'export %s=%q\n' PODLINE_REGISTRY "$REGISTRY_ADDR" \
		PODLINE_REGISTRY_USER "$REG_USER" PODLINE_REGISTRY_PASSWORD "$(password)" \
		PODLINE_REGISTRY_CA "$REG_PKI/ca.crt" PODLINE_REGISTRY_LOG "$REG_LOG" \
		PODLINE_REGISTRY_BUSYBOX "$REGISTRY_ADDR/$REG_REPO" \
		PODLINE_REGISTRY_BUSYBOX_DIGEST "$(<"$REG_DIR/busybox.digest")"
}

case ${1:-} in
up) cmd_up ;;
down) cmd_down ;;
status) cmd_status ;;
env) cmd_env ;;
*) usage ;;
esac
