//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podline/podline/internal/podtest"
)

// servingNode is a cluster node whose port 10250 the API server reaches:
// a serving certificate from the cluster CA for the node's address, the
// CA to check the API server's client certificate with, on every
// interface.
type servingNode struct {
	*clusterNode
	ip   string // the InternalIP the API server dials
	port int
	ca   string
}

// nodeIP is the address podline reports as InternalIP: the source address
// of the default route.
func nodeIP(t *testing.T) string {
	t.Helper()
	c, err := net.Dial("udp4", "192.0.2.1:9")
	if err != nil {
		t.Fatalf("no default route: %v", err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).IP.String()
}

func startServingNode(t *testing.T, extra ...string) *servingNode {
	t.Helper()
	cp := needControlPlane(t)
	b := make([]byte, 3)
	rand.Read(b)
	ip := nodeIP(t)
	paths := strings.Split(cp.run(t, "node-serving-cert", "e2e-serving-"+hex.EncodeToString(b), "127.0.0.1", ip), "\n")
	if len(paths) != 3 {
		t.Fatalf("node-serving-cert printed %q", paths)
	}
	port := freePort(t)
	flags := append([]string{
		"--port", fmt.Sprint(port), "--address", "0.0.0.0",
		"--tls-cert-file", paths[0], "--tls-private-key-file", paths[1], "--client-ca-file", paths[2],
	}, extra...)
	n := &servingNode{clusterNode: startNode(t, flags...), ip: ip, port: port, ca: paths[2]}
	n.waitReady(60 * time.Second)
	return n
}

// kubectl runs kubectl as the cluster admin in the node's namespace.
func (n *servingNode) kubectl(stdin io.Reader, args ...string) (string, error) {
	cmd := exec.Command(n.cp.kubectl, append([]string{"--kubeconfig", n.cp.kubeconfig, "-n", n.name}, args...)...)
	cmd.Stdin = stdin
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (n *servingNode) mustKubectl(args ...string) string {
	n.t.Helper()
	out, err := n.kubectl(nil, args...)
	if err != nil {
		n.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (n *servingNode) runningPod(p *v1.Pod) *v1.Pod {
	n.t.Helper()
	n.createPod(p)
	return n.waitAPIPod(p.Namespace, p.Name, "Running", 60*time.Second, func(p *v1.Pod) bool {
		return p.Status.Phase == v1.PodRunning
	})
}

// counter prints "line N" every 200 ms.
const counter = `i=0; while true; do echo "line $i"; i=$((i+1)); sleep 0.2; done`

func TestClusterKubectlLogs(t *testing.T) {
	n := startServingNode(t)
	n.runningPod(n.apiPod("talker", counter))
	eventually(t, 10*time.Second, "a few lines logged", func() (bool, string) {
		out, err := n.kubectl(nil, "logs", "talker")
		return err == nil && strings.Count(out, "\n") >= 5, out
	})

	out := n.mustKubectl("logs", "talker", "--tail=2")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "line ") {
		t.Fatalf("--tail=2: %q", out)
	}
	out = n.mustKubectl("logs", "talker", "--tail=1", "--timestamps")
	stamp, rest, _ := strings.Cut(strings.TrimSpace(out), " ")
	if _, err := time.Parse(time.RFC3339Nano, stamp); err != nil || !strings.HasPrefix(rest, "line ") {
		t.Fatalf("--timestamps: %q", out)
	}
	// The whole log is counted after the last second's, so that it holds
	// more than a second of lines whenever the pod has run that long: counted
	// before the wait, it could hold only the second the wait then covers.
	time.Sleep(1500 * time.Millisecond)
	recent := strings.Count(n.mustKubectl("logs", "talker", "--since=1s"), "\n")
	all := strings.Count(n.mustKubectl("logs", "talker"), "\n")
	if recent < 2 || recent > 8 || recent >= all {
		t.Fatalf("--since=1s: %d lines of %d, want the last second's (about 5)", recent, all)
	}
	if out, err := n.kubectl(nil, "logs", "talker", "-c", "nope"); err == nil || !strings.Contains(out, "nope") {
		t.Fatalf("an unknown container: %v %q", err, out)
	}
	t.Logf("kubectl logs: %d lines, --tail, --timestamps, --since as asked", all)
}

// kubectl logs -f sees lines as they come, and keeps following across a
// log rotation (the file renamed away, the runtime told to reopen it).
func TestClusterKubectlLogsFollowAcrossRotation(t *testing.T) {
	n := startServingNode(t)
	p := n.runningPod(n.apiPod("talker", counter))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, n.cp.kubectl, "--kubeconfig", n.cp.kubeconfig, "-n", n.name, "logs", "-f", "talker")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cancel()
	lines := make(chan string, 1024)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	next := func(what string) string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("kubectl logs -f ended %s", what)
			}
			return l
		case <-time.After(10 * time.Second):
			t.Fatalf("no line for 10 s %s", what)
		}
		return ""
	}
	first := time.Now()
	for range 5 {
		next("before the rotation")
	}
	t.Logf("kubectl logs -f: 5 lines in %s", time.Since(first).Round(time.Millisecond))

	// Rotate as the kubelet's log manager does.
	cid := strings.TrimPrefix(p.Status.ContainerStatuses[0].ContainerID, "containerd://")
	st, err := runtime.ContainerStatus(context.Background(), cid)
	if err != nil {
		t.Fatal(err)
	}
	logPath := st.GetLogPath()
	if err := os.Rename(logPath, logPath+".20261125-000000"); err != nil {
		t.Fatal(err)
	}
	if err := runtime.ReopenContainerLog(context.Background(), cid); err != nil {
		t.Fatalf("reopen the container log: %v", err)
	}
	// Lines written after the rotation reach the follower: drain what
	// was in the old file, then see the counter go on from the new one.
	rotated := time.Now()
	eventually(t, 15*time.Second, "lines from the new log file", func() (bool, string) {
		fi, err := os.Stat(logPath)
		return err == nil && fi.Size() > 0, fmt.Sprint(err)
	})
	var last string
	for time.Since(rotated) < 3*time.Second {
		last = next("after the rotation")
	}
	var lastN, firstN int
	fmt.Sscanf(last, "line %d", &lastN)
	fmt.Sscanf(next("after the rotation"), "line %d", &firstN)
	if firstN != lastN+1 {
		t.Fatalf("after the rotation the follower skipped or repeated: %d then %d", lastN, firstN)
	}
}

func TestClusterKubectlLogsPrevious(t *testing.T) {
	n := startServingNode(t)
	p := n.apiPod("restarter", `echo "run at $(date +%s%N)"; sleep 1; exit 1`)
	n.createPod(p)
	n.waitAPIPod(n.name, "restarter", "restarted once", 60*time.Second, func(p *v1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 1
	})
	cur := n.mustKubectl("logs", "restarter")
	prev := n.mustKubectl("logs", "restarter", "--previous")
	if !strings.HasPrefix(prev, "run at ") || !strings.HasPrefix(cur, "run at ") || prev == cur {
		t.Fatalf("--previous %q, current %q: want two different runs", prev, cur)
	}
}

func TestClusterKubectlExec(t *testing.T) {
	n := startServingNode(t)
	n.runningPod(n.apiPod("box", "sleep 3600"))

	out, err := n.kubectl(nil, "exec", "box", "--", "sh", "-c", "echo out; echo err >&2; exit 3")
	var exit *exec.ExitError
	if !strings.Contains(out, "out") || !strings.Contains(out, "err") || err == nil {
		t.Fatalf("exec: %q %v", out, err)
	}
	if ok := asExit(err, &exit); !ok || exit.ExitCode() != 3 {
		t.Fatalf("exec exit: %v, want status 3", err)
	}
	out, err = n.kubectl(strings.NewReader("through stdin\n"), "exec", "-i", "box", "--", "cat")
	if err != nil || out != "through stdin\n" {
		t.Fatalf("exec -i: %q %v", out, err)
	}
	// -t needs a terminal: script(1) gives kubectl one.
	script := fmt.Sprintf("%s --kubeconfig %s -n %s exec -it box -- sh -c 'tty; echo cols=$(stty size)'", n.cp.kubectl, n.cp.kubeconfig, n.name)
	tty, err := exec.Command("script", "-qec", script, "/dev/null").CombinedOutput()
	if err != nil || !strings.Contains(string(tty), "/dev/pts/") {
		t.Fatalf("exec -it: %q %v", tty, err)
	}

	// kubectl cp both ways (tar through exec).
	local := t.TempDir() + "/in.txt"
	if err := os.WriteFile(local, []byte("copied in and out\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n.mustKubectl("cp", local, "box:/tmp/in.txt")
	if out := n.mustKubectl("exec", "box", "--", "cat", "/tmp/in.txt"); out != "copied in and out\n" {
		t.Fatalf("cp in: %q", out)
	}
	back := t.TempDir() + "/out.txt"
	n.mustKubectl("cp", "box:/tmp/in.txt", back)
	if b, err := os.ReadFile(back); err != nil || string(b) != "copied in and out\n" {
		t.Fatalf("cp out: %q %v", b, err)
	}
}

func asExit(err error, target **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	*target = e
	return ok
}

func TestClusterKubectlAttachAndPortForward(t *testing.T) {
	n := startServingNode(t)
	web := n.apiPod("web", `mkdir -p /www && echo "served by $(hostname)" > /www/index.html && httpd -f -p 8080 -h /www & `+counter)
	n.runningPod(web)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, "timeout", "3", n.cp.kubectl, "--kubeconfig", n.cp.kubeconfig, "-n", n.name, "attach", "web").CombinedOutput()
	if strings.Count(string(out), "line ") < 3 {
		t.Fatalf("attach: %q, want the counter's lines", out)
	}

	local := freePort(t)
	pf := exec.CommandContext(ctx, n.cp.kubectl, "--kubeconfig", n.cp.kubeconfig, "-n", n.name, "port-forward", "pod/web", fmt.Sprintf("%d:8080", local))
	var pfOut podtest.LogBuffer
	pf.Stdout, pf.Stderr = &pfOut, &pfOut
	if err := pf.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); pf.Wait() }()
	var body string
	eventually(t, 15*time.Second, "a page through kubectl port-forward", func() (bool, string) {
		res, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", local))
		if err != nil {
			return false, err.Error() + "; kubectl: " + pfOut.String()
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		body = string(b)
		return res.StatusCode == 200 && strings.HasPrefix(body, "served by web"), body
	})
	t.Logf("port-forward: %q", strings.TrimSpace(body))
}

// otherCAClient is a client certificate no CA of the cluster signed.
func otherCAClient(t *testing.T) tls.Certificate {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "intruder", Organization: []string{"system:masters"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func TestClusterServingPortRefusesStrangers(t *testing.T) {
	n := startServingNode(t)
	pool := x509.NewCertPool()
	caPEM, err := os.ReadFile(n.ca)
	if err != nil {
		t.Fatal(err)
	}
	pool.AppendCertsFromPEM(caPEM)
	client := func(certs ...tls.Certificate) *http.Client {
		return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: certs}}}
	}
	url := fmt.Sprintf("https://%s:%d", n.ip, n.port)
	code := func(c *http.Client, method, path, token string) int {
		t.Helper()
		req, _ := http.NewRequest(method, url+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if c := code(client(), "GET", "/pods", ""); c != 401 {
		t.Errorf("anonymous GET /pods = %d, want 401", c)
	}
	if c := code(client(otherCAClient(t)), "GET", "/pods", ""); c != 401 {
		t.Errorf("a certificate from another CA = %d, want 401", c)
	}

	// A service account allowed nodes/pods only: /pods yes, exec no.
	token := n.serviceAccountToken("viewer", "pods")
	if c := code(client(), "GET", "/pods", token); c != 200 {
		t.Errorf("nodes/pods holder: GET /pods = %d, want 200", c)
	}
	if c := code(client(), "POST", "/exec/"+n.name+"/x/app?command=id&output=1", token); c != 403 {
		t.Errorf("nodes/pods holder: exec = %d, want 403", c)
	}
	if c := code(client(), "GET", "/stats/summary", token); c != 403 {
		t.Errorf("nodes/pods holder: /stats/summary = %d, want 403", c)
	}
	admin := n.serviceAccountToken("admin", "pods", "proxy", "stats", "log")
	if c := code(client(), "GET", "/stats/summary", admin); c != 200 {
		t.Errorf("nodes/stats holder: /stats/summary = %d, want 200", c)
	}

	// /logs/ serves /var/log, and nothing beyond it.
	link := "/var/log/podline-e2e-escape"
	os.Remove(link)
	if err := os.Symlink("/etc", link); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(link)
	if c := code(client(), "GET", "/logs/podline-e2e-escape/hostname", admin); c == 200 {
		t.Errorf("a symlink out of /var/log was followed")
	}
	conn, err := tls.Dial("tcp", fmt.Sprintf("%s:%d", n.ip, n.port), &tls.Config{RootCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /logs/../../etc/hostname HTTP/1.1\r\nHost: node\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n", admin)
	raw, _ := io.ReadAll(conn)
	host, _ := os.ReadFile("/etc/hostname")
	if strings.HasPrefix(string(raw), "HTTP/1.1 200") && strings.Contains(string(raw), strings.TrimSpace(string(host))) {
		t.Errorf("a .. path left /var/log: %q", raw)
	}
}

// serviceAccountToken makes service account name in the node's namespace,
// allowed get and create on the given subresources of nodes and nothing
// else, and returns a token of it.
func (n *servingNode) serviceAccountToken(name string, subresources ...string) string {
	t := n.t
	t.Helper()
	sa, err := n.cp.admin.CoreV1().ServiceAccounts(n.name).Create(apiCtx,
		&v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var resources []string
	for _, s := range subresources {
		resources = append(resources, "nodes/"+s)
	}
	role := n.name + "-" + name
	_, err = n.cp.admin.RbacV1().ClusterRoles().Create(apiCtx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: role},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: resources, Verbs: []string{"get", "create"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.cp.admin.RbacV1().ClusterRoles().Delete(apiCtx, role, metav1.DeleteOptions{}) })
	_, err = n.cp.admin.RbacV1().ClusterRoleBindings().Create(apiCtx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: n.name}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.cp.admin.RbacV1().ClusterRoleBindings().Delete(apiCtx, role, metav1.DeleteOptions{}) })
	tr, err := n.cp.admin.CoreV1().ServiceAccounts(n.name).CreateToken(apiCtx, sa.Name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// With --rotate-server-certificates the node asks for its serving
// certificate with a kubelet-serving CSR and serves it once approved and
// signed by the cluster's signer.
func TestClusterServingCertificateRotation(t *testing.T) {
	port := freePort(t)
	ip := nodeIP(t)
	n := startNode(t, "--port", fmt.Sprint(port), "--address", "0.0.0.0", "--rotate-server-certificates")
	n.waitReady(60 * time.Second)
	var csr *certificatesv1.CertificateSigningRequest
	eventually(t, 30*time.Second, "a kubelet-serving CSR from the node", func() (bool, string) {
		list, err := n.cp.admin.CertificatesV1().CertificateSigningRequests().List(apiCtx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for i := range list.Items {
			c := &list.Items[i]
			if c.Spec.SignerName == certificatesv1.KubeletServingSignerName && c.Spec.Username == "system:node:"+n.name {
				csr = c
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d CSRs, none from the node", len(list.Items))
	})
	t.Cleanup(func() {
		n.cp.admin.CertificatesV1().CertificateSigningRequests().Delete(apiCtx, csr.Name, metav1.DeleteOptions{})
	})
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: v1.ConditionTrue, Reason: "E2E", Message: "approved by the test"})
	if _, err := n.cp.admin.CertificatesV1().CertificateSigningRequests().UpdateApproval(apiCtx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var served *x509.Certificate
	eventually(t, 60*time.Second, "the signed certificate served on the node's port", func() (bool, string) {
		conn, err := tls.Dial("tcp", fmt.Sprintf("%s:%d", ip, port), &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			return false, err.Error()
		}
		defer conn.Close()
		served = conn.ConnectionState().PeerCertificates[0]
		return served.Subject.CommonName == "system:node:"+n.name && served.Issuer.CommonName == "podline-cluster-ca",
			fmt.Sprintf("subject %q issuer %q", served.Subject.CommonName, served.Issuer.CommonName)
	})
	t.Logf("serving certificate from the CSR: %s, issued by %s, valid until %s, IPs %v",
		served.Subject.CommonName, served.Issuer.CommonName, served.NotAfter.Format(time.RFC3339), served.IPAddresses)
}

// POST /checkpoint reaches the runtime for a running container, behind the
// nodes/checkpoint permission. containerd writes a checkpoint only with a
// working CRIU; without one its error comes back as the kubelet answers
// it, a 500 naming the container.
func TestClusterCheckpoint(t *testing.T) {
	n := startServingNode(t)
	n.runningPod(n.apiPod("box", "sleep 3600"))
	pool := x509.NewCertPool()
	caPEM, err := os.ReadFile(n.ca)
	if err != nil {
		t.Fatal(err)
	}
	pool.AppendCertsFromPEM(caPEM)
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	post := func(path, token string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", fmt.Sprintf("https://%s:%d%s", n.ip, n.port, path), nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	path := "/checkpoint/" + n.name + "/box/app"
	if code, body := post(path, n.serviceAccountToken("viewer", "pods")); code != 403 {
		t.Fatalf("without nodes/checkpoint: %d %q, want 403", code, body)
	}
	token := n.serviceAccountToken("checkpointer", "checkpoint")
	if code, body := post("/checkpoint/"+n.name+"/box/nope", token); code != 404 {
		t.Fatalf("unknown container: %d %q, want 404", code, body)
	}
	code, body := post(path+"?timeout=30", token)
	switch code {
	case 200:
		var answer struct{ Items []string }
		if err := json.Unmarshal([]byte(body), &answer); err != nil || len(answer.Items) != 1 {
			t.Fatalf("answer %q: %v", body, err)
		}
		if _, err := os.Stat(answer.Items[0]); err != nil {
			t.Fatalf("the archive named is not there: %v", err)
		}
		t.Logf("checkpoint written: %s", answer.Items[0])
	case 500:
		want := "checkpointing of " + n.name + "/box/app failed ("
		if !strings.Contains(body, want) {
			t.Fatalf("runtime failure: %q, want it to start %q", body, want)
		}
		t.Logf("the runtime could not checkpoint (no working CRIU on this machine): %s", strings.TrimSpace(body))
	default:
		t.Fatalf("POST %s = %d %q", path, code, body)
	}
}
