package stages_test

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/stages"
)

func TestStaticFullName(t *testing.T) {
	f := func(annotations map[string]string, want string) {
		t.Helper()
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "etcd-n1", Annotations: annotations}}
		if got := stages.StaticFullName(pod); got != want {
			t.Fatalf("StaticFullName(%v) = %q, want %q", annotations, got, want)
		}
	}
	f(map[string]string{"kubernetes.io/config.source": "file"}, "kube-system/etcd-n1")
	f(map[string]string{"kubernetes.io/config.source": "http"}, "kube-system/etcd-n1")
	f(map[string]string{"kubernetes.io/config.source": "api"}, "")
	// Without a source the kubelet counts a pod as an API pod.
	f(nil, "")
	if got := stages.StaticFullName(nil); got != "" {
		t.Fatalf("StaticFullName(nil) = %q", got)
	}
}

// TestStaticTurn drives one name's start order through a script of steps,
// each checked against the result it must give:
//
//	want a          a arrives (or is wanted again)
//	start a ok|no   a's pass asks to start
//	withdraw a →b   a is to be torn down before it started; b is woken
//	release a →b    a's teardown finished (or it was rejected); b is woken
//
// (withdraw or release without →b expect no pod to be woken), and the
// state after the script.
func TestStaticTurn(t *testing.T) {
	f := func(script, wantState string) {
		t.Helper()
		var turn stages.StaticTurn
		for _, step := range strings.Split(strings.TrimSpace(script), "\n") {
			fields := strings.Fields(step)
			op, uid := fields[0], types.UID(fields[1])
			want := ""
			if len(fields) > 2 {
				want = fields[2]
			}
			var got string
			switch op {
			case "want":
				turn = turn.Want(uid)
			case "start":
				var ok bool
				turn, ok = turn.Start(uid)
				got = map[bool]string{true: "ok", false: "no"}[ok]
			case "withdraw":
				var wake types.UID
				turn, wake = turn.Withdraw(uid)
				got = "→" + string(wake)
			case "release":
				var wake types.UID
				turn, wake = turn.Release(uid)
				got = "→" + string(wake)
			default:
				t.Fatalf("unknown step %q", step)
			}
			if want == "" && strings.HasPrefix(got, "→") {
				want = "→"
			}
			if got != want {
				t.Fatalf("step %q gave %q; state %+v", step, got, turn)
			}
		}
		if got := fmt.Sprintf("running=%s waiting=%v", turn.Running, turn.Waiting); got != wantState {
			t.Fatalf("state after the script = %q, want %q", got, wantState)
		}
	}

	// The first pod of a name starts at once and holds the turn.
	f(`
want a
start a ok
start a ok`, "running=a waiting=[]")

	// An edit: the new version waits until the old one's teardown has
	// finished, then is woken and starts.
	f(`
want a
start a ok
withdraw a →
want b
start b no
release a →b
start b ok`, "running=b waiting=[]")

	// Three quick edits: the middle version is withdrawn while it waits
	// and never starts; the last one is woken.
	f(`
want a
start a ok
withdraw a
want b
start b no
withdraw b →
want c
start c no
release a →c
start b no
start c ok`, "running=c waiting=[]")

	// The kubelet's order when several are still wanted: first come,
	// first started.
	f(`
want a
start a ok
want b
want c
release a →b
start c no
start b ok
release b →c
start c ok`, "running=c waiting=[]")

	// The next in line withdrawn while none runs: the one after it is woken.
	f(`
want a
start a ok
want b
want c
release a →b
withdraw b →c
start c ok`, "running=c waiting=[]")

	// The manifest removed while its new version waits: nothing is left to
	// start, and the turn is empty.
	f(`
want a
start a ok
withdraw a
want b
withdraw b →
release a →
start b ok`, "running=b waiting=[]")

	// A rejected version that never started leaves the queue.
	f(`
want a
start a ok
want b
release b →
release a →`, "running= waiting=[]")

	// Wanted again while being torn down (the manifest came back): it
	// queues anew behind those already waiting.
	f(`
want a
start a ok
withdraw a
want b
want a
release a →b
want a
start a no
start b ok`, "running=b waiting=[a]")

	// Releasing a pod that holds no turn changes nothing.
	f(`
want a
start a ok
release z →`, "running=a waiting=[]")
}

func TestStaticTurnIsPure(t *testing.T) {
	base := stages.StaticTurn{Running: "a", Waiting: []types.UID{"b", "c"}}
	_ = base.Want("d")
	_, _ = base.Withdraw("b")
	_, _ = base.Release("a")
	released, _ := base.Release("a")
	_, _ = released.Start("b")
	if base.Running != "a" || len(base.Waiting) != 2 || base.Waiting[0] != "b" || base.Waiting[1] != "c" {
		t.Fatalf("a transition changed its receiver: %+v", base)
	}
	if !released.MayStart("b") || released.MayStart("c") {
		t.Fatalf("after a's release, b (first in line) and only b may start: %+v", released)
	}
}
