package podspec

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

var securityNode = &Node{Name: "node-a", RootDir: "/var/lib/podline"}

func i64(v int64) *runtimeapi.Int64Value { return &runtimeapi.Int64Value{Value: v} }

var (
	unconfined     = &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Unconfined}
	runtimeDefault = &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_RuntimeDefault}
)

// confined is the security context of a container that asks for nothing:
// its pod's namespaces, no seccomp profile, /proc masked as by default.
func confined(mutate func(*runtimeapi.LinuxContainerSecurityContext)) *runtimeapi.LinuxContainerSecurityContext {
	sec := &runtimeapi.LinuxContainerSecurityContext{
		NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD,
			Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD},
		Seccomp:       unconfined,
		MaskedPaths:   DefaultMaskedPaths,
		ReadonlyPaths: DefaultReadonlyPaths,
	}
	if mutate != nil {
		mutate(sec)
	}
	return sec
}

func TestContainerSecurity(t *testing.T) {
	f := func(name string, node *Node, psc *v1.PodSecurityContext, sc *v1.SecurityContext, want *runtimeapi.LinuxContainerSecurityContext) {
		t.Helper()
		pod := unitPod(func(p *v1.Pod) {
			p.Spec.SecurityContext = psc
			p.Spec.Containers[0].SecurityContext = sc
		})
		got := containerSecurity(pod, &pod.Spec.Containers[0], node)
		if !proto.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, prototext.Format(got), prototext.Format(want))
		}
	}
	yes, no := ptrOf(true), ptrOf(false)
	n := securityNode

	f("nothing set", n, nil, nil, confined(nil))
	f("empty contexts", n, &v1.PodSecurityContext{}, &v1.SecurityContext{}, confined(nil))

	f("user and group from the pod", n, &v1.PodSecurityContext{RunAsUser: ptrOf(int64(1000)), RunAsGroup: ptrOf(int64(3000))}, nil,
		confined(func(s *runtimeapi.LinuxContainerSecurityContext) { s.RunAsUser, s.RunAsGroup = i64(1000), i64(3000) }))
	f("user and group from the container", n, nil, &v1.SecurityContext{RunAsUser: ptrOf(int64(1001)), RunAsGroup: ptrOf(int64(3001))},
		confined(func(s *runtimeapi.LinuxContainerSecurityContext) { s.RunAsUser, s.RunAsGroup = i64(1001), i64(3001) }))
	f("the container's user and group win", n, &v1.PodSecurityContext{RunAsUser: ptrOf(int64(1000)), RunAsGroup: ptrOf(int64(3000))},
		&v1.SecurityContext{RunAsUser: ptrOf(int64(0)), RunAsGroup: ptrOf(int64(7))},
		confined(func(s *runtimeapi.LinuxContainerSecurityContext) { s.RunAsUser, s.RunAsGroup = i64(0), i64(7) }))
	f("each field on its own: the pod's group, the container's user", n, &v1.PodSecurityContext{RunAsUser: ptrOf(int64(1000)), RunAsGroup: ptrOf(int64(3000))},
		&v1.SecurityContext{RunAsUser: ptrOf(int64(1001))},
		confined(func(s *runtimeapi.LinuxContainerSecurityContext) { s.RunAsUser, s.RunAsGroup = i64(1001), i64(3000) }))

	f("supplementalGroups in order", n, &v1.PodSecurityContext{SupplementalGroups: []int64{6, 5}}, nil,
		confined(func(s *runtimeapi.LinuxContainerSecurityContext) { s.SupplementalGroups = []int64{6, 5} }))
	f("fsGroup alone is a supplemental group", n, &v1.PodSecurityContext{FSGroup: ptrOf(int64(2000))}, nil,
		confined(func(s *runtimeapi.LinuxContainerSecurityContext) { s.SupplementalGroups = []int64{2000} }))
	f("fsGroup comes first", n, &v1.PodSecurityContext{FSGroup: ptrOf(int64(2000)), SupplementalGroups: []int64{6, 5}}, nil,
		confined(func(s *runtimeapi.LinuxContainerSecurityContext) { s.SupplementalGroups = []int64{2000, 6, 5} }))
	f("groups policy Strict", n, &v1.PodSecurityContext{SupplementalGroupsPolicy: ptrOf(v1.SupplementalGroupsPolicyStrict)}, nil,
		confined(func(s *runtimeapi.LinuxContainerSecurityContext) {
			s.SupplementalGroupsPolicy = runtimeapi.SupplementalGroupsPolicy_Strict
		}))
	f("groups policy Merge", n, &v1.PodSecurityContext{SupplementalGroupsPolicy: ptrOf(v1.SupplementalGroupsPolicyMerge)}, nil, confined(nil))

	f("container flags", n, nil, &v1.SecurityContext{Privileged: yes, ReadOnlyRootFilesystem: yes, AllowPrivilegeEscalation: no,
		Capabilities: &v1.Capabilities{Add: []v1.Capability{"NET_ADMIN", "SYS_TIME"}, Drop: []v1.Capability{"ALL"}}},
		confined(func(s *runtimeapi.LinuxContainerSecurityContext) {
			s.Privileged, s.ReadonlyRootfs, s.NoNewPrivs = true, true, true
			s.Capabilities = &runtimeapi.Capability{AddCapabilities: []string{"NET_ADMIN", "SYS_TIME"}, DropCapabilities: []string{"ALL"}}
		}))
	f("privilege escalation allowed", n, nil, &v1.SecurityContext{Privileged: no, AllowPrivilegeEscalation: yes}, confined(nil))
	f("drop only", n, nil, &v1.SecurityContext{Capabilities: &v1.Capabilities{Drop: []v1.Capability{"ALL"}}},
		confined(func(s *runtimeapi.LinuxContainerSecurityContext) {
			s.Capabilities = &runtimeapi.Capability{DropCapabilities: []string{"ALL"}}
		}))

	f("procMount Default", n, nil, &v1.SecurityContext{ProcMount: ptrOf(v1.DefaultProcMount)}, confined(nil))
	f("procMount Unmasked", n, nil, &v1.SecurityContext{ProcMount: ptrOf(v1.UnmaskedProcMount)},
		confined(func(s *runtimeapi.LinuxContainerSecurityContext) { s.MaskedPaths, s.ReadonlyPaths = nil, nil }))
	thermal := *n
	thermal.Security.ExtraMaskedPaths = []string{"/sys/devices/system/cpu/cpu0/thermal_throttle"}
	f("the host's thermal_throttle directories are masked too", &thermal, nil, nil,
		confined(func(s *runtimeapi.LinuxContainerSecurityContext) {
			s.MaskedPaths = append(append([]string(nil), DefaultMaskedPaths...), "/sys/devices/system/cpu/cpu0/thermal_throttle")
		}))

	f("seccomp from the pod", n, &v1.PodSecurityContext{SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault}}, nil,
		confined(func(s *runtimeapi.LinuxContainerSecurityContext) { s.Seccomp = runtimeDefault }))
	f("apparmor from the container", n, nil, &v1.SecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeRuntimeDefault}},
		confined(func(s *runtimeapi.LinuxContainerSecurityContext) {
			s.Apparmor, s.ApparmorProfile = runtimeDefault, "runtime/default"
		}))

	// The pod-level fields a container has no field for stay the pod's.
	f("everything at once", n, &v1.PodSecurityContext{RunAsUser: ptrOf(int64(1000)), RunAsNonRoot: yes, FSGroup: ptrOf(int64(2000)),
		SupplementalGroups: []int64{4000}, SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault}},
		&v1.SecurityContext{RunAsGroup: ptrOf(int64(3000)), SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeUnconfined},
			AllowPrivilegeEscalation: no, Capabilities: &v1.Capabilities{Drop: []v1.Capability{"ALL"}}},
		confined(func(s *runtimeapi.LinuxContainerSecurityContext) {
			s.RunAsUser, s.RunAsGroup, s.SupplementalGroups = i64(1000), i64(3000), []int64{2000, 4000}
			s.NoNewPrivs, s.Capabilities = true, &runtimeapi.Capability{DropCapabilities: []string{"ALL"}}
		}))
}

func TestContainerSecurityKeepsNoSpecSlice(t *testing.T) {
	pod := unitPod(func(p *v1.Pod) {
		p.Spec.SecurityContext = &v1.PodSecurityContext{SupplementalGroups: []int64{5, 6}}
	})
	node := *securityNode
	node.Security.ExtraMaskedPaths = []string{"/extra"}
	sec := containerSecurity(pod, &pod.Spec.Containers[0], &node)
	sec.SupplementalGroups[0] = 99
	sec.MaskedPaths[0], sec.ReadonlyPaths[0] = "changed", "changed"
	again := containerSecurity(pod, &pod.Spec.Containers[0], &node)
	if pod.Spec.SecurityContext.SupplementalGroups[0] != 5 || DefaultMaskedPaths[0] == "changed" ||
		DefaultReadonlyPaths[0] == "changed" || again.MaskedPaths[0] == "changed" {
		t.Errorf("the security context shares a slice: groups %v, masked %v, read-only %v",
			pod.Spec.SecurityContext.SupplementalGroups, DefaultMaskedPaths, DefaultReadonlyPaths)
	}
}

func TestSeccompProfile(t *testing.T) {
	f := func(name string, seccompDefault bool, pod, container *v1.SeccompProfile, want *runtimeapi.SecurityProfile) {
		t.Helper()
		node := *securityNode
		node.Security.SeccompDefault = seccompDefault
		if got := seccompProfile(pod, container, &node); !proto.Equal(got, want) {
			t.Errorf("%s: got %v, want %v", name, got, want)
		}
	}
	rd := &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault}
	un := &v1.SeccompProfile{Type: v1.SeccompProfileTypeUnconfined}
	local := func(name string) *v1.SeccompProfile {
		return &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost, LocalhostProfile: &name}
	}
	localRef := func(ref string) *runtimeapi.SecurityProfile {
		return &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost, LocalhostRef: ref}
	}

	f("none: unconfined", false, nil, nil, unconfined)
	f("none with --seccomp-default", true, nil, nil, runtimeDefault)
	f("pod RuntimeDefault", false, rd, nil, runtimeDefault)
	f("container RuntimeDefault", false, nil, rd, runtimeDefault)
	f("container Unconfined wins over the pod", false, rd, un, unconfined)
	f("container RuntimeDefault wins over the pod", false, un, rd, runtimeDefault)
	f("an explicit Unconfined wins over --seccomp-default", true, un, nil, unconfined)
	f("container Unconfined wins over --seccomp-default", true, nil, un, unconfined)
	f("Localhost beneath <root-dir>/seccomp", false, local("profiles/audit.json"), nil,
		localRef("/var/lib/podline/seccomp/profiles/audit.json"))
	f("container Localhost wins over the pod's", false, local("pod.json"), local("ctr.json"),
		localRef("/var/lib/podline/seccomp/ctr.json"))
	f("unknown type: unconfined", true, &v1.SeccompProfile{Type: "Bogus"}, nil, unconfined)
}

func TestAppArmorProfileOf(t *testing.T) {
	f := func(name string, annotation string, psc *v1.AppArmorProfile, sc *v1.AppArmorProfile, want *runtimeapi.SecurityProfile, wantString string) {
		t.Helper()
		pod := unitPod(func(p *v1.Pod) {
			if annotation != "" {
				p.Annotations = map[string]string{v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + "app": annotation}
			}
			if psc != nil {
				p.Spec.SecurityContext = &v1.PodSecurityContext{AppArmorProfile: psc}
			}
			if sc != nil {
				p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{AppArmorProfile: sc}
			}
		})
		sec := containerSecurity(pod, &pod.Spec.Containers[0], securityNode)
		if !proto.Equal(sec.GetApparmor(), want) || sec.GetApparmorProfile() != wantString {
			t.Errorf("%s: got %v %q, want %v %q", name, sec.GetApparmor(), sec.GetApparmorProfile(), want, wantString)
		}
	}
	rd := &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeRuntimeDefault}
	un := &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeUnconfined}
	name := "k8s-nginx"
	local := &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeLocalhost, LocalhostProfile: &name}
	localSP := &runtimeapi.SecurityProfile{ProfileType: runtimeapi.SecurityProfile_Localhost, LocalhostRef: "k8s-nginx"}

	f("none: the runtime decides", "", nil, nil, nil, "")
	f("pod field", "", rd, nil, runtimeDefault, "runtime/default")
	f("container field wins over the pod", "", rd, un, unconfined, "unconfined")
	f("container Localhost", "", nil, local, localSP, "localhost/k8s-nginx")
	f("annotation wins over the pod field", "localhost/k8s-nginx", rd, nil, localSP, "localhost/k8s-nginx")
	f("container field wins over the annotation", "unconfined", nil, rd, runtimeDefault, "runtime/default")
	f("annotation runtime/default", "runtime/default", nil, nil, runtimeDefault, "runtime/default")
	f("annotation unconfined", "unconfined", rd, nil, unconfined, "unconfined")
	f("an unreadable annotation falls back to the pod", "docker-default", un, nil, unconfined, "unconfined")
}

func TestCheckAppArmor(t *testing.T) {
	f := func(name string, host bool, mutate func(*v1.Pod), want string) {
		t.Helper()
		node := *securityNode
		node.Security.AppArmor = host
		err := CheckAppArmor(unitPod(mutate), &node)
		if got := errString(err); got != want {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
	podProfile := func(p *v1.AppArmorProfile) func(*v1.Pod) {
		return func(pod *v1.Pod) { pod.Spec.SecurityContext = &v1.PodSecurityContext{AppArmorProfile: p} }
	}
	initProfile := func(p *v1.AppArmorProfile) func(*v1.Pod) {
		return func(pod *v1.Pod) {
			pod.Spec.InitContainers = []v1.Container{{Name: "init", SecurityContext: &v1.SecurityContext{AppArmorProfile: p}}}
		}
	}
	annotation := func(value string) func(*v1.Pod) {
		return func(pod *v1.Pod) {
			pod.Annotations = map[string]string{v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix + "app": value}
		}
	}
	rd := &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeRuntimeDefault}
	un := &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeUnconfined}
	blank := " "
	const noHost = "AppArmor is not enabled on the host"

	f("no profile, no AppArmor", false, nil, "")
	f("Unconfined needs no AppArmor", false, podProfile(un), "")
	f("annotation unconfined needs no AppArmor", false, annotation("unconfined"), "")
	f("pod RuntimeDefault without AppArmor", false, podProfile(rd), noHost)
	f("init container RuntimeDefault without AppArmor", false, initProfile(rd), noHost)
	f("annotation without AppArmor", false, annotation("runtime/default"), noHost)
	f("an unreadable annotation still asks for AppArmor", false, annotation("docker-default"), noHost)
	f("pod RuntimeDefault with AppArmor", true, podProfile(rd), "")
	f("annotation with AppArmor", true, annotation("localhost/k8s-nginx"), "")
	f("blank Localhost name", true, podProfile(&v1.AppArmorProfile{Type: v1.AppArmorProfileTypeLocalhost, LocalhostProfile: &blank}),
		"invalid empty AppArmor profile name for container app")
	f("empty annotation name", true, annotation("localhost/"), "invalid empty AppArmor profile name for container app")
}

func TestCheckContainerSecurity(t *testing.T) {
	f := func(name string, psc *v1.PodSecurityContext, sc *v1.SecurityContext, annotations map[string]string, want string) {
		t.Helper()
		pod := unitPod(func(p *v1.Pod) {
			p.Annotations = annotations
			p.Spec.SecurityContext = psc
			p.Spec.Containers[0].SecurityContext = sc
		})
		err := CheckContainerSecurity(pod, &pod.Spec.Containers[0])
		if want != "" && !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v does not wrap ErrConfig", name, err)
		}
		if got := errString(err); !strings.HasSuffix(got, want) || (want == "") != (got == "") {
			t.Errorf("%s: got %q, want one ending %q", name, got, want)
		}
	}
	seccomp := func(typ v1.SeccompProfileType, name *string) *v1.SeccompProfile {
		return &v1.SeccompProfile{Type: typ, LocalhostProfile: name}
	}

	f("nothing set", nil, nil, nil, "")
	f("everything supported", &v1.PodSecurityContext{SupplementalGroupsPolicy: ptrOf(v1.SupplementalGroupsPolicyStrict),
		SeccompProfile: seccomp(v1.SeccompProfileTypeLocalhost, ptrOf("a/b.json"))},
		&v1.SecurityContext{ProcMount: ptrOf(v1.DefaultProcMount), AppArmorProfile: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeRuntimeDefault}}, nil, "")
	f("unknown groups policy", &v1.PodSecurityContext{SupplementalGroupsPolicy: ptrOf(v1.SupplementalGroupsPolicy("Loose"))}, nil, nil,
		"unsupported supplementalGroupsPolicy: Loose")
	f("Localhost seccomp without a name", &v1.PodSecurityContext{SeccompProfile: seccomp(v1.SeccompProfileTypeLocalhost, nil)}, nil, nil,
		"localhostProfile must be set if seccompProfile type is Localhost")
	f("Localhost seccomp with an empty name", nil, &v1.SecurityContext{SeccompProfile: seccomp(v1.SeccompProfileTypeLocalhost, ptrOf(""))}, nil,
		"localhostProfile must be set if seccompProfile type is Localhost")
	f("Localhost seccomp climbing out", nil, &v1.SecurityContext{SeccompProfile: seccomp(v1.SeccompProfileTypeLocalhost, ptrOf("../../etc/x"))}, nil,
		`seccompProfile localhostProfile "../../etc/x" must be a relative path without '..'`)
	f("Localhost seccomp absolute", &v1.PodSecurityContext{SeccompProfile: seccomp(v1.SeccompProfileTypeLocalhost, ptrOf("/etc/x"))}, nil, nil,
		`seccompProfile localhostProfile "/etc/x" must be a relative path without '..'`)
	f("the container's seccomp is the one checked", &v1.PodSecurityContext{SeccompProfile: seccomp(v1.SeccompProfileTypeLocalhost, nil)},
		&v1.SecurityContext{SeccompProfile: seccomp(v1.SeccompProfileTypeRuntimeDefault, nil)}, nil, "")
	f("Localhost AppArmor without a name", nil, &v1.SecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: v1.AppArmorProfileTypeLocalhost}}, nil,
		"missing localhost apparmor profile name")
	f("unknown AppArmor type", &v1.PodSecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: "Bogus"}}, nil, nil,
		`unknown apparmor profile type: "Bogus"`)
	f("procMount Unmasked", nil, &v1.SecurityContext{ProcMount: ptrOf(v1.UnmaskedProcMount)}, nil,
		"procMount Unmasked needs a user namespace of the pod's own (hostUsers: false), which podline does not create")
}

func TestVerifyRunAsNonRoot(t *testing.T) {
	f := func(name string, psc *v1.PodSecurityContext, sc *v1.SecurityContext, img *runtimeapi.Image, want string) {
		t.Helper()
		pod := unitPod(func(p *v1.Pod) {
			p.Spec.SecurityContext = psc
			p.Spec.Containers[0].SecurityContext = sc
		})
		if got := errString(VerifyRunAsNonRoot(pod, &pod.Spec.Containers[0], img)); got != want {
			t.Errorf("%s:\n got %q\nwant %q", name, got, want)
		}
	}
	nonRoot := &v1.PodSecurityContext{RunAsNonRoot: ptrOf(true)}
	uid := func(v int64) *runtimeapi.Image { return &runtimeapi.Image{Id: "sha256:1", Uid: i64(v)} }
	user := func(name string) *runtimeapi.Image { return &runtimeapi.Image{Id: "sha256:1", Username: name} }
	const (
		asRoot     = `container has runAsNonRoot and image will run as root (pod: "web_default(uid-web)", container: app)`
		breaks     = `container's runAsUser breaks non-root policy (pod: "web_default(uid-web)", container: app)`
		nonNumeric = `container has runAsNonRoot and image has non-numeric user (%s), cannot verify user is non-root (pod: "web_default(uid-web)", container: app)`
	)

	f("no policy: root is fine", nil, nil, uid(0), "")
	f("runAsNonRoot false", &v1.PodSecurityContext{RunAsNonRoot: ptrOf(false)}, nil, uid(0), "")
	f("image uid 0", nonRoot, nil, uid(0), asRoot)
	f("image uid 1000", nonRoot, nil, uid(1000), "")
	f("image without a user runs as root", nonRoot, nil, &runtimeapi.Image{Id: "sha256:1"}, asRoot)
	f("an image the runtime does not know is taken as root", nonRoot, nil, nil, asRoot)
	f("image user nobody", nonRoot, nil, user("nobody"), strings.Replace(nonNumeric, "%s", "nobody", 1))
	// The runtime gives a numeric USER as a uid; a name that looks like a
	// number is still only a name in /etc/passwd.
	f("image user name 1000", nonRoot, nil, user("1000"), strings.Replace(nonNumeric, "%s", "1000", 1))
	f("image uid beyond the valid range", nonRoot, nil, uid(1<<32),
		`container has runAsNonRoot and image has an invalid user id (4294967296). (Must be 1-(2147483647)): must be between 0 and 2147483647, inclusive (pod: "web_default(uid-web)", container: app)`)
	f("runAsNonRoot on the container", nil, &v1.SecurityContext{RunAsNonRoot: ptrOf(true)}, uid(0), asRoot)
	f("the container turns the pod's policy off", nonRoot, &v1.SecurityContext{RunAsNonRoot: ptrOf(false)}, uid(0), "")
	f("runAsUser 1000 overrides a root image", &v1.PodSecurityContext{RunAsNonRoot: ptrOf(true), RunAsUser: ptrOf(int64(1000))}, nil, uid(0), "")
	f("a container runAsUser 1000 overrides a root image", nonRoot, &v1.SecurityContext{RunAsUser: ptrOf(int64(1000))}, user("nobody"), "")
	f("runAsUser 0", &v1.PodSecurityContext{RunAsNonRoot: ptrOf(true), RunAsUser: ptrOf(int64(0))}, nil, uid(1000), breaks)
	f("a container runAsUser 0 overrides the pod's 1000", &v1.PodSecurityContext{RunAsNonRoot: ptrOf(true), RunAsUser: ptrOf(int64(1000))},
		&v1.SecurityContext{RunAsUser: ptrOf(int64(0))}, uid(1000), breaks)
}

func TestNeedsImageUser(t *testing.T) {
	f := func(name string, psc *v1.PodSecurityContext, sc *v1.SecurityContext, want bool) {
		t.Helper()
		pod := unitPod(func(p *v1.Pod) {
			p.Spec.SecurityContext = psc
			p.Spec.Containers[0].SecurityContext = sc
		})
		if got := NeedsImageUser(pod, &pod.Spec.Containers[0]); got != want {
			t.Errorf("%s: got %v, want %v", name, got, want)
		}
	}
	f("nothing set", nil, nil, false)
	f("runAsNonRoot", &v1.PodSecurityContext{RunAsNonRoot: ptrOf(true)}, nil, true)
	f("runAsNonRoot false", &v1.PodSecurityContext{RunAsNonRoot: ptrOf(false)}, nil, false)
	f("runAsNonRoot with a pod user", &v1.PodSecurityContext{RunAsNonRoot: ptrOf(true), RunAsUser: ptrOf(int64(5))}, nil, false)
	f("runAsNonRoot with a container user", &v1.PodSecurityContext{RunAsNonRoot: ptrOf(true)}, &v1.SecurityContext{RunAsUser: ptrOf(int64(0))}, false)
	f("a group without a user", &v1.PodSecurityContext{RunAsGroup: ptrOf(int64(3000))}, nil, true)
	f("a container group without a user", nil, &v1.SecurityContext{RunAsGroup: ptrOf(int64(3000))}, true)
	f("a group with a user", &v1.PodSecurityContext{RunAsUser: ptrOf(int64(1000))}, &v1.SecurityContext{RunAsGroup: ptrOf(int64(3000))}, false)
}

func TestWithImageUser(t *testing.T) {
	f := func(name string, sec *runtimeapi.LinuxContainerSecurityContext, img *runtimeapi.Image, want *runtimeapi.LinuxContainerSecurityContext) {
		t.Helper()
		WithImageUser(sec, img)
		if !proto.Equal(sec, want) {
			t.Errorf("%s: got %s, want %s", name, prototext.Format(sec), prototext.Format(want))
		}
	}
	img := &runtimeapi.Image{Id: "sha256:1", Uid: i64(1000)}
	named := &runtimeapi.Image{Id: "sha256:1", Username: "nobody"}
	f("no group: the runtime reads the image itself", &runtimeapi.LinuxContainerSecurityContext{}, img, &runtimeapi.LinuxContainerSecurityContext{})
	f("a group takes the image's uid", &runtimeapi.LinuxContainerSecurityContext{RunAsGroup: i64(3000)}, img,
		&runtimeapi.LinuxContainerSecurityContext{RunAsGroup: i64(3000), RunAsUser: i64(1000)})
	f("a group takes the image's user name", &runtimeapi.LinuxContainerSecurityContext{RunAsGroup: i64(3000)}, named,
		&runtimeapi.LinuxContainerSecurityContext{RunAsGroup: i64(3000), RunAsUsername: "nobody"})
	f("an image without a user is root's", &runtimeapi.LinuxContainerSecurityContext{RunAsGroup: i64(3000)}, &runtimeapi.Image{Id: "sha256:1"},
		&runtimeapi.LinuxContainerSecurityContext{RunAsGroup: i64(3000), RunAsUser: i64(0)})
	f("a user of the pod's own is kept", &runtimeapi.LinuxContainerSecurityContext{RunAsGroup: i64(3000), RunAsUser: i64(5)}, img,
		&runtimeapi.LinuxContainerSecurityContext{RunAsGroup: i64(3000), RunAsUser: i64(5)})
	WithImageUser(nil, img)
}

func TestSandboxSecurity(t *testing.T) {
	f := func(name string, mutate func(*v1.Pod), want *runtimeapi.LinuxSandboxSecurityContext) {
		t.Helper()
		want.NamespaceOptions = &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD,
			Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD}
		want.Seccomp = runtimeDefault
		got := SandboxConfig(unitPod(mutate), 0, sandboxNode).GetLinux().GetSecurityContext()
		if !proto.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, prototext.Format(got), prototext.Format(want))
		}
	}
	psc := func(sc *v1.PodSecurityContext) func(*v1.Pod) { return func(p *v1.Pod) { p.Spec.SecurityContext = sc } }

	f("nothing set: still the runtime's seccomp profile", nil, &runtimeapi.LinuxSandboxSecurityContext{})
	f("a container's seccomp does not reach the sandbox", func(p *v1.Pod) {
		p.Spec.SecurityContext = &v1.PodSecurityContext{SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeUnconfined}}
	}, &runtimeapi.LinuxSandboxSecurityContext{})
	f("user, group, fsGroup first", psc(&v1.PodSecurityContext{RunAsUser: ptrOf(int64(1000)), RunAsGroup: ptrOf(int64(3000)),
		FSGroup: ptrOf(int64(2000)), SupplementalGroups: []int64{4000, 5000}}),
		&runtimeapi.LinuxSandboxSecurityContext{RunAsUser: i64(1000), RunAsGroup: i64(3000), SupplementalGroups: []int64{2000, 4000, 5000}})
	f("fsGroup alone", psc(&v1.PodSecurityContext{FSGroup: ptrOf(int64(2000))}),
		&runtimeapi.LinuxSandboxSecurityContext{SupplementalGroups: []int64{2000}})
	f("a group without a user is left to the pause image", psc(&v1.PodSecurityContext{RunAsGroup: ptrOf(int64(3000))}),
		&runtimeapi.LinuxSandboxSecurityContext{})
	f("groups policy", psc(&v1.PodSecurityContext{SupplementalGroupsPolicy: ptrOf(v1.SupplementalGroupsPolicyStrict)}),
		&runtimeapi.LinuxSandboxSecurityContext{SupplementalGroupsPolicy: runtimeapi.SupplementalGroupsPolicy_Strict})
	f("privileged when a container is", func(p *v1.Pod) {
		p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{Privileged: ptrOf(true), RunAsUser: ptrOf(int64(7))}
	}, &runtimeapi.LinuxSandboxSecurityContext{Privileged: true})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
