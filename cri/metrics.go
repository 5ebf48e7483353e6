package cri

import "github.com/VictoriaMetrics/metrics"

// op names one CRI call and owns its latency histogram. All ops exist up
// front so that the hot path never looks a metric up by name.
type op struct {
	name     string
	duration *metrics.Histogram
}

func newOp(name string) *op {
	return &op{
		name:     name,
		duration: metrics.NewHistogram(`podline_cri_request_duration_seconds{op="` + name + `"}`),
	}
}

var (
	opVersion             = newOp("Version")
	opStatus              = newOp("Status")
	opRuntimeConfig       = newOp("RuntimeConfig")
	opRunPodSandbox       = newOp("RunPodSandbox")
	opStopPodSandbox      = newOp("StopPodSandbox")
	opRemovePodSandbox    = newOp("RemovePodSandbox")
	opPodSandboxStatus    = newOp("PodSandboxStatus")
	opListPodSandbox      = newOp("ListPodSandbox")
	opCreateContainer     = newOp("CreateContainer")
	opStartContainer      = newOp("StartContainer")
	opStopContainer       = newOp("StopContainer")
	opRemoveContainer     = newOp("RemoveContainer")
	opListContainers      = newOp("ListContainers")
	opContainerStatus     = newOp("ContainerStatus")
	opExecSync            = newOp("ExecSync")
	opExec                = newOp("Exec")
	opAttach              = newOp("Attach")
	opPortForward         = newOp("PortForward")
	opReopenContainerLog  = newOp("ReopenContainerLog")
	opCheckpoint          = newOp("CheckpointContainer")
	opListContainerStats  = newOp("ListContainerStats")
	opListPodSandboxStats = newOp("ListPodSandboxStats")
	opGetContainerEvents  = newOp("GetContainerEvents")
	opPullImage           = newOp("PullImage")
	opImageStatus         = newOp("ImageStatus")
	opListImages          = newOp("ListImages")
	opRemoveImage         = newOp("RemoveImage")
	opImageFsInfo         = newOp("ImageFsInfo")
)

var (
	errorsNotFound      = metrics.NewCounter(`podline_cri_errors_total{class="not_found"}`)
	errorsAlreadyExists = metrics.NewCounter(`podline_cri_errors_total{class="already_exists"}`)
	errorsUnavailable   = metrics.NewCounter(`podline_cri_errors_total{class="unavailable"}`)
	errorsDeadline      = metrics.NewCounter(`podline_cri_errors_total{class="deadline"}`)
	errorsCanceled      = metrics.NewCounter(`podline_cri_errors_total{class="canceled"}`)
	errorsInvalid       = metrics.NewCounter(`podline_cri_errors_total{class="invalid"}`)
	errorsUnimplemented = metrics.NewCounter(`podline_cri_errors_total{class="unimplemented"}`)
	errorsUnknown       = metrics.NewCounter(`podline_cri_errors_total{class="unknown"}`)
)

func countError(class error) {
	switch class {
	case ErrNotFound:
		errorsNotFound.Inc()
	case ErrAlreadyExists:
		errorsAlreadyExists.Inc()
	case ErrUnavailable:
		errorsUnavailable.Inc()
	case ErrDeadline:
		errorsDeadline.Inc()
	case ErrCanceled:
		errorsCanceled.Inc()
	case ErrInvalid:
		errorsInvalid.Inc()
	case ErrUnimplemented:
		errorsUnimplemented.Inc()
	default:
		errorsUnknown.Inc()
	}
}
