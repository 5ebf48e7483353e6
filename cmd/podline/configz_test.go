package main

import (
	"encoding/json"
	"flag"
	"testing"
)

// /configz shows the running configuration in the kubelet's shape, under
// the KubeletConfiguration's field names, and every flag under "podline",
// with header values (credentials) left out of both.
func TestConfigzIsTheKubeletsShape(t *testing.T) {
	var o options
	fs := newFlagSet(&o)
	args := []string{
		"--pod-manifest-path=/etc/static", "--kubeconfig=/k", "--max-pods=250", "--cluster-dns=10.96.0.10",
		"--kube-reserved=cpu=100m,memory=256Mi", "--eviction-hard=memory.available<200Mi,nodefs.available<5%",
		"--register-with-taints=dedicated=db:NoSchedule", "--manifest-url=http://x/pods",
		"--manifest-url-header=Authorization:Bearer s3cret", "--anonymous-auth=false", "--pipeline-window=512",
		"--event-qps=0.5",
	}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	o.flagValues = map[string]string{}
	fs.VisitAll(func(f *flag.Flag) { o.flagValues[f.Name] = f.Value.String() })

	raw, err := json.Marshal(o.configz())
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Kubelet struct {
			StaticPodPath      string              `json:"staticPodPath"`
			StaticPodURLHeader map[string][]string `json:"staticPodURLHeader"`
			MaxPods            int                 `json:"maxPods"`
			ClusterDNS         []string            `json:"clusterDNS"`
			CgroupDriver       string              `json:"cgroupDriver"`
			KubeReserved       map[string]string   `json:"kubeReserved"`
			EvictionHard       map[string]string   `json:"evictionHard"`
			FileCheckFrequency string              `json:"fileCheckFrequency"`
			HealthzPort        int                 `json:"healthzPort"`
			EventRecordQPS     int                 `json:"eventRecordQPS"`
			RegisterWithTaints []struct {
				Key, Value, Effect string
			} `json:"registerWithTaints"`
			Authentication struct {
				Webhook   struct{ Enabled bool }
				Anonymous struct{ Enabled *bool }
			} `json:"authentication"`
			Authorization struct{ Mode string } `json:"authorization"`
		} `json:"kubeletconfig"`
		Podline map[string]string `json:"podline"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	k := got.Kubelet
	if k.StaticPodPath != "/etc/static" || k.MaxPods != 250 || len(k.ClusterDNS) != 1 || k.ClusterDNS[0] != "10.96.0.10" ||
		k.CgroupDriver != "cgroupfs" || k.FileCheckFrequency != "20s" || k.HealthzPort != 10248 {
		t.Errorf("kubeletconfig: %s", raw)
	}
	if k.EventRecordQPS != 1 {
		t.Errorf("eventRecordQPS %d for --event-qps=0.5: want it rounded up, never 0 (no limit)", k.EventRecordQPS)
	}
	if k.KubeReserved["memory"] != "256Mi" || k.KubeReserved["cpu"] != "100m" ||
		k.EvictionHard["memory.available"] != "200Mi" || k.EvictionHard["nodefs.available"] != "5%" {
		t.Errorf("kubeReserved %v, evictionHard %v", k.KubeReserved, k.EvictionHard)
	}
	if len(k.RegisterWithTaints) != 1 || k.RegisterWithTaints[0].Key != "dedicated" || k.RegisterWithTaints[0].Effect != "NoSchedule" {
		t.Errorf("registerWithTaints %+v", k.RegisterWithTaints)
	}
	if !k.Authentication.Webhook.Enabled || k.Authentication.Anonymous.Enabled == nil || *k.Authentication.Anonymous.Enabled ||
		k.Authorization.Mode != "Webhook" {
		t.Errorf("authentication %+v, authorization %+v: want the cluster defaults", k.Authentication, k.Authorization)
	}
	if h := k.StaticPodURLHeader["Authorization"]; len(h) != 1 || h[0] != "<redacted>" {
		t.Errorf("staticPodURLHeader %v: want the name with its value redacted", k.StaticPodURLHeader)
	}
	if got.Podline["pipeline-window"] != "512" || got.Podline["manifest-url-header"] != "Authorization:<redacted>" {
		t.Errorf("podline flags: window %q, header %q", got.Podline["pipeline-window"], got.Podline["manifest-url-header"])
	}
}
