package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/podline/podline/bench/internal/procstat"
)

// controlPlane is scripts/controlplane.sh's cluster as the cluster
// scenario uses it: an admin client, the audit log of node requests, and
// the components' pids for their CPU.
type controlPlane struct {
	script string
	admin  kubernetes.Interface
	dir    string // the script's $CP_DIR, where its pid files are
	// auditLog is "" when the control plane ran before the suite, without
	// the suite's audit policy: requests are then not counted.
	auditLog string
	// started: the suite brought it up, and takes it down.
	started bool
}

// upControlPlane brings the control plane up with the audit policy, or
// takes the one already running as it is.
func upControlPlane(ctx context.Context, repo, tmp string) (*controlPlane, error) {
	cp := &controlPlane{script: filepath.Join(repo, "scripts", "controlplane.sh")}
	if exec.CommandContext(ctx, cp.script, "status").Run() != nil {
		policy := filepath.Join(tmp, "audit-policy.yaml")
		if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
			return nil, err
		}
		progress("cluster: starting the control plane (scripts/controlplane.sh up, with an audit log of node requests)")
		cmd := exec.CommandContext(ctx, cp.script, "up")
		cmd.Env = append(os.Environ(), "AUDIT_POLICY="+policy)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		cp.started = true
		if err := cmd.Run(); err != nil {
			cp.down()
			return nil, fmt.Errorf("scripts/controlplane.sh up: %w", err)
		}
	} else {
		progress("cluster: using the control plane already up; it stays up")
	}
	env, err := cp.env(ctx)
	if err != nil {
		cp.down()
		return nil, err
	}
	kubeconfig := env["PODLINE_ADMIN_KUBECONFIG"]
	cp.dir = filepath.Dir(kubeconfig)
	cp.auditLog = env["PODLINE_AUDIT_LOG"]
	if cp.auditLog == "" {
		progress("cluster: the control plane has no audit log (it was up without AUDIT_POLICY): API requests are not counted")
	}
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		cp.down()
		return nil, fmt.Errorf("admin kubeconfig: %w", err)
	}
	// The suite's own client must not be what paces pod creation.
	rc.QPS, rc.Burst = 2000, 2000
	rc.Timeout = 30 * time.Second
	if cp.admin, err = kubernetes.NewForConfig(rc); err != nil {
		cp.down()
		return nil, err
	}
	return cp, nil
}

// env reads the script's `export NAME=value` lines.
func (cp *controlPlane) env(ctx context.Context) (map[string]string, error) {
	out, err := exec.CommandContext(ctx, cp.script, "env").Output()
	if err != nil {
		return nil, fmt.Errorf("scripts/controlplane.sh env: %w", err)
	}
	m := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "export "), "=")
		if ok && strings.HasPrefix(k, "PODLINE_") {
			// %q-quoted by printf only when needed; these paths never are.
			m[k] = strings.Trim(v, `'"`)
		}
	}
	if m["PODLINE_ADMIN_KUBECONFIG"] == "" {
		return nil, fmt.Errorf("scripts/controlplane.sh env names no admin kubeconfig")
	}
	return m, nil
}

// nodeKubeconfig is a client certificate for system:node:name.
func (cp *controlPlane) nodeKubeconfig(ctx context.Context, name string) (string, error) {
	out, err := exec.CommandContext(ctx, cp.script, "node-kubeconfig", name).Output()
	if err != nil {
		return "", fmt.Errorf("scripts/controlplane.sh node-kubeconfig %s: %w", name, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// cpuSeconds is a component's CPU so far (kube-apiserver, ...), from the
// pid file the script keeps; 0 when it cannot be read.
func (cp *controlPlane) cpuSeconds(component string) float64 {
	pid, err := readPID(filepath.Join(cp.dir, "run", component+".pid"))
	if err != nil {
		return 0
	}
	c, err := procstat.Read(pid, false)
	if err != nil {
		return 0
	}
	return c.CPUSeconds()
}

// down stops the control plane if the suite started it.
func (cp *controlPlane) down() {
	if !cp.started {
		return
	}
	cmd := exec.Command(cp.script, "down")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		progress("cluster: scripts/controlplane.sh down: %v", err)
	}
}
