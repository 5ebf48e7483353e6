//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A running pod's volumes follow the API: an edited configMap reaches its
// configMap and projected files, and a label put on the pod reaches its
// downwardAPI file, each within seconds (on other nodes, within the sync
// period of a minute or more). The container polls its files every
// 100 ms and logs what it sees; the delay is from the API call to the
// container's log line.
func TestClusterVolumesFollowTheAPI(t *testing.T) {
	n := startNode(t)
	n.waitReady(60 * time.Second)
	cms := n.cp.admin.CoreV1().ConfigMaps(n.name)
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: n.name},
		Data: map[string]string{"greeting": "hello"}}
	if _, err := cms.Create(apiCtx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	script := `last=""; while true; do ` +
		`cur="cfg=$(cat /etc/cfg/greeting) proj=$(cat /etc/proj/greeting) labels=$(tr '\n' , < /etc/info/labels)"; ` +
		`if [ "$cur" != "$last" ]; then echo "seen: $cur"; last="$cur"; fi; sleep 0.1; done`
	p := n.apiPod("refresh", script)
	p.Labels = map[string]string{"app": "web"}
	p.Spec.Volumes = []v1.Volume{
		{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
			LocalObjectReference: v1.LocalObjectReference{Name: "settings"},
		}}},
		{Name: "proj", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
			{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "settings"}}},
		}}}},
		{Name: "info", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{Items: []v1.DownwardAPIVolumeFile{
			{Path: "labels", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
		}}}},
	}
	p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{
		{Name: "cfg", MountPath: "/etc/cfg"},
		{Name: "proj", MountPath: "/etc/proj"},
		{Name: "info", MountPath: "/etc/info"},
	}
	n.createPod(p)
	running := n.waitAPIPod(n.name, "refresh", "Running", 60*time.Second, podRunning)

	// seen waits for the container to log what want says and returns
	// when it wrote that line.
	seen := func(what, want string, since time.Time) time.Duration {
		t.Helper()
		var at time.Time
		eventually(t, 60*time.Second, what, func() (bool, string) {
			log := n.agent.readLog(running, "app", 0)
			for _, line := range strings.Split(log, "\n") {
				parts := strings.SplitN(line, " ", 4)
				if len(parts) == 4 && parts[3] == "seen: "+want {
					ts, err := time.Parse(time.RFC3339Nano, parts[0])
					if err != nil {
						return false, err.Error()
					}
					at = ts
					return true, ""
				}
			}
			return false, log
		})
		return at.Sub(since)
	}
	seen("the first content", `cfg=hello proj=hello labels=app="web"`, time.Time{})

	start := time.Now()
	cm.Data["greeting"] = "world"
	if _, err := cms.Update(apiCtx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cmDelay := seen("the edited configMap in both volumes", `cfg=world proj=world labels=app="web"`, start)

	start = time.Now()
	patch := []byte(`{"metadata":{"labels":{"tier":"front"}}}`)
	if _, err := n.cp.admin.CoreV1().Pods(n.name).Patch(apiCtx, "refresh", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	labelDelay := seen("the new label in the downwardAPI file", `cfg=world proj=world labels=app="web",tier="front"`, start)

	t.Logf("configMap edit → container file: %s; pod label → container file: %s", cmDelay.Round(time.Millisecond), labelDelay.Round(time.Millisecond))
	// Event-driven: well inside the minute a periodic sync would take.
	for what, d := range map[string]time.Duration{"configMap": cmDelay, "label": labelDelay} {
		if d > 10*time.Second {
			t.Errorf("%s change took %s to reach the container", what, d)
		}
	}
	if restarts := n.waitAPIPod(n.name, "refresh", "still Running", 10*time.Second, podRunning).Status.ContainerStatuses[0].RestartCount; restarts != 0 {
		t.Errorf("the container restarted %d times", restarts)
	}
}
