package podspec

import (
	"errors"
	"fmt"
	"strconv"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cri"
)

// ErrConfig classes a container config that cannot be built from the spec
// (an unresolvable reference, a subPath escaping its volume); the status
// shows CreateContainerConfigError. errors.Is finds the class, but the
// message is the cause's alone, as the kubelet's messages for that reason
// are (`configmap "app" not found`): operators and their tools match them.
var ErrConfig = errors.New("invalid container config")

type configError struct{ cause error }

func (e *configError) Error() string        { return e.cause.Error() }
func (e *configError) Unwrap() error        { return e.cause }
func (e *configError) Is(target error) bool { return target == ErrConfig }

// ConfigError classes err as ErrConfig and keeps its message.
func ConfigError(err error) error { return &configError{cause: err} }

// configErrorf is fmt.Errorf classed as ErrConfig.
func configErrorf(format string, args ...any) error {
	return &configError{cause: fmt.Errorf(format, args...)}
}

// Instance is one container instance to build a config for.
type Instance struct {
	Spec    *v1.Container
	Init    bool
	Attempt uint32
	// Env are the objects the environment refers to, read just before the
	// config is built (FetchEnvObjects in stages/); nil without an API
	// server.
	Env *EnvObjects
}

// ContainerConfig builds the CRI config for one container instance.
// imageRef is the resolved image; podIPs are the sandbox's addresses.
func ContainerConfig(pod *v1.Pod, act Instance, imageRef string, podIPs []string, node *Node) (*runtimeapi.ContainerConfig, error) {
	spec := act.Spec
	env, err := containerEnv(pod, spec, act.Env, podIPs, node)
	if err != nil {
		return nil, err
	}
	lookup := func(name string) (string, bool) {
		for i := len(env) - 1; i >= 0; i-- {
			if env[i].Key == name {
				return string(env[i].Value), true
			}
		}
		return "", false
	}
	mounts, err := containerMounts(pod, spec, node, env)
	if err != nil {
		return nil, err
	}
	managed, err := managedMounts(pod, act, podIPs, node)
	if err != nil {
		return nil, err
	}
	mounts = append(mounts, managed...)
	cfg := &runtimeapi.ContainerConfig{
		Metadata:   &runtimeapi.ContainerMetadata{Name: spec.Name, Attempt: act.Attempt},
		Image:      &runtimeapi.ImageSpec{Image: imageRef, UserSpecifiedImage: spec.Image},
		Command:    expandAll(spec.Command, lookup),
		Args:       expandAll(spec.Args, lookup),
		WorkingDir: spec.WorkingDir,
		Envs:       env,
		Mounts:     mounts,
		Labels: map[string]string{
			cri.LabelPodName:       pod.Name,
			cri.LabelPodNamespace:  pod.Namespace,
			cri.LabelPodUID:        string(pod.UID),
			cri.LabelContainerName: spec.Name,
		},
		Annotations: map[string]string{
			cri.AnnotationContainerHash:    HashContainer(spec),
			cri.AnnotationRestartCount:     strconv.FormatUint(uint64(act.Attempt), 10),
			cri.AnnotationTerminationGrace: strconv.FormatInt(GracePeriod(pod), 10),
		},
		LogPath:   ContainerLogPath(spec.Name, act.Attempt),
		Stdin:     spec.Stdin,
		StdinOnce: spec.StdinOnce,
		Tty:       spec.TTY,
		Linux: &runtimeapi.LinuxContainerConfig{
			Resources:       linuxResources(pod, spec, node),
			SecurityContext: containerSecurity(pod, spec, node),
		},
	}
	if act.Init {
		cfg.Annotations[cri.AnnotationInitContainer] = "true"
	}
	return cfg, nil
}

func expandAll(in []string, lookup func(string) (string, bool)) []string {
	if len(in) == 0 {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = expandRefs(s, lookup)
	}
	return out
}

// GracePeriod is the pod's termination grace period in seconds.
func GracePeriod(pod *v1.Pod) int64 {
	if pod.DeletionGracePeriodSeconds != nil {
		return *pod.DeletionGracePeriodSeconds
	}
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		return *g
	}
	return v1.DefaultTerminationGracePeriodSeconds
}

// containerMounts turns volumeMounts into CRI mounts onto the volumes'
// host directories, or onto the bind targets of subPath mounts (which the
// container stage binds before it creates the container).
func containerMounts(pod *v1.Pod, spec *v1.Container, node *Node, env []*runtimeapi.KeyValue) ([]*runtimeapi.Mount, error) {
	binds, err := SubPathBinds(pod, spec, node, env)
	if err != nil {
		return nil, err
	}
	var out []*runtimeapi.Mount
	for _, vm := range spec.VolumeMounts {
		vol := findVolume(pod, vm.Name)
		if vol == nil {
			return nil, configErrorf("volumeMount %q: no volume of that name", vm.Name)
		}
		host, ok := VolumeHostPath(node, pod, vol)
		if !ok {
			return nil, configErrorf("volume %q: unsupported volume type", vm.Name)
		}
		if vm.SubPath != "" || vm.SubPathExpr != "" {
			host, binds = binds[0].Target, binds[1:]
		}
		rro, err := RecursiveReadOnly(&vm)
		if err != nil {
			return nil, err
		}
		out = append(out, &runtimeapi.Mount{
			ContainerPath: vm.MountPath,
			HostPath:      host,
			// Content volumes are always read-only, as the kubelet mounts
			// them: their directory is writable for any user of the pod.
			Readonly:          vm.ReadOnly || IsContentVolume(vol),
			RecursiveReadOnly: rro,
			Propagation:       propagation(vm.MountPropagation),
		})
	}
	return out, nil
}

// RecursiveReadOnly: Enabled asks the runtime for a read-only mount whose
// submounts are read-only too, and fails the container where the runtime
// cannot make one, as the kubelet does; IfPossible is taken as a plain
// read-only mount, since podline does not ask the runtime what it can do.
// The API server's rules are checked here for static pods.
func RecursiveReadOnly(vm *v1.VolumeMount) (bool, error) {
	if vm.RecursiveReadOnly == nil || *vm.RecursiveReadOnly == v1.RecursiveReadOnlyDisabled {
		return false, nil
	}
	if !vm.ReadOnly {
		return false, configErrorf("volumeMount %q: recursiveReadOnly may only be set with readOnly: true", vm.Name)
	}
	if m := vm.MountPropagation; m != nil && *m != v1.MountPropagationNone {
		return false, configErrorf("volumeMount %q: recursiveReadOnly needs mountPropagation None", vm.Name)
	}
	switch *vm.RecursiveReadOnly {
	case v1.RecursiveReadOnlyEnabled:
		return true, nil
	case v1.RecursiveReadOnlyIfPossible:
		return false, nil
	}
	return false, configErrorf("volumeMount %q: unknown recursiveReadOnly %q", vm.Name, *vm.RecursiveReadOnly)
}

func propagation(m *v1.MountPropagationMode) runtimeapi.MountPropagation {
	if m == nil {
		return runtimeapi.MountPropagation_PROPAGATION_PRIVATE
	}
	switch *m {
	case v1.MountPropagationHostToContainer:
		return runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER
	case v1.MountPropagationBidirectional:
		return runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL
	}
	return runtimeapi.MountPropagation_PROPAGATION_PRIVATE
}

func findVolume(pod *v1.Pod, name string) *v1.Volume {
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].Name == name {
			return &pod.Spec.Volumes[i]
		}
	}
	return nil
}
