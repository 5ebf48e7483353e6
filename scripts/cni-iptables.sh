# shellcheck shell=bash
# cni-iptables.sh: removes the nat rules the CNI portmap plugin made for our
# network. Sourced by teardown.sh. portmap deletes a pod's own chain on CNI
# DEL, but leaves its shared chains behind, and a pod killed without DEL
# (containerd crashed) leaves its chain too. Shared chains are removed only
# when no rule of any network is left in them.

# nat_rule_numbers CHAIN PATTERN: numbers of CHAIN's rules matching PATTERN,
# highest first so deleting them one by one keeps the rest numbered.
nat_rule_numbers() {
	iptables -t nat -S "$1" 2>/dev/null | grep '^-A ' | grep -n -- "$2" | cut -d: -f1 | sort -rn
}

remove_portmap_rules() {
	command -v iptables >/dev/null || return 0
	iptables -t nat -S CNI-HOSTPORT-DNAT >/dev/null 2>&1 || return 0
	local n chain
	# Per-pod chains of our network: rules say `dnat name: "podline"`.
	local -a ours
	mapfile -t ours < <(iptables -t nat -S CNI-HOSTPORT-DNAT |
		grep "dnat name: \\\\\"$CNI_NETWORK\\\\\"" | sed -n 's/.* -j \(CNI-DN-[0-9a-f]*\).*/\1/p')
	while read -r n; do
		iptables -t nat -D CNI-HOSTPORT-DNAT "$n"
	done < <(nat_rule_numbers CNI-HOSTPORT-DNAT "dnat name: \\\\\"$CNI_NETWORK\\\\\"")
	for chain in "${ours[@]}"; do
		iptables -t nat -F "$chain" 2>/dev/null || true
		iptables -t nat -X "$chain" 2>/dev/null || true
	done
	# Another network's pods still forward ports: keep the shared chains.
	if iptables -t nat -S CNI-HOSTPORT-DNAT | grep -q '^-A '; then
		return 0
	fi
	log "removing portmap's nat chains"
	for chain in PREROUTING OUTPUT POSTROUTING; do
		while read -r n; do
			iptables -t nat -D "$chain" "$n"
		done < <(nat_rule_numbers "$chain" '-j CNI-HOSTPORT-')
	done
	for chain in CNI-HOSTPORT-DNAT CNI-HOSTPORT-MASQ CNI-HOSTPORT-SETMARK; do
		iptables -t nat -F "$chain" 2>/dev/null || true
		iptables -t nat -X "$chain" 2>/dev/null || true
	done
}
