package main

import (
	"math"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podline/podline/internal/redact"
	"github.com/podline/podline/node"
	"github.com/podline/podline/sources"
)

// configz is what /configz shows. Under "kubeletconfig", the running
// configuration as the kubelet's /configz has it: a KubeletConfiguration
// (kubelet.config.k8s.io/v1beta1) holding the fields podline has a flag
// for, which tools read by those names (.kubeletconfig.cgroupDriver,
// .kubeletconfig.staticPodPath). Under "podline", every flag as given, its
// own ones included, with credentials redacted.
func (o *options) configz() map[string]any {
	return map[string]any{"kubeletconfig": o.kubeletConfiguration(), "podline": redacted(o.flagValues)}
}

// kubeletConfiguration is the part of k8s.io/kubelet/config/v1beta1's
// KubeletConfiguration that podline's flags set, with its JSON names. The
// type itself is not imported: its package brings component-base's logging
// and tracing APIs, and with them the Prometheus client and OpenTelemetry,
// into the agent for the sake of one JSON document.
type kubeletConfiguration struct {
	EnableServer              *bool               `json:"enableServer,omitempty"`
	StaticPodPath             string              `json:"staticPodPath,omitempty"`
	FileCheckFrequency        metav1.Duration     `json:"fileCheckFrequency,omitempty"`
	HTTPCheckFrequency        metav1.Duration     `json:"httpCheckFrequency,omitempty"`
	StaticPodURL              string              `json:"staticPodURL,omitempty"`
	StaticPodURLHeader        map[string][]string `json:"staticPodURLHeader,omitempty"`
	Address                   string              `json:"address,omitempty"`
	Port                      int32               `json:"port,omitempty"`
	ReadOnlyPort              int32               `json:"readOnlyPort,omitempty"`
	TLSCertFile               string              `json:"tlsCertFile,omitempty"`
	TLSPrivateKeyFile         string              `json:"tlsPrivateKeyFile,omitempty"`
	TLSCipherSuites           []string            `json:"tlsCipherSuites,omitempty"`
	TLSMinVersion             string              `json:"tlsMinVersion,omitempty"`
	RotateCertificates        bool                `json:"rotateCertificates,omitempty"`
	ServerTLSBootstrap        bool                `json:"serverTLSBootstrap,omitempty"`
	Authentication            kubeletAuthn        `json:"authentication"`
	Authorization             kubeletAuthz        `json:"authorization"`
	HealthzPort               *int32              `json:"healthzPort,omitempty"`
	HealthzBindAddress        string              `json:"healthzBindAddress,omitempty"`
	ClusterDomain             string              `json:"clusterDomain,omitempty"`
	ClusterDNS                []string            `json:"clusterDNS,omitempty"`
	NodeStatusUpdateFrequency metav1.Duration     `json:"nodeStatusUpdateFrequency,omitempty"`
	NodeStatusReportFrequency metav1.Duration     `json:"nodeStatusReportFrequency,omitempty"`
	NodeLeaseDurationSeconds  int32               `json:"nodeLeaseDurationSeconds,omitempty"`
	CgroupsPerQOS             *bool               `json:"cgroupsPerQOS,omitempty"`
	CgroupRoot                string              `json:"cgroupRoot,omitempty"`
	CgroupDriver              string              `json:"cgroupDriver,omitempty"`
	RuntimeRequestTimeout     metav1.Duration     `json:"runtimeRequestTimeout,omitempty"`
	MaxPods                   int32               `json:"maxPods,omitempty"`
	PodPidsLimit              *int64              `json:"podPidsLimit,omitempty"`
	ResolverConfig            *string             `json:"resolvConf,omitempty"`
	KubeAPIQPS                *int32              `json:"kubeAPIQPS,omitempty"`
	KubeAPIBurst              int32               `json:"kubeAPIBurst,omitempty"`
	EventRecordQPS            *int32              `json:"eventRecordQPS,omitempty"`
	EventBurst                int32               `json:"eventBurst,omitempty"`
	SerializeImagePulls       *bool               `json:"serializeImagePulls,omitempty"`
	MaxParallelImagePulls     *int32              `json:"maxParallelImagePulls,omitempty"`
	KubeReserved              map[string]string   `json:"kubeReserved,omitempty"`
	SystemReserved            map[string]string   `json:"systemReserved,omitempty"`
	EvictionHard              map[string]string   `json:"evictionHard,omitempty"`
	EnableDebuggingHandlers   *bool               `json:"enableDebuggingHandlers,omitempty"`
	AllowedUnsafeSysctls      []string            `json:"allowedUnsafeSysctls,omitempty"`
	RegisterNode              *bool               `json:"registerNode,omitempty"`
	RegisterWithTaints        []v1.Taint          `json:"registerWithTaints,omitempty"`
	SeccompDefault            *bool               `json:"seccompDefault,omitempty"`
	ContainerRuntimeEndpoint  string              `json:"containerRuntimeEndpoint"`
	ImageServiceEndpoint      string              `json:"imageServiceEndpoint,omitempty"`
	PodLogsDir                string              `json:"podLogsDir,omitempty"`

	// The check that a pod may use an image already on the node.
	ImagePullCredentialsVerificationPolicy string   `json:"imagePullCredentialsVerificationPolicy,omitempty"`
	PreloadedImagesVerificationAllowlist   []string `json:"preloadedImagesVerificationAllowlist,omitempty"`
}

type kubeletAuthn struct {
	X509 struct {
		ClientCAFile string `json:"clientCAFile,omitempty"`
	} `json:"x509"`
	Webhook struct {
		Enabled  *bool           `json:"enabled,omitempty"`
		CacheTTL metav1.Duration `json:"cacheTTL,omitempty"`
	} `json:"webhook"`
	Anonymous struct {
		Enabled *bool `json:"enabled,omitempty"`
	} `json:"anonymous"`
}

type kubeletAuthz struct {
	Mode    string `json:"mode,omitempty"`
	Webhook struct {
		CacheAuthorizedTTL   metav1.Duration `json:"cacheAuthorizedTTL,omitempty"`
		CacheUnauthorizedTTL metav1.Duration `json:"cacheUnauthorizedTTL,omitempty"`
	} `json:"webhook"`
}

func (o *options) kubeletConfiguration() kubeletConfiguration {
	cluster := o.kubeconfig != ""
	s := &o.serve
	c := kubeletConfiguration{
		EnableServer:              ptr(true),
		StaticPodPath:             o.podManifestPath,
		FileCheckFrequency:        duration(o.fileCheckFrequency),
		HTTPCheckFrequency:        duration(o.httpCheckFrequency),
		StaticPodURL:              redact.URL(o.manifestURL),
		Address:                   o.address,
		Port:                      int32(o.port),
		ReadOnlyPort:              int32(o.readOnlyPort),
		TLSCertFile:               s.tlsCertFile,
		TLSPrivateKeyFile:         s.tlsKeyFile,
		TLSCipherSuites:           s.tlsCipherSuites,
		TLSMinVersion:             s.tlsMinVersion,
		RotateCertificates:        s.rotateCerts,
		ServerTLSBootstrap:        s.rotateServerCerts,
		HealthzPort:               ptr(int32(o.healthzPort)),
		HealthzBindAddress:        o.healthzBindAddress,
		ClusterDomain:             o.clusterDomain,
		ClusterDNS:                o.clusterDNS,
		NodeStatusUpdateFrequency: duration(o.nodeStatusUpdateFrequency),
		NodeStatusReportFrequency: duration(o.nodeStatusReportFrequency),
		NodeLeaseDurationSeconds:  int32(o.nodeLeaseDurationSeconds),
		CgroupsPerQOS:             ptr(o.cgroupsPerQOS),
		CgroupRoot:                o.cgroupRoot,
		// The driver in use: the runtime's once it reported one.
		CgroupDriver:             o.cgroupDriver,
		RuntimeRequestTimeout:    duration(o.requestTimeout),
		MaxPods:                  int32(o.maxPods),
		PodPidsLimit:             ptr(o.podMaxPids),
		ResolverConfig:           ptr(o.resolvConf),
		KubeAPIQPS:               ptr(wholeQPS(o.kubeAPIQPS)),
		KubeAPIBurst:             int32(o.kubeAPIBurst),
		EventRecordQPS:           ptr(wholeQPS(o.eventQPS)),
		EventBurst:               int32(o.eventBurst),
		SerializeImagePulls:      ptr(o.serializeImagePulls),
		KubeReserved:             pairs(o.kubeReserved, "="),
		SystemReserved:           pairs(o.systemReserved, "="),
		EvictionHard:             pairs(o.evictionHard, "<"),
		EnableDebuggingHandlers:  ptr(s.debuggingHandlers),
		AllowedUnsafeSysctls:     o.allowedUnsafeSysctls,
		RegisterNode:             ptr(o.registerNode),
		SeccompDefault:           ptr(o.seccompDefault),
		ContainerRuntimeEndpoint: o.runtimeEndpoint,
		ImageServiceEndpoint:     o.imageEndpoint,
		PodLogsDir:               o.podLogsDir,
	}
	c.Authentication.X509.ClientCAFile = s.clientCAFile
	c.Authentication.Webhook.Enabled = ptr(s.tokenWebhook.or(cluster))
	c.Authentication.Webhook.CacheTTL = duration(s.tokenWebhookTTL)
	c.Authentication.Anonymous.Enabled = ptr(s.anonymousAuth)
	c.Authorization.Mode = s.mode(cluster)
	c.Authorization.Webhook.CacheAuthorizedTTL = duration(s.authzAllowedTTL)
	c.Authorization.Webhook.CacheUnauthorizedTTL = duration(s.authzDeniedTTL)
	if p, err := o.imageCheck.checkPolicy(); err == nil {
		c.ImagePullCredentialsVerificationPolicy = p.String()
		c.PreloadedImagesVerificationAllowlist = o.imageCheck.allowlist
	}
	if o.maxParallelImagePulls > 0 {
		c.MaxParallelImagePulls = ptr(int32(o.maxParallelImagePulls))
	}
	if taints, err := node.ParseTaints(strings.Join(o.registerWithTaints, ",")); err == nil {
		c.RegisterWithTaints = taints
	}
	// Header values may be credentials: their names only.
	if headers, err := sources.ParseHeaders(o.manifestURLHeader); err == nil && len(headers) > 0 {
		c.StaticPodURLHeader = make(map[string][]string, len(headers))
		for k := range headers {
			c.StaticPodURLHeader[k] = []string{redact.Mark}
		}
	}
	return c
}

func duration(d time.Duration) metav1.Duration { return metav1.Duration{Duration: d} }

func ptr[T any](v T) *T { return &v }

// wholeQPS is a --kube-api-qps or --event-qps as the KubeletConfiguration's
// whole-number field holds it: rounded up, since 0 there means no limit
// (the exact value is under "podline").
func wholeQPS(q float64) int32 {
	if q >= math.MaxInt32 {
		return math.MaxInt32
	}
	return int32(math.Ceil(q))
}

// pairs reads "a=1,b=2" (sep "=") or "a<1,b<2" (sep "<") as the map the
// KubeletConfiguration keeps it in; nil for an empty flag.
func pairs(s, sep string) map[string]string {
	var out map[string]string
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), sep)
		if !ok || k == "" {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out
}
